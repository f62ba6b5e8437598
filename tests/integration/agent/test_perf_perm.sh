#!/usr/bin/env bash
# perf permission missing for one target: the agent runs as an
# unprivileged user (nobody, perf_event_paranoid 2) with two native
# targets, one its own and one of root. Its own is sampled (user space
# only) and served; root's cannot be (the kernel refuses perf_event_open):
# that is logged once, counted, shown in /targets, and the agent goes on.
. "$(dirname "$0")/lib.sh"
[ -n "$GO" ] || skip "no Go toolchain (go tool pprof) in /usr/lib/go-1.*"
[ "$(id -u)" = 0 ] || skip "needs root to start processes as two users"
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
par=$(cat /proc/sys/kernel/perf_event_paranoid)
[ "$par" = 2 ] || skip "perf_event_paranoid is $par: the case needs 2 (own processes, user space only)"
export PPROF_TMPDIR="$WORK/pprof"
NAT="$BIN/tests/targets/cpu_shares_fp"
[ -x "$NAT" ] || { bad "build: $NAT missing"; exit 1; }
chmod 755 "$WORK"
cp "$NAT" "$WORK/shares"; chmod 755 "$WORK/shares"
# setpriv execs the program: $! is the program's own pid
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

"${NOBODY[@]}" "$WORK/shares" 60 > /dev/null &
MINE=$!; PIDS+=("$MINE")
"$WORK/shares" 60 > /dev/null &
ROOTS=$!; PIDS+=("$ROOTS")
sleep 0.3

AGENT_LOG="$WORK/agent.log"
"${NOBODY[@]}" "$R" agent --listen 127.0.0.1:0 --target "pid=$MINE,service=mine$$" \
  --target "pid=$ROOTS,service=roots$$" --scan-interval 200ms > /dev/null 2> "$AGENT_LOG" &
AGENT_PID=$!; PIDS+=("$AGENT_PID")
wait_for 10 grep -q "serving http://" "$AGENT_LOG" || { bad "agent did not start: $(cat "$AGENT_LOG")"; exit 1; }
AGENT_URL=$(grep -o 'http://127.0.0.1:[0-9]*' "$AGENT_LOG" | head -1)
wait_for 10 has_target "$MINE" && wait_for 10 has_target "$ROOTS" || { bad "targets not listed"; exit 1; }

"$GO" tool pprof -raw "$AGENT_URL/targets/mine$$/debug/pprof/profile?seconds=2" > "$WORK/raw.txt" 2>&1
grep -q " gamma" "$WORK/raw.txt" && ! grep -q "kernel.kallsyms" "$WORK/raw.txt" \
  && ok "its own process sampled (user space only, as the kernel allows)" \
  || bad "own target: $(head -c 600 "$WORK/raw.txt")"
err=$(curl -sf "$AGENT_URL/targets" | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["pid"] == int(sys.argv[1]):
        print(t.get("error", ""))' "$ROOTS")
grep -qi "perf" <<<"$err" && ok "root's process listed with its error: $err" || bad "no error for root's: '$err'"
out=$(curl -s "$AGENT_URL/targets/roots$$/debug/pprof/profile?seconds=1")
grep -q "no cpu profile" <<<"$out" && ok "its /profile says why: $out" || bad "roots profile: $out"
e=$(metric rtdiag_agent_source_errors_total)
[ "${e%%.*}" -ge 1 ] 2>/dev/null && [ "$(grep -c "perf source failed" "$AGENT_LOG")" = 1 ] \
  && ok "counted ($e) and logged once" || bad "errors '$e', log: $(grep perf "$AGENT_LOG")"
stop_agent || bad "agent exit status $?"
[ $fail = 0 ] || { echo "agent log:"; cat "$AGENT_LOG"; }
exit $((fail > 0))
