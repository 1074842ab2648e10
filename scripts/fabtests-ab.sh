#!/usr/bin/env bash
# fabtests-ab.sh: efabench's and the floor's small-message write rate against fabtests'
# fi_rma_bw (-o writedata, a window in flight), interleaved run by run on loopback, then the
# medians and the median of the paired ratios (each run against the fabtests run beside it).
# Environment: FT (a fi_rma_bw built from the fabtests of the libfabric release in use; required),
# EFABENCH (build/efabench), FLOOR (build/tests/floor/efabench-floor), PROVIDERS ("shm tcp"),
# SIZES ("8 64 4096"), REPS (5), ITERS (20000), WINDOW (16), RUNS (a file to append every run
# to, as "provider rate size program value"; default a temporary one).
# efabench runs one phase (--phases 1), as fi_rma_bw times one loop.
set -euo pipefail
cd "$(dirname "$0")/.."
ft=${FT:?set FT to a fi_rma_bw binary}
bin=${EFABENCH:-build/efabench}
floor=${FLOOR:-build/tests/floor/efabench-floor}
reps=${REPS:-5} iters=${ITERS:-20000} window=${WINDOW:-16}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=${RUNS:-$tmp/runs}

# fi_rma_bw on loopback: the server on the default port, the client on the next (shm names its
# endpoints after the port), addresses exchanged out of band (-E). Prints Mxfers/sec.
fabtests() { # prov size
	timeout 60 "$ft" -E -p "$1" -o writedata -W "$window" -I "$iters" -S "$2" >"$tmp/srv" 2>&1 &
	local s=$!
	sleep 0.3
	timeout 60 "$ft" -E -B 9229 -p "$1" -o writedata -W "$window" -I "$iters" -S "$2" 127.0.0.1 \
		>"$tmp/cli" 2>&1
	wait $s
	awk '$1 ~ /^[0-9]/ { v = $NF } END { print v }' "$tmp/cli"
}
efabench() { # prov size
	"$bin" write --rate --phases 1 --np 2 --provider "$1" -b "$2" -e "$2" -n "$iters" -w 100 \
		--window "$window" -q --json "$tmp/o.json" >/dev/null
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["mmsg_per_s"])' "$tmp/o.json"
}
floor() { # prov size
	"$floor" rate "$2" "$iters" "$window" --provider "$1" | awk '{ print $1 / 1e6 }'
}
for _ in $(seq "$reps"); do
	for prov in ${PROVIDERS:-shm tcp}; do
		for s in ${SIZES:-8 64 4096}; do
			for prog in fabtests efabench floor; do
				echo "$prov rate $s $prog $($prog "$prov" "$s")" >>"$runs"
			done
		done
	done
done
python3 - "$runs" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    prov, _, size, prog, value = line.split()[:5]
    d[(prov, int(size), prog)].append(float(value))
print("| provider | size | fabtests Mmsg/s | efabench | floor | efabench / fabtests (range) | floor / fabtests (range) |")
print("|---|---:|---:|---:|---:|---:|---:|")
for prov, size in sorted({(p, s) for p, s, _ in d}):
    f, e, fl = (d[(prov, size, x)] for x in ("fabtests", "efabench", "floor"))
    re, rf = [a / b for a, b in zip(e, f)], [a / b for a, b in zip(fl, f)]
    print(f"| {prov} | {size} | {statistics.median(f):.3f} | {statistics.median(e):.3f} | "
          f"{statistics.median(fl):.3f} | {statistics.median(re):.3f} ({min(re):.2f}-{max(re):.2f}) | "
          f"{statistics.median(rf):.3f} ({min(rf):.2f}-{max(rf):.2f}) |")
PY
