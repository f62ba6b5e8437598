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
import re
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
# Fields TraceEvent computes: not in the payload (the manifest has no such
# field), so rtdiag does not print them.
COMPUTED = {
    'OptimizationTier': 'TraceEvent takes it from MethodFlags bits 0x80-0x200',
    'ModuleILFileName': 'TraceEvent derives it from ModuleILPath',
    'ModuleNativeFileName': 'TraceEvent derives it from ModuleNativePath',
    'TotalHeapSize': 'TraceEvent sums GenerationSize0..4',
    'TotalPromoted': 'TraceEvent sums TotalPromotedSize0..4',
    'Depth': 'TraceEvent computes GC/HeapStats Depth from earlier events',
}
# Fields whose value TraceEvent transforms; (field) -> (normaliser, reason)
TRANSFORMED = {
    'MethodFlags': (lambda v: v & ~0x380,
                    'TraceEvent masks out the optimization tier bits'),
}
# Fields TraceEvent names otherwise than the runtime's manifest:
# (event, TraceEvent's name) -> the manifest's
RENAMED = {
    ('GC/MarkWithType', 'Promoted'): 'Bytes',
    ('Type/BulkType', 'TypeName'): 'Name',
    # TraceEvent's TPL parser; TplEventSource's parameter is ContinueWithTaskId
    ('AwaitTaskContinuationScheduled/Send', 'ContinuationId'): 'ContinueWithTaskId',
}
# events whose opcode TraceEvent gets wrong
KNOWN_OPCODE = {
    ("Microsoft-DotNETCore-SampleProfiler", "Thread/Sample"):
        "the stream carries no opcode; TraceEvent's template says 1",
    ("Microsoft-Windows-DotNETRuntimePrivate", "GC/PinPlugAtGCTime"):
        "the manifest's GarbageCollectionPrivate opcode PinPlugAtGCTime is "
        "44; TraceEvent says 45 (the manifest's BGC1stSweepEnd)",
}
# (event, field) TraceEvent computes from other events or fields
COMPUTED_IN = {
    ('GC/FinalizeObject', 'TypeName'): 'TraceEvent looks the type up by TypeID',
}
# Values TraceEvent transforms: (event, field) -> reason
TRANSFORMED_IN = {
    ('GC/PerHeapHistory', 'CompactMechanisms'):
        'TraceEvent turns the mechanism bit mask into an enum index',
    ('GC/PerHeapHistory', 'ExpandMechanisms'):
        'TraceEvent turns the mechanism bit mask into an enum index',
}
# TraceEvent's id for a GC dynamic event -> the stream's (GC/DynamicEvent)
DYNAMIC_IDS = {65524: 39}
# The processor of events a thread writes for another (SampleProfiler's
# samples): the header gives the writer's; TraceEvent reports 0.
KNOWN_CPU = {"Microsoft-DotNETCore-SampleProfiler"}


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
    # a signed view of unsigned bits (a manifest UInt32 TraceEvent types
    # as int: GC/SuspendEEStart Count -1), either width
    return na == nb or (na - nb) % (1 << 64) == 0 or \
        (na - nb) % (1 << 32) == 0 and (na < 0 or nb < 0)


def key(e, te):
    if te:
        return (e['ts'], e['tid'], e['p'], DYNAMIC_IDS.get(e['id'], e['id']))
    return (e['ts'], e['thread'], e['provider'], e['id'])


