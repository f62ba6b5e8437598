#!/usr/bin/env bash
# `rtdiag record --go-trace` as a rolling capture: the program's trace is
# asked for in pieces of --go-piece, back to back. tests/targets/go-record
# logs "sleep N" (runtime/trace.Log) once a round (>= 20 ms). A recording
# of 5 s in pieces of 1.5 s has at least two pieces (how many more is the
# machine's speed), each gap rtdiag counts drawn, marks from every piece,
# none twice, and
# every mark missing lies inside a measured "Go trace gap" slice
# (gopieces.py); rtdiag says how many pieces and how long the gaps were.
# Go 1.23 and 1.22 (self-contained generations) and 1.19 (a whole trace a
# piece, decoded when it ends) alike; a Go that is not installed is said
# and skipped. Ctrl-C (no --duration) cuts the piece under way: rtdiag
# ends within a bounded time, with the marks of what came.
. "$(dirname "$0")/go_lib.sh"
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ] ||
  { echo "SKIP: perf_event is not allowed to this user"; exit 77; }
ran=0

for GO in 1.23 1.22 1.19; do
  start_go $GO
  rc=$?
  [ $rc = 77 ] && { echo "skipped: Go $GO is not installed"; continue; }
  [ $rc = 0 ] || { bad "go-record did not build with Go $GO"; continue; }
  "$R" record -p "$GP" -d 5 --go-trace "http://$(cat "$W/addr")" --go-piece 1.5s --no-dotnet \
    -o "$W/t.json" 2>"$W/err"
  rc=$?
  if [ $rc != 0 ] && grep -q "perf_event\|Permission\|not permitted" "$W/err"; then
    echo "SKIP: perf_event is unavailable here: $(head -2 "$W/err")"; exit 77
  fi
  ran=1
  # the pieces' count is the machine's (a piece begins when the last one
  # has been read, and with Go 1.19 decoded): at least two pieces in 5 s,
  # and every gap rtdiag counted drawn
  said=$(sed -n 's/.*Go trace: [0-9]* pieces*, \([0-9]*\) gaps.*/\1/p' "$W/err")
  [ -n "$said" ] && [ "$said" -ge 1 ] || said=">=1"
  if [ $rc = 0 ] && python3 "$HERE/gopieces.py" "$W/t.json" "$said" >"$W/check"; then
    ok "Go $GO: 5 s in pieces of 1.5 s: $(cat "$W/check"); $(grep -o 'Go trace: .*' "$W/err")"
  else
    bad "Go $GO: exit $rc: $(cat "$W/check")"; cat "$W/err"
  fi
  stop_go
done
[ $ran = 1 ] || { echo "SKIP: no Go of 1.19, 1.22, 1.23 is installed"; exit 77; }

# no --duration: Ctrl-C cuts the piece under way (pieces of 60 s: the
# program would trace for a minute more); rtdiag ends soon after, with
# what came of the piece's complete generations
start_go 1.23 || exit 1
"$R" record -p "$GP" --go-trace "http://$(cat "$W/addr")" --go-piece 60s --no-dotnet \
  -o "$W/c.json" 2>"$W/err2" &
RP=$!
# under way: the piece holds a few generations (the timeline is renamed
# into place at the end: nothing to look at before)
rm -f "$W/gens"
wait_until go_gens "$RP" 3
t0=$(date +%s.%N)
kill -INT "$RP"
wait "$RP"
rc=$?
RP=
took=$(echo "$(date +%s.%N) - $t0" | bc)
n=$(grep -o '"sleep [0-9]*"' "$W/c.json" | wc -l)
# the bound: libcurl's progress callback (<= 1 s), the last window, the
# writers; 20 s is far from the 60 s the piece had left
if [ $rc = 0 ] && [ "$n" -gt 0 ] && [ "$(echo "$took < 20" | bc)" = 1 ] &&
   python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$W/c.json"; then
  ok "Ctrl-C in a 60 s piece: rtdiag ended in $took s, $n marks kept: $(grep -o 'cut at.*' "$W/err2" | head -1)"
else
  bad "Ctrl-C in a 60 s piece: exit $rc after $took s, $n marks"; cat "$W/err2"
fi
[ $fails = 0 ]
