#!/usr/bin/env bash
# fastpath-bench.sh: efabench's small-message figures against the floor (tests/floor: the
# least a libfabric program can do), run interleaved in one session: for every provider, size
# and measurement, floor and efabench alternate REPS times; medians and their ratio are printed.
#   sendrecv   one-way latency of a fi_send/fi_recv ping-pong (us)
#   write      an S-byte fi_writedata and the target's 8-byte acknowledgement (us)
#   rate       S-byte writes, WINDOW in flight (million messages/s)
# Environment: EFABENCH (build/efabench), FLOOR (build/tests/floor/efabench-floor), PROVIDERS
# ("shm tcp"), SIZES ("8 64 4096 65536"), REPS (5), ITERS (20000), WINDOW (16), CPUS (unset: no
# pinning; e.g. "2,3": both programs under taskset -c 2,3, so the scheduler cannot place one
# program's ranks closer than the other's).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${EFABENCH:-build/efabench}
floor=${FLOOR:-build/tests/floor/efabench-floor}
reps=${REPS:-5} iters=${ITERS:-20000} window=${WINDOW:-16}
pin=()
[ -n "${CPUS:-}" ] && pin=(taskset -c "$CPUS")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# efabench ARGS...: the first record's figure (lat_us, or mmsg_per_s with --rate).
eb() {
	"${pin[@]}" "$bin" "$@" --np 2 -n "$iters" -w 100 --json "$tmp/o.json" >/dev/null
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r.get("mmsg_per_s", r["lat_us"]))' "$tmp/o.json"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

printf "| provider | measurement | size | floor | efabench | efabench / floor |\n"
printf "|---|---|---:|---:|---:|---:|\n"
for prov in ${PROVIDERS:-shm tcp}; do
	for size in ${SIZES:-8 64 4096 65536}; do
		for m in sendrecv write rate; do
			: >"$tmp/f" && : >"$tmp/e"
			for _ in $(seq "$reps"); do
				case $m in
				sendrecv)
					"${pin[@]}" "$floor" sendrecv "$size" "$iters" --provider "$prov" >>"$tmp/f"
					eb sendrecv --provider "$prov" -b "$size" -e "$size" >>"$tmp/e"
					;;
				write)
					"${pin[@]}" "$floor" write "$size" "$iters" --provider "$prov" >>"$tmp/f"
					eb write --layout single --provider "$prov" -b "$size" -e "$size" >>"$tmp/e"
					;;
				rate)
					"${pin[@]}" "$floor" rate "$size" "$iters" "$window" --provider "$prov" |
						awk '{print $1 / 1e6}' >>"$tmp/f"
					eb write --rate --window "$window" --provider "$prov" -b "$size" -e "$size" >>"$tmp/e"
					;;
				esac
			done
			f=$(median <"$tmp/f") e=$(median <"$tmp/e")
			unit=us
			[ $m = rate ] && unit=Mmsg/s
			printf "| %s | %s (%s) | %s | %.3f | %.3f | %.3f |\n" "$prov" "$m" "$unit" "$size" "$f" "$e" \
				"$(awk -v e="$e" -v f="$f" 'BEGIN { print e / f }')" # no bc on every host
		done
	done
done
