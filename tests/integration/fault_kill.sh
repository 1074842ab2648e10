#!/usr/bin/env bash
# fault_kill.sh PROVIDER VICTIM [ARGS...]: kill one rank mid-run of a write (ARGS added, e.g.
# --mem device); every other rank must exit non-zero within the deadline + 5 s, naming the lost
# rank, and no rank may be left. FAULT_SIGNAL=STOP stops the rank instead (a stuck rank): the
# others give up at the deadline and the launcher names the stopped rank and ends it.
. "$(dirname "$0")/lib.sh"
prov=$1 victim=$2 timeout=5 sig=${FAULT_SIGNAL:-KILL}
shift 2
"$EFABENCH" write --np 3 --provider "$prov" -b 256K -e 256K -n 1000000 -w 1 \
	--timeout $timeout -v "$@" >"$WORK/out" 2>"$WORK/err" &
job=$!
pid=
for _ in $(seq 100); do
	pid=$(sed -n "s/^efabench: rank $victim is pid \([0-9]*\)$/\1/p" "$WORK/err")
	# Wait until the timed loop runs: the table header is printed just before.
	[ -n "$pid" ] && grep -q '^|--' "$WORK/out" && break
	sleep 0.1
done
[ -n "$pid" ] || { kill -9 $job; fail "rank $victim never started"; }
sleep 0.5
[ "$(ranks_alive "$WORK/err" | wc -l)" -eq 3 ] || fail "not 3 live ranks before the fault"
start=$(date +%s.%N)
kill -"$sig" "$pid"
# The launcher reaps every rank; bound the whole job by the deadline + 5 s.
for _ in $(seq $(((timeout + 5) * 10))); do
	kill -0 $job 2>/dev/null || break
	sleep 0.1
done
if kill -0 $job 2>/dev/null; then
	pkill -9 -P $job
	kill -9 $job
	fail "job still running $((timeout + 5)) s after rank $victim was killed"
fi
wait $job
rc=$?
took=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
cat "$WORK/err" >&2
[ $rc -ne 0 ] || fail "job exited 0 after losing rank $victim"
if [ "$sig" = STOP ]; then
	grep -q "efabench: error: rank $victim (pid $pid) is stopped" "$WORK/err" ||
		fail "the launcher did not name stopped rank $victim"
else
	for r in 0 1 2; do
		[ $r -eq "$victim" ] && continue
		grep -q "efabench\[rank $r\]: error: lost rank $victim" "$WORK/err" ||
			fail "rank $r did not name lost rank $victim"
	done
fi
# The launcher removes the shared-memory segment the killed rank could not.
left=$(shm_left "$pid")
[ -z "$left" ] || fail "rank $victim (pid $pid) left /dev/shm/$left"
# No rank may outlive the job.
alive=$(ranks_alive "$WORK/err")
[ -z "$alive" ] || fail "rank pid(s) $alive outlived the job"
echo "PASS: all ranks exited in ${took} s, rc=$rc"
