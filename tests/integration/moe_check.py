#!/usr/bin/env python3
"""moe_check.py OUT.json INITIATORS RX PIECE: efabench moe's JSON against the definitions.

Everything is recomputed from the experts each token selected ("selected"), the ranks' hosts
("rank_hosts"), the mode and how same-host peers are reached ("intra"), independently of the
benchmark's plan: the traffic matrix, what each rank moves in every leg of both phases (own,
same host, fabric), the figures (sel, fabric, RDMA, NVL GB/s over the slowest rank's p50) and
the writes its proxy threads count.
"""
import json
import sys

d = json.load(open(sys.argv[1]))
want_init, rx_arg, piece_arg = sys.argv[2].split(","), sys.argv[3], int(sys.argv[4])
n, T, E, K = d["ranks"], d["tokens"], d["experts"], d["topk"]
per = E // n
mode, res = d["mode"], d["results"]
tok_b, out_b = d["token_bytes"], d["output_bytes"]
host = [x["host"] for x in sorted(d["rank_hosts"], key=lambda x: x["rank"])]
local = [x["local"] for x in sorted(d["rank_hosts"], key=lambda x: x["rank"])]
H = len(set(host))
assert H == d["hosts"], (H, d["hosts"])
assert mode == {"decode": "ll", "prefill": "normal"}.get(d["preset"]) or "--mode" in d["stamp"]["command"], mode
sel = [[[int(e) for e in d["selected"][r * T + t].split()] for t in range(T)] for r in range(n)]
# A routing file sets how many tokens each pair exchanges: a token may select fewer experts.
fewer = d["routing"].startswith("file")
assert all(len(set(x)) == len(x) and (len(x) == K or fewer and len(x) < K) and
           all(0 <= e < E for e in x) for r in sel for x in r)

