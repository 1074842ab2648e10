#!/usr/bin/env bash
# fabtests-ab.sh: efabench's and the floor's small-message write rate against fabtests'
# fi_rma_bw (-o writedata, a window in flight), interleaved run by run on loopback, then the
# medians and the median of the paired ratios (each run against the fabtests run beside it).
# Environment: FT (a fi_rma_bw built from the fabtests of the libfabric release in use; required),
# EFABENCH (build/efabench), FLOOR (build/tests/floor/efabench-floor), PROVIDERS ("shm tcp"),
# SIZES ("8 64 4096"), REPS (5), ITERS (20000), WINDOW (16), RUNS (a file to append every run
# to, as "provider rate size program value"; default a temporary one), PIN ("A,B": the passive
# side of every program on CPU A, the writer on CPU B; default unpinned).
# efabench runs one phase (--phases 1), as fi_rma_bw times one loop.
#
# MODE=bw compares bandwidth instead (Gbps, SIZES default "256K 512K 1M 2M 4M", ITERS 2000):
# fi_rma_bw with WINDOW writes in flight; efabench `write --rate` (the same streaming window);
# and efabench's plain `write --layout single` (one acknowledged write per iteration) with each
# chunk of CHUNKS ("256K 512K 1M"; --window WINDOW).
set -euo pipefail
cd "$(dirname "$0")/.."
ft=${FT:?set FT to a fi_rma_bw binary}
bin=${EFABENCH:-build/efabench}
floor=${FLOOR:-build/tests/floor/efabench-floor}
mode=${MODE:-rate} reps=${REPS:-5} window=${WINDOW:-16}
if [ "$mode" = bw ]; then
	iters=${ITERS:-2000} sizes=${SIZES:-256K 512K 1M 2M 4M}
else
	iters=${ITERS:-20000} sizes=${SIZES:-8 64 4096}
fi
bytes() { numfmt --from=iec "$1"; }
# PIN=A,B: fabtests' server and efabench's rank 1 (the targets) on A, the writers on B.
pin_target=() pin_writer=() cpu_map=()
if [ -n "${PIN:-}" ]; then
	pin_target=(taskset -c "${PIN%,*}") pin_writer=(taskset -c "${PIN#*,}")
	cpu_map=(--cpu-map "${PIN#*,},${PIN%,*}")
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=${RUNS:-$tmp/runs}

# fi_rma_bw on loopback: the server on the default port, the client on the next (shm names its
# endpoints after the port), addresses exchanged out of band (-E). Prints Mxfers/sec.
fabtests() { # prov size
	local n
	n=$(bytes "$2")
	timeout 60 "${pin_target[@]}" "$ft" -E -p "$1" -o writedata -W "$window" -I "$iters" -S "$n" \
		>"$tmp/srv" 2>&1 &
	local s=$!
	sleep 0.3
	timeout 60 "${pin_writer[@]}" "$ft" -E -B 9229 -p "$1" -o writedata -W "$window" -I "$iters" \
		-S "$n" 127.0.0.1 >"$tmp/cli" 2>&1
	wait $s
	# the last column is Mxfers/sec, the fifth MB/sec (10^6 bytes)
	awk -v bw="$([ "$mode" = bw ] && echo 1)" \
		'$1 ~ /^[0-9]/ { v = bw ? $5 * 8 / 1000 : $NF } END { print v }' "$tmp/cli"
}
field() { # json key
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0][sys.argv[2]])' \
		"$tmp/o.json" "$1"
}
efabench() { # prov size
	"$bin" write --rate --phases 1 --np 2 --provider "$1" -b "$2" -e "$2" -n "$iters" -w 100 \
		--window "$window" "${cpu_map[@]}" -q --json "$tmp/o.json" >/dev/null
	field "$([ "$mode" = bw ] && echo gbps || echo mmsg_per_s)"
}
write_chunk() { # prov size chunk: plain write, one acknowledged write per iteration
	"$bin" write --np 2 --provider "$1" --layout single -b "$2" -e "$2" -n "$((iters / 4))" \
		-w 20 --chunk "$3" --window "$window" "${cpu_map[@]}" -q --json "$tmp/o.json" >/dev/null
	field gbps
}
floor() { # prov size
	"$floor" rate "$2" "$iters" "$window" --provider "$1" "${cpu_map[@]}" | awk '{ print $1 / 1e6 }'
}
for _ in $(seq "$reps"); do
	for prov in ${PROVIDERS:-shm tcp}; do
		for s in $sizes; do
			if [ "$mode" = bw ]; then
				echo "$prov bw $(bytes "$s") fabtests $(fabtests "$prov" "$s")" >>"$runs"
				echo "$prov bw $(bytes "$s") efabench $(efabench "$prov" "$s")" >>"$runs"
				for c in ${CHUNKS:-256K 512K 1M}; do
					echo "$prov bw $(bytes "$s") write-$c $(write_chunk "$prov" "$s" "$c")" \
						>>"$runs"
				done
				continue
			fi
			for prog in fabtests efabench floor; do
				echo "$prov rate $s $prog $($prog "$prov" "$s")" >>"$runs"
			done
		done
	done
done
python3 - "$runs" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
unit = {}
for line in open(sys.argv[1]):
    prov, m, size, prog, value = line.split()[:5]
    d[(prov, int(size), prog)].append(float(value))
    unit[prov, int(size)] = "Gbps" if m == "bw" else "Mmsg/s"
progs = list(dict.fromkeys(k[2] for k in d if k[2] != "fabtests"))
print("| provider | size | fabtests | " + " | ".join(progs) + " | "
      + " | ".join(f"{p} / fabtests (range)" for p in progs) + " |")
print("|---|---:|" + "---:|" * (1 + 2 * len(progs)))
for prov, size in sorted({(p, s) for p, s, _ in d}):
    f = d[(prov, size, "fabtests")]
    cells = [f"{statistics.median(f):.3f} {unit[prov, size]}"]
    ratios = []
    for p in progs:
        v = d[(prov, size, p)]
        r = [a / b for a, b in zip(v, f)]
        cells.append(f"{statistics.median(v):.3f}")
        ratios.append(f"{statistics.median(r):.3f} ({min(r):.2f}-{max(r):.2f})")
    print(f"| {prov} | {size} | " + " | ".join(cells + ratios) + " |")
PY
