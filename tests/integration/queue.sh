#!/usr/bin/env bash
# queue.sh cpu|gpu|gpu-tiny: `efabench queue` end to end with every command verified.
#   cpu       CPU producers (what CI runs): 1..8 threads, a small ring, JSON checked
#   gpu       GPU producers up to all SMs (skipped without a GPU)
#   gpu-tiny  GPU producers through an 8-slot ring: wrap-around and the full path
. "$(dirname "$0")/lib.sh"
mode=$1
case "$mode" in
cpu) args=(--producers-on cpu --producers 1,2,8 -n 20000 --slots 64 --lat-iters 2000) ;;
gpu) args=(--producers-on gpu --producers 1t,1w,1b,all -n 200 --lat-iters 2000) ;;
gpu-tiny) args=(--producers-on gpu --producers 1w,4b,all -n 50 --slots 8 --batch 2 --lat-iters 500) ;;
*) fail "unknown mode $mode" ;;
esac
if [ "$mode" != cpu ]; then
	command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q GPU ||
		skip "no CUDA GPU on this machine"
	"$EFABENCH" info | grep -q "^CUDA: built in" || skip "efabench was built without CUDA"
fi
timeout 300 "$EFABENCH" queue "${args[@]}" --timeout 20 --json "$WORK/q.json" >"$WORK/out" 2>"$WORK/err"
rc=$?
cat "$WORK/out"
cat "$WORK/err" >&2
[ $rc -eq 0 ] || fail "efabench queue exited $rc"
grep -q "Out of bounds values : 0 OK" "$WORK/out" || fail "commands lost, duplicated or torn"
python3 - "$WORK/q.json" <<'PY' || fail "JSON report does not check out"
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["results"]
assert len(rows) >= 3
for r in rows:
    assert r["lost"] == r["duplicated"] == r["torn"] == r["unknown"] == 0
    assert r["commands"] == r["producers"] * d["per_producer"]
    assert r["mcommands_per_s"] > 0
f, q = d["floor_round_trip"], d["queue_round_trip"]
assert 0 < f["p50_us"] <= f["p99_us"] and 0 < q["p50_us"] <= q["p99_us"]
# push-to-seen is one way of a round trip: above zero, under the whole (by the clocks'
# uncertainty at most); the estimate without clocks is the round trip less half the floor.
p, unc = d["push_to_seen"], d["clock_uncertainty_us"]
assert p["samples"] == q["samples"] and 0 <= unc
assert 0 < p["p50_us"] and p["min_us"] > -unc and p["p50_us"] < q["p50_us"] + unc, (p, q, unc)
est = d["rtt_less_half_floor_p50_us"]
assert abs(est - (q["p50_us"] - f["p50_us"] / 2)) < 0.01, est
PY
echo "PASS"
