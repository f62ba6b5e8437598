#!/usr/bin/env bash
# rtdiag record --ring --trigger 'System.Runtime/cpu-usage>=0' (issue #31):
# an EventSource counter, as dotnet-counters names it, fires a trigger
# from the live stream's System.Runtime/EventCounters events, whose
# values are inside one struct Payload (the record stream now gives its
# fields: Name, Mean...). >= 0 holds at the first value published, so
# with --max-snapshots 1 rtdiag writes one snapshot by that trigger and
# exits 0; the snapshot holds the cpu-usage values.
. "$(dirname "$0")/flight_lib.sh"
start_target
start_rtdiag --ring 4s --trigger 'System.Runtime/cpu-usage>=0' --max-snapshots 1
gone() { ! kill -0 "$RP" 2>/dev/null; }
wait_until gone
wait "$RP"; rc=$?; RP=
[ $rc = 0 ] && ok "exit 0 after the one snapshot" || bad "exit $rc"
f=$(snaps cpu-usage)
if [ -n "$f" ] && python3 - "$f" >"$W/ec" <<'PY'
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
ec = [e["args"] for e in evs if e.get("name") == "System.Runtime/EventCounters"
      and e.get("args", {}).get("Name") == "cpu-usage"]
snap = [e["args"] for e in evs if e.get("name") == "rtdiag/snapshot"]
print(json.dumps({"cpu_usage_values": [a.get("Mean") for a in ec][:5],
                  "why": snap[-1]["why"] if snap else None}))
sys.exit(0 if ec and all("Mean" in a for a in ec) and snap else 1)
PY
then
  ok "the trigger fired on System.Runtime's cpu-usage: $(cat "$W/ec")"
else
  bad "no snapshot by the cpu-usage trigger, or no cpu-usage values in it: $(ls "$S") $(cat "$W/ec" 2>/dev/null)"
fi
finish
