#!/usr/bin/env python3
"""efabench_plot.py FILE.json [FILE.json ...] -o DIR: PNG figures of efabench --json output.

Every subcommand's JSON is recognised by its "bench" (in "settings" or at the top level):

  write, sendrecv, alltoall, proxy (and any run on the harness: records with variant, size,
  gbps, lat_us)
      STEM-bandwidth.png   Gbps vs size per variant; the link limit (link Gbps x NICs the
                           variant drives) as a horizontal line when the JSON gives a link speed
      STEM-latency.png     mean latency (us) vs size per variant, log-log
  proxy, in addition
      STEM-ratio.png       each proxy variant's Gbps over its CPU-initiated reference's, per size
      STEM-rate.png        (--mode rate) million puts/s per variant
      STEM-stages.png      (stages stamped) per point of the largest size, a bar of the whole
                           put's p50 split into its stages' p50s (queue, proxy, local
                           completion, back to producer; to the target beside)
  a --trace file (the Chrome Trace Event Format efabench writes)
      STEM-timeline.png    the sampled puts of one point (the first with the most samples,
                           else --point NAME) as spans against time: a row per rank and lane,
                           each stage in its colour
  queue
      STEM-commands.png    million commands/s one consumer takes vs producers
  ipc
      STEM-heatmap-DIR.png per direction (write, read), a heat map of the sweep per size
                           (six at most): rows the launch shape's block (threads; tma apart),
                           columns the grid (blocks), GB/s
      STEM-summary.png     copy engine and best kernel GB/s vs size, NVLink peak as a line
  matrix
      STEM-heatmap-chK.png per channel, rows source rank, columns target rank, write Gbps;
                           flagged cells outlined in red and marked with "!"
  moe
      STEM-ranks-PHASE.png per phase (dispatch, combine, pair), one group of bars per rank:
                           p50 time per initiator (gpu, cpu, a2av), p99 as a whisker; each
                           initiator's slowest rank outlined in red (and named in the legend)
      STEM-traffic-tokens.png     rows source rank, columns destination rank, tokens sent
      STEM-traffic-selections.png the same, expert selections (the diagonal stays on its rank)
      STEM-summary.png     fabric GB/s and sel GB/s per (initiator, phase), x a2av above the bars

Beside each PNG, STEM-KIND.data.json lists what was drawn: {"series": {label: [[x, y], ...]}}
(heat maps also "x", "y", "z" and "marked"; ipc's "panels", one per size; moe's per-rank bars
"x" (ranks), "p50"/"p99" per initiator and "slowest"), "hlines" (the
horizontal limits drawn), the axis scales and the stamp, with the JSON's own numbers, unrounded.

Each figure carries the machine, provider, date and build in its lower right corner: from the
JSON's stamp and settings where present, else from --host/--provider/--date, else "unknown".

Exit status: 0 ok, 2 bad input (a missing or unreadable file, JSON that is not efabench's, an
output folder that cannot be written, matplotlib missing). One line on stderr says why.
"""

import argparse
import json
import math
import os
import sys

PROG = "efabench plot"
SYSTEM_PYTHON = "/usr/bin/python3"


def die(msg):
    print(f"efabench: error: {msg}", file=sys.stderr)
    sys.exit(2)


def load_matplotlib():
    """Debian's python3-matplotlib lives in the system interpreter's dist-packages; a python3
    earlier on PATH (pyenv, a virtual environment) may not see it: try the system one once."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        return plt
    except ImportError:
        pass
    if (
        os.environ.get("EFABENCH_PLOT_REEXEC") is None
        and os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON)
        and os.access(SYSTEM_PYTHON, os.X_OK)
    ):
        os.environ["EFABENCH_PLOT_REEXEC"] = "1"
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
    die("plots need matplotlib: install python3-matplotlib (apt-get install python3-matplotlib)")


# ---------------------------------------------------------------------------------------------
# Reading the JSON


def size_label(b):
    """Bytes as efabench prints them: binary K/M/G/T when exact, else the plain number."""
    b = int(b)
    for shift, suffix in ((40, "T"), (30, "G"), (20, "M"), (10, "K")):
        if b and b % (1 << shift) == 0:
            return f"{b >> shift}{suffix}"
    return str(b)


def bench_of(doc):
    s = doc.get("settings")
    if isinstance(s, dict) and "bench" in s:
        return s["bench"]
    return doc.get("bench")


def is_harness(doc):
    res = doc.get("results")
    return (
        isinstance(res, list)
        and len(res) > 0
        and all(isinstance(r, dict) for r in res)
        and all(k in r for r in res for k in ("variant", "size", "gbps", "lat_us"))
    )


def first(*vals):
    for v in vals:
        if v not in (None, "", []):
            return v
    return None


def stamp_of(doc, args):
    s = doc.get("settings") if isinstance(doc.get("settings"), dict) else {}
    st = doc.get("stamp") if isinstance(doc.get("stamp"), dict) else {}
    if not st and isinstance(doc.get("otherData"), dict):  # a trace
        st = doc["otherData"].get("stamp") or {}
    hosts = first(s.get("hosts"), doc.get("hosts"))
    if isinstance(hosts, list):
        uniq = list(dict.fromkeys(str(h) for h in hosts))
        hosts = ", ".join(uniq[:3]) + (f" (+{len(uniq) - 3})" if len(uniq) > 3 else "")
    host = first(st.get("host"), s.get("hostname"), s.get("host"), doc.get("hostname"),
                 doc.get("host"), hosts, args.host)
    prov = first(s.get("provider"), doc.get("provider"), args.provider)
    date = first(st.get("date"), s.get("date"), s.get("timestamp"), doc.get("date"),
                 doc.get("timestamp"), args.date)
    build = "unknown"
    if st:
        build = (f"efabench {st.get('efabench', '?')} ({st.get('commit', '?')}), "
                 f"libfabric {st.get('libfabric_runtime', '?')}")
    return (
        f"machine: {host or 'unknown'}   provider: {prov or 'unknown'}   "
        f"date: {date or 'unknown'}   build: {build}"
    )


# ---------------------------------------------------------------------------------------------
# Drawing


class Out:
    """Where figures go, and the list of what was written."""

    def __init__(self, plt, folder, stamp, bench):
        self.plt = plt
        self.folder = folder
        self.stamp = stamp
        self.bench = bench
        self.written = []

    def save(self, fig, name, data):
        fig.text(0.995, 0.005, self.stamp, ha="right", va="bottom", fontsize=7, color="0.35")
        png = os.path.join(self.folder, name + ".png")
        fig.savefig(png, dpi=120)
        self.plt.close(fig)
        data = dict(data)
        if fig.axes:  # the first panel's axis scales: "linear", "log" (base 2 on sizes)
            data["xscale"] = fig.axes[0].get_xscale()
            data["yscale"] = fig.axes[0].get_yscale()
        data["figure"] = name + ".png"
        data["bench"] = self.bench
        data["stamp"] = self.stamp
        with open(os.path.join(self.folder, name + ".data.json"), "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
        self.written.append(png)


def size_axis(ax, sizes):
    """Log2 x axis with efabench's size labels at the measured sizes (at most ~10 labelled)."""
    from matplotlib.ticker import FixedLocator, NullLocator

    sizes = sorted(set(sizes))
    ax.set_xscale("log", base=2)
    step = max(1, math.ceil(len(sizes) / 10))
    ticks = sizes[::step]
    if sizes[-1] not in ticks:
        ticks.append(sizes[-1])
        if len(ticks) > 2 and math.log2(ticks[-1]) - math.log2(ticks[-2]) < step * 0.75:
            del ticks[-2]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([size_label(t) for t in ticks])
    if len(sizes) > 1:
        lo, hi = math.log2(sizes[0]), math.log2(sizes[-1])
        pad = 0.03 * (hi - lo)
        ax.set_xlim(2 ** (lo - pad), 2 ** (hi + pad))


