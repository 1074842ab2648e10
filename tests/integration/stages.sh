#!/usr/bin/env bash
# stages.sh: where a put's time goes, on the proxy with CPU producers over shm (no GPU needed).
# The sampled puts' stages: in JSON per record, in the table after the results, and in the
# trace (--trace), whose events are well formed (ph, ts, dur, pid, tid), whose spans nest per
# lane, whose samples are counted, and in which the chain of a blocking put (queue, proxy, local
# completion, back to producer) adds up to its whole, sample by sample. --stages off stamps
# nothing; a proxy thread slowed on purpose (--slow-proxy) is named by the verdict; --trace
# without stages and a sampling of 0 are refused. moe: every rank's iterations, each leg's send
# and wait adding up to the whole in the trace (a producer's send: its pack, push, store and
# complete), the verdict from the stage that dominates, or from its part that does.
. "$(dirname "$0")/lib.sh"
common=(--producers-on cpu --np 2 --provider shm --timeout 20)

run_ok "blocking puts, 1 in 8 stamped" "$EFABENCH" proxy "${common[@]}" --mode lat -b 8 -e 64 \
	-n 400 -w 10 --stages 8 --json "$WORK/lat.json" --trace "$WORK/lat.trace"
grep -q "^## Where the time goes" "$WORK/out" || fail "no stage table"
grep -q "^# ProxyPut 64: most of the time goes to " "$WORK/out" || fail "no line naming a stage"
python3 - "$WORK/lat.json" "$WORK/lat.trace" <<'PY' || fail "stages or trace do not check out"
import json, sys
from collections import defaultdict
doc = json.load(open(sys.argv[1]))
put = [r for r in doc["results"] if r["variant"] == "ProxyPut"]
assert put and all(r["stages"]["samples"] >= 400 // 8 - 2 for r in put), put
for r in put:
    st = r["stages"]
    for k in ("whole", "queue", "proxy", "local completion", "back to producer"):
        assert st[k]["samples"] > 0 and st[k]["p50_us"] > 0, (k, st[k])
    assert st["dominant"] in ("queue", "proxy", "local completion", "to the target",
                              "back to producer"), st["dominant"]
tr = json.load(open(sys.argv[2]))
ev = tr["traceEvents"]
for e in ev:
    for k in ("ph", "ts", "dur", "pid", "tid"):
        assert k in e, (k, e)
# spans nest in every lane: each starts after the last open one ends, or ends within it
lanes = defaultdict(list)
for e in ev:
    if e["ph"] == "X":
        lanes[(e["pid"], e["tid"])].append(e)
for lane, xs in lanes.items():
    xs.sort(key=lambda e: (e["ts"], -e["dur"]))
    stack = []
    for e in xs:
        end = e["ts"] + e["dur"]
        while stack and stack[-1] <= e["ts"] + 1e-3:
            stack.pop()
        assert not stack or end <= stack[-1] + 1e-3, (lane, e, stack)
        stack.append(end)
samples = {(e["args"]["point"], e["args"]["sample"]) for e in ev if e["name"] == "sample"}
assert len(samples) == tr["otherData"]["samples"] > 0, (len(samples), tr["otherData"])
assert tr["otherData"]["samples"] == sum(r["stages"]["samples"] for r in doc["results"]
                                         if "stages" in r)
# a blocking put's chain adds up to its whole on rank 0
chain = ("queue", "proxy", "local completion", "back to producer")
got = defaultdict(dict)
for e in ev:
    if e["ph"] == "X" and e["pid"] == 0:
        got[(e["args"]["point"], e["args"]["sample"])][e["name"]] = e["dur"]
checked = 0
for key, d in got.items():
    if key[0].startswith("ProxyPut") and all(k in d for k in chain):
        assert abs(sum(d[k] for k in chain) - d["sample"]) < 0.01, (key, d)
        checked += 1
assert checked >= 4 * (400 // 8 - 2), checked
print("stages ok:", len(ev), "events,", len(samples), "samples,", checked, "chains summed")
PY

run_ok "--stages off" "$EFABENCH" proxy "${common[@]}" --mode lat -b 8 -e 8 -n 200 -w 5 \
	--stages off --json "$WORK/off.json"
grep -q "Where the time goes" "$WORK/out" && fail "--stages off printed stages"
python3 -c 'import json,sys; assert not any("stages" in r for r in json.load(open(sys.argv[1]))["results"])' \
	"$WORK/off.json" || fail "--stages off left stages in the JSON"

# 5 ms per command: well above what sharing two loaded cores adds to any other stage.
run_ok "a slow proxy thread" "$EFABENCH" proxy "${common[@]}" --mode lat -b 8 -e 8 -n 100 -w 5 \
	--stages 2 --slow-proxy 5000000 --json "$WORK/slow.json"
python3 - "$WORK/slow.json" <<'PY' || fail "the slow proxy thread is not what bounds the puts"
import json, sys
put = [r for r in json.load(open(sys.argv[1]))["results"] if r["variant"] == "ProxyPut"]
assert put and all(r["verdict"]["bound"] == "proxy" for r in put), [r.get("verdict") for r in put]
PY
grep -q "^# ProxyPut 8: proxy (stage proxy dominates" "$WORK/out" || fail "no verdict line"

# moe: every rank stamps each timed iteration's legs (two emulated hosts: two legs an op).
run_ok "moe's legs" "$EFABENCH" moe --np 4 --hosts 2 --provider shm --mode normal --tokens 64 \
	--hidden 512 -n 6 -w 1 --initiators cpu,a2av --timeout 20 --json "$WORK/moe.json" \
	--trace "$WORK/moe.trace"
grep -q "^# cpu combine: most of the time goes to combine [01] " "$WORK/out" ||
	fail "moe: no line naming a stage"
python3 - "$WORK/moe.json" "$WORK/moe.trace" <<'PY' || fail "moe's stages do not check out"
import json, sys
from collections import defaultdict
res = json.load(open(sys.argv[1]))["results"]
legs = {"dispatch": ["dispatch"], "combine": ["combine"], "pair": ["dispatch", "combine"]}
PARTS = ("pack", "push", "store", "complete")
chains = {}
for r in res:
    st, ph = r["stages"], r["phase"]
    assert st["samples"] == 6 * 4, (r["initiator"], ph, st["samples"])
    chain = ["%s %d %s" % (op, leg, k) for op in legs[ph] for leg in (0, 1)
             for k in ("send", "wait")]
    for k in chain:
        assert st[k]["samples"] == 24 and st[k]["p50_us"] is not None, (ph, k, st[k])
    # CPU producers' sends split into pack (the time the producer that pushed last spent
    # making what it pushed), push (until it had pushed its fabric puts), store (until the last
    # had made everything) and complete (until their writes were complete); the a2av stamps
    # no such parts
    parts = ["%s %d %s" % (op, leg, k) for op in legs[ph] for leg in (0, 1)
             for k in PARTS] if r["initiator"] == "cpu" else []
    for k in parts:
        assert st[k]["samples"] == 24 and st[k]["p50_us"] is not None, (ph, k, st[k])
    for k in set(st) - set(chain) - set(parts) - {"samples", "clock_uncertainty_us", "clocks",
                                                  "dominant", "dominant_part", "whole"}:
        assert st[k]["samples"] == 0 and st[k]["p50_us"] is None, (ph, k, st[k])
    assert st["dominant"] in chain, st["dominant"]
    top = st["dominant"]
    if top.endswith("send") and parts:
        assert st["dominant_part"] in [top[:-4] + k for k in PARTS], st
        top = st["dominant_part"]
    else:
        assert "dominant_part" not in st, st
    want = {"send": "producer", "pack": "producer", "push": "producer", "store": "producer",
            "complete": "proxy"}.get(
        top.split()[-1], "arrival")
    assert r["verdict"]["bound"] == want, (r["verdict"], st["dominant"])
    chains["%s %s" % (r["initiator"], ph)] = (chain, parts)
# each sampled iteration's chain adds up to its whole, on every rank (a pair's whole also holds
# the moment between its dispatch's last arrival and its combine's start: under 5 % of the
# whole in the median sample, since one sample preempted there on shared cores may hold more)
got = defaultdict(dict)
pair_gaps = defaultdict(list)
for e in json.load(open(sys.argv[2]))["traceEvents"]:
    if e["ph"] == "X":
        got[(e["args"]["point"], e["args"]["sample"])][e["name"]] = (e["dur"], e["pid"])
checked = 0
for (point, sample), d in got.items():
    chain, parts = chains[point]
    assert all(k in d for k in chain + parts + ["sample"]), (point, sorted(d))
    gap = d["sample"][0] - sum(d[k][0] for k in chain)
    assert -0.01 < gap and (point.endswith("pair") or gap < 0.01), (point, d)
    if point.endswith("pair"):
        pair_gaps[point].append(gap / d["sample"][0])
    for k in parts[::len(PARTS)]:  # a send's pack, push, store and complete add up to it
        leg = k[:-4]
        assert abs(d[leg + "send"][0] - sum(d[leg + x][0] for x in PARTS)) < 0.01, (point, k, d)
    assert d["sample"][1] == sample & 0xfffff, (point, sample, d["sample"])  # its own rank
    checked += 1
assert checked == 6 * 24, checked
for point, g in pair_gaps.items():
    assert sorted(g)[len(g) // 2] < 0.05, (point, sorted(g))
print("moe stages ok:", checked, "iterations summed")
PY
run_ok "moe, --stages off" "$EFABENCH" moe --np 2 --provider shm --tokens 16 --hidden 512 -n 2 \
	-w 1 --initiators cpu --stages off --json "$WORK/moe-off.json"
grep -q "Where the time goes" "$WORK/out" && fail "moe --stages off printed stages"
python3 -c 'import json,sys; assert not any("stages" in r for r in json.load(open(sys.argv[1]))["results"])' \
	"$WORK/moe-off.json" || fail "moe --stages off left stages in the JSON"

for bad in "--stages 0" "--stages off --trace $WORK/x.trace" "--stages lots"; do
	# shellcheck disable=SC2086
	"$EFABENCH" proxy "${common[@]}" $bad >"$WORK/bad" 2>&1
	rc=$?
	[ $rc -eq 2 ] || fail "proxy $bad: exit $rc, not 2"
done
echo "stages: ok"
