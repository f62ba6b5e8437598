#!/usr/bin/env bash
# Do no harm: a .NET program's exit never waits for the agent's decoding.
# The agent's loop decodes every target's stream; the sessions' sockets
# are read by a thread of their own (rtd_ipc_spool) into a buffer each,
# so a loop that falls behind holds no runtime's write (exitwait: a
# reader a socket's worth behind as Main returns held the exit 3-5 s).
# The loop's decoding is stalled by the test's hook
# (RTDIAG_AGENT_TEST_STALL=MS[,N]: the first N sessions left undecoded
# for MS ms after each opens; the thread reads on):
# 1. eight dotnet-exit programs (exits.sh), each one's decoding stalled
#    past its exit: each exits within exits.sh's bound over the controls,
#    and no snapshot of one running after its Main returned shows a
#    runtime thread writing to a full socket with rtdiag at the other end
#    (before the spool: the runtime's thread sat in sock_alloc_send_pskb
#    until the stall ended);
# 2. a 1M read buffer (dotnet-read-buffer) under a stall: a dotnet-exit
#    program exits before the agent decodes its stream again; an
#    allocating program's session drops its bytes past 1M (its first 15 s
#    are ~10 MB): said in the log (the session named, the bytes dropped),
#    its sockets closed at once, before the retry 30 s later (before:
#    left open, read by no one or only by the spool, until the retry);
#    /metrics counts the drops; a program found after them is read (a
#    quiet one: with a 64k buffer an allocating one, not stalled, was
#    damaged too at load 18, the loop ~1 MB behind it in its first 3 s).
. "$(dirname "$0")/lib.sh"
command -v dotnet >/dev/null 2>&1 || skip "no dotnet SDK on PATH"
command -v ss >/dev/null 2>&1 || skip "no ss (iproute2) to see the sockets"
EXITS_LATE_NS=1 # every program still running after its Main returned: a snapshot
. "$SRC/tests/integration/dotnet/exits.sh"

# ---- 1. stalled decoding, the default buffer
NAME=dsp$$
RTDIAG_AGENT_TEST_STALL=25000 start_agent --target "name=^$NAME\$" \
  || { bad "agent did not start"; exit 1; }
grep -q "RTDIAG_AGENT_TEST_STALL=25000" "$AGENT_LOG" || bad "the stall hook was not taken"
EXITS_GAP=1
EXITS_MIN_SESSIONS=6
EXITS_CONTROL_CONFIG='Microsoft-Windows-DotNETRuntime:0x4200000C019:5,System.Runtime:0:5:EventCounterIntervalSec=5'
run_exits 8 5000 "$NAME" ""
held=$(cat "$EXITS_DIR"/[0-9]*/late 2>/dev/null | grep -c '^socket .*-> .*users:(("rtdiag')
[ "$held" = 0 ] && ok "no program wrote to a full socket read by rtdiag" \
  || { bad "$held full sockets with rtdiag at the other end:"; grep -h '^socket' "$EXITS_DIR"/[0-9]*/late; }
grep -q "damaged" "$AGENT_LOG" && bad "a session was damaged: $(grep damaged "$AGENT_LOG")"
stop_agent || bad "agent exit status $?"

# ---- 2. a 1M buffer: drops, counted, the sessions closed, the agent goes on
# agent_socks_to PID: the agent's unix sockets whose other end PID holds
agent_socks_to() {
  ss -xpn 2>/dev/null | awk -v a="pid=$AGENT_PID," -v t="pid=$1," '
    { line[$6] = $0; peer[$6] = $8 }
    index($0, a) { mine[$6] = 1 }
    END { n = 0; for (i in mine) if (index(line[peer[i]], t)) n++; print n }'
}
KD=$(build_dotnet dotnet-kinds tests/targets) || { bad "build of dotnet-kinds"; exit 1; }
XD=$(build_dotnet dotnet-exit tests/targets) || { bad "build of dotnet-exit"; exit 1; }
N2=dse$$ K2=dsk$$
ln -sf "$XD/dotnet-exit" "$WORK/$N2"
ln -sf "$KD/dotnet-kinds" "$WORK/$K2"
RTDIAG_AGENT_TEST_STALL=15000,2 start_agent --target "name=^$N2\$" \
  --target "name=^$K2\$" --dotnet-read-buffer 1M --scan-interval 200ms \
  --max-cpu 800% || { bad "agent did not start"; exit 1; }
