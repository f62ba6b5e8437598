#!/usr/bin/env python3
# flight_check.py MODE SNAPSHOT.json ARGS - the flight recorder's tests'
# checks of a snapshot (Chrome JSON) of `rtdiag record --ring`. Each mode
# prints what it measured as JSON and exits 1 when a condition fails.
#
#   span SNAP EVENT RING_S     the EVENT instants (Rtd-Flight-Test/Mark)
#       span about the last RING_S seconds (at least 70% of it, at most
#       RING_S plus 4 s: the ring drops whole chunks, and holds up to one
#       more), the first of them is not the program's first (older ones
#       were dropped), and the thread that wrote them has its kernel side
#       in the snapshot: off-CPU slices of the ~40 ms sleep that follows
#       each event, for at least 80% of the events
#   meter SNAP INTERVAL_S POST_S   the gauge bars.queue.length went to 40
#       or more at the program's Rtd-Flight-Test/Level event: its first
#       published value >= 40 came within INTERVAL_S (+ 1 s for a loaded
#       machine) of the event, the trigger's hit is that value, and the
#       snapshot holds POST_S (- 0.5 s) of records after the hit
#   info SNAP                  the rtdiag/snapshot instant's fields
import json, sys
from collections import defaultdict

mode, path = sys.argv[1], sys.argv[2]
evs = json.load(open(path))["traceEvents"]
evs = sorted((e for e in evs if "ts" in e), key=lambda e: e["ts"])
snap = [e for e in evs if e.get("name") == "rtdiag/snapshot"]
info = snap[-1]["args"] if snap else {}


def done(ok, out):
    print(json.dumps(out))
    sys.exit(0 if ok else 1)


if mode == "info":
    done(bool(snap), info)

if mode == "span":
    event, ring = sys.argv[3], float(sys.argv[4])
    marks = [e for e in evs if e.get("ph") in ("i", "I") and e.get("name") == event]
    opened, waits = defaultdict(list), defaultdict(list)
    for e in evs:
        key = (e.get("pid"), e.get("tid"))
        if e.get("ph") == "B":
            opened[key].append(e)
        elif e.get("ph") == "E" and opened[key]:
            b = opened[key].pop()
            if b.get("cat") == "off-cpu":
                waits[key].append((b["ts"], e["ts"] - b["ts"]))
        elif e.get("ph") == "X" and e.get("cat") == "off-cpu":
            waits[key].append((e["ts"], e["dur"]))
    last = evs[-1]["ts"] if evs else 0
    span = (marks[-1]["ts"] - marks[0]["ts"]) / 1e6 if marks else 0
    counted = matched = 0
    for m in marks:
        if m["ts"] + 600e3 > last:
            continue  # its wait may not have ended inside the snapshot
        counted += 1
        key = (m["pid"], m["tid"])
        if any(0 <= s - m["ts"] <= 5000 and d >= 30e3 for s, d in waits[key]):
            matched += 1
    first = marks[0]["args"].get("round") if marks else None
    out = {"marks": len(marks), "span_s": round(span, 2), "first_round": first,
           "last_round": marks[-1]["args"].get("round") if marks else None,
           "counted": counted, "with_kernel_slice": matched,
           "threads_with_waits": len(waits), "cause": info.get("cause")}
    ok = (marks and 0.7 * ring <= span <= ring + 4 and first and first > 0 and
          counted and matched >= 0.8 * counted and info)
    done(ok, out)

if mode == "meter":
    interval, post = float(sys.argv[3]), float(sys.argv[4])
    level = [e for e in evs if e.get("name") == "Rtd-Flight-Test/Level" and
             e["args"].get("value", 0) >= 40]
    gauge = [(e["ts"], float(e["args"].get("lastValue", "nan"))) for e in evs
             if e.get("name") == "System.Diagnostics.Metrics/GaugeValuePublished" and
             e["args"].get("instrumentName") == "bars.queue.length"]
    if not level or not gauge:
        done(False, {"level_events": len(level), "gauge_values": len(gauge)})
    lt = level[0]["ts"]
    before = [t for t, v in gauge if t < lt and v < 40]
    high = [t for t, v in gauge if t >= lt and v >= 40]
    hit_us = info.get("hit_ns", 0) / 1e3
    fired_us = info.get("fired_ns", 0) / 1e3
    out = {"gauge_values_before": len(before), "gauge_values_high": len(high),
           "published_after_level_s": round((high[0] - lt) / 1e6, 3) if high else None,
           "hit_is_first_high": bool(high) and abs(hit_us - high[0]) < 1,
           "fired_after_hit_s": round((fired_us - hit_us) / 1e6, 3),
           "after_hit_s": round((evs[-1]["ts"] - hit_us) / 1e6, 3),
           "cause": info.get("cause")}
    ok = (before and high and high[0] - lt <= (interval + 1) * 1e6 and
          out["hit_is_first_high"] and out["after_hit_s"] >= post - 0.5)
    done(ok, out)

sys.exit("flight_check.py: unknown mode " + mode)
