#!/usr/bin/env python3
# tlcheck.py - read a timeline as a viewer would and check its structure.
#
#   tlcheck.py perfetto DECODED.txt   (the text of protoc --decode=perfetto.protos.Trace)
#   tlcheck.py json FILE.json         (Chrome Trace Event JSON)
#   tlcheck.py perfetto-stacks DECODED.txt | json-stacks FILE.json
#                                     (after the same checks: the CPU samples'
#                                     stacks as folded lines, root first, each
#                                     with its count of samples)
#
# Checks, in the order a viewer shows events (sorted by time, stable), that
# every slice end closes an open slice of its track, that slices nest (an
# inner slice ends no later than its outer one), and that interned names resolve
# (Perfetto: per sequence, across SEQ_INCREMENTAL_STATE_CLEARED). Perfetto
# timestamps are read as trace processor does: the sequence's default clock
# (TracePacketDefaults), incremental clocks as deltas from a ClockSnapshot. Prints one
# JSON object: tracks (uuid or pid/tid -> name), slices per track name,
# event names, counters, instants, samples, flows; exits 1 on a violation.
import json, re, sys
from collections import Counter, defaultdict

STACKS = Counter()  # root;...;leaf -> samples, for the *-stacks modes

def fail(msg):
    print("tlcheck: " + msg, file=sys.stderr)
    sys.exit(1)

def parse_textproto(text):
    """Minimal protobuf text-format parser: returns nested dicts of lists."""
    tokens = re.findall(r'"(?:[^"\\]|\\.)*"|[{}]|[A-Za-z_][A-Za-z_0-9]*:?|-?[0-9][0-9.eE+-]*|\S', text)
    pos = 0
    def value(tok):
        if tok.startswith('"'):
            return bytes(tok[1:-1], 'utf-8').decode('unicode_escape').encode('latin-1').decode('utf-8', 'replace')
        try:
            return int(tok)
        except ValueError:
            try:
                return float(tok)
            except ValueError:
                return tok
    def msg():
        nonlocal pos
        out = defaultdict(list)
        while pos < len(tokens):
            t = tokens[pos]
            if t == '}':
                pos += 1
                return out
            pos += 1
            if t.endswith(':'):
                out[t[:-1]].append(value(tokens[pos])); pos += 1
            else:
                assert tokens[pos] == '{', (t, tokens[pos])
                pos += 1
                out[t].append(msg())
        return out
    return msg()