def legend(ax, n):
    if n > 4:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    elif n > 0:
        ax.legend(fontsize=8, loc="best")


def new_fig(plt, wide=False):
    fig, ax = plt.subplots(figsize=(9.5 if wide else 8, 5))
    ax.grid(True, which="major", alpha=0.3)
    return fig, ax


def finish(fig, wide=False):
    # Leave the bottom strip to the stamp; a legend outside on the right needs room.
    fig.tight_layout(rect=(0, 0.035, 1, 1))


def variants_in_order(res):
    order = []
    for r in res:
        if r["variant"] not in order:
            order.append(r["variant"])
    return order


def series_of(res, key):
    out = {}
    for v in variants_in_order(res):
        pts = sorted((r["size"], r[key]) for r in res if r["variant"] == v)
        out[v] = [[x, y] for x, y in pts]
    return out


GBPS_WHAT = {
    "write": "Gbps = 8·S/t (RoundRobin: 8·S·(N−1)/t), t = mean time per iteration",
    "sendrecv": "one-way: Gbps = 8·S/t, t = half the mean round trip",
    "alltoall": "per rank: Gbps = 8·S·(N−1)/t, t = a rank's mean time per iteration",
    "proxy": "Gbps = 8·S/t, t = mean time per put",
}
LAT_WHAT = {
    "write": "mean time per iteration, first post to the last chunk's acknowledgement",
    "sendrecv": "one-way: half the mean round trip",
    "alltoall": "each rank's mean time per iteration, averaged over ranks",
    "proxy": "mean time per put (NBI: the phase / puts)",
}


def bar_plot(out, name, res, key, title, ylabel):
    plt = out.plt
    labels = variants_in_order(res)
    vals = [next(r[key] for r in res if r["variant"] == v) for v in labels]
    size = res[0]["size"]
    fig, ax = new_fig(plt)
    bars = ax.bar(range(len(labels)), vals, color="tab:blue", width=0.6)
    ax.grid(False, axis="x")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30 if len(labels) > 5 else 0, ha="right" if len(labels) > 5 else "center")
    for b, v in zip(bars, vals):
        ax.annotate(f"{v:.3g}", (b.get_x() + b.get_width() / 2, b.get_height()),
                    ha="center", va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points")
    ax.set_title(f"{title}, size {size_label(size)}")
    ax.set_xlabel("Variant")
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, max(vals + [0]) * 1.15 or 1)
    finish(fig)
    out.save(fig, name, {
        "kind": "bar", "title": ax.get_title(), "xlabel": "variant", "ylabel": ylabel,
        "series": {v: [[size, y]] for v, y in zip(labels, vals)},
    })


