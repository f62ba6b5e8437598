#!/usr/bin/env bash
# A .NET runtime that answers the agent's session request late is still
# profiled, at once when it answers. A starting runtime answers
# CollectTracing only after the providers' callbacks ran on its one
# diagnostics thread (managed code, JIT first): at load 12 up to 1.6 s
# was measured, at load 20-35 more than the 5 s the agent used to wait,
# after which it gave up and tried again 30 s later - a short program was
# never profiled (#29's agent test_exit: 17-20 of 24 got a session).
#
# Made certain here with a real runtime held by SIGSTOP while the agent
# asks: the runtime is alive, its diagnostics socket takes the connection,
# and no reply can come until it runs again. The program (dotnet-exit)
# waits for its session's counter poller thread, then returns 15 s later
# (time for a sanitized agent under load to show its counters).
# (No wait profiles: their version check, ProcessInfo2, would wait for
# the stopped runtime first and ask for the session only once it runs:
# test_stopped checks that. --dotnet-cpu eventpipe: the session carries
# the CPU samples too.)
# Checks: the agent does not give up on the live runtime ("source failed"
# or a failed CollectTracing in its log), and once the runtime runs again
# the agent's session opens (/metrics has the program's counters) well
# before the 30 s the agent used to wait before asking again.
. "$(dirname "$0")/lib.sh"
command -v dotnet >/dev/null 2>&1 || skip "no dotnet SDK on PATH"
EX=$(build_dotnet dotnet-exit tests/targets) || { echo "FAIL: build"; exit 1; }

start_program P "$EX/dotnet-exit" "$WORK/p" 15000 0 120000 || { bad "dotnet-exit did not start"; exit 1; }
kill -STOP "$P"
SVC=late$$
start_agent --target "pid=$P,service=$SVC" --scan-interval 200ms --dotnet-cpu eventpipe \
  --dotnet-profiles cpu,alloc,lock,exception --counters-interval 1s || { bad "agent did not start"; exit 1; }
# the runtime stays stopped until the agent has waited 5 s for the reply
# to its session's request: the old agent then gave up ("source failed:
# CollectTracing5: no reply within 5000 ms (retrying in 30 s)"), this one
# says it waits on
wait_for 30 grep -Eq "source failed|eventpipe: |no reply to the session's request" "$AGENT_LOG" \
  || bad "the agent said nothing of the stopped runtime"
kill -CONT "$P"
counters() { curl -sf "$AGENT_URL/metrics" | grep -q "^dotnet_.*{service=\"$SVC\",pid=\"$P\""; }
# the old agent's next try came 30 s after it gave up (the program's own
# poller is no sign: the runtime, running again, starts the session of a
# request closed unanswered too, and ends it at its first write)
within 20 counters && ok "the agent's session opened once the runtime ran again: /metrics has its counters" \
  || bad "no counters of pid $P in /metrics within 20 s of the runtime running again"
if grep -Eq "source failed|eventpipe: .*CollectTracing" "$AGENT_LOG"; then
  bad "the agent gave up on a live runtime: $(grep -E "source failed|eventpipe: " "$AGENT_LOG" | head -3)"
else
  ok "no attach given up: $(grep -o "the runtime answered after .*" "$AGENT_LOG" | head -1)"
fi
wait_for 30 test -s "$WORK/p/returned" && grep -q '^[0-9]* [0-9]* 1$' "$WORK/p/returned" \
  && ok "the program returned with its session" || bad "the program returned without a session: $(cat "$WORK/p/returned" 2>/dev/null)"
[ $fail = 0 ] && [ -z "${V:-}" ] || cat "$AGENT_LOG"
stop_agent || bad "agent exit status $?"
[ $fail = 0 ] && echo PASS || { echo "$fail FAILED"; exit 1; }
