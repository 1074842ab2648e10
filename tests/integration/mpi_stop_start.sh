#!/usr/bin/env bash
# mpi_stop_start.sh: under mpirun, a rank stopped (SIGSTOP) before it reaches MPI_Init. MPI's
# start-up has no deadline, so the other ranks waited in MPI_Init for ever (seen: 25 s and
# counting); now each ends itself at --timeout, saying why, and mpirun ends the job. Rank 2 is
# started through a shell that stops itself before it execs efabench.
. "$(dirname "$0")/lib.sh"
[ "${EB_HAVE_MPI:-OFF}" = ON ] || skip "efabench was built without MPI"
MPIRUN=mpirun
command -v mpirun.openmpi >/dev/null && MPIRUN=mpirun.openmpi
command -v $MPIRUN >/dev/null || skip "mpirun not found"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
timeout=3 bound=30 # Open MPI's own abort path took up to 18 s after a 3 s deadline (mpi.stop)
start=$(date +%s.%N)
# shellcheck disable=SC2016
$MPIRUN --oversubscribe -np 3 sh -c 'echo $$ >"$0/pid.$OMPI_COMM_WORLD_RANK"
	[ "$OMPI_COMM_WORLD_RANK" = 2 ] && kill -STOP $$
	exec "$@"' "$WORK" "$EFABENCH" write --provider tcp -b 64K -e 64K -n 10 -w 1 \
	--timeout $timeout -q >"$WORK/out" 2>"$WORK/err" &
job=$!
for _ in $(seq $((bound * 10))); do
	kill -0 $job 2>/dev/null || break
	sleep 0.1
done
took=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
stopped=$(cat "$WORK/pid.2" 2>/dev/null)
if kill -0 $job 2>/dev/null; then
	pkill -9 -P $job
	kill -9 $job
	[ -n "$stopped" ] && kill -9 "$stopped" 2>/dev/null
	cat "$WORK/err" >&2
	fail "the job still ran $bound s after it started, rank 2 stopped before MPI_Init"
fi
wait $job
rc=$?
[ -n "$stopped" ] && kill -9 "$stopped" 2>/dev/null
cat "$WORK/err" >&2
[ $rc -ne 0 ] || fail "the job exited 0 with rank 2 stopped"
grep -q "MPI start-up .* did not finish within $timeout s" "$WORK/err" ||
	fail "no rank said that MPI start-up did not finish"
echo "PASS: the job ended in $took s"
