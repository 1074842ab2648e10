#!/usr/bin/env bash
# proxy.sh MODE: efabench proxy (puts through the CPU proxy) end to end, every byte checked.
#   cpu     CPU producers on shm and tcp, 1 and 3 channels, bw (blocking and NBI, signals),
#           lat and rate modes (what CI runs)
#   refuse  bad choices end in one line and exit 2 before any rank starts
#   badput  a put aimed past the buffer is refused, naming the producer (exit 1)
#   kill    the target dies mid-run: every rank exits non-zero within the deadline + 5 s,
#           the initiator's proxy or producers name the lost rank; no process is left
#   stop    the initiator is stopped (SIGSTOP): the target gives up once nothing arrived for
#           the deadline, the launcher names the stopped rank; within the deadline + 5 s
#   kill-gpu  the same with GPU producers: the kernel's quiet gives up, no hang (needs a GPU)
#   stall   rank 0's proxy thread never returns (--stall-proxy: as one stuck inside a provider
#           call, which no flag can stop), under the rendezvous, where no launcher of ours
#           would end it: rank 0 ends itself, saying why, and the job ends within a bound
#   gpu     GPU producers (skipped without a GPU): bw, lat, rate up to every SM, pinned memory,
#           and device memory with EB_CUDA_LIBFABRIC (a libfabric built with CUDA)
. "$(dirname "$0")/lib.sh"
mode=$1
gpus=0
command -v nvidia-smi >/dev/null && gpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")

# run WANT_VARIANTS ARGS...: a verified run; the JSON has every variant, every record 0 wrong.
run() {
	local want=$1
	shift
	run_ok "efabench proxy $*" timeout 300 "$EFABENCH" proxy --np 2 -w 1 --timeout 30 \
		--json "$WORK/out.json" "$@"
	grep -q "Out of bounds values : 0 OK" "$WORK/out" || fail "wrong words"
	python3 - "$WORK/out.json" "$want" <<'PY' || fail "JSON report does not check out"
import json, re, sys
d = json.load(open(sys.argv[1]))
want = sys.argv[2].split(",")
res = d["results"]
assert sorted({r["variant"] for r in res}) == sorted(want), {r["variant"] for r in res}
for r in res:
    assert r["wrong"] == 0 and r["gbps"] > 0, r
    if r["variant"].startswith("Proxy"):
        assert r["ratio"] > 0 and r["ratio_to"] in want, r
    # NBI and rate variants time whole phases: their spread, never a per-put percentile
    v = r["variant"]
    whole = v.endswith("NBI") or v == "CPURate" or re.fullmatch(r"Proxy(\d+[tb]|AllSMs)", v)
    if whole:
        assert r["phases"] == min(5, d["settings"]["iters"]) and r["p50_us"] is None, r
        assert r["phase_min_us"] <= r["phase_p50_us"] <= r["phase_max_us"], r
    else:
        assert r["phases"] == 0 and r["p50_us"] is not None and r["phase_p50_us"] is None, r
PY
}

case "$mode" in
cpu)
	for prov in shm tcp; do
		run Single,ProxySingle,ProxySingleNBI,Multi,ProxyMulti,ProxyMultiNBI \
			--producers-on cpu --provider "$prov" -b 1000 -e 1M -f 32 -n 4 --chunk 64K --check
		run Single,ProxySingle,ProxySingleNBI,Multi,ProxyMulti,ProxyMultiNBI \
			--producers-on cpu --provider "$prov" --channels 3 -b 1000 -e 1M -f 32 -n 4 \
			--chunk 64K --window 2
	done
	run CPUWrite,ProxyPut --producers-on cpu --provider shm --mode lat -b 8 -e 4K -f 8 -n 200
	grep -q "GPU<->CPU floor" "$WORK/out" || fail "latency mode without the floor"
	# Unchecked, the puts of a phase go round a slot per put in flight (--active): clean runs
	# pass the check after each phase; a write of the last window landing on its neighbour's
	# slot is caught there, without --check.
	run CPURate,Proxy1t,Proxy3t --producers-on cpu --provider shm --mode rate --producers 1,3 \
		-b 4K -e 4K -n 3000 --active 16
	run Single,ProxySingle,ProxySingleNBI,Multi,ProxyMulti,ProxyMultiNBI --producers-on cpu \
		--provider shm -b 1000 -e 64K -f 8 -n 40 --active 8
	"$EFABENCH" proxy --np 2 --producers-on cpu --provider shm --mode rate --producers 1 -n 40 \
		-w 2 --phases 1 --rounds 1 --active 4 --timeout 20 --misplace-chunk 38 >"$WORK/bad" 2>&1 &&
		fail "an unchecked rate phase missed a write landing on its neighbour's slot"
	grep -q "wrong words received (proxy CPURate" "$WORK/bad" || fail "no wrong-words line: $(cat "$WORK/bad")"
	run CPURate,Proxy1t,Proxy3t --producers-on cpu --provider shm --mode rate --producers 1,3 \
		-b 4K -e 4K -n 3000 --check -v
	# -v: one line per phase of rank 0's proxy; it took each producer's puts and signal
	# (warm-up: 1 put each; then 5 phases of 600 puts, the two variants taking turns)
	got=$(sed -n 's/.*rank 0\]: proxy: [0-9]* passes, \([0-9]*\) commands.*/\1/p' "$WORK/err" |
		tr '\n' ' ')
	[ "$got" = "2 601 6 603 601 603 601 603 601 603 601 603 " ] ||
		fail "proxy statistics: commands per phase '$got'"
	# tools/ratios over three copies of this run whose ratios are scaled by 1.2, 0.9 and 1
	# (the middle file): every cell is the run's ratio, then x0.9 and x1.2
	tools=${EFABENCH_TOOLS:-$(cd "$(dirname "$0")/../../tools" && pwd)}
	python3 - "$WORK/out.json" "$WORK" <<'PY' || fail "cannot scale the report"
