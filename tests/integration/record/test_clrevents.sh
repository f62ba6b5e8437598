#!/usr/bin/env bash
# `rtdiag record --clrevents` and EventSource Start/Stop pairs as slices,
# on a real .NET program (tests/targets/dotnet-activity): a thread named
# "rtd-request-worker-thread" writes Rtd-Activity-Test RequestStart, sleeps
# 20 ms, writes RequestStop, and every 5th round makes a blocking GC.
# - --clrevents gc: each Start/Stop pair is a slice "Rtd-Activity-Test/
#   Request" on the worker's own track (its OS tid), at least 20 ms long,
#   with the kernel's off-CPU wait of the sleep inside it (>= 90% of those
#   before perf stopped); the runtime's GCs are there (GC slices);
#   two async flows write AsyncRequest Start, await Task.Delay(20), and
#   Stop, one on the thread pool (on its own thread or another), one begun
#   on a thread of its own and ended on a pool thread (so some pair crosses
#   threads however the pool schedules: a loaded check's pool ran all 36
#   of its pairs on their own thread): every pair is one slice
#   (matched by the ActivityID the runtime gives them), on its thread when
#   it began and ended there innermost, else on the process's async lanes;
# - --clrevents jit: no GC event at all although the program collects;
# - an unknown keyword name is refused as usage (exit 2).
set -u
R=${RTDIAG:?}; SRC=${RTD_SOURCE_DIR:?}
command -v dotnet >/dev/null || { echo "SKIP: no dotnet SDK on PATH"; exit 77; }
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ] ||
  { echo "SKIP: off-CPU waits need sched_switch samples: root or perf_event_paranoid <= 1"; exit 77; }
D=$(bash "$SRC/tests/integration/dotnet/build.sh" dotnet-activity tests/targets) || exit 1
W=$(mktemp -d /tmp/rtd-record-clrevents-XXXXXX)
TP=
cleanup() {
  [ -n "$TP" ] && { kill -9 "$TP" 2>/dev/null; wait "$TP" 2>/dev/null; rm -f /tmp/dotnet-diagnostic-"$TP"-*-socket; }
  rm -rf "$W"
}
trap cleanup EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$D/dotnet-activity" "$W/ready" >"$W/out" 2>&1 &
TP=$!
for _ in $(seq 600); do [ -s "$W/ready" ] && break; kill -0 "$TP" 2>/dev/null || break; sleep 0.1; done
[ -s "$W/ready" ] || { echo "FAIL: dotnet-activity did not start: $(head -5 "$W/out")"; exit 1; }

# record until the program has done 12 more rounds (polled, bounded), then Ctrl-C
record() {
  local out=$1 err=$2 n; shift 2
  : >"$err"
  "$R" record -p "$TP" --providers Rtd-Activity-Test "$@" -o "$out" 2>"$err" &
  local rp=$!
  for _ in $(seq 1200); do grep -q '^rtdiag: recording' "$err" && break; kill -0 $rp 2>/dev/null || break; sleep 0.1; done
  n=$(wc -l <"$W/out")
  for _ in $(seq 1200); do [ "$(wc -l <"$W/out")" -ge $((n + 12)) ] && break; kill -0 $rp 2>/dev/null || break; sleep 0.1; done
  kill -INT $rp 2>/dev/null
  wait $rp
}

record "$W/gc.json" "$W/gc.err" --clrevents gc
rc=$?
cat "$W/gc.err"
[ $rc = 0 ] || bad "--clrevents gc: exit $rc"
python3 - "$W/gc.json" <<'PY' || bad "Start/Stop slices or GC slices missing"
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs if e.get("name") == "thread_name"}
# B/E paired per track, and whole slices ("X": pairs matched by ActivityID
# are given at their Stop)
open_, sl = {}, []
for e in sorted((e for e in evs if e.get("ph") in ("B", "E")), key=lambda e: e["ts"]):
    k = (e["pid"], e["tid"])
    if e["ph"] == "B":
        open_.setdefault(k, []).append(e)
    elif open_.get(k):
        b = open_[k].pop()
        sl.append((k, b["name"], b.get("cat"), b["ts"], e["ts"]))
sl += [((e["pid"], e["tid"]), e["name"], e.get("cat"), e["ts"], e["ts"] + e.get("dur", 0))
       for e in evs if e.get("ph") == "X"]
# the pairs from the instants (per thread, in order), and the slices'
# begins: one at each Start (the last may still be open when the session
# stops: the writer then closes it at the end)
req, opened = [], {}
for e in sorted((e for e in evs if e.get("ph") == "i" and e.get("name", "").startswith("Rtd-Activity-Test/Request/")), key=lambda e: e["ts"]):
    k = (e["pid"], e["tid"])
    if e["name"].endswith("/Start"):
        opened[k] = e["ts"]
    elif k in opened:
        req.append((k, "Rtd-Activity-Test/Request", None, opened.pop(k), e["ts"]))
