#!/usr/bin/env bash
# moe.sh MODE [PROVIDER NP]: efabench moe (MoE dispatch and combine) end to end.
#   routes PROV NP  CPU producers and the all-to-all-v, every routing, every mode on one host
#                   and on hosts emulated by --hosts, both presets at a reduced token count:
#                   every token, output, row and sum checked (#wrong 0), and the JSON's traffic,
#                   bytes moved and figures recomputed from the experts each token selected
#                   (moe_check.py); on shm also the default threads and a matrix file with a
#                   rank that receives nothing
#   corrupt         a flipped byte in what landed is counted in #wrong, once per receiving rank
#                   and phase (the warm-up's and the timed one), and fails the run; wrong keys
#                   (--corrupt-key) end the run non-zero, naming the failed writes; a rank
#                   stopped by --stop-rank is named within the deadline + 5 s
#   refuse          bad shapes end in one line and exit 2 before any rank starts; shapes whose
#                   routing, plan and regions cannot fit this host's memory (or the GPU's) are
#                   refused within a second, naming the bytes needed and those available
#   auto            --mem auto (moe's default): host memory without a GPU (the header and the
#                   note say why), pinned or device memory with one; --dry-run says the mode
#                   that runs and the memory asked for
#   kill | stop [PROV [ARGS]]  a rank killed (or stopped) mid-dispatch: every rank ends
#                   non-zero within the deadline + 5 s, the survivors (or the launcher) name it;
#                   nothing is left
#   eight           8 ranks as two emulated hosts of four (the layout of two 4-GPU hosts, on
#                   the CPU): normal mode's two legs on shm and tcp, and low-latency mode, every
#                   byte and sum checked and the JSON recomputed
#   gpu             GPU producers beside CPU producers (skipped without a GPU): pinned memory,
#                   and device memory with EB_CUDA_LIBFABRIC (a libfabric built with CUDA)
. "$(dirname "$0")/lib.sh"
mode=$1
gpus=0
command -v nvidia-smi >/dev/null && gpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")