import json, sys
d = json.load(open(sys.argv[1]))
for name, f in (("a", 1.2), ("b", 0.9), ("c", 1.0)):
    for r in d["results"]:
        if r.get("ratio") is not None:
            r["ratio_was"] = r.get("ratio_was", r["ratio"])
            r["ratio"] = r["ratio_was"] * f
    json.dump(d, open(f"{sys.argv[2]}/r-{name}.json", "w"))
PY
	"$tools/ratios" "$WORK"/r-[abc].json >"$WORK/ratios" || fail "tools/ratios exited $?"
	cat "$WORK/ratios"
	python3 - "$WORK/out.json" "$WORK/ratios" <<'PY' || fail "tools/ratios: not the known cells"
import json, sys
d = json.load(open(sys.argv[1]))
want = {r["variant"]: r["ratio"] for r in d["results"] if r.get("ratio") is not None}
lines = [l for l in open(sys.argv[2]) if l.startswith("|")]
head = [c.strip() for c in lines[0].strip("|\n").split("|")]
row = [c.strip() for c in lines[2].strip("|\n").split("|")]
assert head[0] == "size" and row[0] == "4K" and len(lines) == 3, lines
assert sorted(head[1:]) == sorted(want), (head, want)
for v, cell in zip(head[1:], row[1:]):
    r = want[v]
    assert cell == f"{r:.3f} ({r * 0.9:.2f}-{r * 1.2:.2f})", (v, cell, r)
PY
	;;
refuse)
	for args in "--producers-on cpu --mem device --staged" "--producers-on cpu --mode rate --producers 0" \
		"--producers-on cpu --mode rate --producers 1b" "--mode fast" "--active 0"; do
		# shellcheck disable=SC2086
		timeout 60 "$EFABENCH" proxy --np 2 $args -v >"$WORK/out" 2>"$WORK/err"
		rc=$?
		[ $rc -eq 2 ] || fail "'proxy $args' exited $rc, want 2: $(cat "$WORK/err")"
		[ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "'proxy $args': not one line: $(cat "$WORK/err")"
		echo "ok: proxy $args -> $(cat "$WORK/err")"
	done
	if [ "$gpus" -eq 0 ]; then
		timeout 60 "$EFABENCH" proxy --np 2 -v >"$WORK/out" 2>"$WORK/err"
		rc=$?
		[ $rc -eq 2 ] || fail "GPU producers without a GPU exited $rc, want 2"
		grep -q "needs a GPU\|build with CUDA" "$WORK/err" || fail "no reason: $(cat "$WORK/err")"
		! grep -q "is pid" "$WORK/err" || fail "ranks started"
		echo "ok: proxy (GPU producers, no GPU) -> $(cat "$WORK/err")"
	fi
	;;
badput)
	timeout 60 "$EFABENCH" proxy --np 2 --producers-on cpu --provider shm -b 64K -e 64K -n 3 \
		--timeout 5 --bad-put >"$WORK/out" 2>"$WORK/err"
	rc=$?
	cat "$WORK/err" >&2
	[ $rc -eq 1 ] || fail "exit $rc, want 1"
	grep -q "rank 0\]: error: .*outside the buffers was refused; the first refused put came from producer 0 " "$WORK/err" ||
		fail "the refusal does not name the producer"
	;;
