#!/usr/bin/env bash
# gpu_mem.sh MODE: --mem pinned|device and --staged through write, sendrecv and alltoall.
#   refuse   bad memory choices end in one line and exit 2 before any rank starts (runs
#            everywhere: without a GPU, with a libfabric that cannot register GPU memory)
#   pinned   pinned payloads on shm and tcp, every byte checked after every iteration
#   staged   device payloads through pinned bounce buffers on shm and tcp, pipelined and serial
#   device   device payloads registered with the fabric (DMA-BUF or FI_HMEM_CUDA) on shm; needs
#            a libfabric with CUDA: EB_CUDA_LIBFABRIC=<its lib folder> (skipped otherwise)
#   corrupt  a flipped byte in GPU memory is caught (staged, and device where possible)
#   kill     a rank killed during a device-memory run (staged, and device where possible): the
#            others exit non-zero by the deadline naming it; no process keeps GPU memory
. "$(dirname "$0")/lib.sh"
mode=$1
gpus=0
command -v nvidia-smi >/dev/null && gpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")

# expect_refusal PATTERN ARGS...: exit 2, one line on stderr matching PATTERN, no rank.
expect_refusal() {
	local pat=$1
	shift
	timeout 60 "$EFABENCH" "$@" -v >"$WORK/out" 2>"$WORK/err"
	local rc=$?
	[ $rc -eq 2 ] || fail "'efabench $*' exited $rc, want 2: $(cat "$WORK/err")"
	[ "$(grep -vc "^efabench: rank [0-9]* is pid" "$WORK/err")" -eq 1 ] ||
		fail "'efabench $*': want one line, got: $(cat "$WORK/err")"
	! grep -q "is pid" "$WORK/err" || fail "'efabench $*' started ranks"
	grep -q -- "$pat" "$WORK/err" || fail "'efabench $*' does not say '$pat': $(cat "$WORK/err")"
	echo "ok: efabench $* -> $(cat "$WORK/err")"
}

# run BENCH NP PROVIDER VARIANTS ARGS...: a verified sweep; the JSON names the seed variants.
run() {
	local bench=$1 np=$2 prov=$3 want=$4
	shift 4
	timeout 300 "$EFABENCH" "$bench" --np "$np" --provider "$prov" -b 1001 -e 4M -f 64 -w 1 -n 4 \
		--chunk 256K --timeout 60 --json "$WORK/out.json" "$@" >"$WORK/out" 2>"$WORK/err"
	local rc=$?
	cat "$WORK/out"
	cat "$WORK/err" >&2
	[ $rc -eq 0 ] || fail "efabench $bench $* exited $rc"
	grep -q "Out of bounds values : 0 OK" "$WORK/out" || fail "wrong words"
	python3 - "$WORK/out.json" "$want" <<'PY' || fail "JSON report does not check out"
import json, sys
d = json.load(open(sys.argv[1]))
want = set(sys.argv[2].split(","))
got = {r["variant"] for r in d["results"]}
assert got == want, f"variants {got}, want {want}"
assert all(r["wrong"] == 0 and r["gbps"] > 0 for r in d["results"])
PY
}

case "$mode" in
refuse)
	expect_refusal "needs --mem device" write --mem pinned --staged
	expect_refusal "goes with --staged" write --stage-serial
	expect_refusal "bad --mem" write --mem gpu
	if [ "$gpus" -eq 0 ]; then
		expect_refusal "CUDA sees none\|build with CUDA" write --np 2 --mem device
		expect_refusal "CUDA sees none\|build with CUDA" sendrecv --np 2 --mem pinned
		expect_refusal "CUDA sees none\|build with CUDA" alltoall --np 2 --mem device --staged
	else
		expect_refusal "CUDA sees $gpus GPU" write --np 2 --mem device --gpu "$gpus"
		# tcp has no FI_HMEM in any libfabric release: the answer names --staged.
		expect_refusal "staged" write --np 2 --mem device --provider tcp
		if [ -z "${EB_CUDA_LIBFABRIC:-}" ]; then
			# This machine's own libfabric: either it registers GPU memory or it says
			# plainly that it cannot (and names --staged).
			timeout 60 "$EFABENCH" write --np 2 --provider shm --mem device -b 64K -e 64K \
				-n 2 >"$WORK/out" 2>"$WORK/err"
			rc=$?
			cat "$WORK/err" >&2
			[ $rc -eq 0 ] || { [ $rc -eq 2 ] && grep -q "cannot register GPU memory.*--staged" "$WORK/err"; } ||
				fail "device memory on this libfabric: exit $rc without the refusal line"
			echo "ok: this libfabric and device memory -> exit $rc"
		fi
	fi
	echo "PASS"
	exit 0
	;;
esac

[ "$gpus" -ge 1 ] || skip "no CUDA GPU on this machine"
[ "$mode" = device ] && [ -n "${EB_CUDA_LIBFABRIC:-}" ] &&
	export LD_LIBRARY_PATH=$EB_CUDA_LIBFABRIC${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
"$EFABENCH" info | grep -q "^CUDA: built in" || skip "efabench was built without CUDA"

case "$mode" in
pinned)
	for prov in shm tcp; do
		run write 3 "$prov" SinglePin,MultiPin,RoundRobinPin --mem pinned --channels 2 --check
		run alltoall 3 "$prov" SinglePin,MultiPin,RoundRobinPin --mem pinned --channels 2
		run sendrecv 2 "$prov" SingleHost --mem pinned --check
	done
	;;
