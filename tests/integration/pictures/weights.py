#!/usr/bin/env python3
# weights.py - the same profile read back from each format rtdiag writes,
# as a set of function-level stacks with their self weights (folded form),
# so they can be compared exactly.
#
#   weights.py folded FILE | speedscope FILE | svg FILE | pprof-raw FILE
#
# svg: stacks are rebuilt from the frames' positions (data-s, data-w, depth:
# a frame's parent is the frame one level up whose span holds it) and a
# frame's self weight is its width less its children's. pprof-raw: the text
# of `go tool pprof -raw` (samples with location ids; locations with their
# lines, inlined callees first), value of the sample type named by
# $PPROF_INDEX (default: the last). Prints "stack weight" lines, sorted.
import json, re, sys
from collections import defaultdict

def out(d):
    for k in sorted(d):
        if d[k]:
            print("%s %d" % (k, d[k]))

def folded(path):
    d = defaultdict(int)
    for line in open(path, encoding='utf-8', errors='replace'):
        line = line.rstrip('\n')
        if not line: continue
        stack, _, v = line.rpartition(' ')
        d[stack] += int(v)
    return d

def speedscope(path):
    j = json.load(open(path, encoding='utf-8'))
    names = [f['name'] for f in j['shared']['frames']]
    d = defaultdict(int)
    for p in j['profiles']:
        for s, w in zip(p['samples'], p['weights']):
            d[';'.join(names[i] for i in s)] += w
    return d

def svg(path):
    import html
    text = open(path, encoding='utf-8').read()
    fr = []
    for m in re.finditer(r'<g class="f" data-s="(\d+)" data-w="(\d+)" data-d="(\d+)"><title>([^\n]*)\n', text):
        fr.append((int(m.group(3)), int(m.group(1)), int(m.group(2)), html.unescape(m.group(4))))
    fr.sort()
    bydepth = defaultdict(list)
    for f in fr: bydepth[f[0]].append(f)
    path_of, kids = {}, defaultdict(int)
    for f in fr:
        dep, s, w, name = f
        if dep == 0:
            path_of[f] = None
            continue
        parent = None
        for p in bydepth[dep - 1]:
            if p[1] <= s and s + w <= p[1] + p[2]:
                parent = p; break
        if parent is None: sys.exit("svg: frame %s has no parent" % name)
        path_of[f] = name if path_of[parent] is None else path_of[parent] + ';' + name
        kids[parent] += w
    d = defaultdict(int)
    for f in fr:
        if f[0] == 0: continue
        d[path_of[f]] += f[2] - kids[f]
    return d

def pprof_raw(path):
    import os
    text = open(path, encoding='utf-8', errors='replace').read()
    samples = text.split('Samples:', 1)[1].split('Locations', 1)[0]
    locs_txt = text.split('Locations', 1)[1].split('Mappings', 1)[0]
    def fname(rest):
        # "SHORT FILE:LINE:COL s=START(FULL)" or "NAME FILE:LINE:COL s=START"
        m = re.match(r'(.*?) \S*:\d+(?::\d+)? s=\d+(?:\((.*)\))?$', rest)
        if not m: return rest
        return m.group(2) if m.group(2) is not None else m.group(1)
    locs = {}
    cur = None
    for line in locs_txt.splitlines():
        m = re.match(r'\s+(\d+): (?:0x[0-9a-f]+ )?(?:M=\d+ )?(.*)$', line)
        if m:
            cur = int(m.group(1)); locs[cur] = [fname(m.group(2))]
        elif cur is not None and line.strip():
            locs[cur].append(fname(line.strip()))
    idx = os.environ.get('PPROF_INDEX')
    d = defaultdict(int)
    lines = samples.strip().splitlines()[1:]
    for line in lines:
        m = re.match(r'\s*([\d ]+?):\s*([\d ]*)$', line.rstrip())
        if not m: continue
        vals = [int(x) for x in m.group(1).split()]
        v = vals[int(idx)] if idx is not None else vals[-1]
        frames = []
        for l in reversed([int(x) for x in m.group(2).split()]):
            frames += list(reversed(locs[l]))
        d[';'.join(frames)] += v
    return d

kind, path = sys.argv[1], sys.argv[2]
out({'folded': folded, 'speedscope': speedscope, 'svg': svg, 'pprof-raw': pprof_raw}[kind](path))
