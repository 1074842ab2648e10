#!/usr/bin/env bash
# ipc-bench.sh [OUTDIR]: the NVLink measurements the README reports, on a host with two or
# more GPUs (efabench built with CUDA; EFABENCH names the binary, default build/efabench):
#   sweep.*      every launch shape (st 1x256 ... all SMs x 1024, tma 1 ... all SMs), both
#                directions, at 64M and 1G, beside the copy engine
#   large<r>.*   256M .. 2G: the copy engine and the best kernel, three runs
# Tables go to stdout and OUTDIR/*.txt, every statistic to OUTDIR/*.json.
set -euo pipefail
bin=${EFABENCH:-build/efabench}
out=${1:-ipc-results}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 # efabench uses no NVLink multicast; keep anything else off it too
"$bin" ipc -b 64M -e 1G -f 16 -w 3 -n 20 --json "$out/sweep.json" | tee "$out/sweep.txt"
for r in 1 2 3; do
	"$bin" ipc -b 256M -e 2G -w 3 -n 20 --grid 32,all --block 1024 \
		--json "$out/large$r.json" | tee "$out/large$r.txt"
done
