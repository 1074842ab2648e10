#!/usr/bin/env bash
# report.sh: `efabench report -o DIR write sendrecv` with tiny sizes: index.md carries the
# machine stamp and the exact command lines and links every table and figure, which exist;
# then `tools/compare DIR DIR` prints B/A = 1.00 on every row, and against a copy whose ratios are
# known (a factor per variant, rows reversed, one missing) every row shows its own factor.
. "$(dirname "$0")/lib.sh"
COMPARE=${EFABENCH_TOOLS:-$(cd "$(dirname "$0")/../../tools" && pwd)}/compare
[ -x "$COMPARE" ] || fail "no tools/compare at $COMPARE"
python3 -c 'import matplotlib' 2>/dev/null || /usr/bin/python3 -c 'import matplotlib' 2>/dev/null ||
	skip "python3-matplotlib is not installed (scripts/install-deps.sh installs it)"

dir=$WORK/report
timeout 170 "$EFABENCH" report -o "$dir" write sendrecv --provider shm -b 4K -e 16K -n 3 --mem host \
	>"$WORK/out" 2>"$WORK/err"
rc=$?
cat "$WORK/out"
cat "$WORK/err" >&2
[ $rc -eq 0 ] || fail "efabench report exited $rc"
idx=$dir/index.md
[ -s "$idx" ] || fail "no index.md"

# The exact command lines, runnable as written.
for b in write sendrecv; do
	grep -qF -- "$EFABENCH $b --np 2 --provider shm -b 4K -e 16K -n 3 --mem host --json $dir/$b.json" "$idx" ||
		fail "index.md lacks the $b command line"
done
grep -qF -- "$EFABENCH info --json $dir/info.json" "$idx" || fail "index.md lacks the info command line"
grep -qF -- "$EFABENCH plot $dir/write.json $dir/sendrecv.json -o $dir" "$idx" ||
	fail "index.md lacks the plot command line"
# The machine stamp.
grep -qF "| machine | $(uname -n) |" "$idx" || fail "no machine name"
grep -qF "$(uname -r)" "$idx" || fail "no kernel release"
cpu=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: //')
[ -z "$cpu" ] || grep -qF "| CPU | $cpu, $(grep -c '^processor' /proc/cpuinfo) logical CPUs |" "$idx" ||
	fail "no CPU model and count"
grep -q "| libfabric | runtime [0-9.]*, built against [0-9.]* |" "$idx" || fail "no libfabric version"
stamp=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["stamp"]; print(s["efabench"] + ", commit " + s["commit"])' "$dir/write.json") ||
	fail "write.json has no stamp"
grep -qF "| efabench | $stamp (" "$idx" || fail "index.md does not name efabench's version and commit ($stamp)"
grep -q "| provider | shm " "$idx" || fail "no provider"
grep -q "| CUDA | " "$idx" || fail "no CUDA line"
grep -q "| NICs used | shm |" "$idx" || fail "no NICs"
grep -q "| NICs (efabench info) | shm (shm, link unknown) |" "$idx" || fail "no NICs from info --json"
python3 -m json.tool "$dir/info.json" >/dev/null || fail "info.json is not valid JSON"
# Every table and figure, present and linked.
for f in write.md sendrecv.md write.json sendrecv.json write-bandwidth.png write-latency.png \
	sendrecv-bandwidth.png sendrecv-latency.png info.txt info.json; do
	[ -s "$dir/$f" ] || fail "$f missing or empty"
	grep -qF "($f)" "$idx" || fail "index.md does not link $f"
done
for b in write sendrecv; do
	grep -q '^|  *Size |' "$dir/$b.md" || fail "$b.md has no table"
	grep -q '^```$' "$dir/$b.md" || fail "$b.md has no code block for the header"
done
check_json "$dir/write.json" 9 0

"$COMPARE" "$dir" "$dir" >"$WORK/cmp" || fail "tools/compare exited $?"
cat "$WORK/cmp"
python3 - "$WORK/cmp" <<'PY' || fail "compare of a report with itself is not 1.00 everywhere"
import sys
rows = [l.strip().strip("|").split("|") for l in open(sys.argv[1]) if l.startswith("| ")]
ratios = [r[-1].strip() for r in rows if len(r) >= 4 and r[-1].strip() not in ("B/A",)]
assert len(ratios) >= 9 + 3, len(ratios)  # write: 3 sizes x 3 variants, sendrecv: 3 sizes
assert set(ratios) == {"1.00"}, set(ratios)
text = open(sys.argv[1]).read()
assert "## write" in text and "## sendrecv" in text
PY
# Two reports whose ratios are known: B's write records are A's with Gbps scaled by a factor per
# variant, in reverse order, one row missing. Every row must show its own factor (not 1/factor,
# not a neighbour's), the missing row "-", and the geometric mean the factors' over the rest.
mkdir -p "$WORK/b"
python3 - "$dir/write.json" "$WORK/b/write.json" <<'PY' || fail "could not make report B"
import json, sys
doc = json.load(open(sys.argv[1]))
factor = {"Single": 2.0, "Split": 0.5, "RoundRobin": 4.0}
res = [dict(r, gbps=r["gbps"] * factor[r["variant"]]) for r in doc["results"]]
doc["results"] = list(reversed(res))[1:]  # A's last row is missing from B
json.dump(doc, open(sys.argv[2], "w"))
PY
"$COMPARE" "$dir" "$WORK/b" >"$WORK/cmp2" || fail "tools/compare of two reports exited $?"
python3 - "$WORK/cmp2" "$dir/write.json" <<'PY' || fail "tools/compare's ratios are not the known ones"
import json, math, sys
text = open(sys.argv[1]).read().split("## write")[1].split("##")[0]
last = json.load(open(sys.argv[2]))["results"][-1]
factor = {"Single": 2.0, "Split": 0.5, "RoundRobin": 4.0}
rows = [[c.strip() for c in l.strip().strip("|").split("|")] for l in text.splitlines()
        if l.startswith("| ") and not l.startswith("| size")]
assert len(rows) == 9, rows
logs = []
for size, variant, a, b, ratio in rows:
    if variant == last["variant"] and size == f"{last['size'] // 1024}K":
        assert ratio == "-" and b == "-", (size, variant, ratio)
        continue
    assert ratio == f"{factor[variant]:.2f}", (size, variant, ratio)
    logs.append(math.log(factor[variant]))
mean = f"{math.exp(sum(logs) / len(logs)):.2f}"
assert f"Geometric mean of B/A over {len(logs)} rows: {mean}" in text, mean
PY
# Runs of other settings are other measurements: refused, unless told.
mkdir -p "$WORK/c"
python3 - "$dir/write.json" "$WORK/c/write.json" <<'PY' || fail "could not make report C"
import json, sys
doc = json.load(open(sys.argv[1]))
doc["settings"]["iters"] += 7
json.dump(doc, open(sys.argv[2], "w"))
PY
"$COMPARE" "$dir" "$WORK/c" >"$WORK/cmp3" 2>"$WORK/err3"
rc=$?
[ $rc -eq 2 ] && grep -q "write.json was measured with other settings.*iters" "$WORK/err3" ||
	fail "tools/compare paired runs of other iterations: exit $rc, $(cat "$WORK/err3")"
"$COMPARE" --any-settings "$dir" "$WORK/c" >"$WORK/cmp3" || fail "--any-settings exited $?"
grep -q "Settings differ: iters" "$WORK/cmp3" || fail "--any-settings does not name the difference"
grep -q "^A: efabench .*libfabric" "$WORK/cmp3" || fail "compare does not show the files' stamps"
echo PASS