def plot_harness(out, stem, doc):
    plt = out.plt
    res = doc["results"]
    bench = out.bench or "efabench"
    settings = doc.get("settings") if isinstance(doc.get("settings"), dict) else {}
    sizes = sorted({r["size"] for r in res})
    ranks = settings.get("ranks")
    who = f"efabench {bench}" + (f", {ranks} ranks" if ranks else "")

    if len(sizes) == 1:
        bar_plot(out, f"{stem}-bandwidth", res, "gbps", f"{who}: bandwidth", "Bandwidth (Gbps)")
        bar_plot(out, f"{stem}-latency", res, "lat_us", f"{who}: latency", "Latency (µs)")
    else:
        # Bandwidth, with the link limit per count of NICs the variants drive
        bw = series_of(res, "gbps")
        hlines = {}
        link = settings.get("link_gbps")
        if isinstance(link, (int, float)) and link > 0:
            by_nics = {}
            for r in res:
                names = by_nics.setdefault(r.get("nics_used") or 1, [])
                if r["variant"] not in names:
                    names.append(r["variant"])
            for n in sorted(by_nics):
                lab = (f"link limit {link:g} Gbps" if n == 1 else
                       f"link limit {n} × {link:g} Gbps")
                if len(by_nics) > 1:
                    lab += " (" + ", ".join(by_nics[n]) + ")"
                hlines[lab] = link * n
        fig, ax = new_fig(plt, wide=len(bw) > 4)
        for v, pts in bw.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4, label=v)
        for k, (lab, y) in enumerate(hlines.items()):
            ax.axhline(y, color="0.25", ls=("--", ":", "-.")[k % 3], lw=1.2)
            ax.annotate(lab, (1.0, y), xycoords=("axes fraction", "data"), ha="right",
                        va="bottom", fontsize=8, color="0.25", xytext=(-4, 2),
                        textcoords="offset points")
        if hlines:
            ax.set_ylim(top=max(max(hlines.values()),
                                max(p[1] for pts in bw.values() for p in pts)) * 1.08)
        size_axis(ax, sizes)
        ax.set_ylim(bottom=0)
        ax.set_title(f"{who}: bandwidth vs message size\n"
                     f"{GBPS_WHAT.get(bench, 'Gbps = 8·bytes/t')}")
        ax.set_xlabel("Message size S (bytes; K, M, G binary)")
        ax.set_ylabel("Bandwidth (Gbps)")
        legend(ax, len(bw))
        finish(fig)
        out.save(fig, f"{stem}-bandwidth", {
            "kind": "line", "title": ax.get_title(), "xlabel": "size (bytes)",
            "ylabel": "Gbps", "series": bw, "hlines": hlines,
        })

        # Latency
        lat = series_of(res, "lat_us")
        fig, ax = new_fig(plt, wide=len(lat) > 4)
        for v, pts in lat.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4, label=v)
        size_axis(ax, sizes)
        ax.set_yscale("log")
        ax.set_title(f"{who}: latency vs message size\n"
                     f"{LAT_WHAT.get(bench, 'mean time per iteration')}")
        ax.set_xlabel("Message size S (bytes; K, M, G binary)")
        ax.set_ylabel("Latency (µs, log scale)")
        legend(ax, len(lat))
        finish(fig)
        out.save(fig, f"{stem}-latency", {
            "kind": "line", "title": ax.get_title(), "xlabel": "size (bytes)",
            "ylabel": "latency (us)", "series": lat,
        })

    if any("ratio_to" in r for r in res):
        plot_ratio(out, stem, res, who)
    if any("mmsg_per_s" in r for r in res):
        rated = [r for r in res if "mmsg_per_s" in r]
        if len({r["size"] for r in rated}) == 1:
            bar_plot(out, f"{stem}-rate", rated, "mmsg_per_s", f"{who}: message rate",
                     "Rate (million puts/s)")
    plot_stages(out, stem, res)


STAGE_ORDER = ["queue", "proxy", "local completion", "back to producer", "to the target"]
STAGE_COLORS = {"queue": "tab:blue", "proxy": "tab:orange", "local completion": "tab:green",
                "back to producer": "tab:purple", "to the target": "tab:gray",
                "sample": "0.85"}


def plot_stages(out, stem, res):
    """The largest size's points that stamped stages: a stacked bar of the chain's p50s per
    point, the stage to the target as a thin bar beside it."""
    staged = [r for r in res if isinstance(r.get("stages"), dict) and r["stages"].get("samples")]
    if not staged:
        return
    top = max(r["size"] for r in staged)
    rows = [r for r in staged if r["size"] == top]
    fig, ax = new_fig(out.plt, wide=True)
    series = {}
    for i, r in enumerate(rows):
        st, bottom = r["stages"], 0.0
        for name in STAGE_ORDER[:4]:
            v = st.get(name, {}).get("p50_us") if st.get(name, {}).get("samples") else None
            if v is None:
                continue
            ax.bar(i - 0.1, v, 0.6, bottom=bottom, color=STAGE_COLORS[name],
                   label=name if i == 0 else None)
            series.setdefault(name, []).append([r["variant"], v])
            bottom += v
        tgt = st.get("to the target", {})
        if tgt.get("samples"):
            ax.bar(i + 0.3, tgt["p50_us"], 0.15, color=STAGE_COLORS["to the target"],
                   label="to the target (beside)" if i == 0 else None)
            series.setdefault("to the target", []).append([r["variant"], tgt["p50_us"]])
        ax.plot([i - 0.4, i + 0.2], [st["whole"]["p50_us"]] * 2, color="black", lw=1)
        series.setdefault("whole", []).append([r["variant"], st["whole"]["p50_us"]])
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r["variant"] for r in rows])
    ax.set_ylabel("p50 (us)")
    ax.set_title(f"Where a put's time goes at {size_label(top)}: stages' p50 (black: the "
                 "whole put's)")
    legend(ax, 6)
    finish(fig, wide=True)
    out.save(fig, f"{stem}-stages", {"series": series})


def plot_trace(out, stem, doc, point):
    """One point's sampled puts as a waterfall: a row per sample (the first 24), its stages
    against the time since its first stamp, each in its colour (a stage that ends on the
    target rank drawn thinner)."""
    ev = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    ids = {}
    for e in ev:
        ids.setdefault(e["args"]["point"], set()).add(e["args"]["sample"])
    count = {p: len(v) for p, v in ids.items()}
    if not count:
        die("the trace holds no sampled puts")
    if point is None:
        point = max(count, key=lambda p: (count[p], -list(count).index(p)))
    elif point not in count:
        die(f"--point {point}: the trace has {', '.join(count)}")
    by = {}
    for e in ev:
        if e["args"]["point"] == point:
            by.setdefault(e["args"]["sample"], []).append(e)
    samples = sorted(by, key=lambda k: min(e["ts"] for e in by[k]))[:24]
    # proxy samples puts; moe samples a rank's iteration (its stages are an op's legs)
    moe = doc.get("otherData", {}).get("bench") == "moe"
    what = "iteration" if moe else "put"
    palette = ["tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:pink",
               "tab:olive", "tab:cyan"]
    names = sorted({e["name"] for e in ev if e["name"] != "sample"})
    colour = {n: STAGE_COLORS.get(n, palette[i % len(palette)]) for i, n in enumerate(names)}
    fig, ax = new_fig(out.plt, wide=True)
    seen, spans = set(), []
    for y, k in enumerate(samples):
        t0 = min(e["ts"] for e in by[k])
        for e in by[k]:
            if e["name"] == "sample":
                continue
            thin = e["pid"] != 0
            h = 0.3 if thin else 0.7
            ax.broken_barh([(e["ts"] - t0, max(e["dur"], 1e-3))], (y - h / 2, h),
                           color=colour[e["name"]],
                           label=None if e["name"] in seen else e["name"])
            seen.add(e["name"])
            spans.append([k, e["name"], e["pid"], e["ts"] - t0, e["dur"]])
    ax.set_yticks(range(len(samples)))
    if moe:  # a sample's id: its iteration << 20 | rank
        ax.set_yticklabels([f"rank {k & 0xfffff}, it {k >> 20}" for k in samples], fontsize=7)
        ax.set_xlabel("us since the op's start on the rank")
    else:
        ax.set_yticklabels([f"put {k & 0xffffffffff}" for k in samples], fontsize=7)
        ax.set_xlabel("us since the put's push (thin: ends on the target rank)")
    ax.invert_yaxis()
    ax.set_title(f"Where each sampled {what}'s time goes: {point}, {len(samples)} of "
                 f"{count[point]} sampled {what}s")
    legend(ax, 6)
    finish(fig, wide=True)
    out.save(fig, f"{stem}-timeline", {"point": point, "spans": spans})


