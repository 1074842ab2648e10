#!/usr/bin/env bash
# ipc.sh MODE: `efabench ipc` end to end.
#   refuse   fewer than two GPUs (CI: none; on a GPU machine one, through
#            CUDA_VISIBLE_DEVICES): exit 2 with one clear line, no rank started
#   sweep    two or more GPUs: the sweep on small and odd sizes, both directions, every
#            method, every byte verified after every copy; JSON and CSV checked; the
#            defaults --help gives ipc's own options against a run's JSON
#   pairs    two or more GPUs: --pairs each and --pairs all
#   corrupt  two or more GPUs: a flipped byte on the receiving GPU fails the run (exit 1)
#   shared   two or more GPUs, other GPU work beside: two ipc jobs at once, then ipc beside a
#            proxy job with GPU producers, each 20 times (EB_IPC_SHARED_ROUNDS), every one clean
. "$(dirname "$0")/lib.sh"
mode=$1
gpus=0
command -v nvidia-smi >/dev/null && gpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
export NCCL_NVLS_ENABLE=0 # never NVLink multicast on shared machines (efabench uses none)

if [ "$mode" = refuse ]; then
	[ "$gpus" -ge 1 ] && export CUDA_VISIBLE_DEVICES=0
	timeout 120 "$EFABENCH" ipc -b 4K -e 4K >"$WORK/out" 2>"$WORK/err"
	rc=$?
	cat "$WORK/err" >&2
	[ $rc -eq 2 ] || fail "exit $rc, want 2"
	[ ! -s "$WORK/out" ] || fail "printed a table without two GPUs"
	grep -q "efabench: error: .*\(two or more GPUs\|needs a build with CUDA\)" "$WORK/err" ||
		fail "no line saying why"
	# With one GPU the refusal is one line (without any GPU CUDA's own reason comes first).
	[ "$gpus" -ge 1 ] && { [ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "more than one line"; }
	echo "PASS"
	exit 0
fi

[ "$gpus" -ge 2 ] || skip "efabench ipc needs two GPUs; this machine has $gpus"
"$EFABENCH" info | grep -q "^CUDA: built in" || skip "efabench was built without CUDA"

# run EXPECTED_RC ARGS...: efabench ipc with a deadline, output kept in $WORK.
run() {
	local want=$1
	shift
	local rc
	run_show timeout 600 "$EFABENCH" ipc --timeout 60 "$@" --json "$WORK/out.json" \
		--csv "$WORK/out.csv"
	rc=$?
	[ $rc -eq "$want" ] || fail "efabench ipc $* exited $rc, want $want"
}

# check_report WRONG(0|some) GROUPS: every record of the JSON and CSV adds up.
check_report() {
	python3 - "$WORK/out.json" "$WORK/out.csv" "$@" <<'PY' || fail "report does not check out"
import csv, json, sys
doc = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
wrong, groups = sys.argv[3], int(sys.argv[4])
res = doc["results"]
assert len(res) == len(rows) > 0
sweep = [r for r in res if r["kind"] == "sweep"]
shapes = {r["shape"] for r in sweep}
for r in res:
    assert r["t_s"] > 0 and r["gbytes_per_s"] > 0, r
    assert abs(r["gbytes_per_s"] - r["bytes_per_copy"] / r["t_s"] / 1e9) < 1e-6 * r["gbytes_per_s"]
    assert abs(r["gbps"] - 8 * r["gbytes_per_s"]) < 1e-9 * r["gbps"] + 1e-9
    assert len(r["groups"]) == groups, (len(r["groups"]), groups)
    for g in r["groups"]:
        assert 0 < g["min_s"] <= g["p50_s"] <= g["p99_s"] <= g["max_s"]
for d in {r["dir"] for r in res}:
    for size in {r["size"] for r in res}:
        got = {r["shape"] for r in sweep if r["dir"] == d and r["size"] == size}
        assert got == shapes, f"{d} {size}: {got ^ shapes} missing"
        best = [r for r in res if r["dir"] == d and r["size"] == size and r["kind"] == "best"]
        assert len(best) == 1 and best[0]["method"] != "ce"
if wrong == "0":
    assert all(r["wrong"] == 0 for r in res), "wrong words reported"
else:
    assert sum(r["wrong"] for r in res) > 0, "corruption went unnoticed"
PY
}

case "$mode" in
sweep)
	# 1000 and 4000 bytes: tails past the last 16-byte vector; --check verifies every copy.
	run 0 -b 1000 -e 4M -f 4000 -w 2 -n 4 --check --grid 1,3,all --block 32,256 --tma-chunk 1K
	grep -q "Out of bounds values : 0 OK" "$WORK/out" || fail "wrong words"
	check_report 0 1
	run 0 -b 4M -e 4M -n 5 --grid all --block 1024
	check_report 0 1
	# three copies per launch (the tma pipeline runs through them as one stream), checked
	run 0 -b 1000 -e 1M -f 1000 -w 1 -n 3 --check --copies 3 --grid 1,all --block 256 \
		--tma-chunk 1K
	check_report 0 1
	python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["copies_per_launch"] == 3' \
		"$WORK/out.json" || fail "copies per launch not recorded"
	# ipc's own options left to their defaults: what --help says each is, the run took.
	"$EFABENCH" ipc --help >"$WORK/help"
	run 0 -b 64K -e 64K -w 1 -n 2 --dirs write
	PYTHONPATH="$(dirname "$0")" python3 - "$WORK/help" "$WORK/out.json" <<'PY' || fail "ipc: --help's defaults against its JSON"
