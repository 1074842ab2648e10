#!/usr/bin/env bash
# mpi.sh BENCH PROVIDER NP: the MPI launch path (Open MPI's mpirun, as root where needed).
. "$(dirname "$0")/lib.sh"
bench=$1 prov=$2 np=$3
[ "${EB_HAVE_MPI:-OFF}" = ON ] || skip "efabench was built without MPI"
MPIRUN=mpirun
command -v mpirun.openmpi >/dev/null && MPIRUN=mpirun.openmpi
command -v $MPIRUN >/dev/null || skip "mpirun not found"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
timeout 120 $MPIRUN --oversubscribe -np "$np" "$EFABENCH" "$bench" --provider "$prov" -b 1000 -e 1M -f 32 \
	-n 5 -w 1 --chunk 64K --window 4 --timeout 20 --json "$WORK/out.json" >"$WORK/out" 2>"$WORK/err"
rc=$?
cat "$WORK/out"
cat "$WORK/err" >&2
[ $rc -eq 0 ] || fail "mpirun exited $rc"
grep -q "(mpi launcher)" "$WORK/out" || fail "the MPI bootstrap was not used"
nv=1
[ "$bench" = sendrecv ] || nv=3
check_json "$WORK/out.json" $((4 * nv)) 0
echo "PASS"