def check_perfetto(path):
    root = parse_textproto(open(path, encoding='utf-8', errors='replace').read())
    tracks, kinds = {}, {}
    names, annos, funcs, stacks, frames, strs = {}, {}, {}, {}, {}, {}
    open_ = defaultdict(list)
    last = defaultdict(lambda: -1)
    slices, instants, counters, samples, flows_out, flows_in = Counter(), Counter(), Counter(), 0, set(), set()
    evnames = set()
    # first pass: interning is in stream order; events are then checked in
    # the order a viewer shows them, sorted by time (stable)
    evs = []
    cats = {}
    # clocks, as trace processor reads them (perfetto_trace.proto's
    # ClockSnapshot and TracePacketDefaults): a sequence's default clock;
    # an incremental clock's timestamps are deltas from its last value,
    # which a ClockSnapshot resets; its snapshot ties it to BOOTTIME
    default_clock, inc, to_boot = 6, {}, {}
    for p in root.get('packet', []):
        flags = p.get('sequence_flags', [0])[0]
        if flags & 1:
            names.clear(); annos.clear(); funcs.clear(); stacks.clear(); frames.clear(); strs.clear(); cats.clear()
            default_clock = 6
        for d in p.get('trace_packet_defaults', []):
            if not flags & 1: fail("trace_packet_defaults outside a SEQ_INCREMENTAL_STATE_CLEARED packet")
            default_clock = d.get('timestamp_clock_id', [6])[0]
        for cs in p.get('clock_snapshot', []):
            boot = [c['timestamp'][0] if 'timestamp' in c else 0 for c in cs.get('clocks', []) if c['clock_id'][0] == 6]
            for c in cs.get('clocks', []):
                cid, t = c['clock_id'][0], c.get('timestamp', [0])[0]
                if c.get('is_incremental', [False])[0] in (True, 'true'):
                    if not boot: fail("incremental clock %d not tied to BOOTTIME" % cid)
                    inc[cid] = t; to_boot[cid] = boot[0] - t
        if 'timestamp' in p:
            cid = p.get('timestamp_clock_id', [default_clock])[0]
            if cid in inc:
                inc[cid] += p['timestamp'][0]
                p['timestamp'] = [inc[cid] + to_boot[cid]]
            elif cid != 6:
                fail("timestamp on clock %d, which no snapshot defines" % cid)
        for idata in p.get('interned_data', []):
            for e in idata.get('event_categories', []): cats[e['iid'][0]] = e['name'][0]
            for e in idata.get('event_names', []): names[e['iid'][0]] = e['name'][0]
            for e in idata.get('debug_annotation_names', []): annos[e['iid'][0]] = e['name'][0]
            for e in idata.get('function_names', []): funcs[e['iid'][0]] = e['str'][0]
            for e in idata.get('frames', []): frames[e['iid'][0]] = e['function_name_id'][0]
            for e in idata.get('callstacks', []): stacks[e['iid'][0]] = e.get('frame_ids', [])
            for e in idata.get('debug_annotation_string_values', []): strs[e['iid'][0]] = e['str'][0]
        for td in p.get('track_descriptor', []):
            u = td['uuid'][0]
            if 'thread' in td:
                th = td['thread'][0]; tracks[u] = th.get('thread_name', [''])[0]; kinds[u] = 'thread'
            elif 'process' in td:
                pr = td['process'][0]; tracks[u] = pr.get('process_name', [''])[0]; kinds[u] = 'process'
            else:
                tracks[u] = td.get('name', [''])[0]; kinds[u] = 'counter' if 'counter' in td else 'named'
            if 'parent_uuid' in td and td['parent_uuid'][0] not in tracks:
                fail("track %d names unknown parent %d" % (u, td['parent_uuid'][0]))
        for te in p.get('track_event', []):
            ts = p['timestamp'][0]
            u = te['track_uuid'][0]
            if u not in tracks: fail("event on unknown track %d" % u)
            name = None
            if 'name_iid' in te:
                if te['name_iid'][0] not in names: fail("name iid %d not interned" % te['name_iid'][0])
                name = names[te['name_iid'][0]]
            for c in te.get('category_iids', []):
                if c not in cats: fail("category iid %d not interned" % c)
            for a in te.get('debug_annotations', []):
                if a['name_iid'][0] not in annos: fail("annotation iid not interned")
                if 'string_value_iid' in a and a['string_value_iid'][0] not in strs: fail("annotation string iid not interned")
            if 'callstack_iid' in te:
                cs = te['callstack_iid'][0]
                if cs not in stacks: fail("callstack iid %d not interned" % cs)
                for fr in stacks[cs]:
                    if fr not in frames or frames[fr] not in funcs: fail("frame %d not interned" % fr)
            evs.append((ts, len(evs), u, te, name))
    evs.sort(key=lambda e: (e[0], e[1]))
    for ts, _, u, te, name in evs:
            typ = te['type'][0]
            for f in te.get('flow_ids', []): flows_out.add(f)
            for f in te.get('terminating_flow_ids', []): flows_in.add(f)
            if typ == 'TYPE_SLICE_BEGIN':
                open_[u].append((ts, name)); slices[tracks[u]] += 1; evnames.add(name)
            elif typ == 'TYPE_SLICE_END':
                if not open_[u]: fail("track %s: end at %d with no open slice" % (tracks[u], ts))
                b, n = open_[u].pop()
                if ts < b: fail("track %s: slice %s ends at %d before it begins at %d" % (tracks[u], n, ts, b))
            elif typ == 'TYPE_INSTANT':
                if 'callstack_iid' in te:
                    samples += 1
                    STACKS[';'.join(funcs[frames[f]] for f in stacks[te['callstack_iid'][0]])] += 1
                else:
                    instants[name] += 1; evnames.add(name)
            elif typ == 'TYPE_COUNTER':
                if kinds[u] != 'counter': fail("counter value on non-counter track %s" % tracks[u])
                counters[tracks[u]] += 1
    # nesting: an inner slice must end before its outer one; with the stack
    # discipline above an end always closes the innermost, so check
    # that no end is earlier than the inner's begin (done) and nothing stays open
    for u, st in open_.items():
        if st: fail("track %s: %d slices never end" % (tracks[u], len(st)))
    return {'tracks': {str(k): v for k, v in tracks.items()}, 'kinds': kinds and {str(k): v for k, v in kinds.items()},
            'slices': dict(slices), 'instants': dict(instants), 'counters': dict(counters),
            'samples': samples, 'flows': len(flows_out & flows_in), 'names': sorted(n for n in evnames if n)}

