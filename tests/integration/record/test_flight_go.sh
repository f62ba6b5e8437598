#!/usr/bin/env bash
# The flight recorder's Go runtime side: `rtdiag record -p PID --ring 8s
# --go-trace URL` on tests/targets/go-record (Go 1.23; a mark "sleep N",
# then a 20 ms sleep, a round). After more than 16 s of recording, a
# SIGUSR1 snapshot holds the goroutine events of the last ~8 s (the
# marks span 6-10 s; none from the recording's first seconds; the gaps
# between the capture's pieces inside) and the kernel's slices of the
# same threads (gosleep.py: each mark's GoBlock on its M, that thread's
# off-CPU slice right after); the recording goes on (a second snapshot
# holds later marks), and Ctrl-C ends it promptly with a last snapshot.
. "$(dirname "$0")/go_lib.sh"
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ] ||
  { echo "SKIP: off-CPU waits need sched_switch samples: root or perf_event_paranoid <= 1"; exit 77; }
S=$W/snap
mkdir -p "$S"
start_go 1.23
rc=$?
[ $rc = 77 ] && { echo "SKIP: Go 1.23 is not installed"; exit 77; }
[ $rc = 0 ] || { echo "FAIL: go-record did not build"; exit 1; }

"$R" record -p "$GP" --ring 8s --go-trace "http://$(cat "$W/addr")" --snapshot-dir "$S" \
  --format chrome-json --no-dotnet 2>"$W/err" &
RP=$!
recording() { grep -q '^rtdiag: recording pid' "$W/err" || ! kill -0 "$RP" 2>/dev/null; }
wait_until recording
if ! kill -0 "$RP" 2>/dev/null; then
  wait "$RP"; rc=$?; RP=
  grep -q "perf_event\|Permission\|not permitted" "$W/err" &&
    { echo "SKIP: perf_event is unavailable here: $(head -2 "$W/err")"; exit 77; }
  echo "FAIL: rtdiag record --ring --go-trace exited $rc at once: $(cat "$W/err")"; exit 1
fi
# CLOCK_MONOTONIC (the timeline's clock, in us) when the recording began
mono() { python3 -c 'import time; print("%.6f" % time.monotonic())'; }
t0=$(mono)
# the issue's "after 16 s" (a duration it asks for, not a wait for
# something to happen): 17 s
wait_until sh -c "[ \$(echo \"\$(python3 -c 'import time; print(time.monotonic())') - $t0 >= 17\" | bc) = 1 ]"
tsig=$(mono)

snaps() { ls "$S"/rtdiag-flight-*-signal*.json 2>/dev/null; }
kill -USR1 "$RP"
wait_until sh -c "[ \$(ls $S/rtdiag-flight-*-signal*.json 2>/dev/null | wc -l) -ge 1 ]" ||
  { echo "FAIL: no snapshot after SIGUSR1"; cat "$W/err"; exit 1; }
s1=$(snaps | head -1)
python3 - "$s1" "$t0" "$tsig" <<'PY' >"$W/c1" 2>&1 && ok "snapshot 1: $(cat "$W/c1")" || bad "snapshot 1: $(cat "$W/c1")"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
t0, tsig = float(sys.argv[2]) * 1e6, float(sys.argv[3]) * 1e6
marks = sorted((int(e["args"]["message"].split()[1]), e["ts"]) for e in ev
               if e.get("name") == "UserLog" and e.get("args", {}).get("message", "").startswith("sleep "))
gaps = [e for e in ev if e.get("name") == "Go trace gap"]
snap = [e["args"] for e in ev if e.get("name") == "rtdiag/snapshot"]
assert len(marks) >= 100, "%d marks" % len(marks)
span = (marks[-1][1] - marks[0][1]) / 1e6
assert 6 <= span <= 10, "the marks span %.2f s, want ~8" % span
# the ring ends at the recording's watermark when rtdiag took the snapshot
# (fired_ns, CLOCK_MONOTONIC as the timeline), the Go source's lag (5 s at
# most; a Go generation, 1-2 s, in practice) behind it: nothing after that
# moment, and the last mark less than 8 s before it. Measured from the
# signal instead, the lower bound checked how soon a loaded machine ran
# rtdiag after the test read its clock (the last mark came 0.01 s before
# the signal at load 15-20).
assert snap and "fired_ns" in snap[-1], "no rtdiag/snapshot instant with fired_ns"
fired = snap[-1]["fired_ns"] / 1e3
first_s, last_s = (marks[0][1] - t0) / 1e6, (fired - marks[-1][1]) / 1e6
assert fired >= tsig, "taken %.3f s before the signal was sent" % ((tsig - fired) / 1e6)
assert first_s >= 2, "the first mark is %.2f s after the recording began: not trimmed" % first_s
assert 0 <= last_s <= 8, "the last mark is %.2f s before the snapshot was taken" % last_s
assert gaps, "no Go trace gap between pieces in 8 s (pieces of 3 s)"
print("%d marks, %d..%d, spanning %.2f s, from %.2f s after the recording began to "
      "%.2f s before the snapshot was taken (%.2f s after the signal); %d gaps between pieces"
      % (len(marks), marks[0][0], marks[-1][0], span, first_s, last_s, (fired - tsig) / 1e6,
         len(gaps)))
PY
if python3 "$HERE/gosleep.py" "$s1" >"$W/g1"; then
  ok "the kernel's slices of the same threads: $(cat "$W/g1")"
else
  bad "the kernel's slices of the same threads: $(cat "$W/g1")"
fi

# the recording goes on: a later snapshot holds later marks
last1=$(grep -o '"sleep [0-9]*"' "$s1" | tr -dc '0-9\n' | sort -n | tail -1)
wait_until sh -c "[ \$(tail -1 $W/out) -gt $(( ${last1:-0} + 100 )) ]"
kill -USR1 "$RP"
wait_until sh -c "[ \$(ls $S/rtdiag-flight-*-signal*.json 2>/dev/null | wc -l) -ge 2 ]" ||
  bad "no second snapshot"
s2=$(snaps | sort | tail -1)
last2=$(grep -o '"sleep [0-9]*"' "$s2" | tr -dc '0-9\n' | sort -n | tail -1)
[ -n "$last2" ] && [ "$last2" -gt "${last1:-0}" ] && ok "the recording goes on: snapshot 2's last mark $last2 > $last1" ||
  bad "snapshot 2's last mark ${last2:-none} is not later than snapshot 1's ${last1:-none}"

# Ctrl-C: the piece under way is cut, a last snapshot, exit 0, promptly
t1=$(date +%s.%N)
kill -INT "$RP"
wait "$RP"
rc=$?
RP=
took=$(echo "$(date +%s.%N) - $t1" | bc)
ls "$S"/rtdiag-flight-*-interrupt*.json >/dev/null 2>&1 && [ $rc = 0 ] &&
  [ "$(echo "$took < 20" | bc)" = 1 ] && ok "Ctrl-C: exit 0 in $took s, a last snapshot" ||
  bad "Ctrl-C: exit $rc after $took s"
[ $fails = 0 ] && exit 0
echo "--- rtdiag's stderr:"; cat "$W/err"; exit 1
