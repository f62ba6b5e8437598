#!/usr/bin/env bash
# `rtdiag record`'s first test (issue #30), on the running kernel and a
# real .NET program (tests/targets/dotnet-record): in a loop the program
# writes an EventSource event (Rtd-Record-Test/Mark) and at once sleeps
# 40 ms, then burns CPU in BurnNamedMethod. In the recorded timeline
# (gap.py reads the Chrome JSON):
# - each event is followed on its own thread's track (same OS pid/tid),
#   within 2 ms, by a ~40 ms off-CPU slice, for at least 95% of events;
#   the gaps' distribution (EventPipe's clock against perf_event's) is
#   printed;
# - the samples of the same recording name BurnNamedMethod;
# - the Perfetto file of the same recording decodes with protoc against
#   Perfetto's proto, and tlcheck.py reads it (nesting, interning) with
#   the same events;
# - the program's GCs are "GC" and "EE suspended" slices on lanes named so;
# - the CPU profile of the same recording (-o cpu.folded) names the method;
# - -n NAME and Ctrl-C: exit 0, the EventPipe stream closed by the runtime
#   after StopTracing, the timeline written;
# - the target's end before --duration: exit 3, the timeline written;
# - -- COMMAND: the session starts once the runtime listens, the JIT
#   frames are named, the perf map the program wrote is not left in /tmp.
set -u
R=${RTDIAG:?}; SRC=${RTD_SOURCE_DIR:?}; BIN=${RTD_BINARY_DIR:?}
SH=${RTD_SHARED_DIR:-$SRC/../shared}; P=$SH/reference/perfetto
HERE=$SRC/tests/integration/record
command -v dotnet >/dev/null || { echo "SKIP: no dotnet SDK on PATH"; exit 77; }
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ] ||
  { echo "SKIP: off-CPU waits need sched_switch samples: root or perf_event_paranoid <= 1"; exit 77; }
[ -d /sys/kernel/tracing/events/sched ] || [ -d /sys/kernel/debug/tracing/events/sched ] ||
  { echo "SKIP: no tracefs sched events here"; exit 77; }
D=$(bash "$SRC/tests/integration/dotnet/build.sh" dotnet-record tests/targets) || exit 1
W=$(mktemp -d /tmp/rtd-record-test-XXXXXX)
TP=
cleanup() {
  [ -n "$TP" ] && { kill -9 "$TP" 2>/dev/null; wait "$TP" 2>/dev/null; rm -f /tmp/dotnet-diagnostic-"$TP"-*-socket /tmp/perf-"$TP".map; }
  rm -rf "$W"
}
trap cleanup EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# wait until rtdiag ERR (its pid RP) says it records, then until the
# program has done 3 more rounds (an event each): polled, with a bound
recorded_rounds() {
  local err=$1 rp=$2 n
  for _ in $(seq 1200); do grep -q '^rtdiag: recording' "$err" && break; kill -0 "$rp" 2>/dev/null || return; sleep 0.1; done
  n=$(wc -l <"$W/out")
  for _ in $(seq 1200); do [ "$(wc -l <"$W/out")" -ge $((n + 3)) ] && break; sleep 0.1; done
}

# started through a link of its own name: -n below must find this one
# process, not another test's dotnet-record running beside it (ctest -j2)
ln -sf "$D/dotnet-record" "$W/rtdrec$$"
"$W/rtdrec$$" "$W/ready" >"$W/out" 2>&1 &
TP=$!
for _ in $(seq 600); do [ -s "$W/ready" ] && break; kill -0 "$TP" 2>/dev/null || break; sleep 0.1; done
[ -s "$W/ready" ] || { echo "FAIL: dotnet-record did not start: $(head -5 "$W/out")"; exit 1; }

"$R" record -p "$TP" -d 6 --providers Rtd-Record-Test -o "$W/t.json" -o "$W/t.pftrace" -o "$W/cpu.folded" 2>"$W/err"
rc=$?
cat "$W/err"
if [ $rc != 0 ] && grep -q "perf_event\|Permission\|not permitted" "$W/err"; then
  echo "SKIP: perf_event is unavailable here: $(head -2 "$W/err")"; exit 77
fi
[ $rc = 0 ] || bad "rtdiag record exited $rc"
if python3 "$HERE/gap.py" "$W/t.json" Rtd-Record-Test/Mark BurnNamedMethod >"$W/gap"; then
  ok "each event followed by its thread's off-CPU slice within 2 ms; gaps and samples: $(cat "$W/gap")"
else
  bad "events and off-CPU slices: $(cat "$W/gap")"
