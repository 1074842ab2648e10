#!/usr/bin/env bash
# The issue's acceptance run: write across 4 local ranks on shm with a JSON report, plus info.
. "$(dirname "$0")/lib.sh"
"$EFABENCH" write --np 4 --provider shm -b 64K -e 4M -n 5 -w 1 --json "$WORK/out.json" || fail "write exited $?"
check_json "$WORK/out.json" 21 0
"$EFABENCH" info >"$WORK/info" || fail "info exited $?"
cat "$WORK/info"
grep -q "^shm " "$WORK/info" || fail "info does not list shm"
grep -q "^libfabric: runtime" "$WORK/info" || fail "info does not name the libfabric version"
echo "PASS"
