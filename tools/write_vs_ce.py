#!/usr/bin/env python3
"""write_vs_ce.py DIR: device-memory writes GPU 0 -> GPU 1 beside the copy engine.

DIR holds write-N.json (efabench write --mem device) and ipc-N.json (efabench ipc --methods ce
--dirs write) from interleaved runs. Prints, per size and write variant, the median Gbps of
each and the median of the per-run ratios write / copy engine (with their range)."""
import glob
import json
import os
import statistics
import sys


def load(path):
    return json.load(open(path))["results"]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    runs = sorted(glob.glob(os.path.join(d, "write-*.json")))
    rows = {}
    for w in runs:
        n = w[w.rindex("-") + 1 : -len(".json")]
        ce = {r["size"]: r["gbps"] for r in load(os.path.join(d, f"ipc-{n}.json"))
              if r["method"] == "ce" and r["dir"] == "write"}
        for r in load(w):
            if r["size"] in ce:
                rows.setdefault((r["size"], r["variant"]), []).append((r["gbps"], ce[r["size"]]))
    print(f"| size | variant | write Gbps | copy engine Gbps | write / CE (range), {len(runs)} runs |")
    print("|---:|:---|---:|---:|---:|")
    for (size, var), v in sorted(rows.items()):
        ratios = [a / b for a, b in v]
        print(f"| {size >> 20}M | {var} | {statistics.median(a for a, _ in v):.0f} | "
              f"{statistics.median(b for _, b in v):.0f} | {statistics.median(ratios):.3f} "
              f"({min(ratios):.3f}-{max(ratios):.3f}) |")


if __name__ == "__main__":
    main()
