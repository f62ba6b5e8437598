#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen_schema.py - the runtime's event schemas: manifest -> clr_events.txt
-> schema_table.c.

The runtime's own providers write metadata with no event name and no
field list, so the decoder carries their schemas. They come from the
runtime's manifest, dotnet/runtime src/coreclr/vm/ClrEtwAll.man (MIT):
every event's id, version, opcode, task and template (fields, types,
counts, lengths, value and bit maps). The manifest itself is not kept in
this repository; clr_events.txt is the table generated from it, and
clr_events_extra.txt adds, by hand, the events the manifest given lacks
(events of newer runtimes than that manifest, each line saying where it
was checked). Display names follow TraceEvent ("GC/Start",
"Method/LoadVerbose"): traceevent_names.tsv lists TraceEvent 4.0.0's own
(provider, id, opcode, task, opcode name, event name) as its templates
give them (`te-dump --templates`, tests/traceevent); events TraceEvent
does not know are named from the manifest's task and opcode the same way.

    gen_schema.py                       clr_events.txt -> schema_table.c, clr_ids.h
    gen_schema.py --manifest M.man      M.man (+ extra, names) -> clr_events.txt,
                                        then schema_table.c
    gen_schema.py --manifest M.man --check
                                        exit 1 when clr_events.txt is not what
                                        M.man generates (tests call this)

clr_events.txt syntax, one item a line:
    provider KEY = Provider-Name
    map KEY NAME value|bits V=Name|V=Name...
    KEY ID VERSION OPCODE Task/Opcode: field field ...
a field is NAME:TYPE[@MAP], TYPE one of
    u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool guid str utf8z ptr hex32 hex64
    counted(COUNTFIELD){field field ...}   struct elements counted by a sibling
    countedv(COUNTFIELD):TYPE              scalar elements counted by a sibling
    binary(COUNTFIELD)                     bytes counted by a sibling
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = {
    'u8': 'U8', 'i8': 'I8', 'u16': 'U16', 'i16': 'I16', 'u32': 'U32',
    'i32': 'I32', 'u64': 'U64', 'i64': 'I64', 'f32': 'F32', 'f64': 'F64',
    'bool': 'BOOL32', 'guid': 'GUID', 'str': 'STRING', 'utf8z': 'UTF8Z',
    'ptr': 'POINTER', 'hex32': 'HEX32', 'hex64': 'HEX64',
}
PROVIDERS = [
    ('R', 'Microsoft-Windows-DotNETRuntime'),
    ('D', 'Microsoft-Windows-DotNETRuntimeRundown'),
    ('P', 'Microsoft-Windows-DotNETRuntimePrivate'),
    ('T', 'Microsoft-Windows-DotNETRuntimeStress'),
    ('S', 'Microsoft-DotNETCore-SampleProfiler'),
]
KEY_OF = {p: k for k, p in PROVIDERS}
# winmeta.xml's standard opcodes
WIN_OPCODES = {
    'win:Info': (0, ''), 'win:Start': (1, 'Start'), 'win:Stop': (2, 'Stop'),
    'win:DC_Start': (3, 'DCStart'), 'win:DC_Stop': (4, 'DCStop'),
    'win:Extension': (5, 'Extension'), 'win:Reply': (6, 'Reply'),
    'win:Resume': (7, 'Resume'), 'win:Suspend': (8, 'Suspend'),
    'win:Send': (9, 'Send'), 'win:Receive': (240, 'Receive'),
}


# ---- the manifest -------------------------------------------------------

def strip_ns(root):
    for el in root.iter():
        if '}' in el.tag:
            el.tag = el.tag.split('}', 1)[1]


def field_type(d):
    t = d.get('inType')
    out = d.get('outType', '')
    if t == 'win:UInt32' and out == 'win:HexInt32':
        return 'hex32'
    if t == 'win:UInt64' and out == 'win:HexInt64':
        return 'hex64'
    return {
        'win:UInt8': 'u8', 'win:Int8': 'i8', 'win:UInt16': 'u16',
        'win:Int16': 'i16', 'win:UInt32': 'u32', 'win:Int32': 'i32',
        'win:UInt64': 'u64', 'win:Int64': 'i64', 'win:Float': 'f32',
        'win:Double': 'f64', 'win:Boolean': 'bool', 'win:GUID': 'guid',
        'win:UnicodeString': 'str', 'win:AnsiString': 'utf8z',
        'win:Pointer': 'ptr', 'win:HexInt32': 'hex32',
        'win:HexInt64': 'hex64',
    }[t]


