#!/usr/bin/env bash
# Targets that start, exit and restart while the agent runs, found by
# name= (the processes here are named by a symlink unique to this run):
# - a real .NET 10 program A is found and profiled; killed, it is dropped
#   (logged); started again as B, it is found under its new pid with the
#   same service and pprof path, and its CPU profile is served;
# - a native process of the same name is found beside it (runtime native,
#   its own path since the service's is taken) and dropped when it exits;
# - a process whose runtime refuses the EventPipe session (A FAKE
#   diagnostic server, labelled as such, answering every command with the
#   runtime's error reply) is logged once, counted, shown with its error
#   in /targets, asked again soon (0.5 s, then doubling), and the others
#   keep being served.
. "$(dirname "$0")/lib.sh"
command -v dotnet >/dev/null 2>&1 || skip "no dotnet SDK on PATH"
[ -n "$GO" ] || skip "no Go toolchain (go tool pprof) in /usr/lib/go-1.*"
TD=$(build_dotnet dotnet-target tests/targets) || { echo "FAIL: dotnet build"; exit 1; }
export PPROF_TMPDIR="$WORK/pprof"

NAME=rtdf$$
SVC=follow$$
ln -s "$TD/dotnet-target" "$WORK/$NAME"
ln -s /bin/sleep "$WORK/${NAME}"n   # a native one, named ${NAME}n

start_agent --target "name=^${NAME}n?\$,service=$SVC" --scan-interval 200ms \
  || { bad "agent did not start"; exit 1; }
AG1=("$AGENT_PID" "$AGENT_URL" "$AGENT_LOG")

runtime_of() {
  curl -sf "$AGENT_URL/targets" | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["pid"] == int(sys.argv[1]):
        print(t["runtime"], t["pprof"], t.get("error", ""))' "$1"
}
is_dotnet() { runtime_of "$1" | grep -q "^dotnet "; }
gone() { ! has_target "$1"; }
profile_one() { # PREFIX: a 1 s CPU profile with the burn in it
  "$GO" tool pprof -raw "$AGENT_URL$1/profile?seconds=1" > "$WORK/raw.txt" 2>&1 \
    && grep -q "RtdiagBurn.Hash" "$WORK/raw.txt"
}
# .NET CPU is sampled by perf at 99 Hz: a second of a program just started
# (still compiling, on a loaded machine) may hold no sample of the burn yet
profile_ok() { local i; for i in $(seq 30); do profile_one "$1" && return 0; done; return 1; }

# ---- A starts
start_program A "$WORK/$NAME" "$WORK/a" burn || { bad "A did not start"; exit 1; }
wait_for 15 is_dotnet "$A" && ok "A (pid $A) found by name=, runtime dotnet" \
  || { bad "A not found as .NET: $(curl -s "$AGENT_URL/targets")"; exit 1; }
read -r _ PFX_A _ < <(runtime_of "$A")
[ "$PFX_A" = "/targets/$SVC/debug/pprof" ] && ok "A's pprof at $PFX_A" || bad "A's prefix $PFX_A"
profile_ok "$PFX_A" && ok "A's CPU profile served" || bad "A's profile: $(head -c 400 "$WORK/raw.txt")"

# ---- a native process of the same name beside it; it gets the name by an
# exec a second after it starts, after scans have seen it unnamed
/bin/sh -c "sleep 1; exec '$WORK/${NAME}n' 300" &
N=$!; PIDS+=("$N")
wait_for 10 has_target "$N" || bad "native $N not found after its exec"
read -r RT_N PFX_N _ < <(runtime_of "$N")
[ "$RT_N" = native ] && [ "$PFX_N" = "/targets/$SVC-$N/debug/pprof" ] \
  && ok "native process (pid $N) found beside it after its exec, at $PFX_N" || bad "native: $RT_N $PFX_N"
kill -9 "$N"; wait "$N" 2>/dev/null
wait_for 10 gone "$N" && ok "native process dropped when it exited" || bad "native $N still listed"

