#!/usr/bin/env bash
# The agent, with its defaults, never keeps a .NET program from exiting
# (#27 item 1): 24 short-lived programs, found by name as they start, end
# around their session's first counter collection (5 s, the default
# counters interval, after the agent attached; see dotnet/exits.sh); each
# must exit within 2 s of its Main returning, over the slowest exit of the
# same program with nothing attached, run beside them (exits.sh: ~0.1 s
# on a quiet machine, seconds at load 20), and the agent must see each one
# go. Before the fix the default counters (System.Runtime) were also
# asked for as a Meter, and a Metrics session ending while its first
# collection ran deadlocked the runtime's shutdown for good
# (src/dotnet/counters.c).
. "$(dirname "$0")/lib.sh"
command -v dotnet >/dev/null 2>&1 || skip "no dotnet SDK on PATH"
. "$SRC/tests/integration/dotnet/exits.sh"

NAME=dx$$
start_agent --target "name=^$NAME\$" || { bad "agent did not start"; exit 1; }
# 1 s apart (the issue's were 1.7 s apart), about 8 at once: 24 at once
# (1 kHz samples a thread each) are more than the agent reads at load 30,
# sanitized or at 5% CPU, its CPU cap then pauses the sessions and its
# scans fall behind, and programs ending then have none to test
EXITS_GAP=1
# the controls' own session: what the agent's defaults ask of the runtime
# (rtd_ipc_profile_request's keywords for alloc, lock, exception and wait;
# CPU comes from perf here) and its counters, 5 s apart
EXITS_CONTROL_CONFIG='Microsoft-Windows-DotNETRuntime:0x4200000C019:5,System.Runtime:0:5:EventCounterIntervalSec=5'
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
# a session refused at first (a runtime found early in its startup) is
# tried again 0.5 s later, then 1 s, 2 s...; a late reply is waited for
# (test_attach.sh); said, not fatal
ATTACH_FAILED='source failed|eventpipe: CollectTracing'
echo "note: $(grep -Ec "$ATTACH_FAILED" "$AGENT_LOG") attaches failed," \
  "$(grep -c 'the runtime answered after' "$AGENT_LOG") answered late (5 s) or after a failure"
grep -E "$ATTACH_FAILED" "$AGENT_LOG" | sed 's/pid [0-9]*/pid N/g; s/target [a-z0-9]* /target X /' | sort | uniq -c | head -5
[ $fail = 0 ] || grep -v 'is taken by' "$AGENT_LOG" | tail -40
stop_agent || bad "agent exit status $?"
[ $fail = 0 ] && echo PASS || { echo "$fail FAILED"; exit 1; }
