#!/usr/bin/env bash
# mpi_stop.sh: under mpirun, a rank stopped (SIGSTOP) while the others work: whoever times out
# names it. Rank 2 idles in a collective while rank 0 writes to rank 1, so ranks 0 and 1 meet
# it only at the next barrier: MPI's collective cannot say who is missing, our question to
# every rank can (the stopped one does not answer). The ranks must end, non-zero, with a line
# naming rank 2, within the deadline + 20 s: after MPI_Abort, Open MPI's mpirun took 9.5-18 s
# to end the survivors of a 3 s deadline on the 2-core VM (its abort path, not ours). The phase
# is about 2 s of 64 KiB writes: its remainder counts against that bound too, and 200 000
# writes (8-14 s on a loaded 2-core machine) left too little of it.
. "$(dirname "$0")/lib.sh"
[ "${EB_HAVE_MPI:-OFF}" = ON ] || skip "efabench was built without MPI"
MPIRUN=mpirun
command -v mpirun.openmpi >/dev/null && MPIRUN=mpirun.openmpi
command -v $MPIRUN >/dev/null || skip "mpirun not found"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
timeout=3
$MPIRUN --oversubscribe -np 3 "$EFABENCH" write --provider tcp -b 64K -e 64K -n 50000 -w 1 \
	--layout single --timeout $timeout -q >"$WORK/out" 2>"$WORK/err" &
job=$!
pid=
for _ in $(seq 200); do
	for p in $(pgrep -P $job); do
		tr '\0' '\n' </proc/$p/environ 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=2" && pid=$p
	done
	[ -n "$pid" ] && grep -q '^|--' "$WORK/out" && break
	sleep 0.1
done
[ -n "$pid" ] || { kill -9 $job; fail "rank 2 never started its run"; }
sleep 0.3
kill -STOP "$pid"
for _ in $(seq $(((timeout + 20) * 10))); do
	kill -0 $job 2>/dev/null || break
	sleep 0.1
done
if kill -0 $job 2>/dev/null; then
	# Ranks 0 and 1 gone: mpirun alone still waits for the stopped process (its SIGTERM
	# waits for a SIGCONT that never comes); ending it is the launcher's part, not ours.
	others=$(for p in $(pgrep -P $job); do [ "$p" != "$pid" ] && echo "$p"; done)
	if [ -n "$others" ]; then
		kill -9 "$pid"
		pkill -9 -P $job
		kill -9 $job
		fail "ranks still running $((timeout + 20)) s after rank 2 was stopped: $others"
	fi
	echo "ranks 0 and 1 left; mpirun still waited for the stopped rank 2 (ended here)"
	kill -9 "$pid"
fi
wait $job
rc=$?
kill -9 "$pid" 2>/dev/null
cat "$WORK/err" >&2
[ $rc -ne 0 ] || fail "job exited 0 with rank 2 stopped"
grep -Eq "rank 2 did not answer|lost rank 2|timed out .*rank 2\b" "$WORK/err" || fail "no line names the stopped rank 2"
echo "PASS"
