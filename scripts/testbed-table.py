#!/usr/bin/env python3
"""Median BusBW (%) per benchmark, layout and size over repeated efabench tables (the text
output of write or alltoall, e.g. from scripts/testbed-bench.sh), with each cell's min-max, one
column per set of runs:

    testbed-table.py NAME=FILE[,FILE...] [NAME=FILE...]

A file may hold several benchmarks' tables; every table row of a benchmark is one run's cell."""
import re
import statistics
import sys

LAYOUTS = ("Single", "Split", "RoundRobin", "Multi")


def load(files):
    cells = {}
    for path in files:
        bench, cols = None, None
        for line in open(path):
            m = re.match(r"# efabench (\w+):", line)
            if m:
                bench, cols = m.group(1), None
                continue
            if not line.startswith("|") or bench is None:
                continue
            row = [c.strip() for c in line.strip().strip("|").split("|")]
            if row[0] == "Size":
                cols = row
                continue
            if cols is None or not re.match(r"\d+[KMG]?$", row[0]):
                continue
            for i, name in enumerate(cols):
                # a layout's Gbps column is followed by its BusBW (%)
                if name in LAYOUTS and i + 1 < len(cols) and cols[i + 1].startswith("BusBW"):
                    try:
                        v = float(row[i + 1])
                    except ValueError:
                        continue
                    cells.setdefault((bench, name, row[0]), []).append(v)
    return cells


def size_key(s):
    unit = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * unit[s[-1]] if s[-1] in unit else int(s)


def main(argv):
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sets = [(a.split("=", 1)[0], load(a.split("=", 1)[1].split(","))) for a in argv[1:]]
    keys = sorted({k for _, c in sets for k in c}, key=lambda k: (k[0], k[1], size_key(k[2])))
    print("| benchmark | layout | size | "
          + " | ".join(f"{n}: median BusBW % (min-max, runs)" for n, _ in sets) + " |")
    print("|---|---|---:|" + "---:|" * len(sets))
    for k in keys:
        out = []
        for _, c in sets:
            v = c.get(k)
            out.append(f"{statistics.median(v):.1f} ({min(v):.1f}-{max(v):.1f}, {len(v)})"
                       if v else "-")
        print(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(out) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
