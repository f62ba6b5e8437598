#!/usr/bin/env bash
# rtdiag record --ring --trigger on the runtime's own events (issue #31):
# - exception=System.TimeoutException: the program starts throwing (and
#   catching) one a round, announced by its Level event (-1); a snapshot
#   of cause "exception" comes, holding an Exception/Start of that type
#   after the announcement, and rtdiag says what fired;
# - gc-pause>20ms: the program builds ~40 MB of small live objects and
#   forces a blocking compacting gen-2 collection (Level -2); a snapshot of
#   cause "gc-pause" comes, rtdiag says the pause it saw (over 20 ms), and
#   the snapshot holds an "EE suspended" slice that long.
# The exception fires every round (no --cooldown): snapshots in one
# millisecond get -2, -3 and none replaces another.
# Before either, SIGUSR1 snapshots show the EventPipe session runs (the
# program's marks are in one): a trigger on runtime events needs it.
. "$(dirname "$0")/flight_lib.sh"
start_target
start_rtdiag --ring 8s --trigger exception=System.TimeoutException --trigger 'gc-pause>20ms' \
  --interval 1s
i=$(usr1_until 'Rtd-Flight-Test/Mark') || { bad "the program's events never came"; finish; }
ok "the EventPipe session runs (marks in the ${i}th SIGUSR1 snapshot)"

echo -1 >"$W/level.tmp" && mv "$W/level.tmp" "$W/level"
wait_until has_snaps exception 1 || { bad "no snapshot for exception=System.TimeoutException"; finish; }
python3 - "$(snaps exception | head -1)" <<'PY' >"$W/x" 2>&1 && ok "exception: $(cat "$W/x")" || bad "exception snapshot: $(cat "$W/x")"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
lv = [e["ts"] for e in ev if e.get("name") == "Rtd-Flight-Test/Level" and e.get("args", {}).get("value") == -1]
ex = [e for e in ev if "Exception" in e.get("name", "") and "System.TimeoutException" in json.dumps(e.get("args", {}))]
assert lv, "no Level -1 event in the snapshot"
assert ex, "no TimeoutException in the snapshot"
assert max(e["ts"] for e in ex) >= min(lv), "the exceptions are all before the announcement"
print("%d TimeoutExceptions in the snapshot, the first %.1f ms after the announcement" % (
    len(ex), (min(e["ts"] for e in ex if e["ts"] >= min(lv)) - min(lv)) / 1000))
PY
grep -q "trigger 'exception=System.TimeoutException'" "$W/err" && ok "rtdiag said what fired: $(grep -m1 "trigger 'exception" "$W/err")" ||
  bad "rtdiag did not say what fired"

echo -2 >"$W/level.tmp" && mv "$W/level.tmp" "$W/level"
wait_until has_snaps gc-pause 1 || { bad "no snapshot for gc-pause>20ms"; finish; }
said=$(grep -m1 "trigger 'gc-pause>20ms'" "$W/err")
[ -n "$said" ] && ok "rtdiag said what fired: $said" || bad "rtdiag did not say what fired"
python3 - "$(snaps gc-pause | head -1)" <<'PY' >"$W/g" 2>&1 && ok "gc-pause: $(cat "$W/g")" || bad "gc-pause snapshot: $(cat "$W/g")"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
# the runtime's "EE suspended" slices: B/E on the process's GC track
open_, sus = {}, []
for e in sorted((e for e in ev if e.get("name") == "EE suspended"), key=lambda e: e["ts"]):
    if e["ph"] == "B":
        open_[e["tid"]] = e["ts"]
    elif e["ph"] == "E" and e["tid"] in open_:
        sus.append(e["ts"] - open_.pop(e["tid"]))
    elif e["ph"] == "X":
        sus.append(e["dur"])
long_ = [d for d in sus if d > 20000]
assert long_, "no suspension over 20 ms among %d: %s" % (len(sus), ["%.1f" % (d / 1000) for d in sus])
print("%d of %d suspensions over 20 ms, the longest %.1f ms" % (len(long_), len(sus), max(long_) / 1000))
PY
kill -INT "$RP"; wait "$RP"; rc=$?; RP=
[ $rc = 0 ] && ok "Ctrl-C: exit 0" || bad "Ctrl-C: exit $rc"
said=$(grep -c '^rtdiag: snapshot .*-exception[-0-9]*\.json' "$W/err")
[ "$said" = "$(nsnaps exception)" ] && ok "$said exception snapshots said, $said files: none replaced another" ||
  bad "$said exception snapshots said, $(nsnaps exception) files: $(ls "$S")"
finish
