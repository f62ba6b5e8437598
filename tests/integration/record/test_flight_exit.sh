#!/usr/bin/env bash
# rtdiag record --ring (issue #31): a target that exits mid-ring (it runs
# 60 more rounds, ~3 s, once rtdiag records, under an 8 s ring) leaves a
# last snapshot marked incomplete (its name ends -exit-incomplete, its
# rtdiag/snapshot instant says incomplete = 1) holding the program's marks
# up to its last round; exit 3.
. "$(dirname "$0")/flight_lib.sh"
start_target 60
start_rtdiag --ring 8s
echo 1 >"$W/level.tmp" && mv "$W/level.tmp" "$W/level" # go: 60 rounds more
gone() { ! kill -0 "$RP" 2>/dev/null; }
wait_until gone
wait "$RP"; rc=$?; RP=
wait "$TP"; TP=
want=$(tail -1 "$W/out")
[ $rc = 3 ] && ok "exit 3" || bad "exit $rc"
f=$(snaps exit-incomplete)
if [ -n "$f" ] && python3 "$HERE/flight_check.py" info "$f" >"$W/info" &&
   python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['incomplete'] == 1 else 1)" "$W/info"; then
  ok "a last snapshot marked incomplete: $(basename "$f") $(cat "$W/info")"
else
  bad "no snapshot marked incomplete: $(ls "$S")"
fi
last=$(python3 - "$f" <<'PY'
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
print(max((e["args"]["round"] for e in evs if e.get("name") == "Rtd-Flight-Test/Mark"), default=-1))
PY
)
[ "$last" = "$want" ] && ok "it holds the marks to the program's last round ($want)" ||
  bad "its last mark is round $last ($want expected)"
finish
