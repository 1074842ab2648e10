#!/usr/bin/env bash
# fastpath-bench.sh: efabench's small-message figures against the floor (tests/floor: the
# least a libfabric program can do), run interleaved in one sitting: for every provider, size
# and measurement, floor and efabench alternate REPS times (which goes first alternates too).
# Printed by scripts/fastpath-table.py: each program's median and their ratio; the median of the
# REPS paired ratios (each run against the other program's run beside it: placement drift on a
# VM moves both); a bootstrap 95 % interval for both ratios; and the ratio of the best runs
# (lowest latency, highest rate), since single runs on a VM are bimodal.
#   sendrecv   one-way latency of a fi_send/fi_recv ping-pong (us)
#   write      an S-byte fi_writedata and the target's 8-byte acknowledgement (us)
#   rate       S-byte writes, WINDOW in flight, until the target acknowledges the last
#              (million messages/s)
# Environment: EFABENCH (build/efabench), FLOOR (build/tests/floor/efabench-floor), PROVIDERS
# ("shm tcp"), SIZES ("8 64 4096 65536"), MEASUREMENTS ("sendrecv write rate"), REPS (5),
# ITERS (20000), WINDOW (16), CPUS (unset: no pinning; e.g. "2,3": in both programs rank 0 runs
# on CPU 2 and rank 1 on CPU 3 (--cpu-map), so that neither program's ranks are placed closer,
# share a core or move between cores), RUNS (unset; a file: every run's figure appended as
# "provider measurement size floor|efabench value"; fastpath-table.py pools such files).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${EFABENCH:-build/efabench}
floor=${FLOOR:-build/tests/floor/efabench-floor}
reps=${REPS:-5} iters=${ITERS:-20000} window=${WINDOW:-16}
pin=()
[ -n "${CPUS:-}" ] && pin=(--cpu-map "$CPUS")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# efabench ARGS...: the first record's figure (lat_us, or mmsg_per_s with --rate).
eb() {
	"$bin" "$@" "${pin[@]}" --np 2 -n "$iters" -w 100 --json "$tmp/o.json" >/dev/null
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r.get("mmsg_per_s", r["lat_us"]))' "$tmp/o.json"
}

# run_floor / run_eb MEASUREMENT PROV SIZE: one run, its figure appended to $tmp/f or $tmp/e.
run_floor() {
	case $1 in
	rate) "$floor" rate "$3" "$iters" "$window" --provider "$2" "${pin[@]}" | awk '{print $1 / 1e6}' ;;
	*) "$floor" "$1" "$3" "$iters" --provider "$2" "${pin[@]}" ;;
	esac >>"$tmp/f"
}
run_eb() {
	case $1 in
	sendrecv) eb sendrecv --provider "$2" -b "$3" -e "$3" ;;
	write) eb write --layout single --provider "$2" -b "$3" -e "$3" ;;
	rate) eb write --rate --window "$window" --provider "$2" -b "$3" -e "$3" ;;
	esac >>"$tmp/e"
}

python3 scripts/fastpath-table.py --header
for prov in ${PROVIDERS:-shm tcp}; do
	for size in ${SIZES:-8 64 4096 65536}; do
		for m in ${MEASUREMENTS:-sendrecv write rate}; do
			: >"$tmp/f" && : >"$tmp/e"
			for rep in $(seq "$reps"); do
				for who in $( ((rep % 2)) && echo floor eb || echo eb floor); do
					run_"$who" "$m" "$prov" "$size"
				done
			done
			sed "s/^/$prov $m $size floor /" "$tmp/f" >>"$tmp/runs"
			sed "s/^/$prov $m $size efabench /" "$tmp/e" >>"$tmp/runs"
			python3 scripts/fastpath-table.py --cell "$prov" "$m" "$size" "$tmp/runs"
		done
	done
done
[ -z "${RUNS:-}" ] || cat "$tmp/runs" >>"$RUNS"
