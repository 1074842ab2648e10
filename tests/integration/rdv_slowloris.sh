#!/usr/bin/env bash
# rdv_slowloris.sh: rank 0's rendezvous on loopback while 8 peers connect and say nothing, one
# sends garbage and one trickles a hello byte by byte: the honest rank is admitted at once (the
# job ends long before the 5 s a silent peer is given), the others are refused and logged.
. "$(dirname "$0")/lib.sh"
port=$((20000 + RANDOM % 20000))
export EFABENCH_TOKEN=slowloris-$$
args=(write --provider tcp -b 64K -e 64K -n 3 -w 1 --timeout 20 --root "127.0.0.1:$port" --ranks 2)
"$EFABENCH" "${args[@]}" --rank 0 >"$WORK/out0" 2>"$WORK/err0" &
r0=$!
# The pests connect first and hold their connections for 8 s.
python3 - "$port" >"$WORK/pests" 2>&1 <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
socks = []
for _ in range(50):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=1)
        break
    except OSError:
        time.sleep(0.1)
socks.append(s)
for _ in range(7):
    socks.append(socket.create_connection(("127.0.0.1", port)))
g = socket.create_connection(("127.0.0.1", port))
g.sendall(b"GET / HTTP/1.0\r\n\r\n" * 20)
socks.append(g)
t = socket.create_connection(("127.0.0.1", port))
socks.append(t)
for b in b"EFAB":  # a trickled start of a hello, never finished
    t.send(bytes([b]))
    time.sleep(0.5)
time.sleep(6)
print("pests done")
PY
pests=$!
sleep 1
start=$(date +%s.%N)
"$EFABENCH" "${args[@]}" --rank 1 >"$WORK/out1" 2>"$WORK/err1"
rc1=$?
took=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
wait $r0
rc0=$?
wait $pests
cat "$WORK/err0" "$WORK/err1" >&2
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] || fail "the job failed: rank 0 exited $rc0, rank 1 $rc1"
grep -q "Out of bounds values : 0 OK" "$WORK/out0" || fail "no verified result"
awk -v t="$took" 'BEGIN { exit !(t < 4) }' || fail "the honest rank took $took s (silent peers held it up)"
grep -q "rendezvous refused a connection from 127.0.0.1:[0-9]*: not an efabench rendezvous hello" \
	"$WORK/err0" || fail "the pests were not refused and logged"
echo "PASS: rank 1 joined and finished in $took s beside 10 bad connections"
