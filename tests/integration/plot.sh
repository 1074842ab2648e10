#!/usr/bin/env bash
# plot.sh CASE: `efabench plot` on real runs' JSON (and a synthetic ipc one): the PNGs exist, and
# what their NAME.data.json says was drawn is exactly what the JSON holds.
#   write     write on shm: Gbps and latency per variant, values identical to the JSON's
#   latency   sendrecv on shm: latency (us) per variant on log axes, values identical
#   matrix    matrix on tcp, 3 ranks: the heat map's cells are the JSON's, and the cells marked
#             are exactly the flagged ones (also with flags set by hand)
#   ipc       a synthetic ipc JSON (no GPUs here): per direction, the grid x block heat map
#   queue     queue with CPU producers: Mcommands/s per producer count
#   proxy     proxy with CPU producers: the proxy / CPU-initiated ratio per size; --mode rate
#   moe       moe with CPU producers, 3 ranks, a hot rank: per-rank p50/p99 bars per phase, the
#             traffic heat maps (tokens, selections) equal to the JSON's matrix, GB/s summary
#   badinput  a missing file, an unwritable -o, no -o: exit 2 with one line, no Python needed
. "$(dirname "$0")/lib.sh"
case=$1

have_mpl() {
	python3 -c 'import matplotlib' 2>/dev/null || /usr/bin/python3 -c 'import matplotlib' 2>/dev/null
}

# run_plot JSON...: efabench plot into $WORK/out, which must succeed.
run_plot() {
	"$EFABENCH" plot "$@" -o "$WORK/out" >"$WORK/plot.out" 2>"$WORK/plot.err"
	local rc=$?
	cat "$WORK/plot.out"
	cat "$WORK/plot.err" >&2
	[ $rc -eq 0 ] || fail "efabench plot exited $rc"
}

# bench ARGS...: an efabench run that must succeed.
bench() {
	timeout 120 "$EFABENCH" "$@" >"$WORK/bench.out" 2>"$WORK/bench.err" ||
		{ cat "$WORK/bench.out" "$WORK/bench.err" >&2; fail "efabench $* failed"; }
}

# pngs NAME...: each $WORK/out/NAME.png is a non-empty PNG and has its NAME.data.json.
pngs() {
	local n
	for n in "$@"; do
		[ -s "$WORK/out/$n.png" ] || fail "$n.png missing or empty"
		[ "$(head -c 4 "$WORK/out/$n.png" | od -An -c | tr -d ' ')" = '211PNG' ] ||
			fail "$n.png is not a PNG"
		[ -s "$WORK/out/$n.data.json" ] || fail "$n.data.json missing"
	done
}

# check <<'PY' ... PY: Python run with W = $WORK, J(path) loading a JSON file and D(name) the
# data.json of figure NAME; any failed assert fails the test.
check() {
	python3 -c "import json, sys
W = sys.argv[1]
def J(p): return json.load(open(p))
def D(n): return json.load(open(f'{W}/out/{n}.data.json'))
$(cat)" "$WORK" || fail "the figures' data do not match the JSON"
}

if [ "$case" = badinput ]; then
	expect2() { # description, args...
		local what=$1
		shift
		"$EFABENCH" plot "$@" >"$WORK/o" 2>"$WORK/e"
		local rc=$?
		cat "$WORK/e" >&2
		[ $rc -eq 2 ] || fail "$what: exit $rc, want 2"
		[ "$(wc -l <"$WORK/e")" -eq 1 ] || fail "$what: want one line on stderr"
		[ ! -s "$WORK/o" ] || fail "$what: printed something on stdout"
	}
	echo '{"results": []}' >"$WORK/ok.json"
	expect2 "missing file" "$WORK/nosuch.json" -o "$WORK/out"
	grep -q "cannot read .*nosuch.json" "$WORK/e" || fail "the line does not name the file"
	expect2 "unwritable -o" "$WORK/ok.json" -o /dev/null/figures
	grep -q "/dev/null" "$WORK/e" || fail "the line does not name the folder"
	expect2 "no -o" "$WORK/ok.json"
	expect2 "no file" -o "$WORK/out"
	expect2 "unknown option" "$WORK/ok.json" -o "$WORK/out" --bogus
	echo PASS
	exit 0
fi

have_mpl || skip "python3-matplotlib is not installed (scripts/install-deps.sh installs it)"

case "$case" in
write)
	bench write --np 2 --provider shm -b 4K -e 256K -n 5 --link-gbps 100 --json "$WORK/w.json"
	run_plot "$WORK/w.json"
	pngs w-bandwidth w-latency
	check <<'PY'
