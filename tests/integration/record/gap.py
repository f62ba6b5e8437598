#!/usr/bin/env python3
# gap.py TRACE.json EVENT METHOD - issue #30's first test, read from a
# Chrome JSON timeline of `rtdiag record`: each EVENT instant must be
# followed on its own thread's track (same pid and tid), within 2 ms, by
# an off-CPU slice of about 40 ms (39-500 ms: a 40 ms sleep and the wait
# for a CPU after it, on a busy machine), for at least 95% of the events; some CPU sample's stack must
# name METHOD. Events too close to the recording's end for their wait to
# have ended in it are not counted. Prints the gaps' distribution (the
# clock error between EventPipe and perf_event) as JSON; exits 1 when a
# condition fails.
import json, sys
from collections import defaultdict

path, event, method = sys.argv[1:4]
evs = json.load(open(path))["traceEvents"]
opened = defaultdict(list)
waits = defaultdict(list)  # (pid, tid) -> [(start us, dur us)]
marks, samples_named, samples, last = [], 0, 0, 0.0
for e in sorted((e for e in evs if "ts" in e), key=lambda e: e["ts"]):
    key = (e["pid"], e["tid"])
    last = max(last, e["ts"] + e.get("dur", 0))
    if e["ph"] == "B":
        opened[key].append(e)
    elif e["ph"] == "E":
        b = opened[key].pop()
        if b.get("cat") == "off-cpu":
            waits[key].append((b["ts"], e["ts"] - b["ts"]))
    elif e["ph"] == "X" and e.get("cat") == "off-cpu":
        waits[key].append((e["ts"], e["dur"]))
    elif e["ph"] in ("i", "I") and e["name"] == event:
        marks.append((key, e["ts"]))
    elif e["ph"] in ("i", "I") and e.get("cat") == "sample" or e.get("name") == "sample":
        samples += 1
        if any(method in f for f in e.get("args", {}).get("stack", [])):
            samples_named += 1

counted, matched, gaps, durs, missed = 0, 0, [], [], []
for key, ts in marks:
    if ts + 600e3 > last:
        continue  # its wait may not have ended inside the recording
    counted += 1
    # a short wait may come first (a lock in the event's write): any wait
    # of the sleep's length that starts within 2 ms
    near = [(s - ts, d) for s, d in waits[key] if 0 <= s - ts <= 2000 and 39e3 <= d <= 500e3]
    if near:
        matched += 1
        gaps.append(near[0][0])
        durs.append(near[0][1])
    elif len(missed) < 3:
        missed.append({"ts": ts, "waits after": [(round(s - ts, 1), round(d, 1))
                       for s, d in waits[key] if 0 <= s - ts <= 100e3][:4]})
gaps.sort()
q = lambda p: round(gaps[min(len(gaps) - 1, int(p * len(gaps)))], 3) if gaps else None
out = {"events": len(marks), "counted": counted, "matched": matched,
       "gap_us": {"min": q(0), "p50": q(0.5), "p90": q(0.9), "p99": q(0.99),
                  "max": gaps[-1] if gaps else None},
       "sleep_ms": {"min": round(min(durs) / 1e3, 2) if durs else None,
                    "max": round(max(durs) / 1e3, 2) if durs else None},
       "samples": samples, "samples_in_method": samples_named, "missed": missed}
print(json.dumps(out))
ok = counted >= 20 and matched >= 0.95 * counted and samples_named > 0
sys.exit(0 if ok else 1)
