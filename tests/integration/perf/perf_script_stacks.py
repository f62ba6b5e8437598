#!/usr/bin/env python3
"""Compare perf script's call chains with rtdiag's folded stacks, sample by sample.

usage: perf_script_stacks.py PERF_SCRIPT_OUTPUT RTDIAG_FOLDED [--event NAME]
                             [--divide N] [--no-versions]

PERF_SCRIPT_OUTPUT is `perf script -F tid,event,ip,sym`: a
header line per sample, then one "ADDR SYMBOL" line per frame, leaf first,
a blank line after each sample. RTDIAG_FOLDED is `rtdiag convert x.data
--type samples -o y.folded`: "root;...;leaf COUNT". A frame neither tool
can name (perf: "[unknown]"; rtdiag: "module+0xOFFSET") is "?" on both
sides; perf's "+0x.." offsets are cut. --divide N: rtdiag's values are
N per sample (a profile in nanoseconds of a fixed period); --no-versions:
symbol versions cut off perf's names (rtdiag's own profiles show
"memcpy", perf "memcpy@@GLIBC_2.14"). Prints the differences and exits 1
when the multisets of stacks differ.
"""
import collections
import re
import sys

NO_VERSIONS = "--no-versions" in sys.argv

def norm(name):
    name = name.strip()
    if NO_VERSIONS:
        name = name.split("@")[0]
    if name == "[unknown]" or re.search(r"\+0x[0-9a-f]+$", name) or name.startswith("0x"):
        return "?"
    return name

def perf_stacks(path, event):
    """Stacks of `perf script -F tid,event,ip,sym`: a header line per
    sample ("  TID EVENT: "), its frames on lines that start with a tab."""
    c = collections.Counter()
    cur, keep = None, False
    def flush():
        if cur is not None and keep:
            c[";".join(reversed(cur))] += 1
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("\t"):
            if cur is None:
                continue
            parts = line.split(None, 1)
            sym = parts[1].split(" (")[0] if len(parts) == 2 else "[unknown]"
            cur.append(norm(re.sub(r"\+0x[0-9a-f]+$", "", sym)))
            continue
        flush()
        cur = None
        if line.strip():
            cur = []
            words = [w.rstrip(":") for w in line.split()]
            keep = event is None or any(w == event or w.split(":")[0] == event for w in words)
    flush()
    return c

def rtd_stacks(path, divide):
    c = collections.Counter()
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, n = line.rsplit(" ", 1)
        if int(n) % divide:
            raise SystemExit("rtdiag's value %s is not a multiple of %d" % (n, divide))
        c[";".join(norm(f) for f in stack.split(";"))] += int(n) // divide
    return c

def main():
    event = None
    if "--event" in sys.argv:
        event = sys.argv[sys.argv.index("--event") + 1]
    divide = int(sys.argv[sys.argv.index("--divide") + 1]) if "--divide" in sys.argv else 1
    p, r = perf_stacks(sys.argv[1], event), rtd_stacks(sys.argv[2], divide)
    tp, tr = sum(p.values()), sum(r.values())
    same = sum((p & r).values())
    print("perf script: %d samples, %d stacks; rtdiag: %d samples, %d stacks; "
          "%d samples with the same stack" % (tp, len(p), tr, len(r), same))
    if p == r:
        return 0
    for k in sorted(set(p) | set(r), key=lambda k: -(p[k] + r[k]))[:15]:
        if p[k] != r[k]:
            print("  perf %5d rtdiag %5d  %s" % (p[k], r[k], k))
    return 1

sys.exit(main())
