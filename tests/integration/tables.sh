#!/usr/bin/env bash
# tables.sh: scripts/testbed-table.py over real write and alltoall runs (shm, --link-gbps, their
# --json files): every cell's median, min and max are those of its records' BusBW; then over
# copies of one run whose BusBW values are set to known ones.
. "$(dirname "$0")/lib.sh"
table=$(dirname "$0")/../../scripts/testbed-table.py
for i in 1 2 3; do
	for b in write alltoall; do
		"$EFABENCH" $b --np 2 --provider shm -b 1M -e 2M -n 5 -w 1 --link-gbps 100 \
			--layout single,split --json "$WORK/$b-$i.json" >/dev/null 2>&1 ||
			fail "efabench $b failed"
	done
done
runs=$(echo "$WORK"/write-{1,2,3}.json "$WORK"/alltoall-{1,2,3}.json | tr ' ' ',')
python3 "$table" a="$runs" b="$WORK/write-1.json" >"$WORK/t" || fail "testbed-table.py failed"
cat "$WORK/t"
python3 - "$WORK" <<'PY' || fail "a cell is not its records' BusBW median"
import json, statistics, sys
w = sys.argv[1]
want = {}
for b in ("write", "alltoall"):
    for i in (1, 2, 3):
        for r in json.load(open(f"{w}/{b}-{i}.json"))["results"]:
            want.setdefault((b, r["variant"], f'{r["size"] >> 20}M'), []).append(r["busbw_pct"])
got = {}
for line in open(f"{w}/t").readlines()[2:]:
    c = [x.strip() for x in line.strip().strip("|").split("|")]
    got[(c[0], c[1], c[2])] = c[3]
assert set(got) == set(want) and len(got) == 8, (sorted(got), sorted(want))
for k, v in want.items():
    cell = f"{statistics.median(v):.1f} ({min(v):.1f}-{max(v):.1f}, 3)"
    assert got[k] == cell, (k, got[k], cell)
PY
# Known values: three copies of run 1's write, BusBW 10, 20, 30 for Single, 90 for Split.
for v in 10 20 30; do
	python3 - "$WORK/write-1.json" "$v" >"$WORK/k-$v.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    r["busbw_pct"] = float(sys.argv[2]) if r["variant"] == "Single" else 90.0
json.dump(d, sys.stdout)
PY
done
python3 "$table" k="$WORK/k-10.json,$WORK/k-20.json,$WORK/k-30.json" >"$WORK/k" || fail "known values"
cat "$WORK/k"
grep -q '^| write | Single | 2M | 20.0 (10.0-30.0, 3) |$' "$WORK/k" || fail "Single is not 20 (10-30)"
grep -q '^| write | Split | 1M | 90.0 (90.0-90.0, 3) |$' "$WORK/k" || fail "Split is not 90"
[ "$(grep -c '^| write |' "$WORK/k")" -eq 4 ] || fail "want 4 write rows"
python3 "$table" >/dev/null 2>&1
[ $? -eq 2 ] || fail "no arguments should exit 2"
echo "PASS"
