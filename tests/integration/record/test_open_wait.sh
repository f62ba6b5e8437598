#!/usr/bin/env bash
# A thread that left the CPU during a recording and is not back when the
# recording stops: its wait is in the timeline, from its switch-out to the
# stop, marked "open" (rtd_perf_profiler_close_waits(); before, such a
# wait was lost: a thread blocked at the moment that matters showed
# nothing). `record -d 1.5 -- sh -c 'sleep 0.3; sleep 30'`: the second
# sleep's thread waits in clock_nanosleep past the stop, the shell in
# wait4. A recording whose program ends by itself has no open wait (its
# threads are gone, their waits dropped).
set -u
R=${RTDIAG:?}
W=$(mktemp -d /tmp/rtd-record-open-XXXXXX)
trap 'rm -rf "$W"' EXIT
"$R" record -d 1.5 -o "$W/t.json" -- sh -c 'sleep 0.3; exec sleep 30' >/dev/null 2>"$W/err"
rc=$?
if [ $rc != 0 ] && grep -q "perf_event\|Permission\|not permitted" "$W/err"; then
  echo "SKIP: perf_event is unavailable here: $(head -2 "$W/err")"; exit 77
fi
grep -q "no off-CPU waits" "$W/err" && { echo "SKIP: no off-CPU waits here: $(grep 'no off-CPU' "$W/err")"; exit 77; }
[ $rc = 0 ] || { cat "$W/err"; echo "FAIL: record exited $rc"; exit 1; }
"$R" record -o "$W/done.json" -- sh -c 'sleep 0.2' >/dev/null 2>"$W/err2" || { cat "$W/err2"; echo "FAIL: record of a program that ends"; exit 1; }
python3 - "$W/t.json" "$W/done.json" <<'PY'
import json, sys
def events(p):
    d = json.load(open(p))
    return d["traceEvents"] if isinstance(d, dict) else d
ev = events(sys.argv[1])
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
waits = [e for e in ev if e.get("cat") == "off-cpu" and e.get("ph") == "X"]
opened = [e for e in waits if e["args"].get("open") == 1]
print("%d off-CPU slices, %d open at the stop: %s" % (len(waits), len(opened),
      ", ".join("%s in %s %.0f ms" % (names.get((e["pid"], e["tid"]), e["tid"]), e["args"]["in"], e["dur"] / 1000) for e in opened)))
sl = [e for e in opened if e["args"]["in"] == "clock_nanosleep" and e["args"]["state"] == "S"]
assert sl, "no open wait in clock_nanosleep (the 30 s sleep)"
# it runs to the stop: nothing in the file ends after it
end = max(e["ts"] + e.get("dur", 0) for e in ev if "ts" in e)
assert all(abs(e["ts"] + e["dur"] - end) < 1000 for e in sl), "an open wait does not end at the stop"
# and begins after the first sleep (a wait that began in the recording)
first = min(e["ts"] for e in ev if "ts" in e)
assert all(e["ts"] > first for e in sl)
assert all(e["args"].get("open") != 1 for e in waits if e not in opened)
print("ok: the 30 s sleep's wait runs to the stop, marked open")
done = [e for e in events(sys.argv[2]) if e.get("cat") == "off-cpu" and e.get("args", {}).get("open") == 1]
assert not done, "open waits in a recording whose program ended: %s" % done[:2]
print("ok: a program that ended leaves no open wait")
PY
