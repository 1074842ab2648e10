#!/usr/bin/env bash
# gpu-mem-bench.sh [OUTDIR]: the GPU-memory measurements the README reports, 2 ranks on one host,
# shm, on a machine with a GPU (EFABENCH names the binary, default build/efabench; for device
# memory registered with the fabric, LD_LIBRARY_PATH must reach a libfabric built with CUDA).
#   tune.txt     write --mem device, chunk x window at 64M and 1G (picks the defaults)
#   cmp<r>.txt   host, pinned, device, staged and staged-serial writes at 64M and 1G, in
#                rounds, interleaved, so each comparison is within one round
# Summary lines (Single Gbps per size) go to stdout; tables and JSON to OUTDIR.
set -euo pipefail
bin=${EFABENCH:-build/efabench}
out=${1:-gpu-mem-results}
rounds=${ROUNDS:-3}
mkdir -p "$out"
# one LABEL ARGS...: a Single-layout write of 64M and 1G; prints LABEL and the Gbps per size.
one() {
	local label=$1
	shift
	"$bin" write --np 2 --provider shm --layout single -b 64M -e 1G -f 16 -w 2 -n 8 \
		--json "$out/$label.json" "$@" >"$out/$label.txt" 2>&1 || {
		echo "$label: failed"
		tail -3 "$out/$label.txt"
		return 0
	}
	python3 - "$out/$label.json" "$label" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(sys.argv[2], " ".join(f'{r["size"] >> 20}M={r["gbps"]:.1f}' for r in d["results"]))
PY
}
if [ "${SKIP_TUNE:-0}" != 1 ]; then
	for chunk in 1M 4M 16M 64M; do
		for window in 1 4 16; do
			one "tune-$chunk-$window" --mem device --chunk "$chunk" --window "$window"
		done
	done | tee "$out/tune.txt"
fi
for r in $(seq "$rounds"); do
	one "host-$r" --mem host
	one "pinned-$r" --mem pinned
	one "device-$r" --mem device
	one "staged-$r" --mem device --staged
	one "serial-$r" --mem device --staged --stage-serial
done | tee "$out/cmp.txt"