def plot_ratio(out, stem, res, who):
    plt = out.plt
    ratios = {}
    for v in variants_in_order(res):
        rs = [r for r in res if r["variant"] == v and "ratio_to" in r]
        if rs:
            ratios[f"{v} / {rs[0]['ratio_to']}"] = sorted([r["size"], r["ratio"]] for r in rs)
    sizes = sorted({p[0] for pts in ratios.values() for p in pts})
    fig, ax = new_fig(plt, wide=len(ratios) > 4)
    if len(sizes) == 1:
        labels = list(ratios)
        vals = [ratios[k][0][1] for k in labels]
        bars = ax.bar(range(len(labels)), vals, color="tab:orange", width=0.6)
        ax.grid(False, axis="x")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=20 if len(labels) > 4 else 0,
                           ha="right" if len(labels) > 4 else "center")
        for b, v in zip(bars, vals):
            ax.annotate(f"{v:.2f}", (b.get_x() + b.get_width() / 2, b.get_height()),
                        ha="center", va="bottom", fontsize=8, xytext=(0, 2),
                        textcoords="offset points")
        ax.set_xlabel("Proxy variant / its CPU-initiated reference")
        ax.set_title(f"{who}: proxy vs CPU-initiated, size {size_label(sizes[0])}")
        ax.set_ylim(0, max(vals + [1.0]) * 1.15)
    else:
        for k, pts in ratios.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4, label=k)
        size_axis(ax, sizes)
        ax.set_xlabel("Message size S (bytes; K, M, G binary)")
        ax.set_title(f"{who}: proxy vs CPU-initiated, per size")
        ax.set_ylim(bottom=0)
    ax.axhline(1.0, color="0.3", ls="--", lw=1, label="CPU-initiated = 1")
    ax.set_ylabel("Ratio (proxy Gbps / CPU-initiated Gbps)")
    legend(ax, len(ratios) + 1 if len(sizes) > 1 else 0)
    finish(fig)
    out.save(fig, f"{stem}-ratio", {
        "kind": "line" if len(sizes) > 1 else "bar", "title": ax.get_title(),
        "xlabel": "size (bytes)", "ylabel": "ratio", "series": ratios, "hlines": {"CPU-initiated": 1.0},
    })


def plot_queue(out, stem, doc):
    plt = out.plt
    res = [r for r in doc.get("results", []) if "producers" in r and "mcommands_per_s" in r]
    if not res:
        raise ValueError("queue JSON without results (producers, mcommands_per_s)")
    res = sorted(res, key=lambda r: r["producers"])
    on = doc.get("producers_on", "?")
    xs = [r["producers"] for r in res]
    ys = [r["mcommands_per_s"] for r in res]
    fig, ax = new_fig(plt)
    ax.plot(xs, ys, marker="o", ms=5)
    for r in res:
        ax.annotate(str(r["producers_config"]), (r["producers"], r["mcommands_per_s"]),
                    xytext=(4, 5), textcoords="offset points", fontsize=8)
    if len(set(xs)) > 1:
        ax.set_xscale("log", base=2)
        from matplotlib.ticker import FixedLocator, NullLocator

        ax.xaxis.set_major_locator(FixedLocator(sorted(set(xs))))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels([str(x) for x in sorted(set(xs))])
    ax.set_ylim(0, max(ys) * 1.15 if ys else 1)
    note = []
    for key, what in (("push_to_seen", "one producer's push to seen"),
                      ("floor_round_trip", "floor round trip")):
        s = doc.get(key)
        if isinstance(s, dict) and "p50_us" in s:
            note.append(f"{what}: p50 {s['p50_us']:.3g} µs, p99 {s['p99_us']:.3g} µs")
    ax.set_title(f"efabench queue: commands/s one consumer thread takes, {on.upper()} producers"
                 + ("\n" + "; ".join(note) if note else ""))
    ax.set_xlabel("Producers (threads pushing at once; point labels: --producers entry)")
    ax.set_ylabel("Throughput (million commands/s)")
    finish(fig)
    out.save(fig, f"{stem}-commands", {
        "kind": "line", "title": ax.get_title(), "xlabel": "producers",
        "ylabel": "Mcommands/s", "series": {f"{on} producers": [[x, y] for x, y in zip(xs, ys)]},
        "labels": {str(r["producers"]): r["producers_config"] for r in res},
    })


