#!/usr/bin/env python3
"""gosleep.py T.JSON - a Go program's sleeps in one `rtdiag record
--go-trace` timeline (Chrome JSON): for each user log "sleep N" of
tests/targets/go-record, the goroutine's GoBlock (reason sleep) on the
same M (the OS thread's track) and that thread's next off-CPU slice.
Prints the counts and the distribution of the gap from GoBlock (Go's
clock) to the off-CPU slice's begin (perf's), in us; exits 1 unless at
least 10 logs were seen, >= 95% followed by their sleep's GoBlock on the
same thread within 1 ms, and at least 90% by an off-CPU slice of that
thread beginning within 2 ms of it (never before it: one clock)."""
import bisect, json, statistics, sys

evs = json.load(open(sys.argv[1]))["traceEvents"]
by_tid = {}
for e in evs:
    if e.get("ph") == "i" and e.get("name") == "GoBlock":
        by_tid.setdefault(("b", e["tid"]), []).append(e)
    elif e.get("ph") in ("B", "X") and e.get("cat") == "off-cpu":  # X: the live stream's whole slices
        by_tid.setdefault(("w", e["tid"]), []).append(e)
for v in by_tid.values():
    v.sort(key=lambda e: e["ts"])
logs = [e for e in evs if e.get("name") == "UserLog" and e["args"].get("message", "").startswith("sleep ")]
blocked, gaps, before = 0, [], 0
for lg in logs:
    bl = by_tid.get(("b", lg["tid"]), [])
    i = bisect.bisect_left([b["ts"] for b in bl], lg["ts"])
    if i == len(bl) or bl[i]["args"].get("reason") != "sleep" or bl[i]["ts"] - lg["ts"] > 1000:
        continue
    blocked += 1
    b = bl[i]
    ws = by_tid.get(("w", lg["tid"]), [])
    j = bisect.bisect_left([w["ts"] for w in ws], b["ts"] - 1000)
    if j < len(ws) and ws[j]["ts"] < b["ts"]:
        before += 1
    j = bisect.bisect_left([w["ts"] for w in ws], b["ts"])
    if j < len(ws):
        gaps.append(ws[j]["ts"] - b["ts"])
near = [g for g in gaps if g <= 2000]
q = sorted(gaps)
print("%d logs, %d followed by their GoBlock(sleep) on the same M, %d by that thread's "
      "off-CPU slice within 2 ms (%d began up to 1 ms before the GoBlock); gap us: "
      "min %.1f median %.1f p90 %.1f max %.1f"
      % (len(logs), blocked, len(near), before, q[0] if q else -1,
         statistics.median(q) if q else -1, q[int(len(q) * 0.9)] if q else -1,
         q[-1] if q else -1))
ok = len(logs) >= 10 and blocked >= 0.95 * len(logs) and len(near) >= 0.9 * len(logs)
sys.exit(0 if ok else 1)
