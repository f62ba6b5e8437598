#!/usr/bin/env bash
# rtdiag record --ring --trigger 'cpu>1%' --cooldown 3s --max-snapshots 2
# (issue #31): the program burns ~20% of a core, so the trigger holds at
# every reading (each second); snapshots are spaced by at least the
# cooldown (the triggers in between are said and dropped) and rtdiag stops
# by itself, exit 0, after the second.
. "$(dirname "$0")/flight_lib.sh"
start_target
start_rtdiag --ring 4s --trigger 'cpu>1%' --cooldown 3s --max-snapshots 2
gone() { ! kill -0 "$RP" 2>/dev/null; }
wait_until gone
wait "$RP"; rc=$?; RP=
[ $rc = 0 ] && ok "exit 0 after --max-snapshots" || bad "exit $rc"
[ "$(nsnaps cpu)" = 2 ] && [ "$(ls "$S" | wc -l)" = 2 ] && ok "two snapshots, by the cpu trigger" ||
  bad "snapshots: $(ls "$S")"
fired=()
for f in $(snaps cpu); do
  fired+=("$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['fired_ns'])" \
    <(python3 "$HERE/flight_check.py" info "$f"))")
done
gap=$(python3 -c "print(abs(${fired[1]:-0} - ${fired[0]:-0}) / 1e9)")
python3 -c "import sys; sys.exit(0 if $gap >= 3 else 1)" && ok "the triggers' snapshots ${gap}s apart (--cooldown 3s)" ||
  bad "snapshots ${gap}s apart"
grep -q "within --cooldown" "$W/err" && ok "triggers within the cooldown were said and dropped" ||
  bad "no trigger fell within the cooldown"
finish
