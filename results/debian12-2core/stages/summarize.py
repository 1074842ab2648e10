#!/usr/bin/env python3
"""Paired on/off rate ratios of the interleaved runs here (rate-64-I.json, rate-off-I.json)."""
import glob, json, statistics as S
v = {}
n = len(glob.glob("rate-64-*.json"))
for i in range(1, n + 1):
    for s in ("64", "off"):
        for r in json.load(open(f"rate-{s}-{i}.json"))["results"]:
            v.setdefault((r["variant"], s), []).append(r["mmsg_per_s"])
print("| variant | Mmsg/s, --stages 64: median (min-max) | --stages off | paired 64/off: median (min-max) |")
print("|---|---:|---:|---:|")
for var in sorted({k[0] for k in v}):
    on, off = v[(var, "64")], v[(var, "off")]
    q = sorted(a / b for a, b in zip(on, off))
    print("| %s | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) |" % (
        var, S.median(on), min(on), max(on), S.median(off), min(off), max(off),
        S.median(q), q[0], q[-1]))
