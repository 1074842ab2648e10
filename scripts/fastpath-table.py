#!/usr/bin/env python3
"""fastpath-table.py [--header | --cell PROV MEASUREMENT SIZE] RUNS...

The floor-vs-efabench table from the run files scripts/fastpath-bench.sh writes (RUNS=FILE):
one line per run, "provider measurement size floor|efabench value", a cell's runs in the order
the two programs alternated, so the i-th floor run pairs with the i-th efabench run. Several
files pool their runs (sittings on one host: more repetitions than one sitting holds).

Columns: each program's median; their ratio (efabench / floor); the median of the paired ratios
(each run against the other program's run beside it, so that drift of the host moves both);
for each ratio a 95 % interval from 2000 bootstrap resamples of the pairs (fixed seed: the same
runs print the same table); the ratio of the best runs (lowest latency, highest rate).
"""
import random
import statistics as st
import sys

UNITS = {"sendrecv": "us", "write": "us", "rate": "Mmsg/s"}
HEADER = ("| provider | measurement | size | runs | floor | efabench | ratio [95 %] "
          "| paired ratio [95 %] | best ratio |\n|---|---|---:|---:|---:|---:|---:|---:|---:|")


def load(paths):
    """{(provider, measurement, size): ([floor...], [efabench...])} in first-seen order."""
    cells = {}
    for path in paths:
        here = {}
        for line in open(path):
            prov, m, size, who, value = line.split()
            f, e = here.setdefault((prov, m, size), ([], []))
            (f if who == "floor" else e).append(float(value))
        for key, (f, e) in here.items():
            n = min(len(f), len(e))  # an unpaired last run (a run cut short) is left out
            cf, ce = cells.setdefault(key, ([], []))
            cf.extend(f[:n])
            ce.extend(e[:n])
    return cells


def interval(pairs, stat, rng):
    draws = sorted(stat([rng.choice(pairs) for _ in pairs]) for _ in range(2000))
    return draws[50], draws[1949]


def row(key, f, e):
    prov, m, size = key
    pairs = list(zip(f, e))
    ratio = lambda ps: st.median(b for _, b in ps) / st.median(a for a, _ in ps)
    paired = lambda ps: st.median(b / a for a, b in ps)
    rng = random.Random(1)
    lo, hi = interval(pairs, ratio, rng)
    plo, phi = interval(pairs, paired, rng)
    best = max if m == "rate" else min
    return "| %s | %s (%s) | %s | %d | %.3f | %.3f | %.3f [%.3f–%.3f] | %.3f [%.3f–%.3f] | %.3f |" % (
        prov, m, UNITS[m], size, len(pairs), st.median(f), st.median(e), ratio(pairs), lo, hi,
        paired(pairs), plo, phi, best(e) / best(f))


def main(argv):
    if argv[:1] == ["--header"]:
        print(HEADER)
        return 0
    only = None
    if argv[:1] == ["--cell"]:
        only, argv = tuple(argv[1:4]), argv[4:]
    if not argv:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    cells = load(argv)
    if only is None:
        print(HEADER)
    for key, (f, e) in cells.items():
        if (only is None or key == only) and f:
            print(row(key, f, e))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
