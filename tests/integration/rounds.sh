#!/usr/bin/env bash
# rounds.sh: --rounds R makes the variants of each size take turns. Asserts the order of the
# turns (rank 0's -v lines), that every variant still gets its -n iterations (pairs and
# all-rank flows, per-iteration and phase-timed variants) and that the JSON says R.
. "$(dirname "$0")/lib.sh"

# write over 3 ranks: two pairs per variant, 9 iterations in 3 turns of 3.
run_ok "write --rounds 3" "$EFABENCH" write --np 3 --provider shm -b 1000 -e 8000 -f 8 -n 9 -w 1 \
	--rounds 3 --timeout 20 -v --json "$WORK/w.json"
grep -q "Out of bounds values : 0 OK" "$WORK/out" || fail "write: the footer does not say 0 OK"
grep -q "^#.* rounds: 3 " "$WORK/out" || fail "write: no rounds in the header"
got=$(grep -o "round [0-9] of 3: [A-Za-z]* [0-9]*" "$WORK/err" | tr '\n' ';')
want=""
for size in 1000 8000; do
	for r in 1 2 3; do
		for v in Single Split RoundRobin; do
			want="${want}round $r of 3: $v $size;"
		done
	done
done
[ "$got" = "$want" ] || fail "the turns ran out of order: $got"
check_json "$WORK/w.json" 6 0
python3 - "$WORK/w.json" <<'PY' || fail "write: a record lacks iterations or the rounds setting"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["settings"]["rounds"] == 3, doc["settings"]
for r in doc["results"]:
    assert r["phases"] == 0, r
    assert r["samples"] == 9 * len(r["groups"]), r
PY

# alltoall: every rank measures (one pass gathers all); write --rate: timed by the phase, at
# least as many phases as rounds.
run_ok "alltoall --rounds 2" "$EFABENCH" alltoall --np 3 --provider shm -b 4096 -e 4096 -n 6 -w 1 \
	--rounds 2 --timeout 20 --json "$WORK/a.json"
check_json "$WORK/a.json" 3 0
python3 -c 'import json,sys; assert all(r["samples"] == 6 * 3 for r in json.load(open(sys.argv[1]))["results"])' \
	"$WORK/a.json" || fail "alltoall: not 6 iterations of each of 3 ranks per variant"
run_ok "write --rate --rounds 4" "$EFABENCH" write --np 2 --provider shm -b 4096 -e 4096 -n 400 -w 10 \
	--rate --check --phases 2 --rounds 4 --timeout 20 --json "$WORK/r.json"
python3 -c 'import json,sys; assert all(r["phases"] == 4 and r["samples"] == 4 for r in json.load(open(sys.argv[1]))["results"])' \
	"$WORK/r.json" || fail "write --rate: want 4 phases, one per round"
echo "PASS"
