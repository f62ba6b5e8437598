#!/usr/bin/env python3
"""Write crafted_1_9.trace: a hand-made Go 1.9 execution trace (a labelled
fake: no Go runtime since 1.10 writes FutileWakeup, and a real GoSysExit that
moves far back is rare). Go 1.19's `go tool trace -d` is the oracle for it in
test_v1_crafted.sh. It exercises:
  - removeFutile: goroutine 1's wakeup (GoUnblock, GoStart, FutileWakeup,
    GoBlock) must vanish, its next real wakeup must stay;
  - the GoSysExit fix-up: goroutine 3's exit, written on P 1 at tick 1041,
    goes back to its real exit time 1016, behind 10 later events of P 0.
Usage: make_crafted.py OUT"""
import sys

def uv(x):
    out = bytearray()
    while True:
        b = x & 0x7f
        x >>= 7
        if x:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)

EV = dict(Batch=1, Frequency=2, ProcStart=5, ProcStop=6, GoCreate=13, GoEnd=15,
          GoSched=17, GoBlock=20, GoSysCall=28, GoSysExit=29, GoSysBlock=30,
          FutileWakeup=36, GoStartLocal=38, GoUnblockLocal=39)

def ev(name, *args):
    t = EV[name]
    if len(args) < 4:  # inline form: up to 3 args
        return bytes([t | (len(args) - 1) << 6]) + b"".join(uv(a) for a in args)
    body = b"".join(uv(a) for a in args)
    return bytes([t | 3 << 6]) + uv(len(body)) + body

def batch(p, base, events):
    out, last = bytearray(ev("Batch", p, base)), base
    for ts, name, *args in events:
        out += ev(name, ts - last, *args)
        last = ts
    return bytes(out)

p0 = [(1001, "ProcStart", 1),
      (1002, "GoCreate", 1, 0, 0), (1003, "GoCreate", 2, 0, 0), (1004, "GoCreate", 3, 0, 0),
      (1005, "GoStartLocal", 1), (1006, "GoBlock", 0),
      (1007, "GoStartLocal", 2), (1008, "GoUnblockLocal", 1, 0), (1009, "GoSched", 0),
      (1010, "GoStartLocal", 1), (1011, "FutileWakeup"), (1012, "GoBlock", 0),
      (1013, "GoStartLocal", 3), (1014, "GoSysCall", 0), (1015, "GoSysBlock"),
      (1016, "GoStartLocal", 2), (1017, "GoUnblockLocal", 1, 0), (1018, "GoSched", 0),
      (1019, "GoStartLocal", 1), (1020, "GoBlock", 0),
      (1030, "GoStartLocal", 2), (1031, "GoEnd"), (1032, "ProcStop")]
p1 = [(1040, "ProcStart", 2),
      (1041, "GoSysExit", 3, 2, 1016), (1042, "GoStartLocal", 3), (1043, "GoEnd"),
      (1044, "ProcStop")]
data = b"go 1.9 trace\0\0\0\0" + ev("Frequency", 1000000000) + batch(0, 1000, p0) + batch(1, 1000, p1)
open(sys.argv[1], "wb").write(data)
