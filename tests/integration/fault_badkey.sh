#!/usr/bin/env bash
# fault_badkey.sh PROVIDER: rank 0 writes with wrong remote keys. Providers that report it
# (sockets) must turn the CQ error entry into one message naming the operation, peer and
# channel; providers that drop such writes silently (shm, tcp) must end in the deadline's
# message. Either way every rank exits non-zero within the deadline + 5 s.
. "$(dirname "$0")/lib.sh"
prov=$1
start=$(date +%s)
timeout 60 "$EFABENCH" write --np 2 --provider "$prov" --layout single -b 64K -e 64K -n 2 -w 1 \
	--timeout 5 --corrupt-key >"$WORK/out" 2>"$WORK/err"
rc=$?
took=$(($(date +%s) - start))
cat "$WORK/err" >&2
[ $rc -ne 0 ] || fail "writes with wrong keys passed"
[ $rc -ne 124 ] || fail "the job hung"
[ $took -le 10 ] || fail "the job took $took s, more than the deadline + 5 s"
if [ "$prov" = sockets ]; then
	grep -q "rank 0\]: error: write of 65536 bytes with rank 1 on channel 0 (lo) failed: " "$WORK/err" ||
		fail "the CQ error entry did not become a message naming op, peer and channel"
	grep -q "rank 1\]: error: lost rank 0: it failed" "$WORK/err" || fail "rank 1 was not told"
else
	grep -q "timed out after 5.0 s" "$WORK/err" || fail "no deadline message"
fi
echo "PASS: exit $rc after $took s"
