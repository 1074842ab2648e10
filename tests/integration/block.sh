#!/usr/bin/env bash
# block.sh: --poll block. A rank that waits on a stopped peer sleeps on its completion queues' file
# descriptors (spinning, it is running or runnable at every look: the control); a run with it
# verifies every byte and says so in the header and JSON; a provider without such queues (shm) is
# refused in one line, exit 2, before any rank starts.
. "$(dirname "$0")/lib.sh"

# shm has no file descriptor to wait on: refused by the launcher's probe.
start=$(date +%s%N)
timeout 30 "$EFABENCH" sendrecv --np 2 --provider shm --poll block -v >"$WORK/shm.out" \
	2>"$WORK/shm.err"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ $rc -eq 2 ] || fail "shm --poll block: exit $rc, want 2: $(cat "$WORK/shm.err")"
[ "$(grep -c "error: --poll block: shm" "$WORK/shm.err")" -eq 1 ] ||
	fail "shm --poll block: not one line naming the option and provider: $(cat "$WORK/shm.err")"
grep -q "rank 0 is pid" "$WORK/shm.err" && fail "shm --poll block: ranks started"
echo "ok: shm refused in $ms ms"
# doctor, whose probe is its own, refuses it the same way.
timeout 30 "$EFABENCH" doctor --provider shm --poll block >"$WORK/doc.out" 2>"$WORK/doc.err"
rc=$?
[ $rc -eq 2 ] && [ "$(grep -c "error: --poll block: shm" "$WORK/doc.err")" -eq 1 ] ||
	fail "doctor --poll block on shm: exit $rc, want 2 and one line: $(cat "$WORK/doc.err")"
echo "ok: doctor refused"

# tcp: every byte checked, the header and the JSON name the policy.
timeout 120 "$EFABENCH" write --np 2 --provider tcp --poll block -b 4K -e 4M -n 20 -w 2 --check \
	--json "$WORK/tcp.json" >"$WORK/tcp.out" 2>&1 || fail "tcp --poll block: $(cat "$WORK/tcp.out")"
grep -q "^# poll: block (asked; 2 ranks here" "$WORK/tcp.out" || fail "the header: $(grep poll "$WORK/tcp.out")"
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["settings"]["poll"])' "$WORK/tcp.json")
[ "$got" = block ] || fail "JSON settings.poll: $got"
echo "ok: tcp write --poll block --check"

# asleep_while_stopped POLL: of 20 looks at rank 1 over 1 s while rank 0 is stopped, how many
# found it asleep (state S); its CPU share in the same second beside. A spinning rank is running
# or runnable (R) at every look, however busy the machine: the control.
asleep_while_stopped() {
	local job r0 r1 a b n=0
	"$EFABENCH" sendrecv --np 2 --provider tcp --poll "$1" -b 64K -e 64K -n 100000000 -q -v \
		--timeout 60 >/dev/null 2>"$WORK/$1.err" &
	job=$!
	for _ in $(seq 300); do
		grep -q "rank 0\]: measuring " "$WORK/$1.err" && break
		sleep 0.1
	done
	r0=$(sed -n 's/^efabench: rank 0 is pid \([0-9]*\)$/\1/p' "$WORK/$1.err")
	r1=$(sed -n 's/^efabench: rank 1 is pid \([0-9]*\)$/\1/p' "$WORK/$1.err")
	[ -n "$r0" ] && [ -n "$r1" ] || { kill -9 $job; fail "$1: ranks never measured"; }
	kill -STOP "$r0"
	sleep 0.2 # rank 1 runs out of work
	a=$(awk '{print $14 + $15}' "/proc/$r1/stat")
	for _ in $(seq 20); do
		[ "$(awk '{print $3}' "/proc/$r1/stat")" = S ] && n=$((n + 1))
		sleep 0.05
	done
	b=$(awk '{print $14 + $15}' "/proc/$r1/stat")
	kill -CONT "$r0"
	kill $job 2>/dev/null
	wait $job 2>/dev/null
	echo "$n $(((b - a) * 100 / $(getconf CLK_TCK)))"
}
read -r spin spin_cpu < <(asleep_while_stopped spin)
read -r block block_cpu < <(asleep_while_stopped block)
echo "rank waiting on a stopped peer, asleep at 20 looks: spin $spin (CPU ${spin_cpu}%)," \
	"block $block (CPU ${block_cpu}%)"
[ "$spin" -le 2 ] || fail "spin: the control was found asleep at $spin of 20 looks"
[ "$block" -ge 12 ] || fail "block: the waiting rank was asleep at only $block of 20 looks"
echo "PASS"