starts = {(e["pid"], e["tid"]) for e in evs if e.get("name") == "Rtd-Activity-Test/Request/Start"}
begins = {(s[0], s[3]) for s in sl if s[1] == "Rtd-Activity-Test/Request"}
# a Request still open when the session stopped has no slice
begins |= {((e["pid"], e["tid"]), e["ts"]) for e in evs if e.get("ph") == "B" and e["name"] == "Rtd-Activity-Test/Request"}
unbegun = [r for r in req if (r[0], r[3]) not in begins]
waits = [s for s in sl if s[2] == "off-cpu"]
# perf stops before the EventPipe session does: the pairs after the
# thread's last off-CPU wait have no kernel side to hold
last = max((w[4] for w in waits), default=0)
inside = [r for r in req if any(w[0] == r[0] and r[3] <= w[3] and w[4] <= r[4] and w[4] - w[3] >= 15000 for w in waits)]
gcs = [s for s in sl if s[1] == "GC"]
tracks = {names.get(r[0]) for r in req}
print("%d Request pairs on %s, %.1f..%.1f ms, each a slice from its Start: %s; %d with the "
      "sleep's off-CPU wait inside; %d GC slices"
      % (len(req), tracks, min((r[4] - r[3]) / 1000 for r in req) if req else 0,
         max((r[4] - r[3]) / 1000 for r in req) if req else 0, not unbegun, len(inside),
         len(gcs)))
for r in req:
    if r not in inside and r[4] < last:
        print("  no wait inside", r, [(w[1], w[3] - r[3], w[4] - r[3]) for w in waits if w[0] == r[0] and w[4] > r[3] - 30000 and w[3] < r[4] + 30000])
# the async requests: each pair (by its round) a slice from its Start to
# its Stop, on its thread when both came on one, else on the process's
# async lane "Rtd-Activity-Test/AsyncRequest (async N)"
ev = {}
for e in evs:
    if e.get("ph") == "i" and e.get("name", "").startswith("Rtd-Activity-Test/AsyncRequest/"):
        ev.setdefault(e["args"]["round"], {})[e["name"].rsplit("/", 1)[1]] = e
pairs = [(v["Start"], v["Stop"]) for v in ev.values() if "Start" in v and "Stop" in v]
asl = {(s[0], s[3], s[4]) for s in sl if s[1] == "Rtd-Activity-Test/AsyncRequest"}
same = [p for p in pairs if p[0]["tid"] == p[1]["tid"]]
cross = [p for p in pairs if p[0]["tid"] != p[1]["tid"]]
def found(p, lane):
    a, b = p
    ks = [k for k, n in names.items() if k[0] == a["pid"] and (n.startswith("Rtd-Activity-Test/AsyncRequest (async ") if lane else k == (a["pid"], a["tid"]))]
    return any((k, a["ts"], b["ts"]) in asl or any(k == s[0] and abs(s[1] - a["ts"]) <= 1 and abs(s[2] - b["ts"]) <= 1 for s in asl) for k in ks)
# one that ended on its own thread with another still open there inside
# it (the two loops' continuations run on one thread) is on a lane too
miss = [p for p in same if not found(p, False) and not found(p, True)] + [p for p in cross if not found(p, True)]
print("%d AsyncRequest pairs: %d ended on their own thread, %d on another; %d without their slice"
      % (len(pairs), len(same), len(cross), len(miss)))
for p in miss[:5]:
    print("  no slice for", p[0]["args"]["round"], p[0]["tid"], p[0]["ts"], p[1]["tid"], p[1]["ts"])
ok = (len(pairs) >= 10 and cross and not miss and len(asl) == len(pairs) and
      len(req) >= 10 and not unbegun and {r[0] for r in req} == starts and
      all(r[4] - r[3] >= 20000 for r in req) and len(inside) >= 0.9 * len([r for r in req if r[4] < last]) and gcs)
sys.exit(0 if ok else 1)
PY

record "$W/jit.json" "$W/jit.err" --clrevents jit
rc=$?
[ $rc = 0 ] || bad "--clrevents jit: exit $rc: $(cat "$W/jit.err")"
n=$(grep -c 'Request/Start' "$W/jit.json")
g=$(grep -c 'Microsoft-Windows-DotNETRuntime/GC/' "$W/jit.json")
[ "$n" -gt 0 ] && [ "$g" = 0 ] && echo "ok: --clrevents jit: no GC events over 12 rounds (>= 2 GCs)" ||
  bad "--clrevents jit: $g GC events, $n Request starts"

"$R" record -p "$TP" --clrevents gc+nosuchword -o "$W/x.json" 2>"$W/bad.err"
rc=$?
[ $rc = 2 ] && grep -q nosuchword "$W/bad.err" && echo "ok: an unknown keyword is refused: $(head -1 "$W/bad.err")" ||
  bad "--clrevents gc+nosuchword: exit $rc: $(cat "$W/bad.err")"
echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
[ $fails = 0 ]
