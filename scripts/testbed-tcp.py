#!/usr/bin/env python3
"""The test bed's own ceiling for an all-to-all, without libfabric or efabench: plain TCP
sockets, one process per host, every host sending S bytes to every other host per iteration,
each peer's bytes spread over the rails as their sockets take them (as alltoall's Split does).

  testbed-tcp.py HOSTS RAILS [-b S] [-e S] [-n N] [-w N] [--link-gbps G] [--json FILE]

Run as root beside scripts/testbed.sh (it starts one process per host with `ip netns exec`).
Every iteration starts when host 0 releases a barrier; a host's time is until its own bytes are
in its sockets and every peer's bytes have arrived; t = the mean over hosts; Gbps =
8*S*(HOSTS-1)/t, BusBW % = 100*Gbps/(G*RAILS), as alltoall defines them. Bytes are counted,
not checked: this measures the bed, not a transport."""

import argparse
import json
import os
import selectors
import socket
import struct
import subprocess
import sys
import time

CHUNK = 512 * 1024
WAIT_S = 60  # the longest a host waits for another before it gives up
PREFIX = os.environ.get("EB_TESTBED_PREFIX", "ebtb")
NET = os.environ.get("EB_TESTBED_NET", "10.77")


def size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def addr(rail, host):
    return "%s.%d.%d" % (NET, rail, host + 1)


def recv_exact(s, n):
    b = bytearray()
    while len(b) < n:
        got = s.recv(n - len(b))
        if not got:
            raise ConnectionError("a host closed its control connection")
        b += got
    return bytes(b)


