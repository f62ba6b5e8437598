#!/usr/bin/env python3
"""pprof_cmp.py GO_RAW RTDIAG_RAW [--names-only]

Compares a blocking profile of `go tool trace -pprof=TYPE`, as
`go tool pprof -raw` prints it, with `rtdiag gotrace pprof --format raw`.

Both are reduced to a multiset: each distinct stack (frames leaf first:
PC, function, file, line) with its summed contentions and delay. Go keys
its records by the trace's stack id and rtdiag by the stack's PCs, so two
ids with the same PCs are one record here and two samples in Go: summing
equal stacks makes them comparable. --names-only compares function names
and the delay only (for a pprof file rtdiag wrote through the profile
model, read back by go tool pprof -raw).

Prints what differs and exits 1, or prints a one-line summary and exits 0.
"""
import sys
from collections import defaultdict


def parse_go_raw(path, names_only):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    i = 0
    types = []
    samples = []
    locs = {}
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("Samples:"):
            types = lines[i + 1].split()
            i += 2
            while i < len(lines) and lines[i].startswith(" ") and ":" in lines[i]:
                vals, _, ids = lines[i].partition(":")
                samples.append(([int(v) for v in vals.split()], [int(x) for x in ids.split()]))
                i += 1
            continue
        if ln.startswith("Locations"):
            i += 1
            while i < len(lines) and lines[i].strip() and not lines[i].startswith("Mappings"):
                s = lines[i].strip()
                lid, _, rest = s.partition(": ")
                if lid.isdigit():
                    addr, _, rest = rest.partition(" ")
                    rest = rest.split(" ", 1)[1] if rest.startswith("M=") else rest
                    if rest.endswith(" s=0") or " s=" in rest:
                        rest = rest.rsplit(" s=", 1)[0]
                    fn, _, fl = rest.rpartition(" ")
                    f, _, line = fl.rpartition(":")
                    g, _, line2 = f.rpartition(":")
                    if line2.isdigit():  # Go 1.23's pprof adds ":COLUMN"
                        f, line = g, line2
                    locs[int(lid)] = (int(addr, 16), fn, f, int(line))
                i += 1
            continue
        i += 1
    ci = types.index("contentions/count") if "contentions/count" in types else None
    di = [k for k, t in enumerate(types) if t.startswith("delay/") or t.startswith("cpu/")]
    di = di[0] if di else len(types) - 1
    out = defaultdict(lambda: [0, 0])
    for vals, ids in samples:
        key = tuple((locs[x][1] or "0x%x" % locs[x][0]) if names_only else locs[x] for x in ids)
        out[key][0] += vals[ci] if ci is not None else 0
        out[key][1] += vals[di]
    return out


def parse_rtdiag_raw(path, names_only):
    out = defaultdict(lambda: [0, 0])
    for ln in open(path, encoding="utf-8", errors="replace"):
        ln = ln.rstrip("\n")
        if not ln:
            continue
        parts = ln.split("\t")
        frames = []
        for fr in parts[2:]:
            pc, _, rest = fr.partition(" ")
            fn, _, fl = rest.rpartition(" ")
            f, _, line = fl.rpartition(":")
            frames.append(fn if names_only else (int(pc, 16), fn, f, int(line)))
        key = tuple(frames)
        out[key][0] += int(parts[0])
        out[key][1] += int(parts[1])
    return out


def main():
    names_only = "--names-only" in sys.argv
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    go = parse_go_raw(args[0], names_only)
    rt = parse_rtdiag_raw(args[1], names_only) if not names_only else parse_go_raw(args[1], True)
    if names_only:  # no contentions in the model's one-value pprof
        for d in (go, rt):
            for v in d.values():
                v[0] = 0
    bad = 0
    for k in sorted(set(go) | set(rt), key=str):
        a, b = go.get(k), rt.get(k)
        if a != b:
            bad += 1
            if bad <= 5:
                top = k[0] if k else "(no frames)"
                print(f"differs: stack with leaf {top}: go {a} rtdiag {b}")
    tg = [sum(v[0] for v in go.values()), sum(v[1] for v in go.values())]
    tr = [sum(v[0] for v in rt.values()), sum(v[1] for v in rt.values())]
    if bad:
        print(f"{bad} of {len(set(go) | set(rt))} stacks differ; totals go {tg} rtdiag {tr}")
        return 1
    print(f"{len(go)} stacks, {tg[0]} events, {tg[1]} ns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
