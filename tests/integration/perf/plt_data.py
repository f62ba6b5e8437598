#!/usr/bin/env python3
"""Write a perf.data file with given mappings and one user sample at each
given address (a crafted file: no run can be made to sample every PLT stub).
stdin: "mmap PID START LEN PGOFF PATH" and "sample PID IP" lines."""
import struct, sys
ATTR_SIZE = 136
SAMPLE_TYPE = 0x1 | 0x2 | 0x4 | 0x100 | 0x20  # IP TID TIME PERIOD CALLCHAIN
recs, t = [], 1000
def rec(typ, misc, body):
    body += b"\0" * (-len(body) % 8)
    recs.append(struct.pack("<IHH", typ, misc, 8 + len(body)) + body)
def cstr(s):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % 8)
pids = set()
for line in sys.stdin:
    w = line.split()
    if not w:
        continue
    if w[0] == "mmap":
        pid = int(w[1])
        if pid not in pids:
            pids.add(pid)
            rec(3, 0, struct.pack("<II", pid, pid) + cstr("plt%d" % pid))
        rec(1, 2, struct.pack("<IIQQQ", pid, pid, int(w[2], 0), int(w[3], 0), int(w[4], 0)) + cstr(w[5]))
    elif w[0] == "sample":
        pid, ip = int(w[1]), int(w[2], 0)
        t += 1000
        rec(9, 2, struct.pack("<QIIQQQQQ", ip, pid, pid, t, 1, 2, 0xfffffffffffffe00, ip))
attr = struct.pack("<IIQQQQQ", 1, ATTR_SIZE, 0, 1, SAMPLE_TYPE, 0, 1 << 5)  # sw cpu-clock, exclude_kernel
attr += b"\0" * (ATTR_SIZE - len(attr))
hdr_size, fattr = 104, None
attrs_off = hdr_size
fattr = attr + struct.pack("<QQ", 0, 0)
data_off = attrs_off + len(fattr)
data = b"".join(recs)
hdr = b"PERFILE2" + struct.pack("<QQ", hdr_size, len(fattr)) + struct.pack("<QQQQQQ", attrs_off, len(fattr), data_off, len(data), 0, 0) + b"\0" * 32
open(sys.argv[1], "wb").write(hdr + fattr + data)
