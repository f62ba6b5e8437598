#!/usr/bin/env bash
# /debug/pprof/block from a real .NET 10 program's waits (WaitHandleWait
# events), read by Debian's go tool pprof as Parca and Alloy fetch it:
# - tests/targets/dotnet-wait waits, on three threads at once, 8 x 150 ms
#   on a ManualResetEvent in Waiter.OnEvent, 12 x 100 ms on a
#   SemaphoreSlim in Waiter.OnSemaphore and 6 x 200 ms in Thread.Join in
#   Waiter.OnJoin, and times each call itself (Stopwatch);
# - /block?seconds=N fetched across those waits (a delta, as Go serves it)
#   and /block afterwards (the total since the agent attached) both have
#   Go's block types (contentions/count, delay/nanoseconds), each method's
#   frames on the stacks where its waits began, at least as many waits
#   as it made calls that blocked (took half their time or more: under
#   load a call may find its event set already and send nothing), and a
#   delay within 5% (+10 ms) of what the program measured.
#   SemaphoreSlim spins (yielding the CPU up to 140 times) before it
#   blocks in Monitor.Wait: on a loaded machine that spinning took most of
#   its 100 ms waits (a run: 70 ms of 1316 ms were wait events), time that
#   is not a wait (in a landing under load all twelve were spent so:
#   no wait event at all); so for it: never more waits than twice its
#   calls (each can add the wait to re-take the semaphore's lock), never
#   more time than the program measured;
# - /targets lists "block" for the .NET target; a native target's /block
#   is its off-CPU waits (test_block_native.sh); a .NET target
#   whose --dotnet-profiles leave waits out, and the same program built
#   self-contained for net8.0 (a real .NET 8 runtime from NuGet's runtime
#   pack, which sends no wait events): /block names its version and why;
#   skipped, saying so, when that runtime pack cannot be restored.
. "$(dirname "$0")/lib.sh"
command -v dotnet >/dev/null 2>&1 || skip "no dotnet SDK on PATH"
[ -n "$GO" ] || skip "no Go toolchain (go tool pprof) in /usr/lib/go-1.*"
WD=$(build_dotnet dotnet-wait tests/targets) || { echo "FAIL: dotnet build"; exit 1; }
export PPROF_TMPDIR="$WORK/pprof"

sleep 300 &
NP=$!; PIDS+=("$NP")
start_program WP "$WD/dotnet-wait" "$WORK/w" waits || { bad "dotnet-wait did not start"; exit 1; }
SVC=waits$$
start_agent --target "pid=$WP,service=$SVC" --target "pid=$NP,service=nat$$" \
  --scan-interval 200ms --dotnet-counters none --max-cpu 800% --log-level debug \
  || { bad "agent did not start"; exit 1; }
wait_for 15 has_profile "$WP" block && ok "/targets: the .NET 10 target has a block profile" \
  || { bad "no block in /targets: $(curl -s "$AGENT_URL/targets")"; exit 1; }
B="$AGENT_URL/targets/$SVC/debug/pprof/block"

# the delta across the waits: the request starts before DIR/go (the agent
# logs its begin; a fixed second was too short for go tool pprof's start
# and the agent's loop on a loaded machine)
"$GO" tool pprof -raw "$B?seconds=8" > "$WORK/delta.txt" 2> "$WORK/delta.err" &
GP=$!; PIDS+=("$GP")
wait_for 1 grep -q "target $SVC pid $WP: a block profile of 8 s begun" "$AGENT_LOG" \
  || bad "the agent never began the delta: $(cat "$WORK/delta.err")"
touch "$WORK/w/go"
wait_for 30 test -s "$WORK/w/done" || { bad "dotnet-wait did not finish its waits"; exit 1; }
wait "$GP" || bad "go tool pprof (delta) failed: $(cat "$WORK/delta.err")"
sleep 2 # the next cuts (one a second) have every Stop
"$GO" tool pprof -raw "$B" > "$WORK/total.txt" 2> "$WORK/total.err" \
  || bad "go tool pprof (total) failed: $(cat "$WORK/total.err")"
echo "the program measured:"; cat "$WORK/w/done"

# check FILE WHAT: per method of DIR/done, the samples whose stack holds
# it: count >= calls, delay within 5% + 10 ms of the measured total
check() {
  PYTHONPATH="$(dirname "$0")" python3 - "$1" "$WORK/w/done" "$2" <<'PY'
import sys
from pprof_raw import parse
p, done, what = parse(sys.argv[1]), sys.argv[2], sys.argv[3]
samples, locs = p.samples, p.locs
bad = 0
for line in open(done):
    name, calls, ns, blocked = line.split()
    calls, ns, blocked = int(calls), int(ns), int(blocked)
    n = d = 0
    for c, v, ids in samples:
        if any(name + "(" in locs.get(x, "") for x in ids):
            n += c; d += v
    tol = 0.05 * ns + 10e6
    if name == "Waiter.OnSemaphore":   # spins first (see the top)
        ok = n <= 2 * calls and d <= ns + tol
    else:
        # a call that found its event set (a loaded machine) sends none
        ok = n >= blocked and abs(d - ns) <= tol
    print("%s %s: %d waits (the program made %d, %d blocked), %.1f ms (it measured %.1f ms, +-%.1f)"
          % ("ok:" if ok else "FAIL:", name, n, calls, blocked, d / 1e6, ns / 1e6, tol / 1e6))
    bad += not ok
print("%s: %d samples, %d locations" % (what, len(samples), len(locs)))
sys.exit(1 if bad else 0)
PY
}
check "$WORK/delta.txt" "/block?seconds=8 (a delta)" \
  && ok "/block?seconds=8: every waiting method with its waits and their time" \
  || bad "/block?seconds=8: $(head -40 "$WORK/delta.txt")"
