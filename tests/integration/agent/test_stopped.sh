#!/usr/bin/env bash
# A .NET runtime that does not answer (stopped by SIGSTOP, or starved)
# holds none of the agent's other targets: the agent's loop serves every
# target, and the requests it makes of a runtime as it attaches are read
# by that loop when their replies come (#29's first promise: attaching
# rtdiag never harms the target - nor the others).
#
# The agent with its defaults (.NET CPU from perf, wait profiles on) is
# given a stopped .NET program first and a running one second. Before,
# the stopped one held the loop 5 s in ProcessInfo2 (the runtime's
# version, for the wait profiles) and then 30 s in EnablePerfMap (perf's
# JIT names), and gave the perf map up ("switching the perf map on: ...
# no reply within 30000 ms"): the running program was served only then,
# and the stopped one, once it ran again, switched its map on for a
# request nobody would undo. Checked, with no time asked of the machine:
# - the running program's counters reach /metrics and its CPU profile is
#   served while the other stays stopped, and nothing was given up;
# - once let go (SIGCONT) the other is served too: its counters, its perf
#   map, its CPU profile naming its JIT-compiled RtdiagBurn frames;
# - the agent's end switches that perf map off and removes it.
# Then ProcessInfo2 alone (below).
. "$(dirname "$0")/lib.sh"
command -v dotnet >/dev/null 2>&1 || skip "no dotnet SDK on PATH"
[ -n "$GO" ] || skip "no Go toolchain (go tool pprof) in /usr/lib/go-1.*"
[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ] || [ "$(id -u)" = 0 ] \
  || skip "perf_event not allowed here (perf_event_paranoid > 1, not root)"
TD=$(build_dotnet dotnet-target tests/targets) || { echo "FAIL: build"; exit 1; }
export PPROF_TMPDIR="$WORK/pprof"

start_program S "$TD/dotnet-target" "$WORK/s" burn || { bad "the program to stop did not start"; exit 1; }
start_program A "$TD/dotnet-target" "$WORK/a" burn || { bad "the running program did not start"; exit 1; }
kill -STOP "$S"
# the stopped one first: its start comes before the running one's
start_agent --target "pid=$S,service=stopped$$" --target "pid=$A,service=running$$" \
  --scan-interval 200ms --counters-interval 1s --max-cpu 800% || { bad "agent did not start"; exit 1; }
counters() { curl -sf "$AGENT_URL/metrics" | grep -q "^dotnet_.*pid=\"$1\""; }
wait_for 20 counters "$A" || bad "no counters of the running program $A in /metrics"
"$GO" tool pprof -raw "$AGENT_URL/targets/running$$/debug/pprof/profile?seconds=1" > "$WORK/a.txt" 2>&1
grep -q "RtdiagBurn" "$WORK/a.txt" && ok "the running program is profiled while the other is stopped" \
  || bad "the running program's profile: $(grep -c . "$WORK/a.txt") lines, $(head -5 "$WORK/a.txt")"
state=$(awk '{print $3}' "/proc/$S/stat")
[ "$state" = T ] && ok "the other program was stopped all along" || bad "pid $S state $state, not T"
if grep -Eq "switching the perf map on|source failed" "$AGENT_LOG"; then
  bad "the agent gave up on the stopped runtime: $(grep -E "switching the perf map|source failed" "$AGENT_LOG" | head -3)"
else
  ok "nothing given up on the stopped runtime"
fi

kill -CONT "$S"
wait_for 20 counters "$S" && ok "let go, the other program is served: /metrics has its counters" \
  || bad "no counters of pid $S after SIGCONT"
MAP="/tmp/perf-$S.map"
wait_for 10 test -s "$MAP" && ok "its perf map is switched on once it runs" || bad "no $MAP"
named() {
  "$GO" tool pprof -raw "$AGENT_URL/targets/stopped$$/debug/pprof/profile?seconds=1" > "$WORK/s.txt" 2>&1
  grep -q "RtdiagBurn" "$WORK/s.txt"
}
wait_for 20 named && ok "its CPU profile names the JIT-compiled RtdiagBurn frames" \
  || bad "its profile: $(grep -c . "$WORK/s.txt") lines, $(grep -m3 "M=" "$WORK/s.txt")"
grep -q "switching the perf map on" "$AGENT_LOG" && bad "perf map: $(grep "perf map" "$AGENT_LOG")"
stop_agent || bad "agent exit status $?"
wait_for 10 test ! -e "$MAP" && ok "the agent's end switched the perf map off and removed it" \
  || bad "$MAP left behind"
