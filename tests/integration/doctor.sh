#!/usr/bin/env bash
# doctor.sh CASE: efabench doctor on this host (shm, tcp on loopback).
#   local     2 ranks on shm: every line has a verdict, JSON has every check, bandwidth measured
#   memlock   ulimit -l 64 -> the memlock check says so (64 KiB) before anything registers;
#             unlimited -> PASS
#   badnic    --nics naming no NIC -> FAIL naming it, exit 1, no hang
#   gpus      --expect-gpus one more than CUDA sees -> FAIL naming the count, exit 1; on a GPU
#             machine the right count passes, and hiding the GPUs fails
#   dryrun    --dry-run prints the plan and measures nothing
#   shmroom   a /dev/shm (a private mount, root) with room for what shm asks before it offers
#             itself (an endpoint per core) but not for one channel more: the /dev/shm check
#             FAILs with the measured need; the host's own passes
#   leftovers in a private /dev/shm (root): a segment of a process that is gone is named with
#             its size (WARN), a live process's is not; none: PASS
. "$(dirname "$0")/lib.sh"
case_=$1

# JSON: valid, one record per printed check line, verdicts and fields as documented.
check_doc() { # file
	python3 - "$1" "$WORK/out" <<'PY' || fail "doctor JSON $1 does not check out"
import json, re, sys
doc = json.load(open(sys.argv[1]))
lines = [l for l in open(sys.argv[2]) if re.match(r"^(PASS|WARN|FAIL|SKIP)  ", l)]
res = doc["results"]
assert doc["bench"] == "doctor" and len(res) == len(lines), (len(res), len(lines))
for r in res:
    for k in ("rank", "host", "check", "verdict", "value", "limit", "reason"):
        assert k in r, f"missing {k}"
    assert r["verdict"] in ("PASS", "WARN", "FAIL", "SKIP")
want = "FAIL" if any(r["verdict"] == "FAIL" for r in res) else \
       "WARN" if any(r["verdict"] == "WARN" for r in res) else "PASS"
assert doc["verdict"] == want, (doc["verdict"], want)
assert doc["fail"] == sum(r["verdict"] == "FAIL" for r in res)
PY
}

run() { # efabench-args...: output in $WORK/out, $WORK/err; returns the exit status
	local rc
	run_show timeout 120 "$EFABENCH" doctor --timeout 10 "$@"
	rc=$?
	[ $rc -ne 124 ] || fail "doctor hung (killed after 120 s)"
	return $rc
}

case "$case_" in
local)
	run --np 2 --provider shm -s 4M --json "$WORK/d.json"
	rc=$?
	check_doc "$WORK/d.json"
	grep -q "^FAIL" "$WORK/out" && want=1 || want=0
	[ $rc -eq $want ] || fail "exit $rc with$([ $want = 0 ] && echo out) FAIL lines"
	for c in libfabric provider "link shm" nics memlock hugepages "bandwidth shm"; do
		[ "$(grep -c "^[A-Z]\{4\}  $c " "$WORK/out")" -eq 2 ] || fail "no '$c' line for each rank"
	done
	grep -q "^PASS  bandwidth shm .*Gbps" "$WORK/out" || fail "shm bandwidth not measured"
	grep -q "1 round x 1 NIC x 2 directions" "$WORK/out" || fail "schedule not reported"
	;;
memlock)
	(ulimit -l 64 && run --np 1 --provider tcp --no-measure) && rc=0 || rc=$?
	grep -Eq "^(WARN|FAIL)  memlock +ulimit -l is 64 KiB, below" "$WORK/out" ||
		fail "a 64 KiB locked-memory limit went unreported"
	if (ulimit -l unlimited 2>/dev/null); then
		(ulimit -l unlimited && run --np 1 --provider tcp --no-measure) || true
		grep -Eq "^PASS  memlock +ulimit -l unlimited" "$WORK/out" ||
			fail "an unlimited locked-memory limit is not a PASS"
	fi
	;;
badnic)
	run --np 2 --provider tcp --nics lo,nosuchnic0 -s 1M && fail "a missing NIC passed"
	rc=$?
	[ $rc -eq 1 ] || fail "exit $rc, want 1"
	grep -q "^FAIL  link nosuchnic0 .*no NIC, interface or subnet named nosuchnic0" "$WORK/out" ||
		fail "the missing NIC is not named"
	grep -q "^PASS  bandwidth lo " "$WORK/out" || fail "the NIC that exists was not measured"
	;;
