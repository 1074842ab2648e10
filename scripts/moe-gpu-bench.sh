#!/usr/bin/env bash
# moe-gpu-bench.sh [OUTDIR]: efabench moe on the GPUs of one host, one rank per GPU, GPU memory,
# same-host peers by CUDA IPC stores (the copy engines' time for the same bytes in each header),
# the all-to-all-v on shm. EFABENCH names the binary (default build/efabench); LD_LIBRARY_PATH
# must reach a libfabric built with CUDA for the all-to-all-v over GPU memory.
#   ll-2gpu-<r>       decode as DeepEP's low-latency kernels: 128 tokens, hidden 7168, top-8
#                     of 256, fp8, on 2 GPUs
#   normal-2gpu-<r>   prefill as DeepEP's normal kernels: 4096 tokens, on 2 GPUs
#   with 4 GPUs also  ll-4gpu, normal-4gpu (EP4 on one host) and normal-2x2, ll-2x2 (2 hosts
#                     of 2 GPUs emulated with --hosts 2: the fabric between them, NVLink inside)
# Rounds (ROUNDS, default 3) interleave the configurations. Each run's table and JSON go to
# OUTDIR; a summary line per row to stdout.
set -euo pipefail
bin=${EFABENCH:-build/efabench}
out=${1:-moe-gpu-results}
rounds=${ROUNDS:-3}
mkdir -p "$out"
gpus=$(nvidia-smi -L | grep -c "^GPU")
ll="--preset decode --mode ll --tokens 128 --hidden 7168 --topk 8 --experts 256 --dtype fp8 -n 200 -w 20 --timeout 20"
normal="--preset prefill --mode normal --tokens 4096 -n 20 -w 3 --timeout 20"

# one LABEL ARGS...: a run; prints LABEL and per row p50, NVL GB/s, vs_ce, #wrong.
one() {
	local label=$1
	shift
	timeout 90 "$bin" moe --provider shm --mem device --json "$out/$label.json" \
		"$@" >"$out/$label.txt" 2>&1 || {
		echo "$label: failed"
		tail -5 "$out/$label.txt"
		return 0
	}
	python3 - "$out/$label.json" "$label" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ce = " ".join(f"ce {ph} {d[f'ce_{ph}_us']:.1f}us {d[f'ce_{ph}_GBps']:.1f}GB/s"
              for ph in ("dispatch", "combine") if f"ce_{ph}_us" in d)
print(sys.argv[2], ce)
for r in d["results"]:
    vs = r.get("vs_ce")
    print(f"  {r['initiator']:4} {r['phase']:8} p50 {r['p50_us']:9.1f} us  sel {r['sel_GBps']:7.1f}"
          f"  NVL {r['nvl_GBps']:7.1f}  intra {r.get('intra_GBps') or 0:7.1f}"
          f"  x CE {vs if vs is None else round(vs, 3)}  x a2av {r.get('vs_a2av')}  wrong {r['wrong']}")
PY
}

for r in $(seq "$rounds"); do
	# shellcheck disable=SC2086
	{
		CUDA_VISIBLE_DEVICES=0,1 one "ll-2gpu-$r" --np 2 $ll
		CUDA_VISIBLE_DEVICES=0,1 one "normal-2gpu-$r" --np 2 $normal
		if [ "$gpus" -ge 4 ]; then
			one "ll-4gpu-$r" --np 4 $ll
			one "normal-4gpu-$r" --np 4 $normal
			one "ll-2x2-$r" --np 4 --hosts 2 $ll
			one "normal-2x2-$r" --np 4 --hosts 2 $normal
		fi
	}
done
