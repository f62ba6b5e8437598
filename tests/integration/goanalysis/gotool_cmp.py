#!/usr/bin/env python3
"""gotool_cmp.py GO RTDIAG TRACE WORKDIR

Starts `GO tool trace -http=127.0.0.1:PORT TRACE` (GO is a Go 1.19, 1.22
or 1.23 toolchain's `go`) and compares what its pages and endpoints serve
with what `RTDIAG gotrace ...` prints for the same trace:

- the four blocking profiles (/io, /block, /syscall, /sched with raw=1,
  read by `GO tool pprof -raw`) with `pprof --format raw`: every stack's
  PCs, functions, files, lines, contentions and delay (pprof_cmp.py);
- the goroutine groups (/goroutines) and every goroutine's row on each
  group's page (/goroutine?...) with `goroutines --json --top 0`: the
  total and each column, formatted as the page formats durations;
- the region types (/userregions: type, top frame PC, count) with
  `goroutines --group-by region --json`, and (Go 1.22+) each region's row
  on its type's page;
- the tasks (/usertasks and /usertask?type=...: when, duration, complete)
  with `tasks --json`;
- the MMU plot's JSON (system view with stw|background|assist, and the
  per-goroutine view with sweep too): the MMU at each of its 100 window
  sizes with `gc --mmu`, to within 1e-9.

Prints "ok: ..." / "FAIL: ..." lines; exits 1 when something differs.
"""
import html
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

GO, RT, TRACE, WORK = sys.argv[1:5]
HERE = os.path.dirname(os.path.abspath(__file__))
gover = subprocess.run([GO, "version"], capture_output=True, text=True).stdout
V119 = "go1.19" in gover
fails = 0
lines = []  # the current comparison's
ENV = None  # the environment rtdiag runs with (RTDIAG_GO_MAP_START)
label = os.path.basename(TRACE) + " (" + ("go1.19" if V119 else gover.split()[2]) + ")"


def ok(msg):
    lines.append(f"ok: {label}: {msg}")


def bad(msg):
    global fails
    fails += 1
    lines.append(f"FAIL: {label}: {msg}")


def note(msg):
    lines.append(f"note: {label}: {msg}")


def run(argv, **kw):
    """A subprocess; rtdiag's runs get ENV."""
    if argv[0] == RT and ENV is not None:
        kw["env"] = ENV
    return subprocess.run(argv, **kw)