doc = J(f"{W}/w.json")
res = doc["results"]
variants = {r["variant"] for r in res}
bw, lat = D("w-bandwidth"), D("w-latency")
assert set(bw["series"]) == variants == {"Single", "Split", "RoundRobin"}, bw["series"].keys()
for v in variants:
    want = sorted([r["size"], r["gbps"]] for r in res if r["variant"] == v)
    assert bw["series"][v] == want, (v, bw["series"][v], want)   # exactly, not rounded
    assert lat["series"][v] == sorted([r["size"], r["lat_us"]] for r in res if r["variant"] == v)
assert bw["hlines"] == {"link limit 100 Gbps": 100}, bw["hlines"]
assert bw["xscale"] == "log" and bw["yscale"] == "linear"
assert "provider: shm" in bw["stamp"], bw["stamp"]
assert "build: efabench " in bw["stamp"] and "machine: unknown" not in bw["stamp"], bw["stamp"]
assert "Gbps" in bw["ylabel"] and "us" in lat["ylabel"]
PY
	;;
latency)
	bench sendrecv --np 2 --provider shm -b 8 -e 64K -f 4 -n 10 --json "$WORK/s.json"
	run_plot "$WORK/s.json"
	pngs s-bandwidth s-latency
	check <<'PY'
res = J(f"{W}/s.json")["results"]
lat = D("s-latency")
assert set(lat["series"]) == {r["variant"] for r in res}
for v, pts in lat["series"].items():
    assert pts == sorted([r["size"], r["lat_us"]] for r in res if r["variant"] == v)
assert lat["xscale"] == "log" and lat["yscale"] == "log", (lat["xscale"], lat["yscale"])
assert D("s-bandwidth")["hlines"] == {}  # no link speed given: no limit drawn
PY
	;;
matrix)
	bench matrix --np 3 --provider tcp -s 256K -n 3 --lat-iters 20 --json "$WORK/m.json"
	# The same cells with flags set by hand: 2 -> 0 only.
	python3 - "$WORK/m.json" "$WORK/hand.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    r["flagged"] = (r["src"], r["dst"]) == (2, 0)
json.dump(d, open(sys.argv[2], "w"))
PY
	run_plot "$WORK/m.json" "$WORK/hand.json"
	pngs m-heatmap-ch0 hand-heatmap-ch0
	check <<'PY'
doc = J(f"{W}/m.json")
n = doc["ranks"]
for ch in sorted({r["chan"] for r in doc["results"]}):
    d = D(f"m-heatmap-ch{ch}")
    cells = [r for r in doc["results"] if r["chan"] == ch]
    for r in cells:
        assert d["z"][r["src"]][r["dst"]] == r["gbps"]
    assert all(d["z"][k][k] is None for k in range(n))
    assert d["marked"] == sorted([r["src"], r["dst"]] for r in cells if r["flagged"]), d["marked"]
assert D("hand-heatmap-ch0")["marked"] == [[2, 0]]
PY
	;;
ipc)
	python3 - "$WORK/ipc.json" <<'PY'
import json, sys
res = []
def rec(d, kind, method, g, b, size, gbs):
    res.append({"dir": d, "kind": kind, "method": method, "grid": g, "block": b, "size": size,
                "shape": "CE" if method == "ce" else f"{method} {g}x{b}",
                "bytes_per_copy": float(size), "t_s": size / gbs / 1e9, "gbytes_per_s": gbs,
                "gbps": 8 * gbs, "nvl_pct": None, "ce_pct": None, "wrong": 0, "groups": []})
for d in ("write", "read"):
    for size in (1 << 20, 64 << 20):
        rec(d, "sweep", "ce", 0, 0, size, 390.5)
        for g in (1, 2, 4, 132):
            for b in (256, 1024):
                rec(d, "sweep", "st", g, b, size, g * b / 100 + (size >> 20) / 1000 + (d == "read"))
            rec(d, "sweep", "tma", g, 32, size, 2.5 * g)
        rec(d, "ce", "ce", 0, 0, size, 391.0)
        rec(d, "best", "tma", 132, 32, size, 370.0)
json.dump({"bench": "ipc", "ranks": 2, "gpu": "Test GPU", "sms": 132,
           "nvlink": {"links": 18, "link_gbytes_per_s": 26.5, "peak_gbytes_per_s": 477.0},
           "results": res}, open(sys.argv[1], "w"))
PY
	run_plot "$WORK/ipc.json"
	pngs ipc-heatmap-write ipc-heatmap-read ipc-summary
	check <<'PY'
res = J(f"{W}/ipc.json")["results"]
for d in ("write", "read"):
    h = D(f"ipc-heatmap-{d}")
    assert h["x"] == [1, 2, 4, 132], h["x"]                       # columns: grid
    assert h["y"] == [["st", 256], ["st", 1024], ["tma", 32]], h["y"]  # rows: block
    assert [p["size"] for p in h["panels"]] == [1 << 20, 64 << 20]
    for p in h["panels"]:
        for r in res:
            if r["dir"] == d and r["kind"] == "sweep" and r["size"] == p["size"] and r["method"] != "ce":
                i = h["y"].index([r["method"], r["block"]])
                assert p["z"][i][h["x"].index(r["grid"])] == r["gbytes_per_s"]
        assert p["ce_gbytes_per_s"] == 390.5
