#!/usr/bin/env bash
# A native target's perf sources start off the agent's loop (src_perf.c:
# the profiler, its symbols and perf events, the off-CPU BPF program whose
# verifier takes seconds on a busy machine). The start is held for real:
# gdb (non-stop) stops the thread that reaches the profiler's or the live
# source's creation, as a thread the kernel does not schedule; the agent
# cannot tell it from a slow start. Meanwhile:
# - the thread held is not the loop's (the agent's main thread);
# - another target's profile is answered (a pull goes through the loop:
#   Pyroscope's and Parca's scrapes) and /metrics too; the new target is
#   not listed yet (/targets says what its starts said, as when they ran
#   on the loop);
# - let go, the start completes and the new target's profiles are served;
# - a target that exits while its off-CPU source starts (held after its
#   profiler and BPF program were made) is dropped at once (the log says
#   so while the start is held), and once let go the start's thread frees
#   all it made: the agent's perf_event and BPF descriptors and threads
#   are as before the target came;
# - an agent told to stop while a start is held exits (status 0);
# - a .NET program (--dotnet-cpu perf) whose perf map the start switched
#   on before it was held: the agent told to stop ends, and the map is
#   switched off and removed (its guard, registered before the request).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root for perf_event and ptrace"
command -v gdb >/dev/null || skip "no gdb to hold the start"
gdb -q -nx -batch -ex 'python import gdb' >/dev/null 2>&1 || skip "gdb without Python"
# LeakSanitizer cannot run in a process under ptrace: a sanitized agent
# that exits while gdb holds a thread aborts (status 134, "LeakSanitizer
# does not work under ptrace"). Here the sanitized agent runs without the
# leak check (the rest of ASan and UBSan stay; the other agent tests
# check its leaks)
[ -n "${RTD_SANITIZED:-}" ] && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

OTH=oth$$ HLD=hld$$
cp /bin/sleep "$WORK/$OTH"; cp /bin/sleep "$WORK/$HLD"
start_agent --target "name=^$OTH\$" --target "name=^$HLD\$" --scan-interval 200ms \
  --max-cpu 800% || { bad "agent did not start"; exit 1; }
"$WORK/$OTH" 3600 & OP=$!; PIDS+=("$OP")
wait_for 15 has_profile "$OP" block || { bad "the first target has no block profile"; exit 1; }

# hold AT SKIP: gdb holds the thread that reaches AT the SKIP+1th time
GP=
hold() {
  rm -f "$WORK/held" "$WORK/held.ready" "$WORK/gdb.in"
  mkfifo "$WORK/gdb.in"
  # (gdb may abort on its own when the agent it holds exits: no core
  # file of it in the tree)
  (cd "$WORK" && ulimit -c 0 && HOLD_FILE="$WORK/held" HOLD_AT=$1 HOLD_SKIP=$2 \
    exec gdb -q -nx -iex 'set non-stop on' -iex 'set pagination off' \
    -iex 'set confirm off' -p "$AGENT_PID" \
    -x "$SRC/tests/integration/agent/hold_start.py" <"$WORK/gdb.in" >"$WORK/gdb.out" 2>&1) &
  GP=$!; PIDS+=("$GP")
  exec 7>"$WORK/gdb.in"
  wait_for 10 test -e "$WORK/held.ready" || { cat "$WORK/gdb.out"; return 1; }
}
release() { echo detach >&7; echo quit >&7; exec 7>&-; wait "$GP"; }
# agent_fds: the agent's perf_event and BPF descriptors and its threads
agent_fds() {
  echo "$(find /proc/"$AGENT_PID"/fd -lname 'anon_inode:*perf_event*' 2>/dev/null | wc -l)" \
    "$(find /proc/"$AGENT_PID"/fd -lname 'anon_inode:bpf*' 2>/dev/null | wc -l)" \
    "$(ls /proc/"$AGENT_PID"/task | wc -l)"
}
same_fds() { [ "$(agent_fds)" = "$1" ]; }
pull() { curl -s -m 60 -o "$WORK/pull.pb" -w '%{http_code}' "$AGENT_URL/targets/$1/debug/pprof/$2"; }

# ---- 1. the loop goes on while a start is held
hold rtd_perf_profiler_new 0 || { bad "gdb did not attach"; exit 1; }
"$WORK/$HLD" 3600 & HP=$!; PIDS+=("$HP")
wait_for 10 test -s "$WORK/held" || { bad "no start reached rtd_perf_profiler_new"; exit 1; }
tid=$(cat "$WORK/held")
[ "$tid" != "$AGENT_PID" ] && ok "the start runs on thread $tid, not the loop's ($AGENT_PID)" \
  || bad "the start runs on the loop's thread ($tid)"
code=$(pull "$OTH" block)
[ "$code" = 200 ] && ok "while a start is held, the other target's /block answers" \
  || bad "while a start is held, the other target's /block: '$code' (no answer in 60 s)"