def template_fields(tmpl, where):
    """The fields of a <template> or <struct> in clr_events.txt syntax."""
    out = []
    names = [c.get('name') for c in tmpl if c.tag in ('data', 'struct')]
    for c in tmpl:
        if c.tag not in ('data', 'struct'):
            continue
        name = c.get('name')
        count = c.get('count')
        if c.tag == 'struct':
            sub = ' '.join(template_fields(c, where))
            out.append(f'{name}:counted({count}){{{sub}}}')
            continue
        if c.get('inType') == 'win:Binary':
            out.append(f'{name}:binary({c.get("length")})')
            continue
        ty = field_type(c)
        if c.get('map'):
            ty += '@' + c.get('map')
        if count and not count.isdigit():
            out.append(f'{name}:countedv({count}):{ty}')
        elif count and count != '1':
            # ClrStackWalk's Stack says count="2"; FrameCount counts it
            if 'FrameCount' not in names:
                sys.exit(f'{where}: fixed count {count} of {name}')
            out.append(f'{name}:countedv(FrameCount):{ty}')
        else:
            out.append(f'{name}:{ty}')
    return out


def read_manifest(path):
    root = ET.parse(path).getroot()
    strip_ns(root)
    strings = {s.get('id'): s.get('value') for s in root.iter('string')}

    def msg(m):
        mm = re.fullmatch(r'\$\(string\.(.+)\)', m or '')
        return strings.get(mm.group(1), m) if mm else m

    provs = {}
    for prov in root.iter('provider'):
        pname = prov.get('name')
        tasks, opcodes = {}, {}
        for task in prov.iter('task'):
            tasks[task.get('name')] = task
            for op in task.iter('opcode'):
                opcodes[(task.get('name'), op.get('name'))] = int(op.get('value'), 0)
        gl_ops = {}
        for op in prov.findall('./opcodes/opcode'):
            gl_ops[op.get('name')] = int(op.get('value'), 0)
        maps = {}
        for kind, tag in (('value', 'valueMap'), ('bits', 'bitMap')):
            for m in prov.iter(tag):
                vals = [(int(x.get('value'), 0), msg(x.get('message')).strip())
                        for x in m.iter('map')]
                maps[m.get('name')] = (kind, vals)
        tmpls = {t.get('tid'): t for t in prov.iter('template')}
        events = []
        for ev in prov.iter('event'):
            where = f'{pname} event {ev.get("symbol")}'
            task = ev.get('task', '')
            op = ev.get('opcode', 'win:Info')
            if op in WIN_OPCODES:
                opv, opname = WIN_OPCODES[op]
            elif (task, op) in opcodes:
                opv, opname = opcodes[(task, op)], op
            elif op in gl_ops:
                opv, opname = gl_ops[op], op
            else:
                sys.exit(f'{where}: unknown opcode {op}')
            t = ev.get('template')
            fields = template_fields(tmpls[t], where) if t else []
            events.append({
                'id': int(ev.get('value')), 'version': int(ev.get('version', 0)),
                'opcode': opv, 'task': task, 'opname': opname,
                'symbol': ev.get('symbol'), 'fields': fields,
            })
        provs[pname] = {'events': events, 'maps': maps}
    return provs


# ---- TraceEvent's names -------------------------------------------------

def read_names(path):
    """(provider, id) -> (opcode, task, opcode name, event name)."""
    names = {}
    for line in open(path, encoding='utf-8'):
        if line.startswith('#') or not line.strip():
            continue
        p, i, op, task, opn, name = line.rstrip('\n').split('\t')[:6]
        names.setdefault((p, int(i)), (int(op), task, opn, name))
    return names


def te_task_aliases(provs, names):
    """Manifest task name -> TraceEvent's, learned from events both know."""
    alias = {}
    for pname, pv in provs.items():
        for e in pv['events']:
            n = names.get((pname, e['id']))
            if n and e['task']:
                alias.setdefault((pname, e['task']), n[1])
    return alias


def display_name(pname, e, names, alias):
    n = names.get((pname, e['id']))
    if n:
        return n[3]
    task = alias.get((pname, e['task']), e['task']) or e['symbol']
    opn = e['opname']
    if not opn:
        return task
    # manifests prefix opcode names with their task's (GCRestartEEEnd)
    for pre in ('GC', 'CLR', 'Method', 'Module'):
        if opn.startswith(pre) and len(opn) > len(pre) and \
                task.lower().startswith(pre.lower()):
            opn = opn[len(pre):]
    return f'{task}/{opn}'


