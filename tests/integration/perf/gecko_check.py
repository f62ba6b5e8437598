#!/usr/bin/env python3
"""gecko_check.py PROFILE.json: a Gecko profile checked against the Firefox
Profiler's documented format, as its importer takes it
(firefox-devtools/profiler: docs-developer/gecko-profile-format.md, the
GeckoProfile types of src/types/gecko-profile.ts, and what
src/profile-logic/gecko-profile-versioning.ts's upgraders from the file's
version up and process-profile.ts's processGeckoProfile() read). Written
from those documents: the importer itself is not on npm without its web
app. Prints each problem and exits 1, or prints a summary."""
import json
import math
import re
import sys

bad = []


def need(cond, what):
    if not cond:
        bad.append(what)
    return cond


def num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def idx(x, n):
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < n


p = json.load(open(sys.argv[1]))
for k in ("meta", "libs", "threads", "pausedRanges", "processes"):
    # processes and meta.markerSchema: the upgraders to 26, 29, 33 and 34
    # and processGeckoProfile() iterate them unconditionally
    need(k in p, "top level: no '%s'" % k)
meta = p.get("meta", {})
v = meta.get("version")
need(isinstance(v, int) and 5 <= v <= 36, "meta.version %r: not a Gecko version the importer upgrades (5..36)" % v)
for k in ("interval", "startTime"):
    need(num(meta.get(k)), "meta.%s: not a number" % k)
need(num(meta.get("interval")) and meta["interval"] > 0, "meta.interval must be > 0")
need(isinstance(meta.get("processType"), int), "meta.processType: an integer")
for k in ("stackwalk", "debug"):
    need(meta.get(k) in (0, 1), "meta.%s: 0 or 1" % k)
need("shutdownTime" in meta and (meta["shutdownTime"] is None or num(meta["shutdownTime"])), "meta.shutdownTime: a number or null")
cats = meta.get("categories")
need(isinstance(cats, list) and cats, "meta.categories: a non-empty list")
cats = cats if isinstance(cats, list) else []
for c in cats:
    need(isinstance(c.get("name"), str) and isinstance(c.get("color"), str)
         and isinstance(c.get("subcategories"), list) and c["subcategories"],
         "category %r: name, color and a non-empty subcategories list" % c)
LOCATIONS = {"marker-chart", "marker-table", "timeline-overview", "timeline-memory",
             "timeline-ipc", "timeline-fileio", "stack-chart", "sidebar"}
FORMATS = {"url", "file-path", "sanitized-string", "string", "unique-string", "flow-id",
           "terminating-flow-id", "duration", "time", "seconds", "milliseconds",
           "microseconds", "nanoseconds", "bytes", "percentage", "integer", "decimal",
           "pid", "tid", "list", "hexadecimal"}
schemas = {}
need(isinstance(meta.get("markerSchema"), list), "meta.markerSchema: a list")
for s in meta.get("markerSchema") or []:
    name = s.get("name")
    schemas[name] = s
    need(isinstance(name, str), "marker schema without a name")
    need(isinstance(s.get("display"), list) and set(s["display"]) <= LOCATIONS,
         "marker schema %s: display %r" % (name, s.get("display")))
    need(isinstance(s.get("data"), list), "marker schema %s: no data list" % name)
    for f in s.get("data") or []:
        if "key" in f:
            need(f.get("format") in FORMATS, "marker schema %s: field %s format %r" % (name, f.get("key"), f.get("format")))
        else:
            need(isinstance(f.get("label"), str) and isinstance(f.get("value"), str),
                 "marker schema %s: a static field needs label and value" % name)
    for lab in ("tooltipLabel", "tableLabel", "chartLabel"):
        for ref in re.findall(r"\{marker\.data\.(\w+)\}", s.get(lab, "")):
            need(any(f.get("key") == ref for f in s.get("data") or []),
                 "marker schema %s: %s names a field it has not: %s" % (name, lab, ref))
need(isinstance(p.get("libs"), list), "libs: a list")
need(isinstance(p.get("pausedRanges"), list), "pausedRanges: a list")
need(p.get("processes") == [] or isinstance(p.get("processes"), list), "processes: a list")

V24_FRAME = {"location": 0, "relevantForJS": 1, "innerWindowID": 2, "implementation": 3,
             "optimizations": 4, "line": 5, "column": 6, "category": 7, "subcategory": 8}