[ $fail = 0 ] && [ -z "${V:-}" ] || cat "$AGENT_LOG"
LOG1=$AGENT_LOG

# ---- ProcessInfo2 alone (.NET CPU from EventPipe: no perf map asked).
# Before, the agent waited 5 s for the stopped runtime's version (reading
# the others' streams meanwhile, serving no pull, adding no target), then
# gave the question up, asked for the session at once (its wait then
# logged as "no reply to the session's request") and never knew the
# version. Now the question waits for its reply, the loop going on: the
# session is asked only once the runtime said which it is.
start_program S2 "$TD/dotnet-target" "$WORK/s2" burn || { bad "the second program to stop did not start"; exit 1; }
kill -STOP "$S2"
start_agent --target "pid=$S2,service=stopped2$$" --target "pid=$A,service=running2$$" \
  --scan-interval 200ms --counters-interval 1s --max-cpu 800% --dotnet-cpu eventpipe \
  || { bad "agent did not start"; exit 1; }
wait_for 20 grep -q "pid $S2: no reply to ProcessInfo2 after" "$AGENT_LOG" \
  && ok "ProcessInfo2 of the stopped runtime waits for its reply" \
  || bad "the agent did not wait for ProcessInfo2's reply"
wait_for 20 counters "$A" || bad "no counters of the running program $A in /metrics (second agent)"
"$GO" tool pprof -raw "$AGENT_URL/targets/running2$$/debug/pprof/profile?seconds=1" > "$WORK/a2.txt" 2>&1
grep -q "RtdiagBurn" "$WORK/a2.txt" && ok "ProcessInfo2: the running program is profiled while the other is stopped" \
  || bad "the running program's profile: $(grep -c . "$WORK/a2.txt") lines, $(head -5 "$WORK/a2.txt")"
state=$(awk '{print $3}' "/proc/$S2/stat")
[ "$state" = T ] || bad "pid $S2 state $state, not T"
if grep -Eq "pid $S2: no reply to the session's request|source failed" "$AGENT_LOG"; then
  bad "ProcessInfo2 given up: $(grep -E "pid $S2: no reply|source failed" "$AGENT_LOG" | head -3)"
else
  ok "ProcessInfo2 not given up: the session is asked once the runtime answered"
fi
kill -CONT "$S2"
wait_for 20 counters "$S2" && ok "let go, it is served: /metrics has its counters" \
  || bad "no counters of pid $S2 after SIGCONT"
has_profile "$S2" block && ok "its version known: /block (wait profiles, .NET 9+) listed" \
  || bad "no block profile for $S2: $(curl -sf "$AGENT_URL/targets")"
stop_agent || bad "agent exit status $?"
[ $fail = 0 ] && [ -z "${V:-}" ] || { cat "$LOG1"; cat "$AGENT_LOG"; }

# ---- The CLI (`rtdiag perf record`) still waits for EnablePerfMap, at
# most its 30 s, and goes on without JIT names. The request it gave up on
# is carried out when the runtime runs again: before, the map was then
# on for good (its guard dropped with the request); now the guard keeps
# it and switches it off, and the map file goes, when rtdiag has ended.
MAP2="/tmp/perf-$S2.map"
rm -f "$MAP2"
kill -STOP "$S2"
"$R" perf record -p "$S2" -d 0.2 -o "$WORK/cli.folded" > "$WORK/cli.out" 2>&1
echo "exit $?" >> "$WORK/cli.out"
kill -CONT "$S2"
grep -q "^exit [03]$" "$WORK/cli.out" && ok "perf record of a stopped runtime ended (bounded wait)" \
  || bad "perf record: $(cat "$WORK/cli.out")"
# the runtime's one diagnostics thread serves connections in order: its
# answer to this ProcessInfo comes after it saw the perf map's request
# (and the guardian's DisablePerfMap, sent before the runtime ran again)
"$R" dotnet info -p "$S2" > "$WORK/info.out" 2>&1 || bad "dotnet info: $(cat "$WORK/info.out")"
gone() { [ ! -e "$MAP2" ] && ! pgrep -f "perf record -p $S2 " >/dev/null; }
wait_for 35 gone && ok "the perf map it asked for is off and removed once the runtime ran again" \
  || bad "$MAP2 left on: $(ls -la "$MAP2" 2>&1)"
touch "$WORK/s/stop" "$WORK/a/stop" "$WORK/s2/stop"
[ $fail = 0 ] && echo PASS || { echo "$fail FAILED"; exit 1; }