def generate(manifest, names_path, extra_path):
    provs = read_manifest(manifest)
    names = read_names(names_path)
    alias = te_task_aliases(provs, names)
    lines = ['# clr_events.txt - GENERATED by gen_schema.py from the runtime\'s',
             '# manifest (ClrEtwAll.man), clr_events_extra.txt and',
             '# traceevent_names.tsv; do not edit (see gen_schema.py).', '']
    for k, p in PROVIDERS:
        lines.append(f'provider {k} = {p}')
    lines.append('')
    used_maps = set()
    evlines = []
    seen = set()
    fields_of = {}
    for k, pname in PROVIDERS:
        pv = provs.get(pname)
        if not pv:
            continue
        for e in sorted(pv['events'], key=lambda e: (e['id'], e['version'])):
            name = display_name(pname, e, names, alias)
            for f in e['fields']:
                for m in re.findall(r'@(\w+)', f):
                    used_maps.add((k, m))
            seen.add((pname, e['id'], e['version']))
            fields_of[(pname, e['id'], e['version'])] = ' '.join(e['fields'])
            evlines.append(f'{k} {e["id"]} {e["version"]} {e["opcode"]} '
                           f'{name}: {" ".join(e["fields"])}'.rstrip())
    extra = []
    for ln, line in enumerate(open(extra_path, encoding='utf-8'), 1):
        body = line.split('#', 1)[0].strip()
        if not body:
            continue
        if body.startswith('map '):
            extra.append(body)
            continue
        parts = body.split(':', 1)[0].split()
        pname = dict(PROVIDERS)[parts[0]]
        if (pname, int(parts[1]), int(parts[2])) in seen:
            sys.exit(f'clr_events_extra.txt:{ln}: {parts[0]} {parts[1]} '
                     f'version {parts[2]} is in the manifest already')
        head, _, fl = body.partition(':')
        fl = fl.strip()
        if fl.startswith('+'):
            # '+' : the fields of the next lower version, then these
            below = [(v, f) for (pp, i, v), f in fields_of.items()
                     if pp == pname and i == int(parts[1]) and v < int(parts[2])]
            if not below:
                sys.exit(f'clr_events_extra.txt:{ln}: no lower version to extend')
            fl = (max(below)[1] + ' ' + fl[1:].strip()).strip()
            body = f'{head}: {fl}'
        fields_of[(pname, int(parts[1]), int(parts[2]))] = fl
        for m in re.findall(r'@(\w+)', body):
            used_maps.add((parts[0], m))
        evlines.append(body)
    maplines = []
    extra_maps = {tuple(l.split()[1:3]) for l in extra if l.startswith('map ')}
    for k, pname in PROVIDERS:
        pv = provs.get(pname)
        if not pv:
            continue
        for mname, (kind, vals) in sorted(pv['maps'].items()):
            if (k, mname) not in used_maps or (k, mname) in extra_maps:
                continue
            vs = '|'.join(f'{v:#x}={n}' for v, n in vals)
            maplines.append(f'map {k} {mname} {kind} {vs}')
    maplines += [l for l in extra if l.startswith('map ')]
    return '\n'.join(lines + maplines + [''] + evlines) + '\n'


# ---- clr_events.txt -> schema_table.c -----------------------------------