# Per source and destination rank: tokens with an expert there, selections; per host too.
count = [[0] * n for _ in range(n)]
nsel = [[0] * n for _ in range(n)]
hcount = [[0] * H for _ in range(n)]
for s in range(n):
    for t in sel[s]:
        on = [e // per for e in t]
        for r in set(on):
            count[s][r] += 1
            nsel[s][r] += on.count(r)
        for h in {host[r] for r in on}:
            hcount[s][h] += 1
for t in d["traffic"]:
    assert (t["tokens"], t["selections"]) == (count[t["src"]][t["dst"]], nsel[t["src"]][t["dst"]]), t
assert len(d["traffic"]) == n * n

# Legs. rank: a token once per rank holding its experts, outputs back one write per (token,
# rank) (decode) or one per output (prefill). ll: once per expert, each output alone.
# normal on one host: rank's dispatch, a row per (token, rank) back. normal across hosts: a
# token crosses to the rank of the same local index on each host holding its experts (once
# per host), which forwards it inside its host (leg 1); a row per (token, rank) goes to that
# forwarder (leg 0), a row per (token, host) back across (leg 1).
same = lambda a, b: host[a] == host[b]
two = mode == "normal" and H > 1
direct = lambda s, x: not two or same(s, x)
forwards = lambda f, s: two and not same(f, s) and local[f] == local[s]
fwd_to = lambda f, x: sum(count[s][x] for s in range(n) if forwards(f, s))


def flow(ph, leg, w, x):
    """(items, bytes) w writes to x in a leg of a phase."""
    if ph == 0:
        if leg == 0 and direct(w, x):
            m = nsel[w][x] if mode == "ll" else count[w][x]
        elif leg == 0 and forwards(x, w):
            m = hcount[w][host[x]]
        elif leg == 1 and two and same(w, x):
            m = fwd_to(w, x)
        else:
            m = 0
        return m, m * tok_b
    s = nsel[x][w]
    if leg == 1:
        m = hcount[x][host[w]] if forwards(w, x) else 0
        return m, m * out_b
    if mode == "rank":
        return (s if d["preset"] == "prefill" else count[x][w]), s * out_b
    if mode == "ll":
        return s, s * out_b
    m = (count[x][w] if direct(w, x) else 0) + (fwd_to(x, w) if two and same(w, x) else 0)
    return m, m * out_b


legs = 2 if two else 1
assert d["legs"] == legs, (d["legs"], legs)
path = lambda w, x: "own" if w == x else "intra" if d["intra"] == "ipc" and same(w, x) else "fabric"
names = ("dispatch", "combine")
moved = {x["rank"]: x for x in d["moved"]}
for r in range(n):
    for ph in (0, 1):
        got = {k: 0 for k in ("own", "intra", "fabric")}
        for leg in range(legs):
            for x in range(n):
                got[path(r, x)] += flow(ph, leg, r, x)[1]
        for k in got:
            assert moved[r]["%s_%s_bytes" % (names[ph], k)] == got[k], (r, ph, k, got, moved[r])
        items = sum(flow(ph, leg, r, x)[0] for leg in range(legs) for x in range(n) if path(r, x) == "fabric")
        assert moved[r]["%s_fabric_items" % names[ph]] == items, (r, ph, items, moved[r])

# Figures: bytes per rank (mean) over the slowest rank's p50.
unit = (tok_b, out_b)
fig = {
    "sel_GBps": [sum(map(sum, nsel)) * unit[ph] / n for ph in (0, 1)],
    "nvl_GBps": [sum(map(sum, count)) * unit[ph] / n for ph in (0, 1)],
    "rdma_GBps": [sum(map(sum, hcount)) * unit[ph] / n for ph in (0, 1)],
}
fabric = {
    False: [sum(flow(ph, l, w, x)[1] for l in range(legs) for w in range(n) for x in range(n)
                if path(w, x) == "fabric") / n for ph in (0, 1)],
    True: [sum(flow(ph, l, w, x)[1] for l in range(legs) for w in range(n) for x in range(n)
               if w != x) / n for ph in (0, 1)],
}
# Each rank's own bytes, as the peers' tests count the printing rank's: selections (ll, rank),
# a token once per host (normal's "RDMA"), the tokens it receives ("NVL"); NCCL EP's
# high-throughput count: (remote (token, host) pairs + tokens received) x 2H, mean over ranks.
got_tok = [sum(count[s][r] for s in range(n)) for r in range(n)]
own = {"own_sel_GBps": [[sum(nsel[r]) * unit[ph] for ph in (0, 1)] for r in range(n)],
       "own_rdma_GBps": [[sum(hcount[r]) * unit[ph] for ph in (0, 1)] for r in range(n)],
       "own_nvl_GBps": [[got_tok[r] * unit[ph] for ph in (0, 1)] for r in range(n)]}
own["own_GBps"] = own["own_rdma_GBps" if mode == "normal" else "own_sel_GBps"]
ncclep = sum(sum(hcount[r]) - hcount[r][host[r]] + got_tok[r] for r in range(n)) * out_b / n
coalesce = d["preset"] == "prefill" and mode != "ll"
# The leg between hosts (two legs only): dispatch's first, combine's second; what crosses in
# it is what goes to other hosts, over the slowest rank's median time in that leg alone.
cross_leg = (0, 1) if two else None
cross = [sum(flow(ph, cross_leg[ph], w, x)[1] for w in range(n) for x in range(n)
             if not same(w, x)) / n for ph in (0, 1)] if two else None


def writes(r, ph):
    """Writes per rank (mean): the a2av one per leg and destination with bytes; producers one
    per fabric item (decode), or each proxy thread's share (of those with producers) in
    writes of a piece's worth at most (prefill, whatever the number of producers packing)."""
    tot = 0
    for w in range(n):
        for x in range(n):
            for leg in range(legs):
                m, b = flow(ph, leg, w, x)
                if r["initiator"] == "mpi":
                    return None  # MPI's writes are its own
                if r["initiator"] == "a2av":
                    tot += w != x and b > 0
                elif path(w, x) != "fabric":
                    continue
                elif not coalesce:
                    tot += m
                else:
                    piece = max(1, d["piece"] // unit[ph])
                    Q = min(d["proxy_threads"], r["producers"])
                    tot += sum(-(-(m * (q + 1) // Q - m * q // Q) // piece) for q in range(Q))
    return tot / n


of = lambda v, phase: sum(v[ph] for ph in (0, 1) if phase in (names[ph], "pair"))
close = lambda a, b: abs(a - b) <= 1e-6 * max(1, abs(b))
assert sorted({r["initiator"] for r in res}) == sorted(want_init), {r["initiator"] for r in res}
base = {r["phase"]: r["p50_us"] for r in res if r["initiator"] == "a2av"}
for r in res:
    t = r["p50_us"] * 1e-6
    assert r["wrong"] == 0 and t > 0, r
    assert r["fastest_p50_us"] <= r["p50_us"] <= r["p99_us"], r
    assert len(r["ranks"]) == n and max(x["p50_us"] for x in r["ranks"]) == r["p50_us"]
    slow = r["ranks"][r["slowest_rank"]]
    assert (slow["p50_us"], slow["p99_us"]) == (r["p50_us"], r["p99_us"]), r
    # Iterations start together, so the slowest rank of each is at least the slowest by p50.
    assert r["p50_us"] <= r["each_max_p50_us"] <= r["each_max_p99_us"], r
    for k, v in fig.items():
        assert close(r[k], of(v, r["phase"]) / t / 1e9), (k, r)
    baseline = r["initiator"] in ("a2av", "mpi")
    assert close(r["fabric_GBps"], of(fabric[baseline], r["phase"]) / t / 1e9), r
    assert r["fabric_counts"] == ("every other rank" if baseline else "other hosts"), r
    pair = 2 if r["phase"] == "pair" else 1
    assert close(r["ncclep_ht_GBps"], pair * ncclep / t / 1e9), (r["ncclep_ht_GBps"], ncclep, r)
    for x in r["ranks"]:
        for k, v in own.items():
            tx = x["p50_us"] * 1e-6
            assert close(x[k], of(v[x["rank"]], r["phase"]) / tx / 1e9), (k, x, r)
    assert close(r["own_GBps"], r["ranks"][0]["own_GBps"]), r
    if r["initiator"] == "mpi":
        assert r["writes"] is None and r["mwrites_per_s"] is None and r["producers"] == 0, r
    else:
        w = of([writes(r, ph) for ph in (0, 1)], r["phase"])
        assert close(r["writes"], w), (r["writes"], w, r)
        assert close(r["mwrites_per_s"], r["writes"] / t / 1e6), r
    if r["phase"] in base:
        assert close(r["vs_a2av"], r["p50_us"] / base[r["phase"]]), r
    if not two:
        assert r["cross_GBps"] is None and r["cross_p50_us"] is None, r
        assert r["cross_max_p50_us"] is None, r
        assert all(x["cross_p50_us"] is None for x in r["ranks"]), r
        continue
    legs_t = [x["cross_p50_us"] for x in r["ranks"]]
    assert r["cross_max_p50_us"] == max(legs_t) and all(0 < v for v in legs_t), r
    assert r["cross_p50_us"] == r["ranks"][r["slowest_rank"]]["cross_p50_us"], r
    # A leg is part of its step, so each rank's median in it is at most the median over
    # iterations of the slowest rank's step (the step's clock is scaled per phase: 0.1 %).
    assert max(legs_t) <= r["each_max_p50_us"] * 1.001, r
    assert close(r["cross_GBps"], of(cross, r["phase"]) / (r["cross_max_p50_us"] * 1e-6) / 1e9), r
# Receiving threads: as asked, or by default one per proxy thread or none.
rx = {"0": [0], "1": [1], "auto": [0, 1]}[rx_arg]
assert d["rx_threads"] in [x * d["proxy_threads"] for x in rx], (d["rx_threads"], rx_arg)
assert d["piece"] == (piece_arg or d["chunk"]), (d["piece"], d["chunk"], piece_arg)
print("JSON: %d rows; mode %s on %d hosts (%s), %d legs: traffic, moved bytes, sel/fabric/"
      "RDMA/NVL/cross GB/s and writes as defined" % (len(res), mode, H, d["intra"], legs))