def heatmap(ax, z, xlabels, ylabels, marked=(), fmt="{:.1f}", cmap="viridis", vmin=None,
            vmax=None, annotate=True):
    """z[row][col], None = no cell (grey). Cells annotated (unless annotate is false: too many
    to read); marked cells outlined in red."""
    import matplotlib
    import numpy as np
    from matplotlib.patches import Rectangle

    arr = np.array([[np.nan if v is None else float(v) for v in row] for row in z], dtype=float)
    cmap_obj = matplotlib.colormaps[cmap].copy()
    cmap_obj.set_bad("0.85")
    im = ax.imshow(np.ma.masked_invalid(arr), cmap=cmap_obj, aspect="auto", vmin=vmin, vmax=vmax)
    ax.set_xticks(range(len(xlabels)))
    ax.set_xticklabels(xlabels)
    ax.set_yticks(range(len(ylabels)))
    ax.set_yticklabels(ylabels)
    finite = arr[np.isfinite(arr)]
    lo = vmin if vmin is not None else (finite.min() if finite.size else 0)
    hi = vmax if vmax is not None else (finite.max() if finite.size else 1)
    small = len(xlabels) > 8
    for i in range(arr.shape[0] if annotate else 0):
        for j in range(arr.shape[1]):
            v = arr[i, j]
            if not np.isfinite(v):
                ax.text(j, i, "–", ha="center", va="center", fontsize=8, color="0.4")
                continue
            frac = (v - lo) / (hi - lo) if hi > lo else 0.5
            color = "black" if frac > 0.6 else "white"
            text = fmt.format(v) + ("\n!" if (i, j) in marked else "")
            ax.text(j, i, text, ha="center", va="center", fontsize=7 if small else 8,
                    color=color, fontweight="bold" if (i, j) in marked else "normal")
    for i, j in marked:
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="red", lw=2.5))
    return im


def plot_matrix(out, stem, doc):
    plt = out.plt
    res = doc.get("results", [])
    if not res or not all(k in res[0] for k in ("src", "dst", "chan", "gbps")):
        raise ValueError("matrix JSON without results (src, dst, chan, gbps)")
    n = doc.get("ranks") or (max(max(r["src"], r["dst"]) for r in res) + 1)
    nics = doc.get("channel_nics") or []
    hosts = doc.get("hosts") or []
    size = doc.get("size")
    for ch in sorted({r["chan"] for r in res}):
        cells = [r for r in res if r["chan"] == ch]
        z = [[None] * n for _ in range(n)]
        marked = []
        for r in cells:
            z[r["src"]][r["dst"]] = r["gbps"]
            if r.get("flagged"):
                marked.append((r["src"], r["dst"]))
        labels = [f"{k}" + (f"\n{hosts[k]}" if k < len(hosts) and n <= 8 else "")
                  for k in range(n)]
        side = min(4 + 0.5 * n, 11)
        fig, ax = plt.subplots(figsize=(side + 1.5, side))
        im = heatmap(ax, z, labels, labels, marked=set(marked), fmt="{:.2f}" if n <= 8 else "{:.0f}")
        fig.colorbar(im, ax=ax, label="Write bandwidth (Gbps)")
        nic = nics[ch] if ch < len(nics) else f"channel {ch}"
        typical = cells[0].get("typical_gbps")
        flag = doc.get("flag")
        sub = []
        if size:
            sub.append(f"{size_label(size)} writes")
        if typical is not None and flag is not None:
            sub.append(f"red '!' = flagged (< {flag:g} × typical {typical:.2f} Gbps"
                       + (f" or < {doc['expect_gbps']:g} Gbps" if doc.get("expect_gbps") else "")
                       + ")")
        ax.set_title(f"efabench matrix: channel {ch} ({nic}), write Gbps\n" + "; ".join(sub),
                     fontsize=10)
        ax.set_xlabel("Target rank (dst)")
        ax.set_ylabel("Source rank (src)")
        finish(fig)
        series = {}
        for a in range(n):
            series[f"src {a}"] = [[b, z[a][b]] for b in range(n) if z[a][b] is not None]
        out.save(fig, f"{stem}-heatmap-ch{ch}", {
            "kind": "heatmap", "title": ax.get_title(), "xlabel": "dst", "ylabel": "src",
            "channel": ch, "nic": nic, "x": list(range(n)), "y": list(range(n)), "z": z,
            "marked": sorted([list(m) for m in marked]), "series": series,
        })


