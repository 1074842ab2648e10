#!/usr/bin/env bash
# Benchmarks on the test bed: builds H hosts x R rails at RATE (default 4 x 4 at 2gbit), runs
# `write` and `alltoall` with every layout (single, split, round-robin) from 8M to 64M, prints
# the seed-shaped tables, and tears the bed down. Root only. With EB_BENCH_OUT=DIR each writes
# DIR/write.json and DIR/alltoall.json (what scripts/testbed-table.py reads).
#
#   testbed-bench.sh [HOSTS RAILS RATE [rdv|mpich]]     extra efabench flags: $EB_BENCH_FLAGS
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hosts=${1:-4} rails=${2:-4} rate=${3:-2gbit} via=${4:-rdv}
gbps=$(echo "$rate" | awk '{r=$1; u=tolower(substr(r, length(r)-3, 1)); v=r+0;
	print (u=="g") ? v : (u=="m") ? v/1000 : (u=="k") ? v/1e6 : v/1e9}')
export EB_TESTBED_PREFIX=${EB_TESTBED_PREFIX:-ebbench}
trap 'bash "$here/testbed.sh" down' EXIT
bash "$here/testbed.sh" up "$hosts" "$rails" "$rate"
nics=$(bash "$here/testbed.sh" nics "$rails")
# shellcheck disable=SC2086
for bench in write alltoall; do
	json=()
	[ -n "${EB_BENCH_OUT:-}" ] && mkdir -p "$EB_BENCH_OUT" && json=(--json "$EB_BENCH_OUT/$bench.json")
	echo
	bash "$here/testbed-run.sh" "$via" "$hosts" 1 "$bench" --provider tcp --nics "$nics" \
		--link-gbps "$gbps" -b 8M -e 64M -n "${EB_BENCH_ITERS:-10}" -w 2 ${EB_BENCH_FLAGS:-} \
		"${json[@]}"
done
