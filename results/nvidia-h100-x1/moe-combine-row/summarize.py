#!/usr/bin/env python3
"""summarize.py [DIR]: per run, each initiator's dispatch and combine p50 (the slowest rank's,
us), combine / dispatch, each phase over the all-to-all-v's, and (test bed) the leg between
hosts over the rails (cross GB/s over the link speed times the rails), from the --json files."""
import glob
import json
import os
import sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
print("| run | commit | initiator | dispatch | combine | combine / dispatch | x a2av (d, c) "
      "| cross / rails (d, c) | #wrong |")
print("|---|---|---|--:|--:|--:|--:|--:|--:|")
for f in sorted(glob.glob(os.path.join(d, "*.json"))):
    j = json.load(open(f))
    rails = None
    s = j.get("settings", {})
    if j.get("link_gbps") or s.get("link_gbps"):
        gbps = j.get("link_gbps") or s.get("link_gbps")
        rails = gbps * len(s.get("channel_nics", [])) / 8
    rows = {(r["initiator"], r["phase"]): r for r in j["results"]}
    for ini in ("a2av", "cpu", "gpu"):
        if (ini, "dispatch") not in rows:
            continue
        dd, cc = rows[(ini, "dispatch")], rows[(ini, "combine")]
        cross = "-"
        if rails and dd.get("cross_GBps"):
            cross = "%.2f, %.2f" % (dd["cross_GBps"] / rails, cc["cross_GBps"] / rails)
        wrong = sum(r["wrong"] for (i, _), r in rows.items() if i == ini)
        print("| %s | %s | %s | %.1f | %.1f | %.2f | %.2f, %.2f | %s | %d |" % (
            os.path.basename(f)[:-5], j["stamp"]["commit"][:7], ini, dd["p50_us"], cc["p50_us"],
            cc["p50_us"] / dd["p50_us"], dd["vs_a2av"], cc["vs_a2av"], cross, wrong))
