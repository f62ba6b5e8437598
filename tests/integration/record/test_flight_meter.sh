#!/usr/bin/env bash
# rtdiag record --ring --trigger (issue #31): a meter's threshold
# (Bars.Meter/bars.queue.length>=40, the counters published every 1 s)
# fires a snapshot: the program raises its gauge to 50 and says so with an
# event (Rtd-Flight-Test/Level); the first value published at 40 or more
# comes within the interval of that event and is what fired; with
# --post 2s the snapshot holds 2 s of records after it.
. "$(dirname "$0")/flight_lib.sh"
start_target
start_rtdiag --ring 8s --trigger 'Bars.Meter/bars.queue.length>=40' --post 2s --interval 1s
# the Metrics session publishes once it runs: a SIGUSR1 snapshot shows the
# gauge's values before the level is raised (the measure needs one)
i=$(usr1_until GaugeValuePublished) || { bad "the gauge's values never came"; finish; }
ok "the gauge is published (seen in the ${i}th SIGUSR1 snapshot)"
echo 50 >"$W/level.tmp" && mv "$W/level.tmp" "$W/level"
wait_until has_snaps bars.queue.length 1 || { bad "the trigger wrote no snapshot"; finish; }
f=$(snaps bars.queue.length | head -1)
if python3 "$HERE/flight_check.py" meter "$f" 1 2 >"$W/m"; then
  ok "the meter's threshold fired within the interval, and --post held: $(cat "$W/m")"
else
  bad "the trigger's snapshot: $(cat "$W/m")"
fi
grep -q "trigger 'Bars.Meter/bars.queue.length>=40': Bars.Meter/bars.queue.length 50 >= 40" "$W/err" &&
  ok "rtdiag said what fired" || bad "rtdiag did not say what fired"
kill -INT "$RP"; wait "$RP"; RP=
finish
