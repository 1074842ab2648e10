#!/usr/bin/env python3
"""moe_summary.py DIR...: medians of efabench moe runs, one table per DIR (its *.json).

Per (initiator, phase): runs, the median of the slowest rank's p50 (us), of fabric and sel
GB/s, of Mwrites/s, and of each run's ratio to the all-to-all-v of the same run (p50 / the
a2av's p50, with its range): the figures the moe results in the README come from."""
import glob
import json
import os
import statistics
import sys


def table(folder):
    runs = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(folder, "*.json")))]
    if not runs:
        sys.exit(f"moe_summary: no JSON in {folder}")
    d = runs[0]
    print(f"## {folder}: {len(runs)} runs; {d['ranks']} ranks, {d['preset']}, {d['tokens']} tokens, "
          f"hidden {d['hidden']}, top-{d['topk']} of {d['experts']}, {d['dtype']}, {d['routing']}, "
          f"{d['provider']}, {d['mem']} memory ({d.get('registration', '?')}), {d['proxy_threads']} proxy thread(s)"
          + (f" + {d['rx_threads']} receiving" if d.get("rx_threads") else "")
          + (f", pieces of {d['piece']} B (chunk {d['chunk']} B)" if d.get("piece", d.get("chunk")) != d.get("chunk") else ""))
    print("| initiator | phase | runs | p50 us | fabric GB/s | sel GB/s | Mwr/s | x a2av (range) |")
    print("|---|---|--:|--:|--:|--:|--:|--:|")
    keys = []
    for r in d["results"]:
        keys.append((r["initiator"], r["phase"]))
    for ini, ph in keys:
        rows = [r for doc in runs for r in doc["results"] if (r["initiator"], r["phase"]) == (ini, ph)]
        med = lambda k: statistics.median(r[k] for r in rows)
        fab = "fabric_GBps" if "fabric_GBps" in rows[0] else "wire_GBps"  # older files: "wire"
        ratios = [r["vs_a2av"] for r in rows if r.get("vs_a2av") is not None]
        rr = (f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"
              if ratios and ini != "a2av" else "-")
        print(f"| {ini} | {ph} | {len(rows)} | {med('p50_us'):.0f} | {med(fab):.3f} | "
              f"{med('sel_GBps'):.2f} | {med('mwrites_per_s'):.3f} | {rr} |")
    print()


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    for folder in argv[1:]:
        table(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