def go_dur(ns):
    """Go's time.Duration.String()."""
    if ns == 0:
        return "0s"
    neg = ns < 0
    u = -ns if neg else ns
    if u < 1000000000:
        if u < 1000:
            s, prec, unit = u, 0, "ns"
        elif u < 1000000:
            s, prec, unit = u, 3, "µs"
        else:
            s, prec, unit = u, 6, "ms"
        whole, frac = divmod(s, 10 ** prec)
        fs = str(frac).rjust(prec, "0").rstrip("0") if prec else ""
        out = str(whole) + ("." + fs if fs else "") + unit
    else:
        whole, frac = divmod(u, 10 ** 9)
        fs = str(frac).rjust(9, "0").rstrip("0")
        sec = whole % 60
        m = whole // 60
        out = str(sec) + ("." + fs if fs else "") + "s"
        if m:
            out = str(m % 60) + "m" + out
            if m // 60:
                out = str(m // 60) + "h" + out
    return ("-" if neg else "") + out


def nice_dur(ns):
    """Go 1.19 cmd/trace's niceDuration (truncating)."""
    if ns < 10000:
        return f"{int(ns)}ns"
    if ns < 10000000:
        return f"{int(ns // 1000)}µs"
    if ns < 10000000000:
        return f"{int(ns // 1000000)}ms"
    return f"{int(ns // 1000000000)}s "


def rtdiag(*args):
    p = run([RT, "gotrace", *args, TRACE], capture_output=True, text=True)
    if p.returncode != 0:
        bad(f"rtdiag gotrace {' '.join(args)}: {p.stderr.strip()}")
        return []
    return [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


port = free_port()
base = f"http://127.0.0.1:{port}"
srv = subprocess.Popen([GO, "tool", "trace", f"-http=127.0.0.1:{port}", TRACE],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=dict(os.environ, BROWSER="true"))


pages = {}
go_raw = set()  # the profiles whose Go side is in WORK


def get(path):
    """A page of Go's server (each asked once: the comparison may run again)."""
    if path not in pages:
        with urllib.request.urlopen(base + path, timeout=120) as r:
            pages[path] = r.read()
    return pages[path]


def compare():
    """Every comparison, with rtdiag run with ENV; fills lines and fails."""
    # ---- the blocking profiles
    for typ, page in (("net", "io"), ("sync", "block"), ("syscall", "syscall"), ("sched", "sched")):
        gp = os.path.join(WORK, f"go_{typ}.pb")
        graw = os.path.join(WORK, f"go_{typ}.raw")
        if typ not in go_raw:  # once per run of this script (WORK is shared by traces)
            with open(gp, "wb") as f:
                f.write(get(f"/{page}?raw=1"))
            with open(graw, "w") as f:
                subprocess.run([GO, "tool", "pprof", "-raw", gp], stdout=f, stderr=subprocess.DEVNULL)
            go_raw.add(typ)
        rraw = os.path.join(WORK, f"rt_{typ}.raw")
        with open(rraw, "w") as f:
            p = run([RT, "gotrace", "pprof", "--type", typ, "--format", "raw", TRACE],
                               stdout=f, stderr=subprocess.PIPE, text=True)
        if p.returncode:
            bad(f"pprof --type {typ}: {p.stderr.strip()}")
            continue
        c = subprocess.run([sys.executable, os.path.join(HERE, "pprof_cmp.py"), graw, rraw],
                           capture_output=True, text=True)
        if c.returncode == 0:
            ok(f"pprof {typ} = go tool trace's /{page}: {c.stdout.strip()}")
        else:
            bad(f"pprof {typ} differs from /{page}:\n{c.stdout.strip()}")
        # and the pprof file rtdiag writes through the profile model (one
        # type is enough: the model's writer does not depend on it)
        if typ != "sync":
            continue
        rpb = os.path.join(WORK, f"rt_{typ}.pb.gz")
        p = run([RT, "gotrace", "pprof", "--type", typ, "-o", rpb, TRACE],
                           capture_output=True, text=True)
        rpraw = os.path.join(WORK, f"rt_{typ}.pbraw")
        with open(rpraw, "w") as f:
            subprocess.run([GO, "tool", "pprof", "-raw", rpb], stdout=f, stderr=subprocess.DEVNULL)
        c = subprocess.run([sys.executable, os.path.join(HERE, "pprof_cmp.py"), graw, rpraw,
                            "--names-only"], capture_output=True, text=True)
        if p.returncode == 0 and c.returncode == 0:
            ok(f"pprof {typ} -o FILE read by go tool pprof: same function stacks and delay")
        else:
            bad(f"pprof {typ} -o FILE: {p.stderr.strip()} {c.stdout.strip()}")

    # ---- goroutines
    rows = rtdiag("goroutines", "--json", "--top", "0")
    groups = [r for r in rows if "group" in r and "goroutine" not in r]
    gors = [r for r in rows if "goroutine" in r]
    page = get("/goroutines").decode()
    if V119:
        gl = re.findall(r'<a href="/goroutine\?id=(\d+)">([^<]*)</a> N=(\d+)', page)
        want = sorted((int(pc), html.unescape(n), int(cnt)) for pc, n, cnt in gl)
        have = sorted((g["pc"], g["group"], g["count"]) for g in groups)
    else:
        gl = re.findall(r'<a href="/goroutine\?name=([^"]*)">[^<]*</a></code></td>\s*<td>(\d+)</td>\s*<td>([^<]*)</td>', page)
        want = sorted((urllib.parse.unquote(html.unescape(n)), int(cnt), ex) for n, cnt, ex in gl)
        have = sorted((g["group"], g["count"], go_dur(g["exec_ns"])) for g in groups)
    if want == have and want:
        ok(f"goroutine groups = /goroutines ({len(want)} groups, {sum(g['count'] for g in groups)} goroutines)")
    else:
        bad(f"goroutine groups differ from /goroutines:\n go {want[:6]}\n rt {have[:6]}")
    ncmp = nbad = 0
    for g in gl:
        if V119:
            p = get(f"/goroutine?id={g[0]}").decode()
            key = int(g[0])
            mine = [r for r in gors if [x for x in groups if x["pc"] == key and x["group"] == r["group"]]]
        else:
            name = urllib.parse.unquote(html.unescape(g[0]))
            p = get("/goroutine?name=" + urllib.parse.quote(name)).decode()
            mine = [r for r in gors if r["group"] == name]
        det = p[p.find('<table class="details">'):]
        det = det[:det.find("</table>")]
        cols = [html.unescape(c).strip() for c in re.findall(r"<th[^>]*>([^<]*)</th>", det)]
        cols = [c for c in cols if c not in ("Goroutine", "Total", "")]
        byid = {r["goroutine"]: r for r in mine}
        for tr in re.findall(r"<tr>(.*?)</tr>", det, re.S):
            m = re.search(r'goid=(\d+)">\d+</a>', tr)
            if not m:
                continue
            gid = int(m.group(1))
            tds = [html.unescape(t).strip() for t in re.findall(r"<td>([^<]*)</td>", tr)]
            r = byid.get(gid)
            ncmp += 1
            if not r:
                nbad += 1
                bad(f"goroutine {gid}: on Go's page, not in rtdiag's output")
                continue
            if V119:
                st = r["stats"]
                order = ["Execution", "Network wait", "Sync block", "Blocking syscall",
                         "Scheduler wait", "GC sweeping", "GC pause"]
                exp = [nice_dur(r["total_ns"])]
                for k in order:
                    v = nice_dur(st.get(k, 0))
                    if k in ("GC sweeping", "GC pause") and r["total_ns"]:
                        v += " (%.1f%%)" % (st.get(k, 0) / r["total_ns"] * 100)
                    exp.append(v)
                got = tds
            else:
                exp = [go_dur(r["total_ns"])] + [go_dur(r["stats"].get(c, 0)) for c in cols]
                got = tds
            if exp != got:
                nbad += 1
                if nbad <= 3:
                    bad(f"goroutine {gid}: go {list(zip(['total'] + cols, got))}\n   rtdiag {exp}")
    if ncmp and not nbad:
        ok(f"every goroutine row of every group page ({ncmp}) = rtdiag's total and columns")
    elif not ncmp:
        bad("no goroutine rows on Go's pages")

    # ---- regions
    rrows = rtdiag("goroutines", "--group-by", "region", "--json", "--top", "0")
    rtypes = [r for r in rrows if "region_type" in r and "region_of" not in r]
    page = get("/userregions").decode()
    links = re.findall(r'<a href="/userregion\?type=([^&"]*)&(?:amp;)?pc=([0-9a-f]+)">(\d+)</a>', page)
    want = sorted((urllib.parse.unquote_plus(html.unescape(t)), int(pc, 16), int(n)) for t, pc, n in links)
    have = sorted((r["region_type"], r["pc"], r["count"]) for r in rtypes)
    if want == have:
        ok(f"region types = /userregions ({len(want)} types, {sum(w[2] for w in want)} regions)")
    else:
        bad(f"region types differ from /userregions:\n go {want[:6]}\n rt {have[:6]}")
    if not V119:
        ncmp = nbad = 0
        for t, pc, n in links:
            p = get(f"/userregion?type={t}&pc={pc}").decode()
            det = p[p.find('<table class="details">'):]
            det = det[:det.find("</table>")]
            cols = [html.unescape(c).strip() for c in re.findall(r"<th[^>]*>([^<]*)</th>", det)]
            cols = [c for c in cols if c not in ("Goroutine", "Task", "Total", "")]
            name = urllib.parse.unquote_plus(html.unescape(t))
            mine = [r for r in rrows if r.get("region_type") == name and "region_of" in r and
                    r["pc"] == int(pc, 16)]
            exp = sorted([str(r["region_of"]), str(r["task"]), go_dur(r["total_ns"])] +
                         [go_dur(r["stats"].get(c, 0)) for c in cols] for r in mine)
            got = []
            for tr in re.findall(r"<tr>(.*?)</tr>", det, re.S):
                m = re.search(r'goid=(\d+)">\d+</a>.*?focustask=(\d+)">', tr, re.S)
                if not m:
                    continue
                tds = [html.unescape(x).strip() for x in re.findall(r"<td>([^<]*)</td>", tr)]
                got.append([m.group(1), m.group(2)] + tds)
            got.sort()
            ncmp += len(got)
            if exp != got:
                nbad += 1
                bad(f"regions of type {name!r}: go {got[:2]}\n   rtdiag {exp[:2]}")
        if not nbad:
            ok(f"every region row ({ncmp}) = rtdiag's goroutine, task, duration and columns")

    # ---- tasks
    trows = rtdiag("tasks", "--json")
    tasks = [r for r in trows if "task" in r]
    first = None
    page = get("/usertasks").decode()
    types = re.findall(r'<a href="/usertask\?type=([^"]*)">(\d+)</a>', page)
    want = sorted((urllib.parse.unquote_plus(html.unescape(t)), int(n)) for t, n in types)
    cnt = {}
    for t in tasks:
        cnt[t["type"]] = cnt.get(t["type"], 0) + 1
    have = sorted(cnt.items())
    if want == have:
        ok(f"task types = /usertasks ({len(want)} types, {sum(n for _, n in want)} tasks)")
    else:
        bad(f"task types differ from /usertasks: go {want[:6]} rtdiag {have[:6]}")
    gotrows, exprows = [], []
    gcs = rtdiag("gc", "--summary", "--json")
    for t, n in types:
        p = get("/usertask?type=" + t).decode()
        for when, el, tid, rest in re.findall(
                r'<td class="when">([^<]*)</td>\s*<td class="elapsed">([^<]*)</td>\s*<td></td>\s*<td>\s*'
                r'<a href="/trace\?focustask=(\d+)[^"]*">Task \d+</a>(.*?)</td>', p, re.S):
            comp = "(complete)" in rest
            gotrows.append((int(tid), when.strip(), el.strip(), comp))
    for r in tasks:
        exprows.append((r["task"], None, go_dur(r["duration_ns"]), r["complete"], r["start_ns"]))
    # the page's "when" is seconds since the trace's first event
    gotrows.sort()
    exprows.sort()
    if gotrows:
        t0 = None
        good = len(gotrows) == len(exprows)
        for g, e in zip(gotrows, exprows):
            if g[0] != e[0] or g[2] != e[2] or g[3] != e[3]:
                good = False
                bad(f"task {g[0]}: go when {g[1]} elapsed {g[2]} complete {g[3]}; rtdiag task {e[0]} {e[2]} {e[3]}")
                break
            if t0 is None:
                t0 = e[4] - round(float(g[1].rstrip("s")) * 1e9)
            if abs((e[4] - t0) / 1e9 - float(g[1].rstrip("s"))) > 2e-9:
                good = False
                bad(f"task {g[0]}: starts at {g[1]} on Go's page, {(e[4] - t0) / 1e9:.9f}s in rtdiag's")
                break
        if good:
            ok(f"every task ({len(gotrows)}) on /usertask = rtdiag's: start, duration, complete")
        elif len(gotrows) != len(exprows):
            bad(f"{len(gotrows)} tasks on Go's pages, {len(exprows)} in rtdiag's output")

    # ---- MMU
    for flags, extra in (("stw|background|assist", []),
                         ("perProc|stw|background|assist|sweep", ["--per-proc"])):
        path = ("/mmuPlot?flags=" if V119 else "/mmu?mode=plot&flags=") + flags
        try:
            d = json.loads(get(path))
        except Exception as e:
            # Go's MutatorUtilization indexes its P slice before a
            # GOMAXPROCS event on some traces and the handler panics
            out = run([RT, "gotrace", "gc", "--summary", "--json"] +
                                 (["--per-proc"] if extra else []) + [TRACE],
                                 capture_output=True, text=True)
            note(f"go tool trace's MMU page ({flags}) fails ({e.__class__.__name__}); "
                 f"rtdiag: {'answers' if out.returncode == 0 else 'fails: ' + out.stderr.strip()}")
            if out.returncode:
                bad("gc --summary fails where Go's page fails")
            continue
        ws = [int(p[0]) for p in d["curve"]]
        util = ",".join(f for f in flags.split("|") if f != "perProc")
        out = run([RT, "gotrace", "gc", "--summary", "--json", "--util", util,
                              "--mmu", ",".join(f"{w}ns" for w in ws)] + extra + [TRACE],
                             capture_output=True, text=True)
        try:
            s = json.loads(out.stdout.strip().split("\n")[-1])
        except Exception:
            bad(f"gc --mmu: {out.stderr.strip()}")
            continue
        diffs = [(p[0], p[1], m["mmu"]) for p, m in zip(d["curve"], s["mmu"])
                 if m["mmu"] is None or abs(p[1] - m["mmu"]) > 1e-9]
        maxd = max(abs(p[1] - m["mmu"]) for p, m in zip(d["curve"], s["mmu"]) if m["mmu"] is not None)
        if not diffs and len(ws) == len(s["mmu"]):
            ok(f"MMU ({flags}) at the plot's {len(ws)} windows = Go's (largest difference {maxd:.2g})")
        else:
            bad(f"MMU ({flags}) differs at {len(diffs)} windows: {diffs[:3]}")

    # ---- GC cycles: the timeline's "GC concurrent mark phase" slices (Go
    # 1.22+; Go 1.19's viewer draws GC otherwise)
    if not V119:
        try:
            tl = json.loads(get("/jsontrace?view=proc"))
        except Exception as e:
            bad(f"go tool trace's /jsontrace: {e.__class__.__name__}")
            return
        evs = [e for e in tl["traceEvents"] if e.get("ph") == "X"]
        gc = rtdiag("gc", "--json")
        # the viewer's times are from the trace's first event: compare
        # starts relative to the first one's
        rel = lambda xs: [(x[0] - xs[0][0],) + tuple(x[1:]) for x in xs] if xs else []
        for what, want, have in (
                ("GC cycles", sorted((round(e["ts"] * 1000), round(e["dur"] * 1000)) for e in evs
                                     if e.get("name") == "GC concurrent mark phase"),
                 sorted((r["start_ns"], r["duration_ns"]) for r in gc if r.get("kind") == "gc")),
                ("STW pauses", sorted((round(e["ts"] * 1000), round(e["dur"] * 1000), e["name"][16:-1])
                                      for e in evs if e.get("name", "").startswith("stop-the-world (")),
                 sorted((r["start_ns"], r["duration_ns"], r["reason"]) for r in gc if r.get("kind") == "stw"))):
            if rel(want) == rel(have):
                ok(f"{what} = the timeline's {len(want)} (start, duration{', kind' if what[0] == 'S' else ''})")
            else:
                diff = [(w, h) for w, h in zip(rel(want), rel(have)) if w != h]
                bad(f"{what} differ from the timeline's: {len(want)} vs {len(have)}, first {diff[:3]}")


def go_orders():
    """The distinct per-generation tie orders of Go 1.22/1.23's map walk:
    each combination of one start per generation (at most 64)."""
    segs = []  # per start: the generations' ordered events
    for slot in range(8):
        p = subprocess.run([RT, "gotrace", "cat", "--ordered", TRACE], capture_output=True, text=True,
                           env=dict(os.environ, RTDIAG_GO_MAP_START=str(slot)))
        if p.returncode:
            return []
        gens, cur = [], []
        for ln in p.stdout.splitlines():
            cur.append(ln)
            if " Sync " in ln:
                gens.append(hash("\n".join(cur)))
                cur = []
        segs.append(gens)
    ngen = len(segs[0])
    if ngen == 0 or ngen > 16:
        return []
    choices = []
    for g in range(ngen):
        seen, reps = set(), []
        for slot in range(8):
            if segs[slot][g] not in seen:
                seen.add(segs[slot][g])
                reps.append(slot)
        choices.append(reps)
    combos = [[]]
    for reps in choices:
        combos = [c + [r] for c in combos for r in reps]
        if len(combos) > 64:
            return []
    return [c for c in combos if any(c)]


try:
    for _ in range(600):
        try:
            get("/")
            break
        except Exception:
            if srv.poll() is not None:
                print(f"skip-go: {label}: go tool trace exited: {srv.stderr.read().strip()[:300]}")
                sys.exit(3)
            time.sleep(0.1)
    else:
        print(f"FAIL: {label}: go tool trace did not start serving")
        sys.exit(1)

    fails, lines = 0, []
    compare()
    if fails and not V119:
        # Go 1.22/1.23 order equal-time events of different threads by a
        # walk of a map that starts at a random slot, per generation and
        # per run, and move the later of two events with one time 1 ns on:
        # a goroutine's time can then move 1 ns between two of its states.
        # Find the run of Go's server among the orders it can take (the
        # distinct ones per generation; rtdiag emulates each start) and
        # compare again; nothing else changes.
        first = (fails, lines)
        for combo in go_orders():
            ENV = dict(os.environ, RTDIAG_GO_MAP_START=",".join(map(str, combo)))
            fails, lines = 0, []
            compare()
            if not fails:
                lines.insert(0, f"note: {label}: Go's server ordered equal-time events of different threads as its map walk "
                     f"does from slots {','.join(map(str, combo))} of generations 1..{len(combo)} "
                     f"(differs from the first walk's order in {first[0]} check(s)); every check, with that order:")
                break
        else:
            fails, lines = first
    print("\n".join(lines))
finally:
    srv.terminate()
    try:
        srv.wait(timeout=10)
    except subprocess.TimeoutExpired:
        srv.kill()
print(f"{label}: {'all passed' if not fails else str(fails) + ' failed'}")
sys.exit(1 if fails else 0)
