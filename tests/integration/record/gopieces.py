#!/usr/bin/env python3
"""gopieces.py T.JSON GAPS - the marks of tests/targets/go-record
(user logs "sleep N", one per round) in an `rtdiag record --go-trace`
timeline (Chrome JSON) made of several pieces of the program's trace:
the "Go trace gap" slices between pieces, and the marks around them.
Exits 1 unless there are GAPS gaps (the number rtdiag said; ">=N": at
least N), every piece (before,
between and after the gaps) holds marks, no mark is there twice, marks
come in time order, and every mark missing (a hole in the numbers) falls
inside a gap: the marks on either side of the hole lie before and after
one gap slice, and the hole is no longer than that gap holds (a round
takes >= 20 ms). Prints the counts and the gaps' lengths (ms)."""
import json, sys

evs = json.load(open(sys.argv[1]))["traceEvents"]
want = sys.argv[2]
at_least = want.startswith(">=")
want_gaps = int(want[2:] if at_least else want)
marks = []
for e in evs:
    if e.get("name") == "UserLog":
        m = e.get("args", {}).get("message", "")
        if m.startswith("sleep "):
            marks.append((int(m.split()[1]), e["ts"]))
gaps = sorted((e["ts"], e["ts"] + e.get("dur", 0)) for e in evs
              if e.get("name") == "Go trace gap" and e.get("ph") == "X")
fails = []
ns = [n for n, _ in marks]
if len(set(ns)) != len(ns):
    dup = sorted(n for n in set(ns) if ns.count(n) > 1)
    fails.append("%d marks twice (%s...)" % (len(dup), dup[:5]))
marks.sort()
if any(b[1] < a[1] for a, b in zip(marks, marks[1:])):
    fails.append("marks out of time order")
if len(gaps) < want_gaps or (not at_least and len(gaps) != want_gaps):
    fails.append("%d gaps, want %s" % (len(gaps), want))
# every piece holds marks
edges = [-1e30] + [g[1] for g in gaps]
ends = [g[0] for g in gaps] + [1e30]
for i, (lo, hi) in enumerate(zip(edges, ends)):
    if not any(lo <= t <= hi for _, t in marks):
        fails.append("piece %d (%.3f-%.3f s) holds no mark" % (i + 1, lo / 1e6, hi / 1e6))
lost = 0
for (a, ta), (b, tb) in zip(marks, marks[1:]):
    if b == a + 1:
        continue
    lost += b - a - 1
    inside = [g for g in gaps if ta <= g[0] and g[1] <= tb]
    if not inside:
        fails.append("marks %d-%d lost outside any gap (%.3f-%.3f s)" % (a + 1, b - 1, ta / 1e6, tb / 1e6))
    elif (b - a - 1) * 20000 > sum(g[1] - g[0] for g in inside) + 20000:
        fails.append("marks %d-%d: %d lost, more than the gap of %.1f ms holds"
                     % (a + 1, b - 1, b - a - 1, sum(g[1] - g[0] for g in inside) / 1e3))
g = sorted(e - s for s, e in gaps)
print("%d marks (%d..%d), %d lost in %d gaps; gap ms: min %.2f median %.2f max %.2f"
      % (len(marks), marks[0][0] if marks else -1, marks[-1][0] if marks else -1, lost,
         len(gaps), g[0] / 1e3 if g else -1, g[len(g) // 2] / 1e3 if g else -1,
         g[-1] / 1e3 if g else -1))
for f in fails:
    print("  " + f)
sys.exit(1 if fails or len(marks) < 10 else 0)