staged)
	for prov in shm tcp; do
		run write 3 "$prov" SingleStaged,MultiStaged,RoundRobinStaged --mem device --staged \
			--channels 2 --check
		run alltoall 3 "$prov" SingleStaged,MultiStaged,RoundRobinStaged --mem device --staged \
			--channels 2 --check
		run sendrecv 2 "$prov" SingleStaged --mem device --staged --check
	done
	run write 2 shm SingleStaged,MultiStaged,RoundRobinStaged --mem device --staged --stage-serial
	grep -q "staged through pinned bounce buffers: yes" "$WORK/out" || fail "the header does not say staged"
	;;
device)
	[ -n "${EB_CUDA_LIBFABRIC:-}" ] || skip "set EB_CUDA_LIBFABRIC to a libfabric built with CUDA"
	run write 3 shm SingleDMA,MultiDMA,RoundRobinDMA --mem device --channels 2 --check
	grep -q "registration: \(dmabuf\|hmem-cuda\)" "$WORK/out" || fail "no registration path"
	# DMA-BUF is tried first whatever headers built efabench: on a 1.20+ runtime info says
	# yes, no or why not, and where it says yes the run registered through it.
	"$EFABENCH" info --json "$WORK/info.json" >/dev/null ||
		fail "info --json failed"
	python3 - "$WORK/info.json" "$WORK/out.json" <<'PY' || fail "DMA-BUF not tried, or not the path the run took"
import json, sys
info, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
shm = next(r for r in info["registration"] if r["provider"] == "shm")
rt = tuple(int(x) for x in info["libfabric"]["runtime"].split(".")[:2])
assert shm["state"] == "tried", shm
if rt >= (1, 20):
    assert shm["dmabuf"] is not None or "DMA-BUF handle" in shm["dmabuf_reason"], shm
# Where the GPU exports DMA-BUF and the runtime takes it (1.20+), the run must have used it: a
# fall back to FI_HMEM_CUDA there is a failure of the DMA-BUF path, not a choice.
gpu = info["gpus"][0] if info.get("gpus") else {}
if rt >= (1, 20) and gpu.get("dmabuf_export") is True:
    assert shm["dmabuf"] is True, ("DMA-BUF exported and taken by the runtime, yet not used", shm)
want = "dmabuf" if shm["dmabuf"] else "hmem-cuda"
assert all(r["settings"]["registration"] == want for r in run["results"]), (want, run["results"][0]["settings"])
# How GPU memory reaches the NIC, as the provider agreed to it, is the same in both.
path = run["settings"]["gpu_path"]
assert path in ("p2p-required", "no-cuda-calls", "provider", "cuda-copies"), path
assert shm["path"] == path, (shm["path"], path)
print("registration:", want, "runtime", rt, "GPU path", path)
PY
	grep -q "^# GPU memory to the NIC: " "$WORK/out" || fail "the header does not say GPU memory's path"
	run alltoall 3 shm SingleDMA,MultiDMA,RoundRobinDMA --mem device --channels 2 --check
	run sendrecv 2 shm SingleDevice --mem device --check
	;;
kill)
	[ "$gpus" -ge 1 ] || skip "no CUDA GPU on this machine"
	for args in "--mem device --staged" ${EB_CUDA_LIBFABRIC:+"--mem device"}; do
		[ "$args" = "--mem device" ] && export LD_LIBRARY_PATH=$EB_CUDA_LIBFABRIC
		# shellcheck disable=SC2086
		bash "$(dirname "$0")/fault_kill.sh" shm 1 $args >"$WORK/kill.out" 2>&1
		rc=$?
		cat "$WORK/kill.out"
		[ $rc -eq 0 ] || fail "$args: see above"
		# This job's ranks only: other jobs may use the same GPUs meanwhile.
		ranks=$(sed -n 's/^efabench: rank [0-9]* is pid \([0-9]*\)$/\1/p' "$WORK/kill.out")
		[ -n "$ranks" ] || fail "$args: the launcher named no rank's pid"
		left=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | tr -d " " |
			grep -xF "$ranks")
		[ -z "$left" ] || fail "$args: ranks still hold GPU memory: $left"
	done
	;;
corrupt)
	for args in "--mem device --staged" ${EB_CUDA_LIBFABRIC:+"--mem device"}; do
		[ "$args" = "--mem device" ] && export LD_LIBRARY_PATH=$EB_CUDA_LIBFABRIC
		# shellcheck disable=SC2086
		timeout 120 "$EFABENCH" write --np 2 --provider shm -b 4000 -e 64K -f 4 -n 3 -w 1 \
			--corrupt-at 4001 $args --json "$WORK/out.json" >"$WORK/out" 2>"$WORK/err"
		rc=$?
		cat "$WORK/out"
		[ $rc -eq 1 ] || fail "$args: exit $rc, want 1"
		grep -q "wrong words received" "$WORK/err" || fail "$args: the target said nothing"
		python3 - "$WORK/out.json" <<'PY' || fail "a variant missed the corruption"
import json, sys
assert all(r["wrong"] > 0 for r in json.load(open(sys.argv[1]))["results"])
PY
	done
	;;
*) fail "unknown mode $mode" ;;
esac
echo "PASS"
