#!/usr/bin/env bash
# The agent's CPU and memory caps are enforced, not hoped for: with a cap
# below what profiling a real .NET 10 program costs, the sources are
# paused (the EventPipe session closed), the time counted, and resumed;
# with a memory cap below the agent's own size, profiles and queues are
# shed (counted, logged once); and the agent keeps answering meanwhile.
# Nothing here asserts a time: only that the caps acted and said so.
. "$(dirname "$0")/lib.sh"
command -v dotnet >/dev/null 2>&1 || skip "no dotnet SDK on PATH"
TD=$(build_dotnet dotnet-target tests/targets) || { echo "FAIL: dotnet build"; exit 1; }

start_program TPID "$TD/dotnet-target" "$WORK/t" burn || { bad "the .NET target did not start"; exit 1; }

start_agent --target "pid=$TPID,service=caps$$" --scan-interval 200ms \
  --max-cpu 0.1% --max-memory 1M || { bad "agent did not start"; exit 1; }
wait_for 10 has_target "$TPID" || { bad "target not found"; exit 1; }

# keep it busy answering while the cap is judged
( while kill -0 "$AGENT_PID" 2>/dev/null; do curl -s -o /dev/null "$AGENT_URL/metrics"; sleep 0.05; done ) &
PIDS+=("$!")
throttled() { local v; v=$(metric rtdiag_agent_throttled_seconds_total); [ "${v%%.*}" -ge 1 ] 2>/dev/null; }
wait_for 40 throttled && ok "CPU cap: sources paused, $(metric rtdiag_agent_throttled_seconds_total) s counted" \
  || bad "no throttling: $(grep -i cap "$AGENT_LOG")"
grep -q "CPU cap 0.1%: the agent used .* sources paused for 5 s" "$AGENT_LOG" \
  && grep -q "CPU cap: sources resumed after" "$AGENT_LOG" \
  && ok "the pause and the resume are logged" || bad "cap log: $(grep -i cap "$AGENT_LOG")"
sheds=$(metric rtdiag_agent_memory_sheds_total)
[ "${sheds%%.*}" -ge 1 ] 2>/dev/null && [ "$(grep -c "memory cap 1 MB" "$AGENT_LOG")" = 1 ] \
  && ok "memory cap: shed $sheds times, logged once" || bad "memory cap: $sheds, $(grep -c 'memory cap' "$AGENT_LOG") log lines"
has_target "$TPID" && curl -sf "$AGENT_URL/metrics" | grep -q "^rtdiag_process_cpu_seconds_total{service=\"caps$$\"" \
  && ok "the agent keeps serving /targets and /metrics" || bad "not serving"
stop_agent || bad "agent exit status $?"
touch "$WORK/t/stop"
[ $fail = 0 ] || { echo "agent log:"; cat "$AGENT_LOG"; }
exit $((fail > 0))
