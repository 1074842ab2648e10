#!/usr/bin/env bash
# shm_stale.sh: a shm segment left in /dev/shm by a killed process must not fail a later run
# whose rank gets the same pid. libfabric names the segment after the creator's pid and
# refuses the endpoint (fi_enable: EBUSY) when that pid is alive, as the new rank is; pids
# recycle (a 32768-pid host, a container), so this failed runs at random. In a pid namespace
# of our own, a job is killed whole (nobody left to clean up), then the same job starts again
# with the same pids (ns_last_pid).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (a pid namespace and ns_last_pid)"
unshare -pf --mount-proc true 2>/dev/null || skip "cannot create a pid namespace here"
unshare -pf --mount-proc sh -c 'echo 300 >/proc/sys/kernel/ns_last_pid' 2>/dev/null ||
	skip "cannot choose pids in a pid namespace here (ns_last_pid)"
# Nothing else may fork in the namespace while a job starts: the waits are bash builtins.
cat >"$WORK/ns.sh" <<'NS'
set -u
job() { echo 300 >/proc/sys/kernel/ns_last_pid && exec "$EFABENCH" sendrecv --provider shm \
	--np 2 -b 8 -e 8 "$@"; }
mkfifo "$WORK/fifo" && exec 9<>"$WORK/fifo"
(job -n 100000000 -q >/dev/null 2>&1) &
shopt -s nullglob
# Until two processes have segments (a glob and builtins fork nothing): counting segments
# alone let one rank's two segments, one of them soon gone, pass for both ranks'.
for _ in {1..300}; do
	segs=(/dev/shm/30[0-9]:"$UID":*)
	pids=" " n=0
	for seg in "${segs[@]}"; do
		seg=${seg#/dev/shm/}
		[[ $pids == *" ${seg%%:*} "* ]] || { pids+="${seg%%:*} "; n=$((n + 1)); }
	done
	[ $n -ge 2 ] && break
	read -r -t 0.1 -u 9
done
# Stop every process of the namespace, then kill them: a rank that saw its peer or launcher
# die before its own SIGKILL landed would unlink the dead one's segments (as it should in a
# real job); stopped, none runs another instruction.
kill -STOP -1
kill -KILL -1
wait
ls /dev/shm | grep "^30[0-9]:$UID:" >"$WORK/left"
(job -n 10 -w 1 -q -v)
NS
export WORK
unshare -pf --mount-proc bash "$WORK/ns.sh" >"$WORK/out" 2>"$WORK/err"
rc=$?
cat "$WORK/err" >&2
echo "left by the killed job: $(tr '\n' ' ' <"$WORK/left")"
# One segment left is enough to trip over, and the second job must say it removed one.
[ "$(wc -l <"$WORK/left")" -ge 1 ] || fail "the killed job left no segments to trip over"
[ $rc -eq 0 ] || fail "the second job failed (status $rc) on the first one's segments"
grep -q "removed 1 shm segment that an earlier process with this pid" "$WORK/err" ||
	fail "the second job's ranks did not get the first one's pids: nothing tested"
for f in $(cat "$WORK/left"); do rm -f "/dev/shm/$f"; done
echo "PASS"