def plot_ipc(out, stem, doc):
    plt = out.plt
    res = doc.get("results", [])
    if not res or not all(k in res[0] for k in ("dir", "method", "grid", "block", "size",
                                                 "gbytes_per_s")):
        raise ValueError("ipc JSON without results (dir, method, grid, block, size, gbytes_per_s)")
    gpu = doc.get("gpu")
    peak = (doc.get("nvlink") or {}).get("peak_gbytes_per_s")
    dirs = [d for d in ("write", "read") if any(r["dir"] == d for r in res)]
    for d in dirs:
        sweep = [r for r in res if r["dir"] == d and r.get("kind", "sweep") == "sweep"]
        kern = [r for r in sweep if r["method"] != "ce"]
        if not kern:
            continue
        sizes = sorted({r["size"] for r in kern})
        if len(sizes) > 6:  # six panels at most: spread over the sweep, the largest included
            idx = sorted({round(i * (len(sizes) - 1) / 5) for i in range(6)})
            sizes = [sizes[i] for i in idx]
        grids = sorted({r["grid"] for r in kern})
        rows = sorted({(r["method"], r["block"]) for r in kern},
                      key=lambda mb: (mb[0] != "st", mb[1]))
        ylabels = [f"st ×{b}" if m == "st" else f"{m} ×{b}" for m, b in rows]
        vmax = max(r["gbytes_per_s"] for r in kern if r["size"] in sizes)
        ncol = min(3, len(sizes))
        nrow = math.ceil(len(sizes) / ncol)
        fig_h = 1.4 + (0.5 * len(rows) + 1.1) * nrow
        fig, axes = plt.subplots(nrow, ncol, figsize=(1.6 + 0.55 * len(grids) * ncol + 1.4, fig_h),
                                 squeeze=False)
        # Room for the title above (the layout would not keep it off the panels' titles) and
        # for the stamp below.
        fig.set_layout_engine("constrained", rect=(0, 0.3 / fig_h, 1, 1 - 0.45 / fig_h),
                              w_pad=0.1, h_pad=0.1)
        panels = []
        series = {}
        im = None
        for k, s in enumerate(sizes):
            ax = axes[k // ncol][k % ncol]
            z = [[None] * len(grids) for _ in rows]
            for r in kern:
                if r["size"] == s:
                    z[rows.index((r["method"], r["block"]))][grids.index(r["grid"])] = \
                        r["gbytes_per_s"]
            im = heatmap(ax, z, [str(g) for g in grids], ylabels, fmt="{:.0f}", vmin=0,
                         vmax=vmax)
            ce = [r["gbytes_per_s"] for r in sweep if r["method"] == "ce" and r["size"] == s]
            ax.set_title(f"{size_label(s)}" + (f" (copy engine {ce[0]:.1f} GB/s)" if ce else ""),
                         fontsize=9)
            ax.set_xlabel("Grid (blocks)", fontsize=8)
            if k % ncol == 0:
                ax.set_ylabel("Block (threads)", fontsize=8)
            ax.tick_params(labelsize=7)
            panels.append({"size": s, "x": grids, "y": [list(mb) for mb in rows], "z": z,
                           "ce_gbytes_per_s": ce[0] if ce else None})
            for i, (m, b) in enumerate(rows):
                series[f"{d} {size_label(s)} {m} block {b}"] = [
                    [g, z[i][j]] for j, g in enumerate(grids) if z[i][j] is not None]
        for k in range(len(sizes), nrow * ncol):
            axes[k // ncol][k % ncol].set_visible(False)
        fig.colorbar(im, ax=axes, label="GB/s (bytes per copy / t / 1e9)", shrink=0.9)
        fig.suptitle(f"efabench ipc {d}: GB/s per launch shape (grid × block)"
                     + (f", {gpu}" if gpu else "")
                     + (f"; NVLink peak {peak:.1f} GB/s" if peak else ""), fontsize=11,
                     y=1 - 0.08 / fig_h, va="top")
        out.save(fig, f"{stem}-heatmap-{d}", {
            "kind": "heatmap", "title": f"ipc {d}", "xlabel": "grid (blocks)",
            "ylabel": "block (threads)", "dir": d, "x": grids, "y": [list(mb) for mb in rows],
            "panels": panels, "series": series,
        })

    # Summary: copy engine and best kernel per size.
    summ = {}
    for d in dirs:
        for kind, label in (("ce", "copy engine"), ("best", "best kernel")):
            pts = sorted([r["size"], r["gbytes_per_s"]] for r in res
                         if r["dir"] == d and r.get("kind") == kind)
            if pts:
                summ[f"{d} {label}"] = pts
    if summ:
        sizes = sorted({p[0] for pts in summ.values() for p in pts})
        fig, ax = new_fig(plt)
        for lab, pts in summ.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4, label=lab,
                    ls="-" if "copy" in lab else "--")
        hl = {}
        top = max(p[1] for pts in summ.values() for p in pts)
        if isinstance(peak, (int, float)) and peak > 0:
            ax.axhline(peak, color="0.25", ls="--", lw=1.2)
            ax.annotate(f"NVLink peak {peak:.1f} GB/s", (1.0, peak),
                        xycoords=("axes fraction", "data"), ha="right", va="bottom", fontsize=8,
                        color="0.25", xytext=(-4, 2), textcoords="offset points")
            hl["NVLink peak"] = peak
            top = max(top, peak)
        size_axis(ax, sizes)
        ax.set_ylim(0, top * 1.1)
        ax.set_title("efabench ipc: copy engine vs best kernel shape" + (f" ({gpu})" if gpu else ""))
        ax.set_xlabel("Copy size (bytes; K, M, G binary)")
        ax.set_ylabel("Bandwidth (GB/s, bytes per copy / t / 1e9)")
        legend(ax, len(summ))
        finish(fig)
        out.save(fig, f"{stem}-summary", {
            "kind": "line", "title": ax.get_title(), "xlabel": "size (bytes)",
            "ylabel": "GB/s", "series": summ, "hlines": hl,
        })


MOE_INITIATORS = ("gpu", "cpu", "a2av")
MOE_PHASES = ("dispatch", "combine", "pair")
MOE_COLORS = {"gpu": "tab:green", "cpu": "tab:blue", "a2av": "tab:gray"}
MOE_INIT_WHAT = {"gpu": "gpu (kernels → proxy)", "cpu": "cpu (threads → proxy)",
                 "a2av": "a2av (all-to-all-v)"}


def in_order(found, canonical):
    """The canonical names present first, in their order, then any others as found."""
    return [x for x in canonical if x in found] + [x for x in found if x not in canonical]


def plot_moe(out, stem, doc):
    plt = out.plt
    res = doc.get("results", [])
    # Files before the modes name the fabric's bytes "wire".
    fab = "fabric_GBps" if res and "fabric_GBps" in res[0] else "wire_GBps"
    if not res or not all(k in r for r in res for k in ("initiator", "phase", "p50_us", "p99_us",
                                                         "ranks", fab, "sel_GBps")):
        raise ValueError("moe JSON without results (initiator, phase, p50_us, p99_us, ranks, "
                         "fabric_GBps, sel_GBps)")
    traffic = doc.get("traffic") or []
    n = doc.get("ranks") or (1 + max([e["rank"] for r in res for e in r["ranks"]]
                                     + [max(t["src"], t["dst"]) for t in traffic]))
    inits = in_order(list(dict.fromkeys(r["initiator"] for r in res)), MOE_INITIATORS)
    phases = in_order(list(dict.fromkeys(r["phase"] for r in res)), MOE_PHASES)
    row = {(r["initiator"], r["phase"]): r for r in res}
    extra = [c for c in plt.rcParams["axes.prop_cycle"].by_key()["color"]
             if c not in MOE_COLORS.values()]
    color = {i: MOE_COLORS.get(i) or extra[k % len(extra)] for k, i in enumerate(inits)}
    routing = doc.get("routing", "?")
    preset = doc.get("preset")
    who = f"efabench moe: routing {routing}, {n} ranks" + (f", preset {preset}" if preset else "")
    shape = []
    if doc.get("tokens") is not None:
        shape.append(f"{doc['tokens']} tokens per rank")
    if doc.get("hidden") is not None:
        shape.append(f"hidden {doc['hidden']}")
    if doc.get("topk") is not None and doc.get("experts") is not None:
        shape.append(f"top-{doc['topk']} of {doc['experts']} experts")
    if doc.get("dtype"):
        shape.append(str(doc["dtype"]))
    shape = ", ".join(shape)

    # Per-rank times, one figure per phase: a group of bars per rank, a bar per initiator.
    for ph in phases:
        ins = [i for i in inits if (i, ph) in row]
        ranks = sorted({e["rank"] for i in ins for e in row[(i, ph)]["ranks"]})
        if not ranks:
            continue
        width = 0.8 / len(ins)
        fig, ax = plt.subplots(figsize=(min(max(8, 3.7 + 0.3 * len(ranks) * len(ins)), 16), 5))
        ax.grid(True, axis="y", alpha=0.3)
        p50s, p99s, slowest, fastest = {}, {}, {}, {}
        top = 0
        for k, i in enumerate(ins):
            r = row[(i, ph)]
            by_rank = {e["rank"]: e for e in r["ranks"]}
            xs = [ranks.index(q) - 0.4 + width * (k + 0.5) for q in ranks if q in by_rank]
            lo = [by_rank[q]["p50_us"] for q in ranks if q in by_rank]
            hi = [by_rank[q]["p99_us"] for q in ranks if q in by_rank]
            p50s[i] = [[q, by_rank[q]["p50_us"]] for q in ranks if q in by_rank]
            p99s[i] = [[q, by_rank[q]["p99_us"]] for q in ranks if q in by_rank]
            slow = r.get("slowest_rank")
            if slow is None:
                slow = max(by_rank, key=lambda q: by_rank[q]["p50_us"])
            slowest[i] = slow
            fastest[i] = r.get("fastest_rank")
            label = f"{MOE_INIT_WHAT.get(i, i)}: slowest rank {slow}, p50 {r['p50_us']:.3g} µs"
            if r.get("vs_a2av") is not None and i != "a2av" and "a2av" in ins:
                label += f" = {r['vs_a2av']:.2f} × a2av's"
            bars = ax.bar(xs, lo, width=width * 0.92, color=color[i], label=label,
                          yerr=[[0] * len(lo), [max(h - l, 0) for l, h in zip(lo, hi)]],
                          error_kw={"ecolor": "0.2", "capsize": 3 if len(ranks) <= 16 else 0,
                                    "lw": 1})
            for q, b in zip([q for q in ranks if q in by_rank], bars):
                if q == slow:
                    b.set_edgecolor("red")
                    b.set_linewidth(2.2)
            top = max([top] + hi + lo)
        ax.set_xticks(range(len(ranks)))
        ax.set_xticklabels([str(q) for q in ranks])
        for q, t in zip(ranks, ax.get_xticklabels()):  # a slowest rank's number in red
            if q in slowest.values():
                t.set_color("red")
                t.set_fontweight("bold")
        if len(ranks) > 32:
            ax.tick_params(axis="x", labelsize=6)
        ax.set_xlim(-0.6, len(ranks) - 0.4)
        ax.set_ylim(0, top * 1.25 or 1)  # room for the legend
        ax.set_xlabel("Rank")
        ax.set_ylabel("Time per iteration (µs): bar p50, whisker to p99")
        ax.set_title(f"{who}: {ph} time per rank\n"
                     + (shape + "\n" if shape else "")
                     + "bars p50, whiskers to p99; red outline (and rank in red): each initiator's "
                     "slowest rank")
        legend(ax, len(ins) + (2 if len(ranks) > 8 else 0))
        finish(fig)
        out.save(fig, f"{stem}-ranks-{ph}", {
            "kind": "bar", "title": ax.get_title(), "xlabel": "rank",
            "ylabel": "time per iteration (us)", "phase": ph, "x": ranks,
            "series": p50s, "p50": p50s, "p99": p99s, "slowest": slowest, "fastest": fastest,
        })

    # Traffic matrix: tokens, then selections, source rank by destination rank.
    for key in ("tokens", "selections"):
        cells = [t for t in traffic if key in t]
        if not cells:
            continue
        z = [[None] * n for _ in range(n)]
        for t in cells:
            z[t["src"]][t["dst"]] = t[key]
        sent = [sum(v for b, v in enumerate(z[a]) if v is not None and b != a) for a in range(n)]
        got = [sum(z[a][b] for a in range(n) if z[a][b] is not None) for b in range(n)]
        few = n <= 12
        xl = [f"{b}\nΣ{got[b]}" if few else str(b) for b in range(n)]
        yl = [f"{a} (→{sent[a]})" if few else str(a) for a in range(n)]
        side = min(4 + 0.5 * n, 11)
        fig, ax = plt.subplots(figsize=(side + 2.0, side + 0.4))
        im = heatmap(ax, z, xl, yl, fmt="{:.0f}", vmin=0, annotate=n <= 32)
        what = {"tokens": "tokens per source and destination (a token goes once to each rank "
                          "holding one of its experts)",
                "selections": "expert selections (token × expert) per source and destination"}[key]
        fig.colorbar(im, ax=ax, label=key.capitalize() + " per iteration")
        ax.set_title(f"{who}\n{what}\ndiagonal: kept on the rank"
                     + ("; row label →: sent to other ranks; column Σ: received" if few else ""),
                     fontsize=9)
        if n > 24:
            ax.tick_params(labelsize=5 if n > 48 else 6)
        ax.set_xlabel("Destination rank (dst)")
        ax.set_ylabel("Source rank (src)")
        finish(fig)
        series = {f"src {a}": [[b, z[a][b]] for b in range(n) if z[a][b] is not None]
                  for a in range(n)}
        out.save(fig, f"{stem}-traffic-{key}", {
            "kind": "heatmap", "title": ax.get_title(), "xlabel": "dst", "ylabel": "src",
            "value": key, "x": list(range(n)), "y": list(range(n)), "z": z, "marked": [],
            "sent_to_others": sent, "received": got, "series": series,
        })

    # Summary: fabric and sel GB/s per (initiator, phase), a panel each.
    fig, axes = plt.subplots(1, 2, figsize=(max(10, 3 + 1.3 * len(phases) * len(inits)), 5))
    series, vals = {}, {}
    width = 0.8 / len(inits)
    for ax, key, what in ((axes[0], fab, "fabric GB/s: bytes through the fabric / p50"),
                          (axes[1], "sel_GBps", "sel GB/s: selections × bytes / p50")):
        ax.grid(True, axis="y", alpha=0.3)
        vals[key] = {}
        top = 0
        for k, i in enumerate(inits):
            ps = [ph for ph in phases if (i, ph) in row]
            ys = [row[(i, ph)][key] for ph in ps]
            xs = [phases.index(ph) - 0.4 + width * (k + 0.5) for ph in ps]
            bars = ax.bar(xs, ys, width=width * 0.92, color=color[i],
                          label=MOE_INIT_WHAT.get(i, i))
            for ph, b, y in zip(ps, bars, ys):
                r = row[(i, ph)]
                txt = f"{y:.3g}"
                if key == fab and i != "a2av" and r.get("vs_a2av") is not None \
                        and "a2av" in inits:
                    txt += f"\n×{r['vs_a2av']:.2f}"
                if r.get("wrong"):
                    txt += f"\n{r['wrong']} wrong!"
                ax.annotate(txt, (b.get_x() + b.get_width() / 2, b.get_height()), ha="center",
                            va="bottom", fontsize=7, xytext=(0, 2), textcoords="offset points",
                            color="red" if r.get("wrong") else "black")
            series[f"{i} {key}"] = [[ph, y] for ph, y in zip(ps, ys)]
            vals[key][i] = {ph: y for ph, y in zip(ps, ys)}
            top = max([top] + ys)
        ax.set_xticks(range(len(phases)))
        ax.set_xticklabels(phases)
        ax.set_xlim(-0.6, len(phases) - 0.4)
        ax.set_ylim(0, top * 1.4 or 1)  # room for the values and the legend
        ax.set_xlabel("Phase (pair = dispatch then combine)")
        ax.set_ylabel(("fabric" if key == fab else "sel") + " GB/s (mean over ranks)")
        ax.set_title(what, fontsize=9)
    axes[0].legend(fontsize=8, loc="upper left", ncol=len(inits))
    fig.suptitle(f"{who}: bandwidth per initiator and phase"
                 + (f"\n{shape}" if shape else "")
                 + ("; ×N under a value: its p50 / the all-to-all-v's p50" if "a2av" in inits
                    else ""), fontsize=10)
    finish(fig)
    out.save(fig, f"{stem}-summary", {
        "kind": "bar", "title": f"{who}: bandwidth per initiator and phase",
        "xlabel": "phase", "ylabel": "GB/s", "x": phases, "series": series,
        "fabric_GBps": vals[fab], "sel_GBps": vals["sel_GBps"],
        "vs_a2av": {i: {ph: row[(i, ph)].get("vs_a2av") for ph in phases if (i, ph) in row}
                    for i in inits},
    })


# ---------------------------------------------------------------------------------------------


def main(argv):
    ap = argparse.ArgumentParser(prog=PROG, description="PNG figures of efabench --json output")
    ap.add_argument("files", nargs="+", metavar="FILE.json")
    ap.add_argument("-o", "--output", required=True, metavar="DIR")
    ap.add_argument("--host", help="machine named when the JSON names none")
    ap.add_argument("--provider", help="provider named when the JSON names none")
    ap.add_argument("--date", help="date shown when the JSON has none")
    ap.add_argument("--point", help="a trace's point to draw (default: the most sampled)")
    args = ap.parse_args(argv)

    docs = []
    for path in args.files:
        try:
            with open(path) as f:
                doc = json.load(f)
        except OSError as e:
            die(f"cannot read {path}: {e.strerror}")
        except ValueError as e:
            die(f"{path} is not JSON: {e}")
        if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
            docs.append((path, doc))
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
            die(f"{path} is not efabench --json output (no results list)")
        docs.append((path, doc))
    try:
        os.makedirs(args.output, exist_ok=True)
    except OSError as e:
        die(f"cannot create {args.output}: {e.strerror}")
    if not os.access(args.output, os.W_OK | os.X_OK):
        die(f"cannot write in {args.output}")

    plt = load_matplotlib()
    plt.rcParams.update({"font.size": 9, "axes.titlesize": 10})

    stems = [os.path.splitext(os.path.basename(p))[0] for p, _ in docs]
    written = []
    for k, (path, doc) in enumerate(docs):
        stem = stems[k] if stems.count(stems[k]) == 1 else f"{k + 1}-{stems[k]}"
        bench = bench_of(doc) or (doc.get("otherData") or {}).get("bench")
        out = Out(plt, args.output, stamp_of(doc, args), bench)
        try:
            if "traceEvents" in doc:
                plot_trace(out, stem, doc, args.point)
            elif bench == "queue":
                plot_queue(out, stem, doc)
            elif bench == "ipc":
                plot_ipc(out, stem, doc)
            elif bench == "matrix":
                plot_matrix(out, stem, doc)
            elif bench == "moe":
                plot_moe(out, stem, doc)
            elif is_harness(doc):
                plot_harness(out, stem, doc)
            else:
                die(f"{path}: no figure for this JSON (bench {bench or 'unknown'})")
        except (KeyError, TypeError, ValueError, IndexError) as e:
            die(f"{path}: unexpected {bench or 'efabench'} JSON ({type(e).__name__}: {e})")
        except OSError as e:
            die(f"writing figures of {path} in {args.output}: {e.strerror}")
        written += out.written
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
