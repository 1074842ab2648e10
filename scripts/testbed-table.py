#!/usr/bin/env python3
"""Median BusBW (%) per benchmark, variant and size over repeated efabench runs (their --json
files, e.g. from scripts/testbed-bench.sh with EB_BENCH_OUT), with each cell's min-max, one
column per set of runs:

    testbed-table.py NAME=FILE[,FILE...] [NAME=FILE...]

Each FILE is one run of write or alltoall; every record of it is one run's cell."""
import json
import statistics
import sys


def size_name(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def load(files):
    cells = {}
    for path in files:
        doc = json.load(open(path))
        bench = doc["settings"]["bench"]
        for r in doc["results"]:
            if r.get("busbw_pct") is None:
                continue
            key = (bench, r["variant"], r["size"])
            cells.setdefault(key, []).append(r["busbw_pct"])
    return cells


def main(argv):
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sets = [(a.split("=", 1)[0], load(a.split("=", 1)[1].split(","))) for a in argv[1:]]
    keys = sorted({k for _, c in sets for k in c})
    print("| benchmark | layout | size | "
          + " | ".join(f"{n}: median BusBW % (min-max, runs)" for n, _ in sets) + " |")
    print("|---|---|---:|" + "---:|" * len(sets))
    for k in keys:
        out = []
        for _, c in sets:
            v = c.get(k)
            out.append(f"{statistics.median(v):.1f} ({min(v):.1f}-{max(v):.1f}, {len(v)})"
                       if v else "-")
        print(f"| {k[0]} | {k[1]} | {size_name(k[2])} | " + " | ".join(out) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
