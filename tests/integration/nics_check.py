"""nics_check.py OUT.json write|slow: what each NIC carried, from a run on the test bed (2 hosts x
4 rails, rank 0 on h0 writing to rank 1 on h1).

write: Split and RoundRobin writes of 8 MiB. Every rail's own counters saw what efabench moved
through it, within the protocol's overhead (tx_bytes >= sent, and at most 3 % more plus what
the acknowledgements and the harness's own messages take); Split spread the payload over the
four rails within 5 %; RoundRobin put it on rail (peer + rank) % 4 = rail1; each verdict follows
its figures: "link" where BusBW is 90 % or more (the counters agree here), else "not the link"
naming the BusBW. Which side of 90 % four TCP rails reach depends on what else the two cores
run, so the rule is checked, not the side.
slow: alltoall Split with host 1's rail 2 at half rate: the flags name it."""

import json
import sys

doc = json.load(open(sys.argv[1]))
mode = sys.argv[2]
SLACK = 1 << 20  # acknowledgements, barriers and TCP's own segments on a rail, per point


def lines(rec):
    """(host, nic) -> the counters' line (the rank that read them) with every rank's bytes."""
    out = {}
    for x in rec["nic_counters"]:
        key = (x["host"], x["nic"])
        o = out.setdefault(key, {"sent": 0, "received": 0})
        o["sent"] += x["sent"]
        o["received"] += x["received"]
        if x["counters_of_rank"] == x["rank"]:
            o.update(tx=x["tx_bytes"], rx=x["rx_bytes"], moved=x["moved"])
    return out


def overhead(name, counted, moved):
    assert counted is not None, name
    assert counted >= moved, (name, "counted", counted, "moved", moved)
    assert counted <= moved * 1.03 + SLACK, (name, "counted", counted, "moved", moved)
    return (counted - moved) / moved if moved else 0


def verdict(rec):
    """The verdict the figures call for (write stamps no stages)."""
    pct, v = rec["busbw_pct"], rec["verdict"]
    want = "link" if pct >= 90.0 else "not the link"
    assert v["bound"] == want, (rec["variant"], pct, v)
    assert ("BusBW %.1f %%" % pct) in v["why"], (pct, v)
    print(rec["variant"], "verdict:", v["bound"], "(%s)" % v["why"])


for rec in doc["results"]:
    variant, per = rec["variant"], lines(rec)
    print(variant, {k: (v["sent"], v.get("tx"), v["received"], v.get("rx"))
                    for k, v in sorted(per.items())})
    if mode == "slow":
        flags = rec.get("nic_flags", [])
        print("flags:", flags)
        assert any(f.startswith("rail2 on ") and "h1 received" in f for f in flags), flags
        continue
    # hosts are the test bed's namespaces: <prefix>h0, <prefix>h1
    sent = {nic: v["sent"] for (host, nic), v in per.items() if host.endswith("h0")}
    got = {nic: v["received"] for (host, nic), v in per.items() if host.endswith("h1")}
    for (host, nic), v in per.items():
        if host.endswith("h0") and v["sent"] > SLACK:
            ov = overhead(host + " " + nic + " tx", v["tx"], v["sent"])
            print("%s %s: counters saw %.3f %% more than efabench sent" % (host, nic, 100 * ov))
        if host.endswith("h1") and v["received"] > SLACK:
            overhead(host + " " + nic + " rx", v["rx"], v["received"])
    verdict(rec)
    if variant == "Split":
        mean = sum(sent.values()) / 4
        assert all(abs(s - mean) <= 0.05 * mean for s in sent.values()), sent
        assert all(abs(g - mean) <= 0.05 * mean for g in got.values()), got
    else:  # RoundRobin: rank 0's bytes for rank 1 on channel (1 + 0) % 4
        assert sent["rail1"] > 0.99 * sum(sent.values()), sent
        assert got["rail1"] > 0.99 * sum(got.values()), got
