#!/usr/bin/env bash
# queues.sh PROV: providers' real queues made tiny (shm: 4 sends; tcp;ofi_rxm: 4, tcp 8), so
# that posts are refused with -FI_EAGAIN all the time: alltoall with 64 writes in flight per
# peer at 16 ranks, and moe's decode step, complete with every byte right.
. "$(dirname "$0")/lib.sh"
prov=${1:?provider}
case $prov in
shm) small=(env FI_SHM_TX_SIZE=4 FI_SHM_RX_SIZE=4) ;;
tcp) small=(env FI_OFI_RXM_TX_SIZE=4 FI_TCP_TX_SIZE=8) ;;
*) fail "no small queues known for $prov" ;;
esac
run_ok "alltoall --window 64 with tiny queues" "${small[@]}" "$EFABENCH" alltoall --np 16 \
	--provider "$prov" --window 64 -b 4K -e 1M -f 16 -n 4 -w 1 --check --timeout 30 \
	--json "$WORK/a.json"
check_json "$WORK/a.json" 9 0
hosts=()
[ "$prov" = tcp ] && hosts=(--hosts 2) # the fabric between two emulated hosts
run_ok "moe decode with tiny queues" "${small[@]}" "$EFABENCH" moe --np 4 --provider "$prov" \
	--preset decode "${hosts[@]}" -n 3 -w 1 --timeout 30 --json "$WORK/m.json"
python3 - "$WORK/m.json" <<'PY' || fail "moe under tiny queues"
import json, sys
d = json.load(open(sys.argv[1]))
res = d["results"]
assert len(res) >= 6 and all(r["wrong"] == 0 for r in res), [(r["initiator"], r["wrong"]) for r in res]
PY
echo "PASS"