import json, re, sys
import help_opts
from help_opts import same
help_text, doc = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
def opt(name):
    return help_opts.opt(help_text, name)
units = {"K": 1 << 10, "M": 1 << 20}
sweep = [r for r in doc["results"] if r["kind"] == "sweep"]
same("pairs", re.search(r"(\w+) \([^)]*, default\)", opt("pairs")).group(1), doc["pairs"])
assert "default all three" in opt("methods")
same("methods", {"ce", "st", "tma"}, {r["method"] for r in sweep})
grids = re.search(r"default ([\d,a-z]+)\)", opt("grid")).group(1).split(",")
same("grid", {doc["sms"] if g == "all" else int(g) for g in grids},
     {r["grid"] for r in sweep if r["method"] == "tma"})
same("block", {int(b) for b in re.search(r"default ([\d,]+)\)", opt("block")).group(1).split(",")},
     {r["block"] for r in sweep if r["method"] == "st"})
v = re.search(r"default (\d+)([KM]?)\)", opt("tma-chunk"))
same("tma-chunk", int(v.group(1)) * units.get(v.group(2), 1), doc["tma_chunk"])
same("tma-stages", int(re.search(r"default (\d+)\)", opt("tma-stages")).group(1)), doc["tma_stages"])
same("copies", int(re.search(r"\(default (\d+)\)", opt("copies")).group(1)), doc["copies_per_launch"])
PY
	;;
pairs)
	n=$gpus
	run 0 -b 64K -e 1M -f 16 -w 1 -n 3 --pairs each --grid 2,all --block 256
	check_report 0 $((n * (n - 1)))
	run 0 -b 64K -e 1M -f 16 -w 1 -n 3 --pairs all --grid 2,all --block 256
	check_report 0 "$n"
	;;
corrupt)
	run 1 -b 64K -e 64K -w 1 -n 2 --grid all --block 256 --corrupt-at 4097
	grep -q "Out of bounds values : [1-9][0-9]* FAILED" "$WORK/out" || fail "footer"
	grep -q "wrong words of" "$WORK/err" || fail "the receiving GPU did not say what it found"
	check_report some 1
	python3 - "$WORK/out.json" <<'PY' || fail "a measurement missed the corruption"
import json, sys
assert all(r["wrong"] > 0 for r in json.load(open(sys.argv[1]))["results"])
PY
	;;
shared)
	# The same GPUs shared by two jobs, as on a host whose other jobs use its GPUs: each must
	# verify every byte and its completion flags, whatever runs beside it.
	rounds=${EB_IPC_SHARED_ROUNDS:-20}
	args=(ipc --timeout 60 -b 64K -e 1M -f 16 -w 1 -n 3 --pairs each --grid 2,all --block 256)
	beside=(proxy --np 2 --provider shm --mem pinned --timeout 60 -b 4K -e 1M -f 16 -n 20)
	for i in $(seq 1 "$rounds"); do
		timeout 600 "$EFABENCH" "${args[@]}" >"$WORK/a.out" 2>"$WORK/a.err" &
		a=$!
		if [ $((i % 2)) -eq 1 ]; then
			what="another ipc job"
			timeout 600 "$EFABENCH" "${args[@]}" >"$WORK/b.out" 2>"$WORK/b.err"
		else
			what="a proxy job with GPU producers"
			timeout 600 "$EFABENCH" "${beside[@]}" >"$WORK/b.out" 2>"$WORK/b.err"
		fi
		rb=$?
		wait $a
		ra=$?
		if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then
			cat "$WORK/a.out" "$WORK/a.err" "$WORK/b.out" "$WORK/b.err" >&2
			fail "round $i: ipc exited $ra beside $what (exit $rb)"
		fi
		grep -q "Out of bounds values : 0 OK" "$WORK/a.out" || fail "round $i: ipc footer"
		echo "round $i: ipc clean beside $what"
	done
	;;
*) fail "unknown mode $mode" ;;
esac
echo "PASS"
