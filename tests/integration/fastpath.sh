#!/usr/bin/env bash
# fastpath.sh: the floor program and scripts/fastpath-bench.sh run end to end on shm with tiny
# counts: every measurement yields a number for both programs (no timing is asserted).
. "$(dirname "$0")/lib.sh"
FLOOR=${FLOOR:?set FLOOR to the efabench-floor binary}
for t in "sendrecv 64 200" "write 64 200" "rate 64 2000 8"; do
	# shellcheck disable=SC2086
	v=$(timeout 60 "$FLOOR" $t --provider shm) || fail "efabench-floor $t failed"
	python3 -c 'import sys; assert float(sys.argv[1]) > 0' "$v" || fail "efabench-floor $t printed '$v'"
	echo "ok: efabench-floor $t -> $v"
done
timeout 60 "$FLOOR" bogus 8 1 >/dev/null 2>&1 && fail "a bad test name was accepted"
# Long enough for a write to land before the completion of the acknowledgement that let it go
# (the floor used to drop such a completion, and could then wait for ever).
for p in shm tcp; do
	timeout 60 "$FLOOR" write 8 20000 --provider $p >/dev/null || fail "efabench-floor write on $p failed or hung"
done
# Per-iteration samples come from the cheap timer, scaled to the clock: their statistics stay
# ordered and the run says which timer it used.
"$EFABENCH" sendrecv --np 2 -n 2000 -b 8 -e 8 --provider shm --json "$WORK/j" >/dev/null ||
	fail "efabench sendrecv failed"
python3 - "$WORK/j" <<'PY' || fail "timer or sample statistics wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["settings"]["timer"] in ("tsc", "clock_gettime"), d["settings"]
r = d["results"][0]
assert 0 < r["min_us"] <= r["p50_us"] <= r["p99_us"] <= r["max_us"], r
assert r["min_us"] <= r["lat_us"] <= r["max_us"], r
print("ok: timer", d["settings"]["timer"], "lat", r["lat_us"], "us")
PY
# Both programs' ranks pinned one per CPU, as the README's runs are.
cpus=$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0))[:2])))')
[[ $cpus == *,* ]] || cpus=
CPUS=$cpus PROVIDERS=shm SIZES="8 4096" REPS=1 ITERS=200 EFABENCH=$EFABENCH FLOOR=$FLOOR \
	timeout 240 bash "$(dirname "$0")/../../scripts/fastpath-bench.sh" >"$WORK/t" || fail "the script failed"
cat "$WORK/t"
[ "$(grep -c '^| shm |' "$WORK/t")" -eq 6 ] || fail "want 6 rows"
! grep -q '| 0.000 |\|nan\|inf' "$WORK/t" || fail "a measurement is missing"
echo "PASS"
