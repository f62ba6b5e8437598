#!/usr/bin/env python3
"""The public headers' contract (docs/api.md), checked with the compilers.

1. Every include/rtdiag/*.h compiles alone, in a translation unit of its
   own (included twice: its guard works), as C11 with -Wall -Wextra
   -Wpedantic -Werror; they all compile as C++ (they promise extern "C"),
   together in one unit, and alone when that fails; a header that
   declares a function has an extern "C" block.
2. No function is declared in two public headers, and each one is
   declared RTD_API (gcc -aux-info lists every declaration with the file
   and line it is in).
3. rtdiag/rtdiag.h reaches every public function.
4. docs/api.md's map below its marker is what the headers say (each
   header's first sentence, types and functions); UPDATE_GOLDEN=1
   rewrites it.

Usage: check_headers.py SOURCE_DIR. Prints "ok: ..." / "FAIL: ..." and
exits 0, 1, or 77 when no compiler can run.
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARK = "<!-- generated from include/rtdiag/*.h: do not edit below -->"

src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
inc = os.path.join(src, "include")
hdir = os.path.join(inc, "rtdiag")
headers = sorted(h for h in os.listdir(hdir) if h.endswith(".h"))
fails = []


def fail(msg):
    fails.append(msg)
    print("FAIL: " + msg)


def find_cc():
    """The build's C compiler, and a C++ one: g++ (the quickest to start
    on a loaded machine), else the C compiler's own, else c++."""
    cc = os.environ.get("RTD_CC") or "cc"
    cc = shutil.which(cc)
    base = os.path.basename(cc or "")
    cxx = None
    for cand in ("g++", base.replace("clang", "clang++") if "clang" in base else None,
                 "c++"):
        if cand and shutil.which(cand):
            cxx = shutil.which(cand)
            break
    return cc, cxx


def strip_comments(s):
    return re.sub(r"/\*.*?\*/", " ", s, flags=re.S)


cc, cxx = find_cc()
gcc = shutil.which("gcc")
if not cc and not gcc:
    print("skip: no C compiler (RTD_CC, cc or gcc) to compile the headers with")
    sys.exit(77)
tmp = tempfile.mkdtemp(prefix="rtd-headers.")


def write_tu(h):
    """A translation unit including @h twice (None: every header once)."""
    p = os.path.join(tmp, (h or "all.h")[:-2] + ".c")
    with open(p, "w") as f:
        if h is None:
            f.write("".join('#include "rtdiag/%s"\n' % x for x in headers))
        else:
            f.write('#include "rtdiag/%s"\n#include "rtdiag/%s"\n' % (h, h))
        f.write("typedef int rtd_header_check_tu; /* no empty unit */\n")
    return p


# written before the compilers run side by side
units = {h: write_tu(h) for h in headers + [None]}


def tu(h):
    return units[h]


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    return r.returncode, r.stdout


def parse_aux(out):
    decls = []
    with open(out) as f:
        for line in f:
            m = re.match(r"/\* (\S+):(\d+):\w\w \*/ (.*?)\b(rtd_\w+) \(", line)
            if m and os.path.dirname(os.path.abspath(m.group(1))) == hdir:
                decls.append((m.group(4), os.path.basename(m.group(1)),
                              int(m.group(2)), "static" not in m.group(3)))
    return decls


def aux_info(h):
    """(name, file, line, is_extern) of each function declared in
    include/rtdiag by the translation unit of @h (None: every header)."""
    out = os.path.join(tmp, (h or "all.h")[:-2] + ".aux")
    rc, msg = run([gcc, "-std=c11", "-I" + inc, "-fsyntax-only",
                   "-aux-info", out, tu(h)])
    if rc:
        return None, msg
    return parse_aux(out), ""


C_FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]
CXX_FLAGS = ["-x", "c++", "-std=c++11", "-Wall", "-Wextra", "-Werror"]


def compile_all(lang, comp, flags, hs):
    """Each header of @hs in a unit of its own: one compiler run over all
    those units, and one per unit again only when that run fails (to say
    which)."""
    rc, _ = run([comp] + flags + ["-I" + inc, "-fsyntax-only"]
                + [tu(h) for h in hs])
    if rc == 0:
        return []
    errs = []
    for h in hs:
        rc, msg = run([comp] + flags + ["-I" + inc, "-fsyntax-only", tu(h)])
        if rc:
            errs.append((h, "%s alone, %s: %s" % (h, lang, msg.strip()[:2000])))
    return errs


def compile_cxx():
    """C++: every header in one unit (each alone is the C runs' check),
    each header alone again only when that fails (to say which)."""
    rc, _ = run([cxx] + CXX_FLAGS + ["-I" + inc, "-fsyntax-only", tu(None)])
    return [] if rc == 0 else compile_all("C++", cxx, CXX_FLAGS, headers)


jobs = []
if cc:
    # two halves: on a loaded machine two runs get more of it than one
    jobs.append((compile_all, ("C11", cc, C_FLAGS, headers[0::2])))
    jobs.append((compile_all, ("C11", cc, C_FLAGS, headers[1::2])))
if cxx:
    jobs.append((compile_cxx, ()))
# the compilers' runs and gcc's listings of declarations (every header in
# one unit; rtdiag.h alone) side by side
with concurrent.futures.ThreadPoolExecutor(max_workers=5) as ex:
    runs = [ex.submit(fn, *args) for fn, args in jobs]
    aux_all = ex.submit(aux_info, None) if gcc else None
    aux_umbrella = ex.submit(aux_info, "rtdiag.h") if gcc else None
    results = [e for r in runs for e in r.result()]