V27_FRAME = {k: (i if i < 4 else i - 1) for k, i in V24_FRAME.items() if k != "optimizations"}
nsamples = nmarkers = 0
need(isinstance(p.get("threads"), list) and p["threads"], "threads: a non-empty list")
for t in p.get("threads") or []:
    tn = "thread %s" % t.get("tid")
    need(isinstance(t.get("name"), str), tn + ": name")
    need(isinstance(t.get("processType"), str), tn + ": processType, a string")
    need(num(t.get("tid")) and num(t.get("pid")), tn + ": tid and pid numbers")
    need(num(t.get("registerTime")), tn + ": registerTime")
    need("unregisterTime" in t and (t["unregisterTime"] is None or num(t["unregisterTime"])), tn + ": unregisterTime")
    strs = t.get("stringTable")
    if not need(isinstance(strs, list) and all(isinstance(x, str) for x in strs), tn + ": stringTable, strings"):
        continue
    ft, st, sm, mk = (t.get(k, {}) for k in ("frameTable", "stackTable", "samples", "markers"))
    fs = ft.get("schema")
    need(fs == (V24_FRAME if v < 27 else V27_FRAME), tn + ": frameTable schema %r for version %s" % (fs, v))
    fs = fs or {}
    nf = len(ft.get("data", []))
    for row in ft.get("data", []):
        need(isinstance(row, list) and len(row) == len(fs), tn + ": a frame row of %d values" % len(row))
        loc = row[fs.get("location", 0)]
        if not need(idx(loc, len(strs)), tn + ": frame location %r" % loc):
            continue
        need(isinstance(row[fs["relevantForJS"]], bool), tn + ": relevantForJS, a boolean")
        for k in ("innerWindowID", "line", "column", "subcategory"):
            need(row[fs[k]] is None or isinstance(row[fs[k]], int), tn + ": frame %s %r" % (k, row[fs[k]]))
        need(row[fs["implementation"]] is None or idx(row[fs["implementation"]], len(strs)), tn + ": implementation")
        cat = row[fs["category"]]
        need(cat is None or idx(cat, len(cats)), tn + ": frame category %r" % cat)
        sub = row[fs["subcategory"]]
        need(sub is None or (cat is not None and idx(sub, len(cats[cat]["subcategories"]))), tn + ": subcategory")
        # processGeckoProfile's frames: "name (in library)" (the library
        # named up to the last ')' of the text: it must have none), an
        # address "0x...", or any other text (a function of no library)
        s = strs[loc]
        m = re.match(r"^(.*) \(in (.*)\)$", s)
        need(s and (not m or ")" not in m.group(2)), tn + ": frame %r: its library has a ')'" % s)
    need(st.get("schema") == {"prefix": 0, "frame": 1}, tn + ": stackTable schema")
    stk = st.get("data", [])
    for i, (prefix, frame) in enumerate(stk):
        need(prefix is None or (isinstance(prefix, int) and 0 <= prefix < i), tn + ": stack %d prefix %r (an earlier stack)" % (i, prefix))
        need(idx(frame, nf), tn + ": stack %d frame %r" % (i, frame))
    ss = sm.get("schema")
    need(ss in ({"stack": 0, "time": 1, "responsiveness": 2}, {"stack": 0, "time": 1, "eventDelay": 2}),
         tn + ": samples schema %r" % ss)
    last = -math.inf
    for row in sm.get("data", []):
        need(row[0] is None or idx(row[0], len(stk)), tn + ": sample stack %r" % row[0])
        need(num(row[1]), tn + ": sample time %r" % row[1])
        need(row[1] >= last, tn + ": samples out of time order (%r after %r)" % (row[1], last))
        last = row[1]
        nsamples += 1
    need(mk.get("schema") == {"name": 0, "startTime": 1, "endTime": 2, "phase": 3, "category": 4, "data": 5},
         tn + ": markers schema")
    for row in mk.get("data", []):
        nmarkers += 1
        name, start, end, phase, cat, data = row
        need(idx(name, len(strs)), tn + ": marker name %r" % name)
        need(idx(cat, len(cats)), tn + ": marker category %r" % cat)
        # MarkerPhase: 0 instant (start only), 1 interval, 2 start, 3 end
        ok = {0: num(start) and end is None, 1: num(start) and num(end) and end >= start,
              2: num(start) and end is None, 3: start is None and num(end)}.get(phase, False)
        need(ok, tn + ": marker phase %r with times %r %r" % (phase, start, end))
        if data is not None:
            need(isinstance(data, dict) and data.get("type") in schemas,
                 tn + ": marker payload of type %r has no schema" % (data or {}).get("type"))
            for f in schemas.get(data.get("type"), {}).get("data", []):
                if "key" in f and f["key"] in data:
                    need(isinstance(data[f["key"]], str) if f["format"] in ("string", "url", "file-path", "sanitized-string")
                         else True, tn + ": marker field %s" % f["key"])
for b in bad[:20]:
    print("FAIL:", b)
if bad:
    print("%d problems" % len(bad))
    sys.exit(1)
print("the documented Gecko format (version %s): %d threads, %d samples, %d markers" %
      (v, len(p["threads"]), nsamples, nmarkers))
