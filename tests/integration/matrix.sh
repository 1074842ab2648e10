#!/usr/bin/env bash
# matrix.sh CASE: efabench matrix on this host (tcp on loopback).
#   rounds5   5 ranks (odd: one sits out each round) x 2 channels: every ordered pair measured
#             exactly once per channel, 5 rounds, every byte checked
#   dryrun    --dry-run prints the schedule and measures nothing
#   perhost   --per host with every rank on this host: one line, exit 2 (no two hosts);
#             --per auto measures every rank here (the test bed covers ranks on two hosts)
. "$(dirname "$0")/lib.sh"
case_=$1

case "$case_" in
rounds5)
	run_ok matrix timeout 120 "$EFABENCH" matrix --np 5 --provider tcp --channels 2 -s 256K -n 2 \
		--lat-iters 5 --timeout 20 --json "$WORK/m.json" --csv "$WORK/m.csv"
	python3 - "$WORK/m.json" "$WORK/m.csv" <<'PY' || fail "the schedule did not measure every pair once"
import csv, json, sys
d = json.load(open(sys.argv[1]))
assert d["ranks"] == 5 and d["rounds"] == 5, (d["ranks"], d["rounds"])
cells = {(r["src"], r["dst"], r["chan"]): r for r in d["results"]}
want = {(s, t, c) for s in range(5) for t in range(5) for c in range(2) if s != t}
assert set(cells) == want and len(d["results"]) == len(want), sorted(set(cells) ^ want)
for r in d["results"]:
    assert r["measured"] == 1, r
    assert r["wrong"] == 0 and r["gbps"] > 0 and r["lat_us"] > 0, r
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == len(want), len(rows)
PY
	grep -q "^# Out of bounds values : 0 OK" "$WORK/out" || fail "no verification line"
	;;
dryrun)
	"$EFABENCH" matrix --np 4 --provider tcp --dry-run >"$WORK/out" 2>&1 || fail "dry run exited $?"
	cat "$WORK/out"
	grep -q "3 rounds of disjoint pairs" "$WORK/out" || fail "no schedule printed"
	grep -q "Gbps, rows = source" "$WORK/out" && fail "a dry run measured"
	;;
perhost)
	"$EFABENCH" matrix --np 3 --provider tcp -s 64K --per host >"$WORK/out" 2>"$WORK/err"
	rc=$?
	cat "$WORK/err"
	[ $rc -eq 2 ] || fail "--per host on one host exited $rc, want 2"
	[ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "not one line"
	grep -q "no two hosts make a pair" "$WORK/err" || fail "the reason is missing"
	"$EFABENCH" matrix --np 3 --provider tcp -s 64K -n 1 --lat-iters 2 --json "$WORK/m.json" \
		>/dev/null || fail "--per auto exited $?"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["per"] == "rank" and d["measuring_ranks"] == 3 and len(d["results"]) == 6' "$WORK/m.json" ||
		fail "--per auto did not measure every rank of one host"
	;;
*)
	fail "unknown case $case_"
	;;
esac
echo "PASS: matrix $case_"