grep -q "^Duration: 8" "$WORK/delta.txt" && ok "/block?seconds=8 covers 8 s" \
  || bad "delta duration: $(grep Duration "$WORK/delta.txt")"
check "$WORK/total.txt" "/block (the total since attach)" \
  && ok "/block: the total since the agent attached has them too" \
  || bad "/block total: $(head -40 "$WORK/total.txt")"
# the stack where a wait began reaches the program's own frames
grep -q "Waiter.OnEvent" "$WORK/total.txt" && grep -q "WaitHandle" "$WORK/total.txt" \
  && ok "stacks hold the runtime's wait frames under the program's" \
  || bad "no WaitHandle frames: $(grep -c . "$WORK/total.txt") lines"

# ---- a native target's /block: its off-CPU waits (test_block_native.sh)
curl -s -o /dev/null -D "$WORK/h" "$AGENT_URL/targets/nat$$/debug/pprof/block"; code=$(awk 'NR == 1 { print $2 }' "$WORK/h")
[ "$code" = 200 ] && ok "native /block: 200 (off-CPU)" || bad "native block: $code"
# ---- no source: say why
stop_agent || bad "agent exit status $?"
start_agent --target "pid=$WP,service=$SVC" --scan-interval 200ms --dotnet-counters none \
  --dotnet-profiles cpu,lock || { bad "agent did not start"; exit 1; }
wait_for 15 has_target "$WP" || bad "target not found"
out=$(curl -s -D "$WORK/h" "$AGENT_URL/targets/$SVC/debug/pprof/block"); code=$(awk 'NR == 1 { print $2 }' "$WORK/h")
[ "$code" = 404 ] && grep -q "waits are not among --dotnet-profiles" <<<"$out" \
  && ok "/block without waits asked for: 404, said why ($out)" || bad "no-wait block: $code $out"
stop_agent || bad "agent exit status $?"
touch "$WORK/w/stop"

# ---- a .NET 8 runtime: no wait events, and /block says so
W8="$BIN/dotnet-targets/dotnet-wait-net8"
build8() {
  build_dotnet dotnet-wait tests/targets dotnet-wait-net8 -r linux-x64 --self-contained \
    -p:WaitTfm=net8.0 >/dev/null 2>&1
}
if ! build8; then
  echo "skipped: the net8.0 build (a .NET 8 runtime pack from NuGet) failed: $(tail -3 "$BIN/dotnet-targets/dotnet-wait-net8.log")"
else
  start_program W8P "$W8/dotnet-wait" "$WORK/w8" waits || bad "the .NET 8 dotnet-wait did not start"
  start_agent --target "pid=$W8P,service=w8-$$" --scan-interval 200ms --dotnet-counters none \
    || { bad "agent did not start"; exit 1; }
  wait_for 15 has_target "$W8P" || bad ".NET 8 target not found"
  curl -sf "$AGENT_URL/targets" | python3 -c '
import json, sys
t = [x for x in json.load(sys.stdin) if x["pid"] == int(sys.argv[1])]
assert t and "block" not in t[0]["profiles"] and "mutex" in t[0]["profiles"], t' "$W8P" \
    && ok ".NET 8: /targets lists no block profile (its locks still)" || bad ".NET 8 targets: $(curl -s "$AGENT_URL/targets")"
  out=$(curl -s -D "$WORK/h" "$AGENT_URL/targets/w8-$$/debug/pprof/block"); code=$(awk 'NR == 1 { print $2 }' "$WORK/h")
  [ "$code" = 404 ] && grep -q "the .NET 8\.[0-9.]* runtime sends no wait events" <<<"$out" \
    && ok ".NET 8 /block: 404, said why ($out)" || bad ".NET 8 block: $code $out"
  stop_agent || bad "agent exit status $?"
  # rtdiag dotnet profile --type wait asks the runtime first, too
  out=$("$R" dotnet profile -p "$W8P" --type wait -d 1 -o "$WORK/w8.folded" 2>&1); rc=$?
  [ $rc != 0 ] && grep -q "type wait: the .NET 8\.[0-9.]* runtime sends no wait events" <<<"$out" && [ ! -e "$WORK/w8.folded" ] \
    && ok "dotnet profile --type wait of .NET 8: refused, said why" || bad "dotnet profile --type wait .NET 8: $rc $out"
  touch "$WORK/w8/stop"
fi
[ $fail = 0 ] || { echo "agent logs:"; cat "$WORK"/agent*.log; }
exit $((fail > 0))
