#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""compare.py - `rtdiag nettrace cat --json` against TraceEvent, field by field.

    compare.py [--order] [--max-report N] TE.jsonl RTDIAG.jsonl

TE.jsonl comes from tests/traceevent (te-dump --json), RTDIAG.jsonl from
`rtdiag nettrace cat --json`. Every event must pair 1:1: with --order the
two files must list the events in the same order (TraceEvent delivers in
time order, so does `cat --sorted`); without it events are paired by
(timestamp, thread, provider, id) in file order. For each pair the name,
id, version, opcode, thread, cpu, activity ids and every payload field
TraceEvent names must agree; values are normalised (hex text as numbers,
floats compared as the type's value, enums by number and by name).
Fields TraceEvent gets wrong are listed in KNOWN with the reason, and
only those are excused. Prints a summary; exits 1 on any difference.
"""
import json
import math
import struct
import sys
from collections import Counter, defaultdict, deque

# (provider, event name, field or '*') -> why TraceEvent is not followed.
# Each entry is a TraceEvent 4.0.0 bug; docs/nettrace.md lists them too.
KNOWN = {
    # TraceEvent's MethodDetails template names PayloadNames
    # [MethodID, TypeID, MethodToken, TypeParameterCount, LoaderModuleID,
    # TypeParameters] but its PayloadValue(3) returns LoaderModuleID and
    # (4) the TypeParameters array: every name after index 2 is off by one.
    ("Microsoft-Windows-DotNETRuntime", "Method/MethodDetails", "TypeParameterCount"):
        "TraceEvent's PayloadValue skips index 3 (names and values shifted)",
    ("Microsoft-Windows-DotNETRuntime", "Method/MethodDetails", "LoaderModuleID"):
        "TraceEvent's PayloadValue skips index 3 (names and values shifted)",
    ("Microsoft-Windows-DotNETRuntime", "Method/MethodDetails", "TypeParameters"):
        "TraceEvent's PayloadValue skips index 3 (names and values shifted)",
}
# events whose opcode TraceEvent invents (the stream carries none)
KNOWN_OPCODE = {
    ("Microsoft-DotNETCore-SampleProfiler", "Thread/Sample"):
        "the stream carries no opcode; TraceEvent's template says 1",
}


def num(v):
    """A JSON value as a number when it is one (or hex text), else None."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str):
        s = v.strip()
        try:
            if s.lower().startswith('0x'):
                return int(s, 16)
        except ValueError:
            return None
    return None


def f32(x):
    try:
        return struct.unpack('<f', struct.pack('<f', x))[0]
    except (OverflowError, struct.error):
        return x


def same(a, b):
    """TraceEvent value a, rtdiag value b."""
    if isinstance(a, dict) and isinstance(b, dict):
        return all(k in b and same(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if a == b:
        return True
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    na, nb = num(a), num(b)
    if na is None or nb is None:
        return False
    if isinstance(na, float) or isinstance(nb, float):
        fa, fb = float(na), float(nb)
        if fa == fb or f32(fa) == f32(fb):
            return True
        return math.isclose(fa, fb, rel_tol=1e-15)
    # negative numbers TraceEvent shows as unsigned or the reverse
    return na == nb or (na - nb) % (1 << 64) == 0


def key(e, te):
    if te:
        return (e['ts'], e['tid'], e['p'], e['id'])
    return (e['ts'], e['thread'], e['provider'], e['id'])


def main():
    args = sys.argv[1:]
    order = '--order' in args
    args = [a for a in args if a != '--order']
    maxrep = 20
    if '--max-report' in args:
        i = args.index('--max-report')
        maxrep = int(args[i + 1])
        del args[i:i + 2]
    te_path, rt_path = args
    te = [json.loads(l) for l in open(te_path, encoding='utf-8')]
    rt = [json.loads(l) for l in open(rt_path, encoding='utf-8')]
    diffs = Counter()
    examples = defaultdict(list)
    excused = Counter()

    def diff(kind, e, msg):
        k = (kind, e['p'], e['n'])
        diffs[k] += 1
        if len(examples[k]) < 2:
            examples[k].append(msg)

    pairs = []
    unpaired_te = []
    if order:
        if len(te) != len(rt):
            print(f"event counts differ: TraceEvent {len(te)}, rtdiag {len(rt)}")
        for i, (a, b) in enumerate(zip(te, rt)):
            if key(a, True) != key(b, False):
                print(f"order differs at event {i}: TraceEvent {key(a, True)}, "
                      f"rtdiag {key(b, False)}")
                return 1
            pairs.append((a, b))
        unpaired_te = te[len(rt):]
        unpaired_rt = rt[len(te):]
    else:
        q = defaultdict(deque)
        for b in rt:
            q[key(b, False)].append(b)
        for a in te:
            d = q.get(key(a, True))
            if d:
                pairs.append((a, d.popleft()))
            else:
                unpaired_te.append(a)
        unpaired_rt = [b for d in q.values() for b in d]
    for a in unpaired_te:
        diff('only in TraceEvent', a, key(a, True))
    for b in unpaired_rt:
        diffs[('only in rtdiag', b['provider'], b['event'])] += 1

    for a, b in pairs:
        p, n = a['p'], a['n']
        if b['event'] != n:
            diff('name', a, f"TraceEvent {n!r}, rtdiag {b['event']!r}")
        if b.get('version') != a['v']:
            diff('version', a, f"TraceEvent {a['v']}, rtdiag {b.get('version')}")
        if b.get('opcode') != a['op']:
            if (p, n) in KNOWN_OPCODE:
                excused[('opcode', p, n)] += 1
            else:
                diff('opcode', a, f"TraceEvent {a['op']}, rtdiag {b.get('opcode')}")
        if b.get('cpu', a['cpu']) != a['cpu']:
            diff('cpu', a, f"TraceEvent {a['cpu']}, rtdiag {b.get('cpu')}")
        for k1, k2 in (('act', 'activity'), ('rel', 'related_activity')):
            if not same(a.get(k1, ''), b.get(k2, '')):
                diff(k2, a, f"TraceEvent {a.get(k1)}, rtdiag {b.get(k2)}")
        fa, fb = a['f'], b.get('fields', {})
        names_b = b.get('names', {})
        for name, va in fa.items():
            kk = (p, n, name)
            if kk in KNOWN or (p, n, '*') in KNOWN:
                excused[kk] += 1
                continue
            if name not in fb:
                diff('field missing', a, f"{name}={va!r}")
                continue
            if not same(va, fb[name]):
                diff('value', a, f"{name}: TraceEvent {va!r}, rtdiag {fb[name]!r}")
            en = a.get('e', {}).get(name)
            if en is not None and names_b.get(name) is not None \
                    and en != names_b[name]:
                diff('enum name', a, f"{name}: TraceEvent {en!r}, rtdiag "
                     f"{names_b[name]!r}")
        for name in fb:
            if name not in fa and name != 'payload' and fa:
                diff('field only in rtdiag', a, f"{name}={fb[name]!r}")
        if 'error' in b:
            diff('rtdiag error', a, b['error'])

    print(f"{len(pairs)} events paired; TraceEvent {len(te)}, rtdiag {len(rt)}")
    for k, c in sorted(excused.items()):
        print(f"  excused (known TraceEvent bug) {c:8d}  {k}")
    bad = 0
    for k, c in sorted(diffs.items(), key=lambda kv: -kv[1]):
        bad += c
        print(f"  DIFF {c:8d}  {k[0]}: {k[1]}/{k[2]}")
        for ex in examples[k][:2]:
            print(f"              {ex}")
        maxrep -= 1
        if maxrep == 0:
            print("  ...")
            break
    return 1 if diffs else 0


if __name__ == '__main__':
    sys.exit(main())
