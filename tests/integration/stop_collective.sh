#!/usr/bin/env bash
# stop_collective.sh LAUNCH: rank 1 stops itself (--stop-rank, SIGSTOP) at the end of its timed
# phase, before the collective that closes it; ranks 0 and 2 are already waiting in that
# collective, whose deadline covers the whole phase (here 3 s x 2002 iterations). They must
# not wait that long: after --timeout the absent rank is asked whether it is there and, silent
# for 2 s, named; every other rank ends non-zero within the deadline + 20 s (Open MPI's abort
# path alone took up to 18 s on the 2-core VM). LAUNCH: local, rdv or mpi.
. "$(dirname "$0")/lib.sh"
launch=${1:?local, rdv or mpi}
timeout=3 limit=23
args=(write --provider tcp -b 64K -e 64K -n 2000 -w 1 --layout single --timeout $timeout -q
	--stop-rank 1 --json "$WORK/job.json") # the file's name marks this job's ranks
export EFABENCH_TESTING=1
start=$(date +%s)
case $launch in
local)
	timeout $((limit + 10)) "$EFABENCH" "${args[@]}" --np 3 >/dev/null 2>"$WORK/err"
	rc=$?
	;;
rdv)
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	for r in 0 1 2; do
		EFABENCH_ROOT=127.0.0.1:$port EFABENCH_RANK=$r EFABENCH_SIZE=3 EFABENCH_TOKEN=t$$ \
			"$EFABENCH" "${args[@]}" >/dev/null 2>"$WORK/err$r" &
		pids[r]=$!
	done
	rc=0
	for r in 0 2; do # rank 1 is stopped: with no launcher, ending it is the user's part
		for _ in $(seq $((limit * 10))); do
			kill -0 ${pids[r]} 2>/dev/null || break
			sleep 0.1
		done
		kill -0 ${pids[r]} 2>/dev/null && { kill -9 "${pids[@]}"; fail "rank $r still running"; }
		wait ${pids[r]} || rc=$?
	done
	kill -9 ${pids[1]}
	cat "$WORK/err0" "$WORK/err2" >"$WORK/err"
	[ $rc -ne 0 ] || fail "ranks 0 and 2 exited 0 with rank 1 stopped"
	;;
mpi)
	[ "${EB_HAVE_MPI:-OFF}" = ON ] || skip "efabench was built without MPI"
	MPIRUN=mpirun
	command -v mpirun.openmpi >/dev/null && MPIRUN=mpirun.openmpi
	command -v $MPIRUN >/dev/null || skip "mpirun not found"
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		OMPI_MCA_btl_vader_single_copy_mechanism=none
	timeout $((limit + 10)) $MPIRUN --oversubscribe -np 3 "$EFABENCH" "${args[@]}" \
		>/dev/null 2>"$WORK/err"
	rc=$?
	pkill -9 -f -- "$WORK/job.json" # mpirun may leave the stopped rank: its part, not ours
	;;
*) fail "unknown launch $launch" ;;
esac
took=$(($(date +%s) - start))
cat "$WORK/err" >&2
[ $rc -ne 124 ] && [ $took -le $limit ] || fail "ended after $took s (rc $rc), want <= $limit s"
[ $rc -ne 0 ] || fail "the job exited 0 with rank 1 stopped"
grep -Eq "rank 1 did not answer|lost rank 1" "$WORK/err" || fail "no line names the stopped rank 1"
echo "PASS ($launch: $took s)"
