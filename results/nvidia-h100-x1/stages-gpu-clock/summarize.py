#!/usr/bin/env python3
"""summarize.py [DIR]: queue's push-to-seen beside proxy's push -> seen stage (p50, us) in each
round, the proxy stage's p50 over each fifth of its run (from the traces), and the rate of
`proxy --mode rate` with stages sampled 1 in 64 over the rate with them off, pair by pair."""
import glob
import gzip
import json
import os
import statistics
import sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
J = lambda f: json.load(open(os.path.join(d, f)))

print("| round | queue push-to-seen | proxy queue stage, new | new - queue | old | old - queue |")
print("|---|--:|--:|--:|--:|--:|")
for r in (1, 2, 3):
    q = J("queue-%d.json" % r)["push_to_seen"]["p50_us"]
    st = {b: [x for x in J("lat8-%s-%d.json" % (b, r))["results"] if "stages" in x][-1]["stages"]
          for b in ("new", "old")}
    n, o = st["new"]["queue"]["p50_us"], st["old"]["queue"]["p50_us"]
    print("| %d | %.2f | %.2f | %+.2f | %.2f | %+.2f |" % (r, q, n, n - q, o, o - q))

print("\nproxy queue stage p50 (us) over each fifth of the run, round 1:")
for b in ("new", "old"):
    ev = json.load(gzip.open(os.path.join(d, "lat8-%s-1.trace.gz" % b)))
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    q = sorted((e for e in ev if e.get("name") == "queue" and e.get("ph") == "X"),
               key=lambda e: e["ts"])
    k = len(q) // 5
    fifths = [statistics.median(e["dur"] for e in q[i * k:(i + 1) * k]) for i in range(5)]
    print("  %s: %s over %.1f ms" % (b, " ".join("%.2f" % f for f in fifths),
                                     (q[-1]["ts"] - q[0]["ts"]) / 1e3))

print("\nproxy --mode rate, Mmsg/s with --stages 64 over --stages off, pair by pair:")
for build in sorted(glob.glob(os.path.join(d, "rate-*"))):
    for side in ("gpu", "cpu"):
        rows = {}
        for f in sorted(glob.glob(os.path.join(build, "rate-%s-*.json" % side))):
            s, i = os.path.basename(f)[:-5].split("-")[2:4]
            for x in json.load(open(f))["results"]:
                rows.setdefault(x["variant"], {}).setdefault(s, {})[i] = x["mmsg_per_s"]
        for v, by in sorted(rows.items()):
            pairs = [by["64"][i] / by["off"][i] for i in sorted(by["64"]) if i in by["off"]]
            print("  %s %s %s: %s (median of each %.3f)" % (
                os.path.basename(build), side, v, " ".join("%.3f" % p for p in pairs),
                statistics.median(by["64"].values()) / statistics.median(by["off"].values())))