# run WANT_INITIATORS ARGS...: a verified run whose JSON checks out.
run() {
	local want=$1 rx=auto piece=0 a
	shift
	case " $* " in *" --rx-threads "*) rx=1 ;; *" --no-rx-threads "*) rx=0 ;; esac
	for a in "$@"; do
		[ "$piece" = next ] && piece=$a
		[ "$a" = --piece ] && piece=next
	done
	piece=${piece/K/*1024}
	piece=${piece/M/*1048576}
	run_ok "efabench moe $*" timeout 300 "$EFABENCH" moe -q --timeout 30 --json "$WORK/out.json" "$@"
	grep -q "Out of bounds values : 0 OK" "$WORK/out" || fail "wrong words"
	python3 "$(dirname "$0")/moe_check.py" "$WORK/out.json" "$want" "$rx" "$((piece))" ||
		fail "JSON report does not check out"
}

case "$mode" in
routes)
	prov=$2 np=$3
	cpu=cpu,a2av
	# Every routing and every mode, on one host and on hosts emulated by --hosts (same-host
	# peers by stores into shared memory, or the fabric with --intra fabric), decode and
	# prefill shapes.
	small="--tokens 24 --hidden 256 --experts 16 -n 3 -w 1"
	run $cpu --np "$np" --provider "$prov" $small --route uniform
	run $cpu --np "$np" --provider "$prov" $small --route groups:2 --hosts 2
	grep -q "hosts: 2  (emulated" "$WORK/out" || fail "the header does not say the hosts"
	run $cpu --np "$np" --provider "$prov" $small --route hot:1,4 --mode rank --hosts 2
	run $cpu --np "$np" --provider "$prov" $small --route lognormal:1 --mode normal --hosts 2
	run $cpu --np "$np" --provider "$prov" $small --mode normal --hosts "$np" --intra fabric
	run $cpu --np "$np" --provider "$prov" --preset prefill --tokens 96 --hidden 512 \
		--dtype fp8 --hosts 2 -n 2 -w 1
	grep -q "legs per phase: 2" "$WORK/out" || fail "normal across hosts is not two legs"
	run $cpu --np "$np" --provider "$prov" --preset prefill --tokens 64 --hidden 384 \
		--route hot:0,3 --proxy-threads 2 --producers 3 -n 2 -w 1 --check
	run $cpu --np "$np" --provider "$prov" --preset prefill --tokens 64 --hidden 384 \
		--mode rank --hosts 2 --proxy-threads 2 -n 2 -w 1 --check
	run $cpu --np "$np" --provider "$prov" --preset prefill --tokens 64 --hidden 384 \
		--mode ll --hosts 2 --intra fabric -n 2 -w 1
	# Proxy threads that only post, each beside a thread receiving what peers write here.
	run $cpu --np "$np" --provider "$prov" --tokens 24 --hidden 256 --experts 16 \
		--route hot:1,4 --proxy-threads 2 --rx-threads --intra fabric -n 3 -w 1 --check
	grep -q "receiving threads: 2" "$WORK/out" || fail "the header does not say rx"
	# --piece cuts the producers' writes (3 tokens); the a2av keeps the chunk.
	run $cpu --np "$np" --provider "$prov" --preset prefill --tokens 96 --hidden 512 \
		--chunk 64K --piece 3K --producers 2 --intra fabric -n 2 -w 1 --check
	grep -q "in writes of 3 tokens (dispatch) or 3 rows" "$WORK/out" || fail "no piece in the header"
	# The rest exercises no provider code that the runs above do not: on shm alone.
	if [ "$prov" != tcp ]; then
		# By default a receiving thread each where the host's cores allow: 2 ranks, each with
		# itself, a proxy thread, its partner and a CPU producer spinning.
		run $cpu --np 2 --provider "$prov" --tokens 24 --hidden 256 --experts 16 -n 3 -w 1
		python3 - "$WORK/out.json" "$(nproc)" <<'PY' || fail "default receiving threads"
import json, sys
d = json.load(open(sys.argv[1]))
q = d["proxy_threads"]
want = q if 2 * (1 + 2 * q + q) <= int(sys.argv[2]) else 0
assert d["rx_threads"] == want, (d["rx_threads"], want, sys.argv[2])
PY
		if [ "$(nproc)" -lt 8 ]; then
			grep -q "receiving threads: 0  (too few cores here" "$WORK/out" ||
				fail "the header does not say why"
		fi
		run $cpu --np "$np" --provider "$prov" --tokens 24 --hidden 256 --experts 16 --no-rx-threads \
			-n 3 -w 1
		grep -q "proxy threads per rank: 1  receiving threads: 0" "$WORK/out" &&
			! grep -q "too few cores" "$WORK/out" || fail "--no-rx-threads in the header"
		run $cpu --np "$np" --provider "$prov" --preset prefill --tokens 64 --hidden 384 \
			--rx-threads --producers 2 -n 2 -w 1 --check
		# Shares cut into writes of a chunk's worth (4 tokens), packed and put in turn.
		run $cpu --np "$np" --provider "$prov" --preset prefill --tokens 96 --hidden 512 \
			--chunk 4K --producers 2 --hosts 2 -n 2 -w 1 --check
		# Rank 1 receives nothing; rank 0 sends nothing to anyone but itself.
		python3 - "$np" >"$WORK/matrix" <<'PY'
import sys
n = int(sys.argv[1])
for s in range(n):
    print(" ".join("0" if d == 1 or (s == 0 and d != 0) else str(3 + s + d) for d in range(n)))
PY
		run $cpu --np "$np" --provider "$prov" --tokens 16 --hidden 128 --experts 8 \
			--route "file:$WORK/matrix" -n 3 -w 1 --check
		python3 - "$WORK/out.json" "$WORK/matrix" <<'PY' || fail "the traffic is not the file's"
import json, sys
d = json.load(open(sys.argv[1]))
m = [[int(x) for x in l.split()] for l in open(sys.argv[2])]
for t in d["traffic"]:
    assert t["tokens"] == m[t["src"]][t["dst"]], t
PY
		grep -q "tokens received per rank: min 0," "$WORK/out" || fail "rank 1 should receive none"
	fi
	;;
eight)
	for prov in shm tcp; do
		run cpu,a2av --np 8 --hosts 2 --provider "$prov" --preset prefill --tokens 64 \
			--hidden 384 -n 2 -w 1 --check
		grep -q "hosts: 2  (emulated" "$WORK/out" || fail "the header does not say the hosts"
		grep -q "legs per phase: 2" "$WORK/out" || fail "normal across hosts is not two legs"
	done
	run cpu,a2av --np 8 --hosts 2 --provider shm --mode ll --tokens 16 --hidden 512 --dtype fp8 \
		-n 2 -w 1 --check
	;;
corrupt)
	timeout 120 "$EFABENCH" moe --np 3 --provider shm --initiators cpu,a2av --tokens 16 --experts 24 \
		--hidden 256 -n 2 -w 1 --corrupt-at 77 --json "$WORK/out.json" \
		>"$WORK/out" 2>"$WORK/err"
	rc=$?
	cat "$WORK/out"
	[ $rc -eq 1 ] || fail "a corrupted run exited $rc, want 1"
	grep -q "Out of bounds values : [1-9][0-9]* FAILED" "$WORK/out" || fail "no wrong words"
	python3 - "$WORK/out.json" <<'PY' || fail "#wrong is not one per receiving rank and phase"
import json, sys
d = json.load(open(sys.argv[1]))
res = d["results"]
n = d["ranks"]
receivers = sum(1 for x in range(n) if sum(t["tokens"] for t in d["traffic"] if t["dst"] == x))
assert receivers == n and d["iterations"] == "aligned"
assert len(res) == 6 and all(r["wrong"] == 2 * receivers for r in res), [r["wrong"] for r in res]
PY
	timeout 120 "$EFABENCH" moe --np 2 --provider tcp --initiators cpu,a2av --tokens 16 --experts 8 \
		--hidden 256 -n 2 -w 1 --timeout 5 --corrupt-key >"$WORK/out" 2>"$WORK/err"
	rc=$?
	cat "$WORK/err"
	[ $rc -ne 0 ] || fail "a run with wrong keys exited 0"
	grep -q "error: .*\(write\|key\|rank\)" "$WORK/err" || fail "no error names what failed"
	# --stop-rank: rank 1 stops itself after its first timed phase; named within 5 + 5 s.
	start=$SECONDS
	timeout 120 "$EFABENCH" moe --np 3 --provider shm --initiators cpu --tokens 16 --experts 24 \
		--hidden 256 -n 2 -w 1 --timeout 5 --stop-rank 1 >"$WORK/out" 2>"$WORK/err"
	rc=$?
	cat "$WORK/err"
	[ $rc -ne 0 ] || fail "a run with a stopped rank exited 0"
	[ $((SECONDS - start)) -le 12 ] || fail "the stopped rank took $((SECONDS - start)) s to name"
	grep -q "error: .*rank 1 \(never came\|(pid [0-9]*) is stopped\)" "$WORK/err" ||
		fail "nobody named the stopped rank 1"
	;;
refuse)
	printf "1 2\n3\n" >"$WORK/short"
	printf "1 2\n3 x\n" >"$WORK/word"
	for args in "--topk 9 --experts 8" "--experts 9 --topk 2" "--tokens 0" "--dtype fp8 --hidden 200" \
		"--route file:$WORK/short" "--route file:$WORK/word" "--route file:$WORK/none" \
		"--proxy-threads 0" "--route hot:2,4" "--route groups:3" "--route zipf" \
		"--mem device --staged --stage-serial" "--staged" "-e 1M" "--producers 0" "--piece 0" "--piece 4K" \
		"--rx-threads --no-rx-threads" "--phases 3" "--initiators gpu --mem host" "--hosts 3" \
		"--mode bogus" "--intra nvlink" "--mode ll --preset prefill --piece 1M" \
		"--intra ipc --mem device --staged"; do
		# shellcheck disable=SC2086
		timeout 60 "$EFABENCH" moe --np 2 --provider shm $args -v >"$WORK/out" 2>"$WORK/err"
		rc=$?
		[ $rc -eq 2 ] || fail "'moe $args' exited $rc, want 2: $(cat "$WORK/err")"
		[ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "'moe $args': not one line: $(cat "$WORK/err")"
		echo "ok: moe $args -> $(cat "$WORK/err")"
	done
	# Shapes too large for this host: a 16 GiB routing table per rank, 384 GiB of token and
	# output regions per rank in host memory, a 128 GiB table. Refused before anything is
	# allocated: at once.
	for args in "--experts 65536 --topk 64 --tokens 1048576 --np 64" \
		"--tokens 1048576 --hidden 65536 --np 2 --mem host" \
		"--tokens 1048576 --experts 4096 --np 4096"; do
		start=$(date +%s%N)
		# shellcheck disable=SC2086
		timeout 60 "$EFABENCH" moe --provider shm $args >"$WORK/out" 2>"$WORK/err"
		rc=$? ms=$((($(date +%s%N) - start) / 1000000))
		[ $rc -eq 2 ] || fail "'moe $args' exited $rc, want 2: $(cat "$WORK/err")"
		[ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "'moe $args': not one line: $(cat "$WORK/err")"
		grep -q "needs at least .* GiB .*available" "$WORK/err" || fail "'moe $args': $(cat "$WORK/err")"
		[ $ms -le 1000 ] || fail "'moe $args' took $ms ms to refuse"
		echo "ok: moe $args -> $(cat "$WORK/err") (${ms} ms)"
	done
	;;
auto)
	# The mode that runs, not the preset; the memory as asked (auto by default, decided at
	# once in a build without CUDA: host).
	cuda=0
	"$EFABENCH" info | grep -q "^CUDA: built in" && cuda=1
	"$EFABENCH" moe --preset prefill --dry-run >"$WORK/dry" || fail "moe --dry-run"
	python3 - "$WORK/dry" "$cuda" <<'PY' || fail "--dry-run: $(cat "$WORK/dry")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["preset"] == "prefill" and d["mode"] == "normal", d
assert d["mem"] == ("auto" if sys.argv[2] == "1" else "host"), d
assert "rounds" not in d and "phases" not in d and "sizes" not in d, d
PY
	# A GPU to use: one CUDA sees, in a build with CUDA (then GPU producers run too).
	use=0
	[ "$gpus" -ge 1 ] && [ $cuda -eq 1 ] && use=1
	want=cpu,a2av
	[ $use -eq 1 ] && want=gpu,cpu,a2av
	run $want --np 2 --provider shm --tokens 24 --hidden 256 --experts 16 -n 2 -w 1
	python3 - "$WORK/out.json" "$use" <<'PY' || fail "--mem auto: $(grep memory "$WORK/out")"
import json, sys
d, use = json.load(open(sys.argv[1])), int(sys.argv[2])
s = d["settings"]
assert s["mem"] == d["mem"], (s, d["mem"])
for k in ("bench", "ranks", "launcher", "provider", "channel_nics", "poll", "window",
          "host_ranks", "host_cores", "timer", "libfabric", "chunk"):
    assert k in s, (k, s)
if not use:
    assert d["mem"] == "host" and d["mem_why"].startswith("auto: "), d["mem_why"]
else:
    assert d["mem"] in ("pinned", "device") and d["mem_why"].startswith("auto: GPU"), d["mem_why"]
PY
	if [ $use -eq 0 ]; then
		grep -q "^# memory: *host (auto: " "$WORK/out" || fail "the header does not say why host"
		grep -q "no GPU producers: \(auto: no GPU\|a build without CUDA\)" "$WORK/out" ||
			fail "the note does not say why"
	fi
	;;
kill | stop)
	victim=1 sig=9 timeout=5
	[ "$mode" = stop ] && sig=STOP
	hit_rank $victim $sig $timeout 0 "$EFABENCH" moe --np 3 --provider "${2:-shm}" \
		--initiators cpu --tokens 64 --experts 48 --hidden 1024 -n 100000000 -w 1 \
		--timeout $timeout -v "${@:3}"
	# Stopped: a survivor's deadline, the bootstrap's at the barrier that starts every
	# iteration (or any collective), or the launcher's kill of the stopped rank, whichever comes
	# first, names it.
	named="error: .*\(lost rank $victim\|rank $victim\)"
	[ "$mode" = stop ] &&
		named="error: \(moe .*\(waiting for\|from\) rank $victim\|lost rank $victim\|bootstrap: rank $victim \(never came\|did not answer\)\|rank $victim (pid [0-9]*) is stopped\)"
	grep -q "$named" "$WORK/err" || fail "no survivor named rank $victim"
	hit_done
	;;
gpu)
	[ "$gpus" -ge 1 ] || skip "no CUDA GPU on this machine"
	"$EFABENCH" info | grep -q "^CUDA: built in" || skip "efabench was built without CUDA"
	run gpu,cpu,a2av --np 2 --provider shm --mem pinned --tokens 64 --hidden 1024 -n 5 --check
	# Producers' sends split into pack, push, store and complete, GPU blocks' stamps on the host's
	# clock: they lie between the send's start and end, in order, within the clocks' stated
	# uncertainty.
	run gpu,cpu --initiators gpu,cpu --np 2 --provider shm --mem pinned --preset prefill \
		--tokens 256 --hidden 1024 -n 8 --trace "$WORK/gpu.trace"
	python3 - "$WORK/out.json" "$WORK/gpu.trace" <<'PY' || fail "GPU producers' stages"
import json, sys
from collections import defaultdict
res = {r["initiator"] + " " + r["phase"]: r for r in json.load(open(sys.argv[1]))["results"]}
unc = max(r["stages"]["clock_uncertainty_us"] for r in res.values())
for p in ("gpu dispatch", "gpu combine", "cpu dispatch", "cpu combine"):
    st, op = res[p]["stages"], p.split()[1]
    for k in ("send", "pack", "push", "store", "complete", "wait"):
        assert st["%s 0 %s" % (op, k)]["samples"] == 16, (p, k, st)
got = defaultdict(dict)
for e in json.load(open(sys.argv[2]))["traceEvents"]:
    if e["ph"] == "X":
        got[(e["args"]["point"], e["args"]["sample"])][e["name"]] = e["dur"]
n = 0
for (point, sample), d in got.items():
    for k in [k[:-4] for k in d if k.endswith(" send")]:
        # a part whose ends the clocks' error put in the wrong order has no span: the others
        # then come within the uncertainty of the send, each end off by no more than it
        parts = [d.get(k + x) for x in ("pack", "push", "store", "complete")]
        got = sum(x for x in parts if x is not None)
        assert abs(d[k + "send"] - got) < (0.01 if None not in parts else 2 * unc + 0.01), \
            (point, d)
        n += 1
assert n >= 4 * 16, n
print("producers' pack + push + store + complete = send in %d legs; GPU clock within %.2f us"
      % (n, unc))
PY
	# Items that cross the fabric are made before their puts: that making is timed (pack), by
	# a GPU block's lead thread as by a CPU thread, and lies inside the send.
	run gpu,cpu --initiators gpu,cpu --np 2 --provider shm --mem pinned --preset prefill \
		--tokens 256 --hidden 1024 -n 4 --intra fabric
	python3 - "$WORK/out.json" <<'PY' || fail "GPU producers' pack"
import json, sys
res = {r["initiator"] + " " + r["phase"]: r for r in json.load(open(sys.argv[1]))["results"]}
for p in ("gpu dispatch", "cpu dispatch"):
    st = res[p]["stages"]
    pack, send = st["dispatch 0 pack"], st["dispatch 0 send"]
    assert pack["samples"] == 8 and 0 < pack["p50_us"] <= send["p50_us"], (p, pack, send)
print("pack p50: gpu %.1f us, cpu %.1f us" % tuple(
    res[p]["stages"]["dispatch 0 pack"]["p50_us"] for p in ("gpu dispatch", "cpu dispatch")))
PY
	run gpu,cpu,a2av --np 2 --provider shm --mem pinned --preset prefill --tokens 256 \
		--hidden 1024 --route hot:1,3 --proxy-threads 2 -n 3 --check
	run gpu,cpu,a2av --np 2 --provider shm --mem pinned --preset prefill --tokens 256 \
		--hidden 1024 --piece 64K -n 3 --check
	# By default prefill's blocks pack on every multiprocessor (at least 32); decode's 32 post
	# over pinned memory (and store on every multiprocessor into peers' GPU memory, below).
	cp "$WORK/out.json" "$WORK/prefill.json"
	run gpu,a2av --np 2 --provider shm --mem pinned --tokens 64 --hidden 1024 --initiators gpu,a2av -n 3
	"$EFABENCH" info --json "$WORK/info.json" >/dev/null || fail "efabench info --json"
	python3 - "$WORK/prefill.json" "$WORK/out.json" "$WORK/info.json" <<'PY' || fail "default GPU blocks"
import json, sys
pre, dec, info = (json.load(open(f)) for f in sys.argv[1:4])
sms = info["gpus"][0]["sms"]
blocks = lambda d: {r["producers"] for r in d["results"] if r["initiator"] == "gpu"}
assert blocks(pre) == {max(32, sms)}, (blocks(pre), sms)
assert blocks(dec) == {32}, blocks(dec)
print("GPU blocks by default: prefill %d (%d SMs), decode 32" % (max(32, sms), sms))
PY
	run gpu,cpu,a2av --np 2 --provider shm --mem pinned --tokens 64 --hidden 1024 --rx-threads -n 3 \
		--check
	# Staged: tokens and outputs in GPU memory, the fabric on pinned bounce buffers (any
	# libfabric), every byte checked where it ends, in GPU memory.
	run gpu,cpu,a2av --np 2 --provider shm --mem device --staged --tokens 64 --hidden 1024 -n 5 \
		--check
	grep -q "registration: staged" "$WORK/out" || fail "the header does not say staged"
	run gpu,cpu,a2av --np 2 --provider shm --mem device --staged --preset prefill --tokens 256 \
		--hidden 1024 --route hot:1,3 -n 3 --check
	if [ -n "${EB_CUDA_LIBFABRIC:-}" ]; then
		export LD_LIBRARY_PATH=$EB_CUDA_LIBFABRIC${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
		run gpu,cpu,a2av --np 2 --provider shm --mem device --tokens 128 --hidden 2048 -n 5
		grep -q "registration: \(dmabuf\|hmem\|FI_HMEM\)" "$WORK/out" ||
			grep "registration" "$WORK/out"
		python3 - "$WORK/out.json" "$WORK/info.json" <<'PY' || fail "decode's GPU blocks"
import json, sys
dec, info = (json.load(open(f)) for f in sys.argv[1:3])
sms, intra = info["gpus"][0]["sms"], dec["intra"]
blocks = {r["producers"] for r in dec["results"] if r["initiator"] == "gpu"}
assert blocks == ({max(32, sms)} if intra == "ipc" else {32}), (blocks, sms, intra)
print("GPU blocks by default, decode into peers' GPU memory (%s): %s" % (intra, blocks))
PY
		run gpu,cpu,a2av --np 2 --provider shm --mem device --preset prefill --tokens 512 \
			--dtype fp8 -n 3 --check
		# shm's target copies GPU memory: here in the receiving threads.
		run gpu,cpu,a2av --np 2 --provider shm --mem device --preset prefill --tokens 512 \
			--rx-threads -n 3 --check
		run gpu,cpu,a2av --np 2 --provider shm --mem device --preset prefill --tokens 512 \
			--rx-threads --piece 1M -n 3 --check
	fi
	;;
*) fail "unknown mode $mode" ;;
esac
echo "PASS"
