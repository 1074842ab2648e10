#!/usr/bin/env bash
# stuck_call.sh BINARY: a rank inside one provider call past its deadline ends itself, said
# (stuck_call.c).
. "$(dirname "$0")/lib.sh"
bin=${1:?stuck_call binary}
start=$(date +%s.%N)
"$bin" >"$WORK/out" 2>"$WORK/err"
rc=$?
took=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
cat "$WORK/err" >&2
[ $rc -eq 1 ] || fail "the job exited $rc, want 1"
grep -q 'rank 1\]: error: inside one libfabric call of provider shm (a call that never returns) for [0-9.]* s, past the 1 s deadline' "$WORK/err" ||
	fail "rank 1 did not say why it ended"
grep -q 'lost rank 1' "$WORK/err" || fail "rank 0 was not told it lost rank 1"
awk -v t="$took" 'BEGIN { exit !(t < 1 + 2 + 1) }' || fail "took $took s (deadline 1 s)"
echo "PASS: ended in $took s"
