#!/usr/bin/env bash
# fault_kill.sh PROVIDER VICTIM [ARGS...]: kill one rank mid-run of a write (ARGS added, e.g.
# --mem device); every other rank must exit non-zero within the deadline + 5 s, naming the lost
# rank, and no rank may be left. FAULT_SIGNAL=STOP stops the rank instead (a stuck rank): the
# others give up at the deadline and the launcher names the stopped rank and ends it.
. "$(dirname "$0")/lib.sh"
prov=$1 victim=$2 timeout=5 sig=${FAULT_SIGNAL:-KILL}
shift 2
hit_rank "$victim" "$sig" $timeout 3 "$EFABENCH" write --np 3 --provider "$prov" -b 256K -e 256K \
	-n 1000000 -w 1 --timeout $timeout -v "$@"
if [ "$sig" != STOP ]; then
	for r in 0 1 2; do
		[ $r -eq "$victim" ] && continue
		grep -q "efabench\[rank $r\]: error: lost rank $victim" "$WORK/err" ||
			fail "rank $r did not name lost rank $victim"
	done
fi
# The launcher removes the shared-memory segment the killed rank could not.
left=$(shm_left "$pid")
[ -z "$left" ] || fail "rank $victim (pid $pid) left /dev/shm/$left"
hit_done
