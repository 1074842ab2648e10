#!/usr/bin/env bash
# progress.sh: the progress line appears on a terminal (a pseudo-terminal from script(1)), names
# the benchmark, variant and size and a time left; nothing with -q or when stderr is a file.
. "$(dirname "$0")/lib.sh"
command -v script >/dev/null || skip "script(1) is not installed (bsdutils)"
args="--np 2 --provider shm -b 64K -e 1M -f 4 -n 20 -w 2"
# shellcheck disable=SC2086
script -qec "$EFABENCH write $args --layout single,split" "$WORK/tty" >/dev/null ||
	fail "write on a terminal exited $?"
grep -aq '\[write\] Single 64K' "$WORK/tty" || fail "no progress line naming variant and size"
grep -aq '\[write\] Split 1M .*% *~[0-9]* s left' "$WORK/tty" || fail "no estimate of the time left"
grep -aq "Out of bounds values : 0 OK" "$WORK/tty" || fail "the table is missing"
# shellcheck disable=SC2086
script -qec "$EFABENCH write $args -q" "$WORK/tty-q" >/dev/null || fail "write -q exited $?"
grep -aq '\[write\]' "$WORK/tty-q" && fail "-q still drew progress"
# shellcheck disable=SC2086
"$EFABENCH" write $args >/dev/null 2>"$WORK/err" || fail "write exited $?"
[ -s "$WORK/err" ] && fail "progress written to a file: $(cat -v "$WORK/err")"
script -qec "$EFABENCH matrix --np 3 --provider tcp -s 256K -n 2 --lat-iters 5" "$WORK/tty-m" \
	>/dev/null || fail "matrix on a terminal exited $?"
grep -aq '\[matrix\] round 2 of 3' "$WORK/tty-m" || fail "matrix drew no progress"
echo "PASS"