def tokenize(s):
    """Split a field list at spaces outside braces."""
    out, depth, cur = [], 0, ''
    for ch in s:
        if ch == '{':
            depth += 1
        elif ch == '}':
            depth -= 1
        if ch.isspace() and depth == 0:
            if cur:
                out.append(cur)
            cur = ''
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def cstr(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


class Gen:
    def __init__(self, maps):
        self.arrays = []  # (cname, ctype, [initialisers])
        self.seen = {}
        self.n = 0
        self.maps = maps      # (key, name) -> index in the map table
        self.key = None

    def mapref(self, spec, where):
        if not spec:
            return 'NULL'
        ix = self.maps.get((self.key, spec))
        if ix is None:
            sys.exit(f'{where}: no map {spec}')
        return f'&nt_map_table[{ix}]'

    def fields(self, toks, where):
        names = [t.split(':', 1)[0] for t in toks]
        inits = []
        for t in toks:
            name, ty = t.split(':', 1)
            m = re.fullmatch(r'counted\((\w+)\)\{(.*)\}', ty)
            mv = re.fullmatch(r'countedv\((\w+)\):(\w+)(?:@(\w+))?', ty)
            mb = re.fullmatch(r'binary\((\w+)\)', ty)
            if m:
                cf = names.index(m.group(1))
                sub, nsub = self.fields(tokenize(m.group(2)), where)
                elem = self.add([f'{{"", RTD_NT_T_OBJECT, {nsub}, 0, -1, {sub}, NULL}}'])
                inits.append(f'{{{cstr(name)}, RTD_NT_T_COUNTED, 1, 0, {cf}, {elem}, NULL}}')
            elif mv:
                cf = names.index(mv.group(1))
                mp = self.mapref(mv.group(3), where)
                elem = self.add([f'{{"", RTD_NT_T_{TYPES[mv.group(2)]}, 0, 0, -1, NULL, {mp}}}'])
                inits.append(f'{{{cstr(name)}, RTD_NT_T_COUNTED, 1, 0, {cf}, {elem}, NULL}}')
            elif mb:
                cf = names.index(mb.group(1))
                inits.append(f'{{{cstr(name)}, RTD_NT_T_BINARY, 0, 0, {cf}, NULL, NULL}}')
            else:
                base, _, mp = ty.partition('@')
                if base not in TYPES:
                    sys.exit(f'{where}: unknown type {ty}')
                inits.append(f'{{{cstr(name)}, RTD_NT_T_{TYPES[base]}, 0, 0, -1, NULL, '
                             f'{self.mapref(mp, where)}}}')
        return (self.add(inits) if inits else 'NULL', len(inits))

    def add(self, inits):
        # identical layouts (Load/Unload, DCStart/DCStop) share one array
        key = tuple(inits)
        if key in self.seen:
            return self.seen[key]
        cname = f'f{self.n}'
        self.seen[key] = cname
        self.n += 1
        self.arrays.append((cname, inits))
        return cname


def parse_table(text):
    provs, events, maps = {}, [], []
    for ln, line in enumerate(text.splitlines(), 1):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        where = f'clr_events.txt:{ln}'
        m = re.fullmatch(r'provider (\w+) = (\S+)', line)
        if m:
            provs[m.group(1)] = m.group(2)
            continue
        m = re.fullmatch(r'map (\w+) (\w+) (value|bits) (.*)', line)
        if m:
            vals = []
            for item in m.group(4).split('|'):
                v, _, n = item.partition('=')
                vals.append((int(v, 0), n))
            maps.append((m.group(1), m.group(2), m.group(3), vals))
            continue
        head, _, body = line.partition(':')
        parts = head.split()
        if len(parts) != 5:
            sys.exit(f'{where}: want KEY ID VERSION OPCODE NAME: fields')
        events.append((parts, body, where))
    return provs, events, maps


def write_c(text):
    provs, events, maps = parse_table(text)
    mindex = {(k, n): i for i, (k, n, _, _) in enumerate(maps)}
    g = Gen(mindex)
    rows = []
    for parts, body, where in events:
        key, eid, ver, op, name = parts
        g.key = key
        fa, nf = g.fields(tokenize(body), where)
        rows.append((provs[key], int(eid), int(ver), int(op), name, fa, nf))
    rows.sort(key=lambda e: (e[0], e[1], e[2]))
    out = ['/* SPDX-License-Identifier: MIT */',
           '/* schema_table.c - GENERATED by gen_schema.py from clr_events.txt;',
           ' * do not edit. */',
           '#include "nettrace/nt.h"', '']
    out.append('static const struct rtd_nettrace_enum mv[] = {')
    starts = []
    n = 0
    for k, name, kind, vals in maps:
        starts.append(n)
        for v, s in vals:
            out.append(f'\t{{{v:#x}u, {cstr(s)}}},')
            n += 1
    if n == 0:
        out.append('\t{0, ""},')
    out.append('};')
    out.append('')
    out.append('const struct rtd_nettrace_map nt_map_table[] = {')
    for (k, name, kind, vals), st in zip(maps, starts):
        out.append(f'\t{{{cstr(name)}, {"true" if kind == "bits" else "false"}, '
                   f'{len(vals)}, &mv[{st}]}},')
    out.append('};')
    out.append('')
    for cname, inits in g.arrays:
        out.append(f'static const struct rtd_nettrace_field {cname}[] = {{')
        for i in inits:
            out.append(f'\t{i},')
        out.append('};')
    out.append('')
    out.append('const struct nt_schema nt_schema_table[] = {')
    for p, eid, ver, op, name, fa, nf in rows:
        out.append(f'\t{{{cstr(p)}, {eid}, {ver}, {op}, {cstr(name)}, {nf}, {fa}}},')
    out.append('};')
    out.append('const unsigned nt_schema_count = '
               'sizeof(nt_schema_table) / sizeof(nt_schema_table[0]);')
    return '\n'.join(out) + '\n', len(rows)


ID_PREFIX = {'R': 'CLR_', 'D': 'CLR_RUNDOWN_', 'P': 'CLR_PRIVATE_',
             'T': 'CLR_STRESS_', 'S': 'CLR_SAMPLE_PROFILER_'}


def id_name(key, name):
    """GC/BulkRootStaticVar -> CLR_GC_BULK_ROOT_STATIC_VAR"""
    words = []
    for part in re.split(r'[/_\W]+', name):
        # split at a word's capital, keeping acronyms and digits whole:
        # DCStartVerboseV2 -> DC Start Verbose V2, R2RGetEntryPoint -> R2R Get...
        words += [w for w in re.split(r'(?<=[a-z])(?=[A-Z])|(?<=[A-Z0-9])(?=[A-Z][a-z])', part) if w]
    return ID_PREFIX.get(key, 'CLR_' + key + '_') + '_'.join(w.upper() for w in words)


def write_ids(text):
    """the event ids as an enum, one name per (provider, id): no code names
    an event by its bare number"""
    provs, events, _ = parse_table(text)
    seen = {}
    for parts, _, _ in events:
        key, eid, _, _, name = parts
        seen.setdefault((key, int(eid)), name)
    names = {}
    for (key, eid), name in seen.items():
        names.setdefault(id_name(key, name), []).append((key, eid))
    rows = []
    for n, ids in names.items():
        for key, eid in ids:
            # two ids of one name (versions of a task renamed): both keep the id
            rows.append((key, eid, n if len(ids) == 1 else f'{n}_{eid}', seen[(key, eid)]))
    rows.sort(key=lambda r: (list(ID_PREFIX).index(r[0]) if r[0] in ID_PREFIX else 99, r[1]))
    out = ['/* SPDX-License-Identifier: MIT */',
           '/* clr_ids.h - GENERATED by gen_schema.py from clr_events.txt; do not',
           ' * edit. The .NET runtime providers\' event ids by their TraceEvent',
           ' * names: CLR_ (Microsoft-Windows-DotNETRuntime), CLR_RUNDOWN_,',
           ' * CLR_PRIVATE_, CLR_STRESS_, CLR_SAMPLE_PROFILER_. */',
           '#ifndef RTDIAG_NETTRACE_CLR_IDS_H',
           '#define RTDIAG_NETTRACE_CLR_IDS_H', '']
    prev = None
    for key, eid, n, disp in rows:
        if key != prev:
            if prev is not None:
                out.append('};')
                out.append('')
            out.append(f'/* {provs[key]} */')
            out.append('enum {')
            prev = key
        out.append(f'\t{n} = {eid}, /* {disp} */')
    if prev is not None:
        out.append('};')
    out.append('')
    out.append('#endif')
    return '\n'.join(out) + '\n'


def main():
    args = sys.argv[1:]
    manifest = None
    check = '--check' in args
    if '--manifest' in args:
        manifest = args[args.index('--manifest') + 1]
    table = os.path.join(HERE, 'clr_events.txt')
    if manifest:
        text = generate(manifest, os.path.join(HERE, 'traceevent_names.tsv'),
                        os.path.join(HERE, 'clr_events_extra.txt'))
        if check:
            old = open(table, encoding='utf-8').read()
            if old != text:
                import difflib
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(True), text.splitlines(True),
                    'clr_events.txt', 'from the manifest'))
                return 1
            print('clr_events.txt is what the manifest gives')
            return 0
        open(table, 'w', encoding='utf-8').write(text)
    text = open(table, encoding='utf-8').read()
    c, n = write_c(text)
    ids = write_ids(text)
    if check:
        old = open(os.path.join(HERE, 'schema_table.c'), encoding='utf-8').read()
        oldids = open(os.path.join(HERE, 'clr_ids.h'), encoding='utf-8').read()
        return 0 if old == c and oldids == ids else 1
    open(os.path.join(HERE, 'schema_table.c'), 'w', encoding='utf-8').write(c)
    open(os.path.join(HERE, 'clr_ids.h'), 'w', encoding='utf-8').write(ids)
    print(f'{n} events')
    return 0


if __name__ == '__main__':
    sys.exit(main())
