#!/usr/bin/env bash
# fault_corrupt.sh BENCH PROVIDER: the target flips one byte of what lands; the run must fail
# (exit 1) with #wrong > 0 in the table and the JSON.
. "$(dirname "$0")/lib.sh"
bench=$1 prov=$2
"$EFABENCH" "$bench" --np 2 --provider "$prov" -b 4000 -e 64K -f 4 -n 4 -w 1 --corrupt-at 4001 \
	--json "$WORK/out.json" >"$WORK/out" 2>"$WORK/err"
rc=$?
cat "$WORK/out"
cat "$WORK/err" >&2
[ $rc -eq 1 ] || fail "exit $rc, want 1"
grep -q "Out of bounds values : [1-9][0-9]* FAILED" "$WORK/out" || fail "footer does not report wrong words"
grep -q "wrong words received" "$WORK/err" || fail "the target did not say what it found"
check_json "$WORK/out.json" "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["results"]))' "$WORK/out.json")" some
# Every variant must have caught it.
python3 - "$WORK/out.json" <<'PY' || fail "a variant missed the corruption"
import json, sys
assert all(r["wrong"] > 0 for r in json.load(open(sys.argv[1]))["results"])
PY
echo "PASS"