code=$(curl -s -m 60 -o /dev/null -w '%{http_code}' "$AGENT_URL/metrics")
[ "$code" = 200 ] && ok "and /metrics answers" || bad "/metrics: '$code'"
n=$(metric rtdiag_agent_targets)
[ "$n" = 1 ] && ok "its rtdiag_agent_targets counts the listed target only (1)" \
  || bad "rtdiag_agent_targets while a start is held: '$n' (want 1: /targets lists one)"
has_target "$OP" && ! has_target "$HP" && ok "/targets lists the other target, not yet the starting one" \
  || bad "/targets while a start is held: $(curl -s -m 60 "$AGENT_URL/targets")"
test -s "$WORK/held" && [ "$(cat "$WORK/held")" = "$tid" ] || bad "the hold ended early"
release
wait_for 5 has_profile "$HP" block && ok "let go, the target's sources started" \
  || bad "after the hold: $(curl -s "$AGENT_URL/targets")"
code=$(pull "$HLD" 'block?seconds=1')
[ "$code" = 200 ] && ok "its /block answers" || bad "its /block: '$code'"
kill -9 "$HP"; wait "$HP" 2>/dev/null
wait_for 5 eval '! has_target '"$HP" || bad "the target that exited is still listed"

# ---- 2. a target exits while its off-CPU source starts: dropped at once,
# and the start's thread frees what it made once let go
before=$(agent_fds)
hold rtd_perf_source_live 1 || { bad "gdb did not attach"; exit 1; }
"$WORK/$HLD" 3600 & HP=$!; PIDS+=("$HP")
wait_for 10 test -s "$WORK/held" || { bad "no off-CPU start reached rtd_perf_source_live"; exit 1; }
kill -9 "$HP"; wait "$HP" 2>/dev/null
wait_for 5 grep -q "pid $HP exited" "$AGENT_LOG" && ok "a target that exited while its source started is dropped" \
  || bad "the exited target stays while its start is held"
test -s "$WORK/held" || bad "the hold ended early"
release
wait_for 5 same_fds "$before" && ok "let go, the start freed what it made (perf_event, bpf, threads: $before)" \
  || bad "after the abandoned start: $(agent_fds), before it: $before"
grep -q "perf off-cpu source failed" "$AGENT_LOG" && bad "the abandoned start was said as a failure: $(grep 'source failed' "$AGENT_LOG")"

# ---- 3. the agent stops while a start is held
hold rtd_perf_profiler_new 0 || { bad "gdb did not attach"; exit 1; }
"$WORK/$HLD" 3600 & HP=$!; PIDS+=("$HP")
wait_for 10 test -s "$WORK/held" || { bad "no start reached rtd_perf_profiler_new"; exit 1; }
kill -TERM "$AGENT_PID"
wait_for 5 eval '! kill -0 '"$AGENT_PID"' 2>/dev/null || grep -q "^State:.*Z" /proc/'"$AGENT_PID"'/status' \
  && ok "told to stop while a start is held, the agent ends" || bad "the agent does not end while a start is held"
echo quit >&7; exec 7>&-; wait "$GP" # (let go: an agent still there ends now)
wait "$AGENT_PID"; st=$?
[ "$st" = 0 ] && ok "its exit status 0" || bad "its exit status $st"

# ---- 4. .NET: a perf map switched on by a start held afterwards
if ! command -v dotnet >/dev/null 2>&1; then
  echo "SKIP (part): no dotnet SDK on PATH: the perf map's guard is not tried"
else
  TD=$(build_dotnet dotnet-target tests/targets) || { bad "build of dotnet-target"; exit 1; }
  # its own name, so that only this program is selected (the apphost
  # finds its dll through /proc/self/exe)
  DN=dn$$; ln -s "$TD/dotnet-target" "$WORK/$DN"
  start_agent --target "name=^$DN\$" --scan-interval 200ms --dotnet-cpu perf \
    --max-cpu 800% || { bad "agent did not start"; exit 1; }
  # held where the profiler makes its perf events: after the map's request
  hold rtd_perf_monitor_new 0 || { bad "gdb did not attach"; exit 1; }
  mkdir -p "$WORK/dn"
  "$WORK/$DN" "$WORK/dn" burn >"$WORK/dn/out" 2>&1 & D=$!; PIDS+=("$D")
  wait_for 30 test -s "$WORK/held" || { bad "no start reached rtd_perf_monitor_new"; exit 1; }
  MAP=/tmp/perf-$D.map
  wait_for 20 test -s "$MAP" && ok "held after the perf map's request, the runtime switched it on" \
    || bad "no $MAP while the start is held"
  kill -TERM "$AGENT_PID"
  wait_for 5 eval '! kill -0 '"$AGENT_PID"' 2>/dev/null || grep -q "^State:.*Z" /proc/'"$AGENT_PID"'/status' \
    && ok ".NET: told to stop while a start is held, the agent ends" || bad ".NET: the agent does not end while a start is held"
  echo quit >&7; exec 7>&-; wait "$GP"
  wait "$AGENT_PID"
  wait_for 30 eval '! test -e '"$MAP" && ok "its perf map is switched off and removed (the guard)" \
    || bad "$MAP left behind"
  kill "$D"; wait "$D" 2>/dev/null
fi
[ $fail = 0 ] || { tail -20 "$AGENT_LOG"; exit 1; }
echo "all ok"
