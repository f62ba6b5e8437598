#!/usr/bin/env bash
# The agent, with its defaults, never keeps a .NET program from exiting
# (#27 item 1): 24 short-lived programs, found by name as they start, end
# around their session's first counter collection (5 s, the default
# counters interval, after the agent attached; see dotnet/exits.sh); each
# must exit within 2 s of its Main returning, and the agent must see each
# one go. Before the fix the default counters (System.Runtime) were also
# asked for as a Meter, and a Metrics session ending while its first
# collection ran deadlocked the runtime's shutdown for good
# (src/dotnet/counters.c).
. "$(dirname "$0")/lib.sh"
command -v dotnet >/dev/null 2>&1 || skip "no dotnet SDK on PATH"
. "$SRC/tests/integration/dotnet/exits.sh"

NAME=dx$$
start_agent --target "name=^$NAME\$" || { bad "agent did not start"; exit 1; }
run_exits 24 5000 "$NAME" ""
# the agent saw every one start and end
found=0 gone=0 missed=
for d in "$EXITS_DIR"/[0-9]*; do
  p=$(cat "$d/ready" 2>/dev/null) || continue
  grep -q "pid $p (.*found by name=^$NAME" "$AGENT_LOG" && found=$((found+1))
  wait_for 10 grep -q "pid $p exited" "$AGENT_LOG" && gone=$((gone+1)) || missed="$missed $p"
done
[ "$found" = 24 ] && [ "$gone" = 24 ] && ok "the agent found all 24 and saw each exit" \
  || bad "the agent found $found and saw $gone exit of 24 (not:$missed)"
[ $fail = 0 ] || grep -v 'is taken by' "$AGENT_LOG" | tail -40
stop_agent || bad "agent exit status $?"
[ $fail = 0 ] && echo PASS || { echo "$fail FAILED"; exit 1; }