for _, e in results:
    fail(e)
bad = {h for h, _ in results}
if not cxx:
    print("note: no C++ compiler (g++, clang++, c++): C++ not checked")
print("ok: %d of %d headers compile alone as C11 (%s)%s" % (
    len(headers) - len({h for h, e in results if " C11:" in e}), len(headers),
    cc, ", and as C++ (%s)" % cxx if cxx else ""))

texts = {h: open(os.path.join(hdir, h)).read() for h in headers}

if not gcc:
    print("skip: no gcc for -aux-info: declarations and docs/api.md not checked")
    shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if fails else 0)

# One unit including every header: gcc -aux-info lists each declaration
# with its file, a function declared twice twice.
where = {}      # function -> {header: line}
externs = set()
decls, msg = aux_all.result()
if decls is None:
    fail("gcc -aux-info on all headers together: %s" % msg.strip()[:2000])
    decls = []
for name, f, line, ext in decls:
    where.setdefault(name, {})[f] = line
    if ext:
        externs.add(name)
twice = sorted(n for n in where if len(where[n]) > 1)
for n in twice:
    fail("%s is declared in %d public headers: %s" % (
        n, len(where[n]), ", ".join("%s:%d" % kv for kv in sorted(where[n].items()))))
owner = {n: min(where[n]) for n in where}
print("ok: %d functions declared in public headers, %d in more than one" % (
    len(where), len(twice)))

for n in sorted(externs):
    h = owner[n]
    body = strip_comments(texts[h])
    if not re.search(r"\bRTD_API\b[^;{}]*?\b%s\s*\(" % n, body):
        fail("%s (%s:%d) is not declared RTD_API: it would not be exported"
             % (n, h, where[n][h]))
    if 'extern "C"' not in body:
        fail("%s declares %s but has no extern \"C\" block for C++" % (h, n))

decls, msg = aux_umbrella.result()
if decls is None:
    fail("gcc -aux-info on rtdiag.h: %s" % msg.strip()[:2000])
else:
    reached = {d[0] for d in decls}
    missing = {}
    for n in sorted(set(where) - reached):
        missing.setdefault(owner[n], []).append(n)
    for h in sorted(missing):
        fail("rtdiag/rtdiag.h does not reach %s (%d functions: %s ...)" % (
            h, len(missing[h]), ", ".join(missing[h][:3])))
    print("ok: rtdiag.h reaches %d of %d functions" % (
        len(set(where) & reached), len(where)))


def summary(h):
    """The header's first paragraph, after "rtdiag/NAME.h - ": up to a
    blank comment line or an indented one (an example)."""
    m = re.match(r"/\* SPDX[^\n]*\n/\*(.*?)\*/", texts[h], re.S)
    words = []
    for i, line in enumerate((m.group(1) if m else "").splitlines()):
        t = re.sub(r"^\s*\* ?", "", line) if i else line.strip()
        if not t.strip():
            if words:
                break
            continue
        if t.startswith((" ", "\t")):
            break
        words.append(t.strip())
    return re.sub(r"^rtdiag/%s\s+-\s+" % re.escape(h), "", " ".join(words))


def types(h):
    body = strip_comments(texts[h])
    out = []
    for kind, name in re.findall(r"^(struct|enum|union) (rtd_\w+) \{", body, re.M):
        out.append("%s %s" % (kind, name))
    out += re.findall(r"^typedef [^;{]*?\b(rtd_\w+);", body, re.M)
    out += re.findall(r"^typedef [^;{]*?\(\*\s*(rtd_\w+)\)", body, re.M)
    return sorted(set(out), key=lambda t: t.split()[-1])


def generated():
    lines = []
    for h in headers:
        lines.append("### rtdiag/%s" % h)
        lines.append("")
        lines.append(summary(h) or "(no summary)")
        inc_here = re.findall(r'^#include "rtdiag/([^"]+)"', texts[h], re.M)
        fns = sorted(n for n in where if owner[n] == h)
        ty = types(h)
        if not fns and not ty and inc_here:
            lines.append("")
            lines.append("Includes: " + ", ".join("`%s`" % i for i in inc_here))
        if ty:
            lines.append("")
            lines.append("Types: " + ", ".join("`%s`" % t for t in ty))
        if fns:
            lines.append("")
            lines.append("Functions: " + ", ".join("`%s`" % n for n in fns))
        lines.append("")
    return "\n".join(lines)


api = os.path.join(src, "docs", "api.md")
want = generated()
have = open(api).read() if os.path.exists(api) else None
if have is not None and MARK in have:
    head = have.split(MARK)[0]
    cur = have.split(MARK, 1)[1].lstrip("\n")
else:
    head, cur = None, None
if os.environ.get("UPDATE_GOLDEN") and head is not None:
    with open(api, "w") as f:
        f.write(head + MARK + "\n\n" + want)
    print("ok: docs/api.md rewritten (UPDATE_GOLDEN)")
elif have is None:
    fail("docs/api.md is missing: the map of which header holds what")
elif head is None:
    fail("docs/api.md has no line '%s'" % MARK)
elif cur != want:
    a, b = cur.splitlines(), want.splitlines()
    i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    fail("docs/api.md differs from the headers at its generated line %d:\n"
         "  has:  %s\n  want: %s\n(UPDATE_GOLDEN=1 rewrites it)" % (
             i + 1, a[i] if i < len(a) else "(end)", b[i] if i < len(b) else "(end)"))
else:
    print("ok: docs/api.md maps the %d headers as they are" % len(headers))

shutil.rmtree(tmp, ignore_errors=True)
print("%d failures" % len(fails))
sys.exit(1 if fails else 0)