fi
if command -v protoc >/dev/null && [ -f "$P/perfetto_trace.proto" ]; then
  protoc --proto_path="$P" --decode=perfetto.protos.Trace perfetto_trace.proto \
    <"$W/t.pftrace" >"$W/t.txt" 2>"$W/perr" || bad "protoc: $(head -3 "$W/perr")"
  python3 "$SRC/tests/integration/pictures/tlcheck.py" perfetto "$W/t.txt" >"$W/t.sum" ||
    bad "tlcheck: $(cut -c1-300 "$W/t.sum")"
  python3 - "$W/t.sum" "$W/t.json" <<'PY' || bad "perfetto and chrome json differ: $(cut -c1-300 "$W/t.sum")"
import json, sys
s = json.load(open(sys.argv[1]))
evs = json.load(open(sys.argv[2]))["traceEvents"]
# an off-CPU wait is a whole slice ("X", given at its end) or a B/E pair
sleeps = sum(1 for e in evs if e.get("ph") in ("B", "X") and e.get("cat") == "off-cpu")
samples = sum(1 for e in evs if e.get("cat") == "sample")
tot = sum(n for k, n in s["slices"].items())
print(s["samples"], samples, tot, sleeps)
sys.exit(0 if s["samples"] == samples and tot >= sleeps > 0 else 1)
PY
  [ $fails = 0 ] && ok "the Perfetto file decodes with protoc; tlcheck reads the same samples and slices"
else
  echo "SKIP part: protoc or Perfetto's proto missing"
fi

# the runtime's GCs (GC.Collect every 10th round) as slices on the process's lanes
python3 - "$W/t.json" <<'PY' && ok "GC and EE suspended slices on the process's lanes, named so" || bad "no GC slices"
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs if e.get("name") == "thread_name"}
gc = [e for e in evs if e.get("ph") == "B" and e.get("cat") == "gc"]
lanes = {names.get((e["pid"], e["tid"])) for e in gc}
print(len(gc), "gc slices on", lanes)
sys.exit(0 if {"GC", "EE suspended"} <= lanes else 1)
PY

# Ctrl-C, the target by its name: the recording stops, the session is
# stopped and its stream closed by the runtime, the timeline is written
"$R" record -n "rtdrec$$" --providers Rtd-Record-Test -o "$W/t2.json" 2>"$W/err2" &
RP=$!
recorded_rounds "$W/err2" $RP
kill -INT $RP
wait $RP
rc=$?
[ $rc = 0 ] || bad "Ctrl-C: exit $rc: $(cat "$W/err2")"
grep -q 'EventPipe:' "$W/err2" && bad "Ctrl-C: the session did not end cleanly: $(cat "$W/err2")"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$W/t2.json" || bad "Ctrl-C: t2.json is not JSON"
grep -q 'Rtd-Record-Test/Mark' "$W/t2.json" || bad "Ctrl-C: t2.json lacks the events"
[ $fails = 0 ] && ok "-n NAME, Ctrl-C: exit 0, the session closed by the runtime, the timeline written"

# the CPU profile of the same recording
grep -q 'BurnNamedMethod' "$W/cpu.folded" && ok "cpu.folded of the same recording names BurnNamedMethod" ||
  bad "cpu.folded lacks BurnNamedMethod: $(head -3 "$W/cpu.folded")"

# the target ends before --duration: exit 3, and what came is written
"$R" record -p "$TP" -d 600 --providers Rtd-Record-Test -o "$W/t3.json" 2>"$W/err3" &
RP=$!
recorded_rounds "$W/err3" $RP
kill "$TP"
wait $RP
rc=$?
wait "$TP" 2>/dev/null; rm -f /tmp/perf-"$TP".map /tmp/dotnet-diagnostic-"$TP"-*-socket; TP=
[ $rc = 3 ] || bad "target ended early: exit $rc, want 3: $(cat "$W/err3")"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$W/t3.json" || bad "t3.json is not JSON"
grep -q 'Rtd-Record-Test/Mark' "$W/t3.json" || bad "t3.json lacks the events before the end"
[ $fails = 0 ] && ok "ended early: exit 3, the timeline written"
# -- COMMAND: the program started by rtdiag; its session once its runtime
# listens, its JIT frames named through the perf map it was told to write
"$R" record -d 3 --providers Rtd-Record-Test -o "$W/c.json" -o "$W/c.folded" -- \
  "$D/dotnet-record" "$W/ready2" >/dev/null 2>"$W/errc"
rc=$?
[ $rc = 0 ] || bad "-- COMMAND: exit $rc: $(cat "$W/errc")"
grep -q 'Rtd-Record-Test/Mark' "$W/c.json" || bad "-- COMMAND: no events: $(cat "$W/errc")"
grep -q 'BurnNamedMethod' "$W/c.folded" || bad "-- COMMAND: BurnNamedMethod not named"
cpid=$(cat "$W/ready2" 2>/dev/null)
[ -n "$cpid" ] && [ -e "/tmp/perf-$cpid.map" ] && bad "-- COMMAND: /tmp/perf-$cpid.map left behind"
[ $fails = 0 ] && ok "-- COMMAND: EventPipe events once the runtime listened, BurnNamedMethod named, no perf map left"
echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
[ $fails = 0 ]
