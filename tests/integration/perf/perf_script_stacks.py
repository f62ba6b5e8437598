#!/usr/bin/env python3
"""Compare perf script's call chains with rtdiag's folded stacks, sample by sample.

usage: perf_script_stacks.py PERF_SCRIPT_OUTPUT RTDIAG_FOLDED [--event NAME]
                             [--divide N] [--no-versions]

PERF_SCRIPT_OUTPUT is `perf script -F tid,event,ip,sym`: a
header line per sample, then one "ADDR SYMBOL" line per frame, leaf first,
a blank line after each sample. RTDIAG_FOLDED is `rtdiag convert x.data
--type samples -o y.folded`: "root;...;leaf COUNT". A frame neither tool
can name (perf: "[unknown]"; rtdiag: "module+0xOFFSET") is "?" on both
sides; perf's "+0x.." offsets are cut. With symoff among perf script's
fields, a return address at a symbol's start ("+0x0" on a frame other
than where the thread was interrupted: perf names the next function where
rtdiag, minus one, names the call's) matches whatever rtdiag names there. --skip-zero: a frame at address 0 (where a
frame-pointer chain ends: a live profile ends the stack there, perf
prints "0 [unknown]") is left out of perf's stacks (rtdiag's perf.data
reader keeps it as "?", as perf). --divide N: rtdiag's values are
N per sample (a profile in nanoseconds of a fixed period); --no-versions:
symbol versions cut off perf's names (rtdiag's own profiles show
"memcpy", perf "memcpy@@GLIBC_2.14"). Prints the differences and exits 1
when the multisets of stacks differ.
"""
import collections
import re
import sys

NO_VERSIONS = "--no-versions" in sys.argv
SKIP_ZERO = "--skip-zero" in sys.argv

def norm(name):
    name = name.strip()
    if NO_VERSIONS:
        name = name.split("@")[0]
    if name == "[unknown]" or re.search(r"\+0x[0-9a-f]+$", name) or name.startswith("0x"):
        return "?"
    return name

AT_START = "*"

def at_start(p, r):
    """Each perf stack with a frame at a symbol's start (from `-F
    ...,sym,symoff`, "+0x0" on a frame other than the leaf): a return
    address there is the call at the end of the function before it, which
    rtdiag names (it looks return addresses up minus one) and perf does
    not; such a stack matches the rtdiag stack that differs from it only
    in those frames."""
    for k in [k for k in p if AT_START in k.split(";")]:
        pat = re.compile("^" + ";".join("[^;]*" if f == AT_START else re.escape(f)
                                        for f in k.split(";")) + "$")
        cand = [q for q in r if pat.match(q) and r[q] > p.get(q, 0)]
        if len(cand) == 1:
            p[cand[0]] += p.pop(k)

def perf_stacks(path, event):
    """Stacks of `perf script -F tid,event,ip,sym`: a header line per
    sample ("  TID EVENT: "), its frames on lines that start with a tab."""
    c = collections.Counter()
    cur, keep, prev_kernel, prev_sym = None, False, False, ""
    def flush():
        if cur is not None and keep:
            c[";".join(reversed(cur))] += 1
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("\t"):
            if cur is None:
                continue
            parts = line.split(None, 1)
            if SKIP_ZERO and parts and parts[0] == "0":
                continue  # a frame-pointer chain's end: rtdiag stops there
            sym = parts[1].split(" (")[0] if len(parts) == 2 else "[unknown]"
            kernel = int(parts[0], 16) >= 0xffff800000000000
            # where the thread was interrupted is no return address: the
            # leaf, a user frame under kernel ones, a frame under an entry
            exact = not cur or (prev_kernel and (not kernel or prev_sym.startswith("asm_")))
            prev_kernel, prev_sym = kernel, sym
            if not exact and sym.endswith("+0x0"):
                cur.append(AT_START)  # a return address at a symbol's start
            else:
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
    at_start(p, r)
    tp, tr = sum(p.values()), sum(r.values())
    same = sum((p & r).values())
    print("perf script: %d samples, %d stacks; rtdiag: %d samples, %d stacks; "
          "%d samples with the same stack" % (tp, len(p), tr, len(r), same))
    if p == r:
        return 0
    # the stacks that differ, the largest first (a difference of one
    # sample in a small stack was below the 15 largest stacks and shown
    # nowhere: record test_perf_data, 459 of 460 alike, load 20)
    diff = [k for k in set(p) | set(r) if p[k] != r[k]]
    for k in sorted(diff, key=lambda k: -(p[k] + r[k]))[:15]:
        print("  perf %5d rtdiag %5d  %s" % (p[k], r[k], k))
    return 1

sys.exit(main())