def check_json(path):
    d = json.load(open(path, encoding='utf-8'))
    evs = d['traceEvents'] if isinstance(d, dict) else d
    tnames, pnames = {}, {}
    open_ = defaultdict(list)
    slices, instants, counters, samples = Counter(), Counter(), Counter(), 0
    flows_s, flows_f = set(), set()
    evnames = set()
    meta = [e for e in evs if e.get('ph') == 'M']
    rest = sorted((e for e in evs if e.get('ph') != 'M'), key=lambda e: float(e.get('ts', 0)))
    for e in meta + rest:
        ph = e.get('ph'); key = (e.get('pid'), e.get('tid'))
        if ph == 'M':
            if e['name'] == 'thread_name': tnames[key] = e['args']['name']
            if e['name'] == 'process_name': pnames[e['pid']] = e['args']['name']
            continue
        tn = tnames.get(key, str(key))
        if ph == 'B':
            open_[key].append((e['ts'], e['name'])); slices[tn] += 1; evnames.add(e['name'])
        elif ph == 'E':
            if not open_[key]: fail("thread %s: E at %s with no open slice" % (tn, e['ts']))
            b, n = open_[key].pop()
            if e['ts'] < b: fail("thread %s: %s ends before it begins" % (tn, n))
        elif ph == 'X':
            if e['dur'] < 0: fail("negative dur")
            slices[tn] += 1; evnames.add(e['name'])
        elif ph == 'i':
            if e.get('cat') == 'sample':
                samples += 1
                STACKS[';'.join(reversed(e.get('args', {}).get('stack', [])))] += 1
            else: instants[e['name']] += 1; evnames.add(e['name'])
        elif ph == 'C':
            counters[e['name']] += 1
        elif ph == 's': flows_s.add(e['id'])
        elif ph == 'f': flows_f.add(e['id'])
        else: fail("unknown ph %r" % ph)
    for k, st in open_.items():
        if st: fail("thread %s: %d slices never end" % (k, len(st)))
    return {'threads': {"%s/%s" % k: v for k, v in tnames.items()}, 'processes': pnames,
            'slices': dict(slices), 'instants': dict(instants), 'counters': dict(counters),
            'samples': samples, 'flows': len(flows_s & flows_f), 'names': sorted(evnames)}

if __name__ == '__main__':
    kind, path = sys.argv[1], sys.argv[2]
    out = check_perfetto(path) if kind.startswith('perfetto') else check_json(path)
    if kind.endswith('-stacks'):
        for k in sorted(STACKS):
            print("%s %d" % (k, STACKS[k]))
    else:
        print(json.dumps(out, sort_keys=True))
