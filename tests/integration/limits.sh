#!/usr/bin/env bash
# limits.sh PROV: what efa allows, run on shm and tcp. The testing overrides shrink what the
# provider reports to efa-direct's (sends up to 8,928 bytes, unordered; no RMA inject) and to a
# 1 MiB largest write; each run must adapt and check every byte, or refuse with one line before
# any rank starts.
. "$(dirname "$0")/lib.sh"
prov=${1:?provider}
common=(--provider "$prov" --timeout 20)
mtu=(env EFABENCH_TEST_MAX_MSG=8928)

# Unordered sends of at most 8,928 bytes: a 16 MiB message cannot be cut; refused up front.
"${mtu[@]}" EFABENCH_TEST_NO_SAS=1 "$EFABENCH" sendrecv "${common[@]}" --np 2 -b 8 -e 16M -f 64 \
	-n 3 -w 1 -v >"$WORK/out" 2>"$WORK/err"
rc=$?
cat "$WORK/err" >&2
[ $rc -eq 2 ] || fail "sendrecv beyond unordered sends' size exited $rc, want 2"
grep -c 'error:' "$WORK/err" | grep -qx 1 || fail "want exactly one error line"
grep -q 'sends at most 8928 bytes per message.*no FI_ORDER_SAS.*-e 16M is refused' "$WORK/err" ||
	fail "the refusal does not name the limit"
! grep -q 'is pid' "$WORK/err" || fail "ranks started before the refusal"
[ ! -s "$WORK/out" ] || fail "a refused run printed a table"

# Within the limit, unordered: runs, every byte checked.
run_ok "sendrecv within 8928 bytes" "${mtu[@]}" EFABENCH_TEST_NO_SAS=1 "$EFABENCH" sendrecv \
	"${common[@]}" --np 2 -b 8 -e 8K -f 32 -n 5 -w 1 --check --json "$WORK/s1.json"
check_json "$WORK/s1.json" 3 0

# Ordered sends of 8,928 bytes: a 16 MiB message goes as 1,880 sends, in order.
run_ok "sendrecv cut into 8928-byte sends" "${mtu[@]}" "$EFABENCH" sendrecv "${common[@]}" \
	--np 2 -b 8 -e 16M -f 64 -n 3 -w 1 --check --json "$WORK/s2.json"
check_json "$WORK/s2.json" 5 0
python3 - "$WORK/s2.json" <<'PY' || fail "the limits are not the ones asked for"
import json, sys
l = json.load(open(sys.argv[1]))["settings"]["limits"]
assert l["max_msg"] == 8928 and l["ordered_sends"], l
PY

# No RMA inject: 8-byte writes at full rate without fi_inject_writedata, every write checked.
for inj in none zero; do
	extra=()
	[ $inj = zero ] && extra=(env EFABENCH_TEST_INJECT_RMA=0)
	run_ok "write --rate ($inj)" "${extra[@]}" "$EFABENCH" write "${common[@]}" --np 2 --rate \
		--check -b 8 -e 8 -n 400 -w 40 --json "$WORK/r-$inj.json"
	check_json "$WORK/r-$inj.json" 1 0
done
python3 - "$WORK" <<'PY' || fail "write --rate injected where RMA inject is 0 (or never)"
import json, sys
w = sys.argv[1]
plain = json.load(open(f"{w}/r-none.json"))
zero = json.load(open(f"{w}/r-zero.json"))
assert plain["results"][0]["inject"] is True, plain["results"][0]
assert zero["results"][0]["inject"] is False, zero["results"][0]
assert zero["settings"]["limits"]["inject_rma"] == 0, zero["settings"]["limits"]
PY

# A 1 MiB largest write: --chunk 2M is cut to 1M on every rank (write and alltoall).
for bench in write alltoall; do
	run_ok "$bench --chunk 2M" env EFABENCH_TEST_MAX_RMA=1048576 "$EFABENCH" $bench \
		"${common[@]}" --np 3 -b 4M -e 4M --chunk 2M -n 3 -w 1 --check \
		--json "$WORK/c-$bench.json"
	grep -q '^# .*chunk: 1M (the provider.s largest write; 2M asked)' "$WORK/out" ||
		fail "$bench: the header does not say the chunk was cut"
	python3 - "$WORK/c-$bench.json" <<'PY' || fail "$bench: chunk not cut to 1M"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["settings"]
assert s["chunk"] == 1 << 20 and s["chunk_asked"] == 2 << 20, s
assert s["limits"]["max_rma"] == 1 << 20, s["limits"]
assert all(r["wrong"] == 0 for r in d["results"])
PY
done
# The chunks are really 1M: chunk 3 exists only then (2M chunks: two per 4M write), and
# landing it on chunk 2's place is caught.
env EFABENCH_TEST_MAX_RMA=1048576 "$EFABENCH" write "${common[@]}" --np 2 -b 4M -e 4M --chunk 2M \
	-n 2 -w 1 --layout single --misplace-chunk 3 >"$WORK/out" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$WORK/out"; fail "a misplaced 4th 1M chunk went unseen (exit $rc)"; }
echo "PASS"