gpus)
	n=$("$EFABENCH" info --json - | python3 -c 'import json, sys; print(json.load(sys.stdin)["cuda"]["gpus"])')
	[ -n "$n" ] || fail "info --json gives no GPU count"
	run --np 1 --no-measure --expect-gpus $((n + 1)) && fail "a missing GPU passed"
	grep -q "^FAIL  gpus " "$WORK/out" || fail "no FAIL line for the GPU count"
	if [ "$n" -gt 0 ]; then
		grep -q "CUDA sees $n GPU" "$WORK/out" || fail "the GPU count is not named"
		run --np 1 --expect-gpus "$n" || fail "doctor fails on a healthy GPU machine"
		grep -q "^PASS  gpus .*CUDA sees $n GPU" "$WORK/out" || fail "no PASS for the count"
		grep -q "^PASS  GPU 0 floor " "$WORK/out" || fail "the GPU floor was not measured"
		if [ "$n" -ge 2 ]; then # every GPU's copy engines to its peers measured and judged
			for g in $(seq 0 $((n - 1))); do
				grep -q "^PASS  GPU $g copy .*slowest: to GPU [0-9]" "$WORK/out" ||
					fail "no copy-engine PASS for GPU $g"
			done
		fi
		# A round trip over PCIe: 2.7-3.3 us on H100/H200; a CPU thread echoing itself is
		# under 0.5 us, so a figure below 1 us was not measured on the GPU.
		us=$(sed -n 's/^PASS  GPU 0 floor .*median \([0-9.]*\) us.*/\1/p' "$WORK/out")
		awk -v u="$us" 'BEGIN { exit !(u >= 1) }' || fail "GPU floor of $us us: not a GPU round trip"
		CUDA_VISIBLE_DEVICES= run --np 1 --no-measure --expect-gpus "$n" &&
			fail "hiding the GPUs passed"
		grep -q "^FAIL  gpus .*CUDA sees 0 GPUs, $n expected (CUDA_VISIBLE_DEVICES=)" \
			"$WORK/out" || fail "the hidden GPUs are not named"
		if [ "$n" -ge 2 ]; then # one GPU hidden of several: the count names what is seen
			CUDA_VISIBLE_DEVICES=0 run --np 1 --no-measure --expect-gpus "$n" &&
				fail "hiding all GPUs but one passed"
			grep -q "^FAIL  gpus .*CUDA sees 1 GPU, $n expected (CUDA_VISIBLE_DEVICES=0)" \
				"$WORK/out" || fail "one visible GPU of $n is not named"
		fi
	fi
	;;
shmroom)
	run --np 2 --provider shm --no-measure || fail "doctor fails on this host's /dev/shm"
	grep -Eq "^PASS  /dev/shm +[0-9]+ MiB free; 1 channel x 2 ranks here x [0-9.]+ MiB per endpoint" \
		"$WORK/out" || fail "no PASS line for /dev/shm"
	[ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null || skip "a private /dev/shm needs root"
	unshare -m true 2>/dev/null || skip "cannot make a mount namespace here"
	seg=$(sed -n 's/^PASS  \/dev\/shm .* x \([0-9.]*\) MiB per endpoint.*/\1/p' "$WORK/out" | head -1)
	cores=$(nproc)
	size=$(awk -v s="$seg" -v c="$cores" 'BEGIN { printf "%d", s * c + s / 2 + 1 }')
	ch=$((cores + 1))
	[ "$ch" -le 64 ] || skip "$cores cores: more channels than doctor opens"
	run_show timeout 120 unshare -m sh -c 'mount -t tmpfs -o size="$1"m tmpfs /dev/shm &&
		exec "$0" doctor --timeout 10 --np 1 --channels "$2" --provider shm --no-measure' \
		"$EFABENCH" "$size" "$ch" && fail "a $size MiB /dev/shm passed $ch channels"
	grep -Eq "^FAIL  /dev/shm +[0-9]+ MiB free; $ch channels x 1 rank here x [0-9.]+ MiB per endpoint = [0-9]+ MiB: raise it" \
		"$WORK/out" || fail "the small /dev/shm is not named"
	;;
leftovers)
	[ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null || skip "a private /dev/shm needs root"
	unshare -m true 2>/dev/null || skip "cannot make a mount namespace here"
	sh -c 'exit 0' &
	gone=$!
	wait $gone
	sleep 60 &
	live=$!
	# $1: a pid whose segment goes in beside the live one's (none: empty)
	private() {
		run_show timeout 120 unshare -m sh -c 'mount -t tmpfs -o size=256m tmpfs /dev/shm &&
			for p in $1 $2; do head -c 3145728 /dev/zero >"/dev/shm/$p:$(id -u):0"; done &&
			exec "$0" doctor --timeout 10 --np 1 --provider shm --no-measure' \
			"$EFABENCH" "$live" "${1:-}"
	}
	private || { kill $live; fail "doctor failed in a private /dev/shm"; }
	grep -Eq "^PASS  shm leftovers +no segment in /dev/shm of a process of yours that is gone" \
		"$WORK/out" || { kill $live; fail "a live process's segment was counted"; }
	kill -0 $gone 2>/dev/null && { kill $live; skip "pid $gone was given out again at once"; }
	private $gone
	kill $live
	grep -Eq "^WARN  shm leftovers +1 segment of gone processes \(killed ranks'\): 3\.0 of 3 MiB in memory; when no job of yours runs: rm /dev/shm/<pid>:$(id -u):\*\$" \
		"$WORK/out" || fail "the gone process's segment is not named"
	;;
dryrun)
	run --np 2 --dry-run || fail "dry run exited $?"
	grep -q "^# measurements: GPU copy engines" "$WORK/out" || fail "no plan printed"
	grep -Eq "^(PASS|WARN|FAIL)" "$WORK/out" && fail "a dry run ran checks"
	grep -q "NIC write bandwidth in 2 tournament rounds" "$WORK/out" ||
		fail "the plan lacks the bandwidth schedule"
	;;
*)
	fail "unknown case $case_"
	;;
esac
echo "PASS: doctor $case_"
