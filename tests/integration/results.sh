#!/usr/bin/env bash
# results.sh: every JSON under results/ traces to a build (tools/check-results): its stamp, or
# a README above it naming the commit; and the check fails a file that traces to none.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v git >/dev/null && git -C "$root" rev-parse HEAD >/dev/null 2>&1 ||
	skip "not a git checkout: commits cannot be checked"
cd "$root" || fail "cd $root"
tools/check-results results || fail "a result file traces to no build (above)"
# A file without a stamp and no README: named, exit 1; a README naming a commit beside its
# folder: passes; one naming no commit of this repository: fails again.
mkdir -p "$WORK/r/box/set"
echo '{"results": []}' >"$WORK/r/box/set/run-1.json"
tools/check-results "$WORK/r" >"$WORK/out" && fail "an untraced file passed"
grep -q "set/run-1.json: no stamp" "$WORK/out" || fail "the untraced file was not named"
# The full hash: a short one of digits alone reads as a number, which the check never takes
# for a commit.
printf '## `set/`\n\nMade by the build of %s.\n' "$(git rev-parse HEAD)" >"$WORK/r/box/README.md"
tools/check-results "$WORK/r" >"$WORK/out" || fail "a README naming the commit did not count: $(cat "$WORK/out")"
printf '## `set/`\n\nMade by the build of 0123abcd.\n' >"$WORK/r/box/README.md"
if [ "$(git -C "$root" rev-parse --is-shallow-repository)" != true ]; then
	tools/check-results "$WORK/r" >"$WORK/out" && fail "a commit not in the repository counted"
fi
# A stamped file passes alone.
rm "$WORK/r/box/README.md"
echo '{"stamp": {"efabench": "0.7.0", "commit": "abc1234"}, "results": []}' >"$WORK/r/box/set/run-1.json"
tools/check-results "$WORK/r" >"$WORK/out" || fail "a stamped file did not pass"
# Every measured table of docs/measurements.md and moe.md's Measured names its raw files, and
# the check fails one that names none.
tools/check-results --docs docs/measurements.md docs/moe.md || fail "a measured table names no raw files"
mkdir -p "$WORK/docs"
printf '## Runs\n\n| a | b |\n|---|---|\n| 1 | 2 |\n' >"$WORK/docs/m.md"
tools/check-results --docs "$WORK/docs/m.md" >"$WORK/out" && fail "a table without raw files passed"
grep -q "m.md:3: a table under '## Runs'" "$WORK/out" || fail "the table was not named: $(cat "$WORK/out")"
echo "PASS"