mkdir -p "$WORK/e1"
"$WORK/$N2" "$WORK/e1" 2000 0 30000 >"$WORK/e1/out" 2>&1 &
E1=$!
PIDS+=("$E1")
start_program P1 "$WORK/$K2" "$WORK/k1" alloc || { bad "dotnet-kinds did not start"; exit 1; }
wait_for 30 grep -q "pid $E1 (.*found" "$AGENT_LOG" && wait_for 30 grep -q "pid $P1 (.*found" "$AGENT_LOG" \
  || { bad "the agent did not find both: $(cat "$AGENT_LOG")"; exit 1; }
# the exit program returns 2 s after its session began and must be gone
# before the agent decodes its stream again (its stream is read by the
# spool meanwhile)
wait_for 40 test -s "$WORK/e1/returned" || bad "dotnet-exit never returned"
damaged() { grep -q "pid $1: eventpipe: session .* damaged: [0-9]* bytes dropped past its 1024 KiB read buffer" "$AGENT_LOG"; }
decoding() { grep -q "pid $1: RTDIAG_AGENT_TEST_STALL: decoding again" "$AGENT_LOG"; }
exited_first() { ! kill -0 "$E1" 2>/dev/null || decoding "$E1"; }
wait_until exited_first
decoding "$E1" && bad "dotnet-exit was still running when the agent decoded its stream again" \
  || ok "the program exited while the agent's decoding was stalled ($(awk '{ print $3 }' "$WORK/e1/returned") = had a session)"
# the long-lived one: damaged, said, and its sockets closed before the
# retry (30 s later)
wait_until damaged "$P1" || bad "no damage said for pid $P1: $(cat "$AGENT_LOG")"
closed_or_retried() { [ "$(agent_socks_to "$P1")" = 0 ] || grep -q "pid $P1: eventpipe source started after" "$AGENT_LOG"; }
wait_until closed_or_retried
n=$(agent_socks_to "$P1")
[ "$n" = 0 ] && ! grep -q "pid $P1: eventpipe source started after" "$AGENT_LOG" \
  && ok "the damaged session's sockets were closed at once, before the retry" \
  || bad "pid $P1: $n sockets open after the damage; $(grep "pid $P1" "$AGENT_LOG" | tail -3)"
grep "damaged" "$AGENT_LOG" | head -2 | sed 's/^/  log: /'
d=$(metric rtdiag_agent_dotnet_damaged_sessions_total)
b=$(metric rtdiag_agent_dotnet_dropped_bytes_total)
[ "${d%.*}" -ge 1 ] 2>/dev/null && [ "${b%.*}" -gt 0 ] 2>/dev/null \
  && ok "/metrics: $d damaged sessions, $b bytes dropped" || bad "/metrics: damaged '$d', dropped '$b'"
# a program found after them is read: its counters reach /metrics
start_program P2 "$WORK/$K2" "$WORK/k2" meters || { bad "dotnet-kinds did not start"; exit 1; }
has_series() { curl -sf "$AGENT_URL/metrics" | grep -q "^dotnet_.*pid=\"$P2\""; }
wait_for 30 has_series && ok "a target found later is read: its counters in /metrics" \
  || bad "no series of pid $P2: $(grep "pid $P2" "$AGENT_LOG")"
touch "$WORK/k1/stop" "$WORK/k2/stop"
stop_agent || bad "agent exit status $?"
[ $fail = 0 ] && echo PASS || { echo "$fail FAILED"; tail -30 "$AGENT_LOG"; exit 1; }