def connect(host, port, deadline):
    while True:
        try:
            return socket.create_connection((host, port), timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def mesh(a):
    """Control sockets (host 0: one per other host; others: one to host 0) and, per peer, one
    data socket per rail each way: out[peer] to send on, inn[peer] to receive from."""
    deadline = time.monotonic() + 30
    lst = []
    for r in range(a.rails):
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind((addr(r, a.rank), a.port))
        ls.listen(64)
        lst.append(ls)
    ctl = [connect(addr(0, 0), a.port, deadline)] if a.rank else []
    for c in ctl:
        c.sendall(struct.pack("<ii", a.rank, 0))
    out = {p: [] for p in range(a.hosts) if p != a.rank}
    for p in out:
        for r in range(a.rails):
            s = connect(addr(r, p), a.port, deadline)
            s.sendall(struct.pack("<ii", a.rank, 1))
            out[p].append(s)
    inn = {p: [] for p in out}
    want = (a.hosts - 1) * a.rails + (a.hosts - 1 if a.rank == 0 else 0)
    for _ in range(want):
        ready = None
        while ready is None:
            for ls in lst:
                ls.settimeout(0.05)
                try:
                    ready = ls.accept()[0]
                    break
                except socket.timeout:
                    if time.monotonic() > deadline:
                        raise TimeoutError("host %d: peers did not connect" % a.rank)
        ready.settimeout(WAIT_S)  # who it is comes at once, or the connection fails the run
        peer, kind = struct.unpack("<ii", recv_exact(ready, 8))
        ready.settimeout(None)
        if (kind == 1 and peer not in inn) or (kind == 0 and not 0 < peer < a.hosts):
            raise ConnectionError("host %d: a connection from no host of this run" % a.rank)
        (inn[peer] if kind == 1 else ctl).append(ready)
    for c in ctl:
        c.settimeout(WAIT_S)
    for ls in lst:
        ls.close()
    for s in [s for v in out.values() for s in v] + [s for v in inn.values() for s in v]:
        s.setblocking(False)
    return ctl, out, inn


def barrier(a, ctl):
    if a.rank:
        ctl[0].sendall(b"b")
        recv_exact(ctl[0], 1)
        return
    for s in ctl:
        recv_exact(s, 1)
    for s in ctl:
        s.sendall(b"g")


def iteration(out, inn, nbytes, buf, sink):
    """Every peer's nbytes out over its rails' sockets, and every peer's nbytes in."""
    sel = selectors.DefaultSelector()
    left = {p: nbytes for p in out}
    due = {p: nbytes for p in inn}
    for p, socks in out.items():
        for s in socks:
            sel.register(s, selectors.EVENT_WRITE, ("out", p))
    for p, socks in inn.items():
        for s in socks:
            sel.register(s, selectors.EVENT_READ, ("in", p))
    busy = len(out) + len(inn)
    while busy:
        events = sel.select(timeout=WAIT_S)
        if not events:
            raise TimeoutError("nothing moved for %d s" % WAIT_S)
        for key, _ in events:
            side, p = key.data
            if side == "out":
                if left[p] == 0:
                    continue
                n = key.fileobj.send(buf[: min(CHUNK, left[p])])
                left[p] -= n
                if left[p] == 0:
                    busy -= 1
                    for s in out[p]:
                        sel.unregister(s)
            else:
                n = key.fileobj.recv_into(sink)
                if n == 0:
                    raise ConnectionError("peer %d closed a rail" % p)
                due[p] -= n
                if due[p] == 0:
                    busy -= 1
                    for s in inn[p]:
                        sel.unregister(s)
    sel.close()


def host_main(a):
    ctl, out, inn = mesh(a)
    buf, sink = memoryview(bytearray(CHUNK)), memoryview(bytearray(CHUNK))
    rows, s = [], a.b
    while s <= a.e:
        times = []
        for i in range(a.w + a.n):
            barrier(a, ctl)
            t0 = time.monotonic()
            iteration(out, inn, s, buf, sink)
            if i >= a.w:
                times.append(time.monotonic() - t0)
        if a.rank:
            ctl[0].sendall(struct.pack("<%dd" % a.n, *times))
        else:
            # every host's iterations, so one slow iteration is told from a slow row
            each = [times] + [list(struct.unpack("<%dd" % a.n, recv_exact(c, 8 * a.n)))
                              for c in ctl]
            means = [sum(x) / len(x) for x in each]
            t = sum(means) / len(means)
            gbps = 8.0 * s * (a.hosts - 1) / t / 1e9
            rows.append({"size": s, "t_s": t, "gbps": gbps,
                         "busbw_pct": 100 * gbps / (a.link_gbps * a.rails) if a.link_gbps else None,
                         "host_means_s": means, "host_iters_s": each})
        s *= 2
    barrier(a, ctl)  # nobody leaves while its bytes may still be on the way
    if a.rank == 0:
        print("|  Size |    Gbps | BusBW (%) |   Lat (us) |")
        print("|------:|--------:|----------:|-----------:|")
        for r in rows:
            pct = "%9.1f" % r["busbw_pct"] if r["busbw_pct"] is not None else "        -"
            print("| %4dM | %7.2f | %s | %10.2f |" % (r["size"] >> 20, r["gbps"], pct, r["t_s"] * 1e6))
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"hosts": a.hosts, "rails": a.rails, "iters": a.n, "warmup": a.w,
                           "link_gbps": a.link_gbps, "results": rows}, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("hosts", type=int)
    ap.add_argument("rails", type=int)
    ap.add_argument("-b", type=size, default=size("8M"))
    ap.add_argument("-e", type=size, default=size("64M"))
    ap.add_argument("-n", type=int, default=10)
    ap.add_argument("-w", type=int, default=2)
    ap.add_argument("--link-gbps", type=float, default=0)
    ap.add_argument("--json")
    ap.add_argument("--rank", type=int, default=-1, help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.hosts < 2 or a.rails < 1 or a.b < 1 or a.e < a.b or a.n < 1 or a.w < 0:
        print("testbed-tcp: want HOSTS >= 2, RAILS >= 1, 1 <= -b <= -e, -n >= 1, -w >= 0",
              file=sys.stderr)
        sys.exit(2)
    if a.rank >= 0:
        try:
            host_main(a)
        except (OSError, ConnectionError, TimeoutError) as e:
            print("testbed-tcp: host %d: %s" % (a.rank, e), file=sys.stderr)
            sys.exit(1)
        return
    port = a.port or 20000 + int.from_bytes(os.urandom(2), "little") % 20000
    procs = [subprocess.Popen(["ip", "netns", "exec", "%sh%d" % (PREFIX, h), sys.executable,
                               os.path.abspath(__file__)] + sys.argv[1:] +
                              ["--rank", str(h), "--port", str(port)])
             for h in range(a.hosts)]
    # one host failing ends the others (they would wait WAIT_S for it)
    worst = 0
    while any(p.poll() is None for p in procs):
        if any(p.poll() not in (None, 0) for p in procs):
            for p in procs:
                if p.poll() is None:
                    p.kill()
        time.sleep(0.05)
    for p in procs:
        worst = max(worst, 1 if p.wait() != 0 else 0)
    sys.exit(worst)

if __name__ == "__main__":
    main()