# ---- a runtime that refuses the session (a fake diagnostic server)
mkdir -p "$WORK/tmp"
ln -s /bin/sleep "$WORK/${NAME}"r 2>/dev/null
TMPDIR="$WORK/tmp" "$WORK/${NAME}r" 300 &
F=$!; PIDS+=("$F")
key=$(awk '{ sub(/.*\) /, ""); split($0, f, " "); print f[20] }' /proc/$F/stat)
python3 - "$WORK/tmp/dotnet-diagnostic-$F-$key-socket" >"$WORK/fakeipc.log" 2>&1 <<'PY' &
# A FAKE .NET diagnostic server: every command gets the runtime's error
# reply (DOTNET_IPC_V1 header, command set 0xFF, id 0xFF, HRESULT
# 0x80131384 DS_IPC_E_BAD_ENCODING), as a runtime refusing a session does.
import socket, struct, sys, os
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(8)
while True:
    c, _ = s.accept()
    try:
        m = c.recv(65536)
        print(m[16:18].hex(), flush=True)  # the command: set, id
        c.sendall(b"DOTNET_IPC_V1\0" + struct.pack("<HBBH", 24, 0xFF, 0xFF, 0) + struct.pack("<I", 0x80131384))
    finally:
        c.close()
PY
FS=$!; PIDS+=("$FS")
refused() { runtime_of "$F" | grep -q "eventpipe:"; }
# the name spec does not select ${NAME}r: a second agent selects it by pid
start_agent --target "pid=$F,service=refuser$$" --target "name=^${NAME}\$,service=$SVC" --scan-interval 200ms \
  || { bad "second agent did not start"; exit 1; }
wait_for 15 refused && ok "a refused session: the target is listed with its error ($(runtime_of "$F" | cut -d' ' -f3-))" \
  || bad "refused session not shown: $(curl -s "$AGENT_URL/targets")"
sleep 1
[ "$(grep -c "eventpipe source failed" "$AGENT_LOG")" = 1 ] && ok "the refusal logged once" \
  || bad "refusal log: $(grep -c "eventpipe source failed" "$AGENT_LOG") lines"
e=$(metric rtdiag_agent_source_errors_total)
[ "${e%.*}" -ge 1 ] 2>/dev/null && ok "rtdiag_agent_source_errors_total $e" || bad "source errors metric '$e'"
# asked again soon, then less often (0.5 s, 1 s, 2 s...: a runtime found
# early in its start may answer the next time; the old agent's 30 s let a
# short program end unprofiled)
asks() { [ "$(grep -c '^0206$' "$WORK/fakeipc.log")" -ge 3 ]; }
within 15 asks && ok "the refused session asked again soon: $(grep -c '^0206$' "$WORK/fakeipc.log") CollectTracing5 requests" \
  || bad "the refused session asked $(grep -c '^0206$' "$WORK/fakeipc.log") times in 15 s"
wait_for 15 is_dotnet "$A" && profile_ok "$PFX_A" && ok "the other target is still served beside the refused one" \
  || bad "A not served by the second agent"
stop_agent
kill -9 "$F" "$FS" 2>/dev/null; wait "$F" "$FS" 2>/dev/null
AGENT_PID=${AG1[0]} AGENT_URL=${AG1[1]} AGENT_LOG=${AG1[2]}  # the first agent again

# ---- A exits; B restarts the service
kill -9 "$A"; wait "$A" 2>/dev/null
wait_for 10 gone "$A" && grep -q "target $SVC pid $A exited" "$AGENT_LOG" \
  && ok "A's exit noticed and logged" || bad "A not dropped: $(tail -3 "$AGENT_LOG")"
start_program B "$WORK/$NAME" "$WORK/b" burn || { bad "B did not start"; exit 1; }
wait_for 15 is_dotnet "$B" && ok "B (pid $B) found after the restart" || bad "B not found"
read -r _ PFX_B _ < <(runtime_of "$B")
[ "$PFX_B" = "$PFX_A" ] && ok "B is served at A's path $PFX_B" || bad "B's prefix $PFX_B, A's was $PFX_A"
profile_ok "$PFX_B" && ok "B's CPU profile served at the same path" || bad "B's profile: $(head -c 400 "$WORK/raw.txt")"
found=$(metric rtdiag_agent_targets_found_total); exited=$(metric rtdiag_agent_targets_exited_total)
[ "${found%.*}" -ge 3 ] && [ "${exited%.*}" -ge 2 ] && ok "found $found, exited $exited (in /metrics)" \
  || bad "found '$found' exited '$exited'"
stop_agent || bad "agent exit status $?"
touch "$WORK/b/stop"
[ $fail = 0 ] || { echo "agent logs:"; cat "$WORK"/agent*.log; }
exit $((fail > 0))