s = D("ipc-summary")
assert s["series"]["write copy engine"] == [[1 << 20, 391.0], [64 << 20, 391.0]]
assert s["hlines"] == {"NVLink peak": 477.0}
PY
	;;
queue)
	bench queue --producers-on cpu --producers 1,2 -n 20000 --slots 64 --lat-iters 200 \
		--json "$WORK/q.json"
	run_plot "$WORK/q.json"
	pngs q-commands
	check <<'PY'
res = J(f"{W}/q.json")["results"]
q = D("q-commands")
(label, pts), = q["series"].items()
assert pts == sorted([r["producers"], r["mcommands_per_s"]] for r in res), pts
assert "commands/s" in q["ylabel"] and q["xlabel"] == "producers"
PY
	;;
proxy)
	bench proxy --producers-on cpu --np 2 --provider shm -b 4K -e 64K -n 5 --json "$WORK/p.json"
	bench proxy --producers-on cpu --np 2 --provider shm --mode rate --producers 1,2 -n 2000 \
		--json "$WORK/r.json"
	run_plot "$WORK/p.json" "$WORK/r.json"
	pngs p-bandwidth p-latency p-ratio r-ratio r-rate
	check <<'PY'
for name in ("p", "r"):
    res = J(f"{W}/{name}.json")["results"]
    ratio = D(f"{name}-ratio")
    want = {}
    for r in res:
        if "ratio_to" in r:
            want.setdefault(f"{r['variant']} / {r['ratio_to']}", []).append([r["size"], r["ratio"]])
    assert want and ratio["series"] == {k: sorted(v) for k, v in want.items()}, ratio["series"]
    assert ratio["hlines"] == {"CPU-initiated": 1.0}
assert D("p-ratio")["kind"] == "line" and D("r-ratio")["kind"] == "bar"
assert set(D("p-bandwidth")["series"]) == {r["variant"] for r in J(f"{W}/p.json")["results"]}
PY
	;;
moe)
	bench moe --np 3 --provider shm --initiators cpu,a2av --tokens 16 --hidden 256 --experts 12 \
		--route hot:1,3 -n 2 -q --json "$WORK/moe.json"
	run_plot "$WORK/moe.json"
	pngs moe-ranks-dispatch moe-ranks-combine moe-ranks-pair moe-traffic-tokens \
		moe-traffic-selections moe-summary
	check <<'PY'
doc = J(f"{W}/moe.json")
n, res = doc["ranks"], doc["results"]
assert n == 3 and doc["routing"] == "hot:1,3", (n, doc["routing"])
for key in ("tokens", "selections"):
    want = [[None] * n for _ in range(n)]
    for t in doc["traffic"]:
        want[t["src"]][t["dst"]] = t[key]
    assert all(v is not None for row in want for v in row), want   # every (src, dst) given
    d = D(f"moe-traffic-{key}")
    assert d["z"] == want, (key, d["z"], want)                      # exactly the JSON's matrix
    assert d["x"] == d["y"] == list(range(n)) and d["kind"] == "heatmap"
    assert d["received"] == [sum(want[a][b] for a in range(n)) for b in range(n)]
assert sum(t["tokens"] for t in doc["traffic"] if t["dst"] == 1) > 0
for ph in ("dispatch", "combine", "pair"):
    d = D(f"moe-ranks-{ph}")
    rows = {r["initiator"]: r for r in res if r["phase"] == ph}
    assert set(rows) == {"cpu", "a2av"} == set(d["p50"]) == set(d["p99"]), (rows.keys(), d["p50"])
    assert d["x"] == list(range(n))
    for i, r in rows.items():
        assert d["p50"][i] == [[e["rank"], e["p50_us"]] for e in r["ranks"]], (ph, i)
        assert d["p99"][i] == [[e["rank"], e["p99_us"]] for e in r["ranks"]], (ph, i)
        assert d["slowest"][i] == r["slowest_rank"], (ph, i, d["slowest"])
    assert "hot:1,3" in d["title"] and "3 ranks" in d["title"], d["title"]
s = D("moe-summary")
for r in res:
    assert s["fabric_GBps"][r["initiator"]][r["phase"]] == r["fabric_GBps"]
    assert s["sel_GBps"][r["initiator"]][r["phase"]] == r["sel_GBps"]
assert s["x"] == ["dispatch", "combine", "pair"], s["x"]
assert "provider: shm" in s["stamp"], s["stamp"]
PY
	;;
*) fail "unknown case $case" ;;
esac
echo PASS
