#!/usr/bin/env bash
# `rtdiag record --go-trace`: a Go 1.23 program serving net/http/pprof
# (tests/targets/go-record) logs "sleep N" (runtime/trace.Log) and at once
# sleeps 20 ms, in a loop. One recording of its kernel side (perf) and its
# runtime side (its /debug/pprof/trace, captured as `gotrace capture`
# does) on one clock: each log is followed by the goroutine's GoBlock
# (reason sleep) on the same M's track, the OS thread id, within 1 ms, and
# by that thread's off-CPU slice beginning after the GoBlock within 2 ms
# for >= 90% of the logs (gosleep.py; the gaps' distribution is printed).
# An unreachable --go-trace: the kernel's side is written, exit 3 and why.
. "$(dirname "$0")/go_lib.sh"
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ] ||
  { echo "SKIP: off-CPU waits need sched_switch samples: root or perf_event_paranoid <= 1"; exit 77; }
start_go 1.23
rc=$?
[ $rc = 77 ] && { echo "SKIP: Go 1.23 is not installed"; exit 77; }
[ $rc = 0 ] || { echo "FAIL: go-record did not build"; exit 1; }

"$R" record -p "$GP" -d 3 --go-trace "http://$(cat "$W/addr")" -o "$W/t.json" -o "$W/t.pftrace" 2>"$W/err"
rc=$?
cat "$W/err"
if [ $rc != 0 ] && grep -q "perf_event\|Permission\|not permitted" "$W/err"; then
  echo "SKIP: perf_event is unavailable here: $(head -2 "$W/err")"; exit 77
fi
[ $rc = 0 ] || { echo "FAIL: rtdiag record exited $rc"; fails=1; }
if python3 "$HERE/gosleep.py" "$W/t.json" >"$W/gap"; then
  echo "ok: $(cat "$W/gap")"
else
  echo "FAIL: $(cat "$W/gap")"; fails=1
fi
grep -q '"stop-the-world\|"GC' "$W/t.json" && echo "ok: the runtime's ranges (STW/GC) are in it" ||
  { echo "FAIL: no GC or STW range in the timeline"; fails=1; }

"$R" record -p "$GP" -d 1 --go-trace http://127.0.0.1:1 -o "$W/x.json" 2>"$W/err2"
rc=$?
[ $rc = 3 ] && grep -q 'go-trace.*refused' "$W/err2" && echo "ok: unreachable --go-trace: exit 3: $(grep go-trace "$W/err2" | head -1)" ||
  { echo "FAIL: unreachable --go-trace: exit $rc: $(cat "$W/err2")"; fails=1; }

# the program dies while recorded: its trace breaks off inside a
# generation; the recording keeps the trace's complete part and the
# kernel's side up to the end (the Go source ends, the others go on):
# exit 3, a whole JSON file, off-CPU slices later than the last Go record
"$R" record -p "$GP" --go-trace "http://$(cat "$W/addr")" -o "$W/k.json" 2>"$W/err3" &
RP=$!
# killed once the capture brought a few generations (the timeline is
# renamed into place at the end: nothing to look at before)
rm -f "$W/gens"
wait_until go_gens "$RP" 3
kill -9 "$GP"; wait "$GP" 2>/dev/null; GP=
wait "$RP"
rc=$?
python3 - "$W/k.json" <<'PY' >"$W/k.out" 2>&1 && [ $rc = 3 ] && grep -q 'Go trace broke off' "$W/err3" \
  && echo "ok: the program killed: exit 3, $(cat "$W/k.out")" \
  || { echo "FAIL: the program killed mid-recording: exit $rc: $(cat "$W/k.out") $(cat "$W/err3")"; fails=1; }
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
go = [e["ts"] for e in ev if e.get("cat") == "goroutine"]
off = [e["ts"] + e.get("dur", 0) for e in ev if e.get("cat") == "off-cpu"]
assert go, "no Go record"
assert off and max(off) > max(go), "no off-CPU slice after the last Go record"
print("%d Go records, off-CPU slices up to %.0f ms after the last" % (len(go), (max(off) - max(go)) / 1000))
PY
[ $fails = 0 ]
