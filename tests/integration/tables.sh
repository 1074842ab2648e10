#!/usr/bin/env bash
# tables.sh: scripts/testbed-table.py over real write and alltoall tables (shm, --link-gbps):
# every cell's median, min and max are those of its BusBW column, the columns not swapped; then
# over copies of one table whose BusBW cells are set to known values.
. "$(dirname "$0")/lib.sh"
table=$(dirname "$0")/../../scripts/testbed-table.py
for i in 1 2 3; do
	for b in write alltoall; do
		"$EFABENCH" $b --np 2 --provider shm -b 1M -e 2M -n 5 -w 1 --link-gbps 100 \
			--layout single,split >>"$WORK/run-$i.txt" 2>/dev/null || fail "efabench $b failed"
	done
done
python3 "$table" a="$WORK/run-1.txt,$WORK/run-2.txt,$WORK/run-3.txt" b="$WORK/run-1.txt" \
	>"$WORK/t" || fail "testbed-table.py failed"
cat "$WORK/t"
python3 - "$WORK" <<'PY' || fail "a cell is not its BusBW column's median"
import re, statistics, sys
w = sys.argv[1]
want = {}
for i in (1, 2, 3):
    bench = None
    for line in open(f"{w}/run-{i}.txt"):
        m = re.match(r"# efabench (\w+):", line)
        if m:
            bench = m.group(1)
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if line.startswith("|") and re.match(r"\dM$", c[0]):
            # Size Count Single BusBW Lat Split BusBW Lat #wrong
            want.setdefault((bench, "Single", c[0]), []).append(float(c[3]))
            want.setdefault((bench, "Split", c[0]), []).append(float(c[6]))
got = {}
for line in open(f"{w}/t").readlines()[2:]:
    c = [x.strip() for x in line.strip().strip("|").split("|")]
    got[(c[0], c[1], c[2])] = c[3]
assert set(got) == set(want) and len(got) == 8, (sorted(got), sorted(want))
for k, v in want.items():
    cell = f"{statistics.median(v):.1f} ({min(v):.1f}-{max(v):.1f}, 3)"
    assert got[k] == cell, (k, got[k], cell)
PY
# Known values: three copies of run 1's write table, BusBW 10, 20, 30 for Single, 90 for Split.
for v in 10 20 30; do
	awk -v v="$v" -F'|' 'BEGIN { OFS = "|" }
		/^# efabench alltoall/ { exit }
		/^\| +[0-9]+M / { $5 = " " v " "; $8 = " 90 " } { print }' "$WORK/run-1.txt" >"$WORK/k-$v.txt"
done
python3 "$table" k="$WORK/k-10.txt,$WORK/k-20.txt,$WORK/k-30.txt" >"$WORK/k" || fail "known values"
cat "$WORK/k"
grep -q '^| write | Single | 2M | 20.0 (10.0-30.0, 3) |$' "$WORK/k" || fail "Single is not 20 (10-30)"
grep -q '^| write | Split | 1M | 90.0 (90.0-90.0, 3) |$' "$WORK/k" || fail "Split is not 90"
[ "$(grep -c '^| write |' "$WORK/k")" -eq 4 ] || fail "want 4 write rows"
python3 "$table" >/dev/null 2>&1
[ $? -eq 2 ] || fail "no arguments should exit 2"
echo "PASS"
