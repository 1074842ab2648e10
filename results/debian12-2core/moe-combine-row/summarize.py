"""summarize.py: each run's p50s (us) of the CPU producers and the a2av, and combine / dispatch."""
import glob
import json
import statistics

rows, ratio = [], {"old": [], "new": []}
for b in ("old", "new"):
    for f in sorted(glob.glob(f"{b}-*.json")):
        doc = json.load(open(f))
        p = {(r["initiator"], r["phase"]): r["p50_us"] for r in doc["results"]}
        q = p[("cpu", "combine")] / p[("cpu", "dispatch")]
        ratio[b].append(q)
        rows.append((f[:-5], doc["stamp"]["commit"], p[("cpu", "dispatch")],
                     p[("cpu", "combine")], q, p[("a2av", "dispatch")], p[("a2av", "combine")]))
print("| run | build | cpu dispatch | cpu combine | combine / dispatch | a2av dispatch | a2av combine |")
print("|---|---|--:|--:|--:|--:|--:|")
for r in rows:
    print("| %s | %s | %.1f | %.1f | %.2f | %.1f | %.1f |" % r)
for b in ("old", "new"):
    print(f"\n{b}: combine / dispatch median {statistics.median(ratio[b]):.2f} "
          f"({min(ratio[b]):.2f}-{max(ratio[b]):.2f})")