kill | kill-gpu | stop)
	producers="--producers-on cpu" victim=1 sig=9
	# stop: the initiator is stopped, alive to the bootstrap; the target must judge it by
	# what stops arriving, not by a deadline of every iteration's timeout summed.
	[ "$mode" = stop ] && victim=0 sig=STOP
	if [ "$mode" = kill-gpu ]; then
		[ "$gpus" -ge 1 ] || skip "no CUDA GPU on this machine"
		"$EFABENCH" info | grep -q "^CUDA: built in" || skip "efabench was built without CUDA"
		producers="--producers-on gpu --mem pinned"
	fi
	timeout=5
	# shellcheck disable=SC2086
	hit_rank $victim $sig $timeout 0 "$EFABENCH" proxy --np 2 $producers --provider shm -b 1M \
		-e 1M -n 1000000 -w 1 --timeout $timeout -v
	if [ "$mode" = stop ]; then
		# Stopped in a CPU reference phase or a proxy phase: either wait names rank 0.
		grep -q "rank 1\]: error: .*\(nothing arrived from rank 0\|writes from rank 0\)" \
			"$WORK/err" || fail "rank 1 did not say rank 0 went silent"
	else
		grep -q "rank 0\]: error: .*\(lost rank 1\|rank 1\)" "$WORK/err" ||
			fail "rank 0 did not name rank 1"
	fi
	hit_done
	;;
stall)
	# The bound: the producers' quiet gives up at the deadline, the join waits deadline + 1 s.
	timeout=3 bound=20
	export EFABENCH_TOKEN=stall-$$
	port=$((20000 + RANDOM % 20000))
	start=$(date +%s.%N)
	for r in 0 1; do
		timeout $bound "$EFABENCH" proxy --producers-on cpu --provider shm -b 64K -e 64K -n 5 \
			-w 1 --timeout $timeout --stall-proxy --root "127.0.0.1:$port" --rank $r \
			--ranks 2 >"$WORK/out$r" 2>"$WORK/err$r" &
		pids[r]=$!
	done
	for r in 0 1; do # each rank's own pid (timeout's child): its shm segments are named by it
		for _ in $(seq 50); do
			rank_pid[r]=$(pgrep -P "${pids[r]}") && break
			sleep 0.05
		done
	done
	for r in 0 1; do
		wait "${pids[r]}"
		rcs[r]=$?
	done
	took=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { print a - b }')
	cat "$WORK/err0" "$WORK/err1" >&2
	for r in 0 1; do
		[ "${rcs[r]}" -ne 124 ] || fail "rank $r still ran $bound s later"
		[ "${rcs[r]}" -ne 0 ] || fail "rank $r exited 0"
	done
	grep -q "rank 0\]: error: proxy: its thread did not return within $((timeout + 1)) s" \
		"$WORK/err0" || fail "rank 0 did not say its proxy thread was stuck"
	# No launcher of ours is there to remove the stuck rank's shm segment: it removes it.
	for r in 0 1; do
		p=${rank_pid[r]:-}
		[ -n "$p" ] || fail "rank $r's pid was never seen"
		[ -z "$(shm_left "$p")" ] || fail "rank $r (pid $p) left /dev/shm/$(shm_left "$p")"
	done
	echo "both ranks ended in $took s (rank 0: status ${rcs[0]}, rank 1: ${rcs[1]})"
	;;
gpu)
	[ "$gpus" -ge 1 ] || skip "no CUDA GPU on this machine"
	"$EFABENCH" info | grep -q "^CUDA: built in" || skip "efabench was built without CUDA"
	run SinglePin,ProxySingle,ProxySingleNBI,MultiPin,ProxyMulti,ProxyMultiNBI --provider shm \
		--mem pinned --channels 2 -b 1000 -e 4M -f 64 -n 5 --check
	run CPUWrite,ProxyPut --provider shm --mode lat -b 8 -e 64K -f 8 -n 500
	run CPURate,Proxy1b,Proxy16b,ProxyAllSMs --provider shm --mode rate -b 4K -e 4K -n 20000
	run CPURate,Proxy4b,ProxyAllSMs --provider tcp --mode rate --producers 4b,all -b 1000 -e 1000 \
		-n 5000 --check
	if [ -n "${EB_CUDA_LIBFABRIC:-}" ]; then
		export LD_LIBRARY_PATH=$EB_CUDA_LIBFABRIC${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
		run SingleDMA,ProxySingle,ProxySingleNBI,MultiDMA,ProxyMulti,ProxyMultiNBI \
			--provider shm --mem device --channels 2 -b 1000 -e 64M -f 256 -n 4 --check
	fi
	;;
*) fail "unknown mode $mode" ;;
esac
echo "PASS"
