#!/usr/bin/env bash
# rtdiag dotnet counters monitor, with its defaults, never keeps a .NET
# program from exiting (#27 item 1): 24 short-lived programs, each watched
# by its own monitor, end around the session's first counter collection
# (see exits.sh); each must exit within 2 s of its Main returning, over
# the slowest exit of the same program unattached, run beside them. Before
# the fix, System.Runtime was also asked for as a Meter, and a Metrics
# session ending while its first collection ran deadlocked the runtime's
# shutdown for good (src/dotnet/counters.c).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/exits.sh"

monitor() {
  "$R" dotnet counters monitor -p "$2" >"$1/mon.out" 2>"$1/mon.err" &
  PIDS+=("$!")
}
run_exits 24 1000 "dx$$" monitor
# the monitors had their sessions: 20 at least, or too little is tested
n=0
for d in "$EXITS_DIR"/[0-9]*; do
  grep -q "session [0-9]* started" "$d/mon.err" 2>/dev/null && n=$((n+1))
done
refused=$(cat "$EXITS_DIR"/*/mon.err | grep -v 'session [0-9]* started\|published no value' | sed 's/pid [0-9]*/pid N/' | sort | uniq -c | head -3)
[ "$n" -ge 20 ] && ok "$n of 24 monitors started their session${refused:+; the others: $refused}" \
  || bad "$((24 - n)) of 24 monitors did not start their session: $refused"
[ $fail = 0 ] && echo PASS || { echo "$fail FAILED"; exit 1; }
