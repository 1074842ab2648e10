#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_wire (tests/fuzz/corpus/wire/): frames as src/boot/wire.h
and the rendezvous hello as src/boot/rendezvous.c define them, little-endian. The layout of an
input is described at the top of tests/fuzz/fuzz_wire.c. Run it again after changing either.
Files named regress-* (in every corpus folder) are inputs the fuzzers found crashing, kept as
regression seeds; this script leaves them alone."""
import os
import struct

GATHER, ALLTOALL, RESULT, ABORT, FINI = 1, 2, 3, 4, 5
SEP = b"|RANK|"
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wire")


def frame(typ, arg, payload=b"", length=None):
    return struct.pack("<IiQ", typ, arg, len(payload) if length is None else length) + payload


def hello(rank, size, token=b"fuzz-token", magic=0x45464142, version=1):
    return struct.pack("<IIii", magic, version, rank, size) + token.ljust(128, b"\0")[:128]


def hub(n, streams):  # side 0
    return bytes([0, n - 1]) + SEP.join(streams)


def rank(size, calls, stream):  # side 1
    return bytes([1, size - 1, calls]) + stream


def rdv(size, stream):  # side 2
    return bytes([2, size - 1]) + stream


seeds = {
    "hub-gather2": hub(2, [frame(GATHER, 1, b"A" * 8) + frame(FINI, 0)] * 2),
    "hub-alltoall3": hub(3, [frame(ALLTOALL, 1, bytes(range(12))) + frame(FINI, 0)] * 3),
    "hub-mismatch": hub(2, [frame(GATHER, 1, b"x" * 8), frame(GATHER, 1, b"y" * 4)]),
    "hub-fini-fail": hub(2, [frame(FINI, 3), frame(GATHER, 1, b"z" * 8)]),
    "hub-huge-len": hub(1, [frame(GATHER, 1, b"", length=1 << 40)]),
    "hub-short-payload": hub(1, [frame(ALLTOALL, 7, b"ab", length=64)]),
    "rank-gather": rank(2, 0b01, frame(RESULT, 1, b"r" * 32)),
    "rank-abort": rank(2, 0b0110, frame(ABORT, 1, b"rank 1 died\0")),
    "rank-wrong-seq": rank(1, 0b10, frame(RESULT, 9, b"q" * 8)),
    "rank-check-stray": rank(4, 0b00, frame(RESULT, 0)),
    "rdv-ok": rdv(1, hello(0, 1) + frame(GATHER, 1, b"addr" * 4) + frame(FINI, 0)),
    "rdv-ok-of-2": rdv(2, hello(1, 2) + frame(GATHER, 1, b"a" * 8)),
    "rdv-bad-token": rdv(1, hello(0, 1, token=b"wrong")),
    "rdv-bad-version": rdv(1, hello(0, 1, version=2)),
    "rdv-bad-rank": rdv(2, hello(5, 2)),
    "rdv-short-hello": rdv(1, hello(0, 1)[:20]),
}
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds in {out}")
