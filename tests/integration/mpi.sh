#!/usr/bin/env bash
# mpi.sh BENCH PROVIDER NP: the MPI launch path (Open MPI's mpirun, as root where needed).
. "$(dirname "$0")/lib.sh"
bench=$1 prov=$2 np=$3
[ "${EB_HAVE_MPI:-OFF}" = ON ] || skip "efabench was built without MPI"
MPIRUN=mpirun
command -v mpirun.openmpi >/dev/null && MPIRUN=mpirun.openmpi
command -v $MPIRUN >/dev/null || skip "mpirun not found"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
if [ "$bench" = moe ]; then # its sizes come from the shape; a row per initiator and phase
	# By default the MPI_Alltoallv baseline runs beside the others, each byte checked; both
	# modes, normal mode across emulated hosts of a rank each (2 legs).
	for args in "--mode ll --tokens 64" "--preset prefill --tokens 32 --hosts $np"; do
		# shellcheck disable=SC2086
		run_ok mpirun timeout 120 $MPIRUN --oversubscribe -np "$np" "$EFABENCH" moe \
			--provider "$prov" --initiators cpu,a2av,mpi --hidden 1024 \
			--experts 96 --route hot:1,3 -n 3 --timeout 20 $args --json "$WORK/out.json"
		python3 - "$WORK/out.json" "$np" <<'PY' || fail "$args: the launcher or rows"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["launcher"] == "mpi" and d["ranks"] == int(sys.argv[2]), (d["launcher"], d["ranks"])
assert len(d["results"]) == 9 and all(r["wrong"] == 0 for r in d["results"]), d["results"]
PY
		python3 "$(dirname "$0")/moe_check.py" "$WORK/out.json" cpu,a2av,mpi auto 0 ||
			fail "$args: moe's JSON does not check out"
	done
	# Without mpirun, asking for it is bad input.
	"$EFABENCH" moe --np 2 --initiators mpi >"$WORK/out" 2>&1
	rc=$?
	[ $rc -eq 2 ] && grep -q "start the job with mpirun" "$WORK/out" ||
		fail "--initiators mpi without mpirun: exit $rc, $(cat "$WORK/out")"
	echo "PASS"
	exit 0
fi
run_ok mpirun timeout 120 $MPIRUN --oversubscribe -np "$np" "$EFABENCH" "$bench" --provider "$prov" \
	-b 1000 -e 1M -f 32 -n 5 -w 1 --chunk 64K --window 4 --timeout 20 --json "$WORK/out.json"
grep -q "launcher: mpi" "$WORK/out" || fail "the MPI bootstrap was not used"
nv=1
[ "$bench" = sendrecv ] || nv=3
check_json "$WORK/out.json" $((4 * nv)) 0
echo "PASS"