def main():
    args = sys.argv[1:]
    order = '--order' in args
    args = [a for a in args if a not in ('--order', '--verbose', '--netperf')]
    maxrep = 20
    if '--max-report' in args:
        i = args.index('--max-report')
        maxrep = int(args[i + 1])
        del args[i:i + 2]
    te_path, rt_path = args
    netperf = '--netperf' in sys.argv
    te = [json.loads(l) for l in open(te_path, encoding='utf-8')]
    rt = [json.loads(l) for l in open(rt_path, encoding='utf-8')]
    diffs = Counter()
    examples = defaultdict(list)
    excused = Counter()
    only_rt = Counter()  # manifest fields TraceEvent does not show

    def diff(kind, e, msg):
        k = (kind, e['p'], e['n'])
        diffs[k] += 1
        if len(examples[k]) < 2:
            examples[k].append(msg)

    pairs = []
    unpaired_te = []
    leftover = []
    if order:
        # the same sequence of timestamps; within one timestamp the order
        # may differ (TraceEvent breaks ties with an unstable sort, rtdiag
        # keeps stream order), so events pair by key inside each run
        if len(te) != len(rt):
            print(f"event counts differ: TraceEvent {len(te)}, rtdiag {len(rt)}")
        i = 0
        n = min(len(te), len(rt))
        while i < n:
            if te[i]['ts'] != rt[i]['ts']:
                print(f"order differs at event {i}: TraceEvent time {te[i]['ts']}, "
                      f"rtdiag {rt[i]['ts']}")
                return 1
            j = i
            while j < n and te[j]['ts'] == te[i]['ts']:
                j += 1
            q = defaultdict(deque)
            for b in rt[i:j]:
                q[key(b, False)].append(b)
            for a in te[i:j]:
                d = q.get(key(a, True))
                if d:
                    pairs.append((a, d.popleft()))
                else:
                    unpaired_te.append(a)
            leftover += [b for d in q.values() for b in d]
            i = j
        unpaired_te += te[n:]
        unpaired_rt = leftover + rt[n:]
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
        te_unknown = n.startswith('EventID(') and not b['event'].startswith('EventID(')
        if te_unknown:
            # TraceEvent has no template for it; rtdiag's is the manifest's
            excused[('TraceEvent has no template', p, b['event'])] += 1
            continue
        if b['event'] != n:
            diff('name', a, f"TraceEvent {n!r}, rtdiag {b['event']!r}")
        if b.get('version') != a['v']:
            diff('version', a, f"TraceEvent {a['v']}, rtdiag {b.get('version')}")
        if a['id'] in DYNAMIC_IDS:
            pass  # TraceEvent's made-up event: no opcode of its own
        elif b.get('opcode') != a['op']:
            if (p, n) in KNOWN_OPCODE:
                excused[('opcode', p, n)] += 1
            else:
                diff('opcode', a, f"TraceEvent {a['op']}, rtdiag {b.get('opcode')}")
        if b.get('cpu', a['cpu']) != a['cpu']:
            if p in KNOWN_CPU and a['cpu'] == 0:
                excused[('processor of an event written for another thread', p)] += 1
            else:
                diff('cpu', a, f"TraceEvent {a['cpu']}, rtdiag {b.get('cpu')}")
        for k1, k2 in (('act', 'activity'), ('rel', 'related_activity')):
            if k1 == 'rel' and netperf and a.get(k1) and not b.get(k2):
                # .NET Core 2.x netperf: TraceEvent returns header bytes
                excused[('related activity of a netperf event', p)] += 1
                continue
            if not same(a.get(k1, ''), b.get(k2, '')):
                diff(k2, a, f"TraceEvent {a.get(k1)}, rtdiag {b.get(k2)}")
        fa, fb = a['f'], b.get('fields', {})
        names_b = b.get('names', {})
        for name, va in fa.items():
            kk = (p, n, name)
            if kk in KNOWN or (p, n, '*') in KNOWN:
                excused[kk] += 1
                continue
            ours = RENAMED.get((n, name), name)
            m = re.fullmatch(r'(\w+)_(\d+)', name)
            if ours not in fb and m and isinstance(fb.get('Values'), list):
                # TraceEvent shows a bulk event's elements as Field_N
                vals = fb['Values']
                ix = int(m.group(2))
                el = RENAMED.get((n, m.group(1)), m.group(1))
                if ix < len(vals) and el in vals[ix]:
                    if not same(va, vals[ix][el]):
                        diff('value', a, f"{name}: TraceEvent {va!r}, rtdiag "
                             f"{vals[ix][el]!r}")
                    continue
            if (n, name) in TRANSFORMED_IN:
                excused[('transformed by TraceEvent', n, name)] += 1
                continue
            if ours not in fb and (n, name) in COMPUTED_IN:
                excused[('computed by TraceEvent', n, name)] += 1
                continue
            if ours not in fb and name in COMPUTED:
                excused[('computed by TraceEvent', name)] += 1
                continue
            if ours not in fb:
                if va in (0, None, '', False) and 'unparsed' not in b:
                    # a field newer than the event's version: TraceEvent
                    # shows its type's default
                    excused[('newer than the event version', n, name)] += 1
                else:
                    diff('field missing', a, f"{name}={va!r}")
                continue
            vb = fb[ours]
            if name in TRANSFORMED and num(vb) is not None and \
                    not isinstance(num(vb), float):
                vb = TRANSFORMED[name][0](num(vb))
            if not same(va, vb):
                if name == '' and isinstance(vb, dict) and \
                        any(isinstance(x, bool) for x in vb.values()):
                    # a TraceLogging event's unnamed struct: its bools are
                    # one byte (Boolean8); TraceEvent reads four, and so
                    # every field after the first bool
                    excused[('TraceLogging bools TraceEvent reads as 4 bytes',
                             p, n)] += 1
                    continue
                diff('value', a, f"{name}: TraceEvent {va!r}, rtdiag {fb[ours]!r}")
            en = a.get('e', {}).get(name)
            nb = names_b.get(ours)
            if en is not None and en.strip('-').isdigit():
                pass  # TraceEvent has no name for this value
            elif en is not None and nb is not None and \
                    sorted(x.strip() for x in en.split(',')) != \
                    sorted(x.strip() for x in nb.split('|')) and \
                    name not in TRANSFORMED:
                diff('enum name', a, f"{name}: TraceEvent {en!r}, rtdiag {nb!r}")
        for name in fb:
            if name not in fa and name != 'payload' and fa:
                only_rt[(p, n, name)] += 1
        if 'error' in b:
            diff('rtdiag error', a, b['error'])

    print(f"{len(pairs)} events paired; TraceEvent {len(te)}, rtdiag {len(rt)}")
    for k, c in sorted(excused.items()):
        print(f"  excused {c:8d}  {k}")
    if only_rt and '--verbose' in sys.argv:
        for k, c in sorted(only_rt.items()):
            print(f"  field only rtdiag shows {c:8d}  {k}")
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
