#!/usr/bin/env bash
# hygiene.sh CASE: what a run leaves behind.
#   interrupt   SIGINT, then SIGTERM, at the launcher mid-run: every rank ends within 3 s, exit
#               status 1, no process and no /dev/shm segment of the job is left
#   repeat N    N consecutive short runs (write, sendrecv, alltoall in turn, shm and tcp): no rank
#               process and no /dev/shm segment of theirs is left
. "$(dirname "$0")/lib.sh"
case_=$1

case "$case_" in
interrupt)
	for sig in INT TERM; do
		rm -f "$WORK/out" "$WORK/err" # the last round's would name its pids until emptied
		"$EFABENCH" write --np 3 --provider shm -b 256K -e 256K -n 100000000 -w 1 -v \
			>"$WORK/out" 2>"$WORK/err" &
		job=$!
		pids=
		for _ in $(seq 100); do
			pids=$(sed -n 's/^efabench: rank [0-9]* is pid \([0-9]*\)$/\1/p' "$WORK/err")
			[ "$(echo "$pids" | wc -w)" -eq 3 ] && grep -q '^|--' "$WORK/out" && break
			sleep 0.1
		done
		[ "$(echo "$pids" | wc -w)" -eq 3 ] || { kill -9 $job; fail "ranks never started"; }
		sleep 0.5
		kill -$sig $job
		for _ in $(seq 30); do
			kill -0 $job 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 $job 2>/dev/null; then
			kill -9 $job $pids
			fail "SIG$sig: the job still ran 3 s later"
		fi
		wait $job
		rc=$?
		cat "$WORK/err" >&2
		[ $rc -eq 1 ] || fail "SIG$sig: exit $rc, want 1"
		grep -q "interrupted" "$WORK/err" || fail "SIG$sig: the launcher did not say why it stopped"
		for p in $pids; do
			kill -0 "$p" 2>/dev/null && fail "SIG$sig: rank pid $p survived"
			[ -z "$(shm_left "$p")" ] || fail "SIG$sig: rank pid $p left /dev/shm/$(shm_left "$p")"
		done
		echo "ok: SIG$sig"
	done
	;;
repeat)
	# Judged by the job's own ranks (their pids from -v), so that other jobs on the machine
	# do not count: none may be alive after, none may have left a /dev/shm segment or a
	# descriptor in the launcher's view (it exits, so /proc/<pid>/fd must be gone too). A
	# segment older than the test is an earlier process's whose pid a rank got again (a tcp
	# rank leaves it there; shm ranks remove such leftovers of their pid): not counted.
	n=${2:-20}
	: >"$WORK/pids"
	for i in $(seq "$n"); do
		case $((i % 3)) in
		0) bench=write ;;
		1) bench=sendrecv ;;
		2) bench=alltoall ;;
		esac
		prov=shm
		[ $((i % 2)) -eq 0 ] && prov=tcp
		timeout 60 "$EFABENCH" $bench --np 2 --provider $prov -b 4K -e 64K -f 16 -n 3 -w 1 -q -v \
			>/dev/null 2>"$WORK/err" || fail "run $i ($bench, $prov) failed: $(cat "$WORK/err")"
		sed -n 's/^efabench: rank [0-9]* is pid \([0-9]*\)$/\1/p' "$WORK/err" >>"$WORK/pids"
	done
	[ "$(wc -l <"$WORK/pids")" -eq $((2 * n)) ] || fail "expected $((2 * n)) rank pids"
	while read -r p; do
		rank_alive "$p" && fail "rank pid $p is still running"
		[ -z "$(shm_left "$p")" ] || fail "rank pid $p left /dev/shm/$(shm_left "$p")"
	done <"$WORK/pids"
	echo "ok: $n runs ($((2 * n)) ranks) left nothing behind"
	;;
*)
	fail "unknown case $case_"
	;;
esac
echo "PASS"
