#!/usr/bin/env bash
# proxy-bench.sh [OUTDIR]: the GPU-initiated measurements the README reports, 2 ranks on one
# host with a GPU, shm (EFABENCH names the binary, default build/efabench; --mem device needs
# LD_LIBRARY_PATH to reach a libfabric built with CUDA):
#   bw-<mem><r>   seed 000's sizes: ProxySingle/Multi (blocking, NBI) beside CPU writes
#   lat           8 B .. 64 KiB put + quiet round trips, CPU write latency, the GPU<->CPU floor
#   rate          4 KiB puts from 1 block .. every SM beside CPU-posted writes
set -euo pipefail
bin=${EFABENCH:-build/efabench}
out=${1:-proxy-results}
mkdir -p "$out"
p() { "$bin" proxy --np 2 --provider shm "$@"; }
# The proxy variants and their CPU references take turns (5 times unless --rounds says
# otherwise; the rate runs 10): shm's copies drift over a run by more than the ratios between them.
for r in 1 2; do
	p --mem pinned -n 20 -w 3 --json "$out/bw-pinned$r.json" >"$out/bw-pinned$r.txt"
	p --mem device -n 20 -w 3 --json "$out/bw-device$r.json" \
		>"$out/bw-device$r.txt" || echo "device memory: see $out/bw-device$r.txt"
done
p --mode lat -n 5000 -w 100 --json "$out/lat.json" >"$out/lat.txt"
p --mode rate --producers 1b,16b,64b,all -n 100000 -w 1000 --rounds 10 --json "$out/rate.json" \
	>"$out/rate.txt"
tail -n 14 "$out"/bw-*.txt "$out/lat.txt" "$out/rate.txt"
