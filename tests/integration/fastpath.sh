#!/usr/bin/env bash
# fastpath.sh: the floor program and scripts/fastpath-bench.sh run end to end on shm with tiny
# counts: every measurement yields a number for both programs (no timing is asserted).
. "$(dirname "$0")/lib.sh"
FLOOR=${FLOOR:?set FLOOR to the efabench-floor binary}
for t in "sendrecv 64 200" "write 64 200" "rate 64 2000 8"; do
	# shellcheck disable=SC2086
	v=$(timeout 60 "$FLOOR" $t --provider shm) || fail "efabench-floor $t failed"
	python3 -c 'import sys; assert float(sys.argv[1]) > 0' "$v" || fail "efabench-floor $t printed '$v'"
	echo "ok: efabench-floor $t -> $v"
done
timeout 60 "$FLOOR" bogus 8 1 >/dev/null 2>&1 && fail "a bad test name was accepted"
PROVIDERS=shm SIZES="8 4096" REPS=1 ITERS=200 EFABENCH=$EFABENCH FLOOR=$FLOOR \
	timeout 240 bash "$(dirname "$0")/../../scripts/fastpath-bench.sh" >"$WORK/t" || fail "the script failed"
cat "$WORK/t"
[ "$(grep -c '^| shm |' "$WORK/t")" -eq 6 ] || fail "want 6 rows"
! grep -q '| 0.000 |\|nan\|inf' "$WORK/t" || fail "a measurement is missing"
echo "PASS"
