# What rtdiag switches on outside itself is switched off however it ends:
# killed with SIGKILL (it can undo nothing itself), its guardian process
# undoes it. Each case: a real .NET 10 program (perf-dotnet, which
# compiles a method every 50 ms) or the real kernel's uprobe_events.
#  1. `perf record -p PID` SIGKILLed mid-run: the runtime's perf map is off
#     again (the runtime has closed it) and the map file rtdiag caused is
#     removed, with no other rtdiag run;
#  2. `perf record -p PID` whose target is killed during the run: the map
#     file of the exited target is removed when the recording ends;
#  3. `perf trace --uprobe` SIGKILLed: its group leaves uprobe_events with
#     no other rtdiag run;
#  4. the agent with --dotnet-cpu perf SIGKILLed: as 1.
. "$(dirname "$0")/lib.sh"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; rm -f /tmp/dotnet-diagnostic-"$p"-*-socket /tmp/perf-"$p".map /tmp/perfinfo-"$p".map; done
  rm -rf "$TMP"
}
trap cleanup EXIT

# ---- 3 first: it needs no .NET
LIBC=$(ldd /bin/true | awk '/libc.so/{print $3}')
UE=$TRACEFS/uprobe_events
if [ -f "$LIBC" ] && [ -w "$UE" ]; then
  has_group() { grep -q "^[pr]:rtdiag_$1_[0-9]*/" "$UE"; }
  # its parent does not reap it: SIGKILLed, it stays a zombie, which
  # kill(pid, 0) cannot tell from a live process
  python3 -c 'import os, sys, time
p = os.fork()
if p == 0:
    os.dup2(os.open("/dev/null", os.O_WRONLY), 1)
    os.execvp(sys.argv[1], sys.argv[1:])
print(p, flush=True)
time.sleep(3600)' "$R" perf trace --uprobe "$LIBC:open path=+0(%di):string" -a --duration 300 \
    > "$TMP/trace.pid" 2> "$TMP/trace.err" &
  holder=$!; PIDS+=($holder)
  within 60 test -s "$TMP/trace.pid" || fail "rtdiag perf trace did not start"
  k=$(cat "$TMP/trace.pid")
  within 60 has_group $k || { cat "$TMP/trace.err"; fail "the probe of pid $k never appeared: $(cat "$UE")"; }
  kill -9 $k
  within 60 grep -q '^State:.*Z' /proc/$k/status || fail "the killed rtdiag $k is not a zombie"
  within 60 not has_group $k || {
    g=$(grep "rtdiag_${k}_" "$UE")
    for e in $(sed -n "s|^[pr]:\(rtdiag_${k}_[0-9]*/[^ ]*\) .*|\1|p" "$UE"); do echo "-:$e" >> "$UE"; done
    fail "the uprobe group of the SIGKILLed rtdiag $k (a zombie) is still in uprobe_events: $g"; }
  kill -9 $holder
  ok "uprobe group of a SIGKILLed perf trace (left a zombie) removed with no other rtdiag run"
else
  echo "note: no libc or $UE not writable: the uprobe case is not run"
fi

perf_dotnet_app "the uprobe case passed"
start() { # SECONDS -> TPID once it is hot
  rm -f "$TMP/ready"
  LD_LIBRARY_PATH="$APP" "$APP/perf-dotnet" "$1" "$TMP/ready" > "$TMP/out" 2>&1 &
  TPID=$!; PIDS+=($TPID)
  within 60 test -s "$TMP/ready" || { cat "$TMP/out"; fail "perf-dotnet did not start"; }
}
# the perf map rtdiag switched on in PID is off again and its file removed,
# while PID goes on running
undone() { # PID WHAT
  within 60 not map_open $1 || fail "$2: the runtime of $1 still writes its perf map"
  within 60 not test -e /tmp/perf-$1.map || fail "$2: /tmp/perf-$1.map, which rtdiag caused, is left"
  kill -0 $1 || fail "$2: the target died"
}

# ---- 1. perf record SIGKILLed mid-run
start 300
P=$TPID
[ -e /tmp/perf-$P.map ] && fail "perf map on before rtdiag switched it on"
"$R" perf record -p $P -d 300 -o "$TMP/k.folded" 2> "$TMP/rec.err" &
k=$!; PIDS+=($k)
within 60 map_open $P || { cat "$TMP/rec.err"; fail "rtdiag never switched the perf map on"; }
kill -9 $k
undone $P "perf record SIGKILLed"
ok "perf record SIGKILLed: perf map off again, its file removed, target running"

# ---- 2. the target is killed during the recording, which then ends: the
# map file of the exited target goes at the end
kill -9 $P
start 300
P=$TPID
"$R" perf record -p $P -d 300 -o "$TMP/x.folded" 2> "$TMP/rec.err" &
k=$!; PIDS+=($k)
within 60 map_open $P || { cat "$TMP/rec.err"; fail "rtdiag never switched the perf map on (2)"; }
kill -9 $P
within 120 not kill -0 $k 2>/dev/null || fail "the recording did not end with its target"
wait $k
rc=$?
[ $rc = 0 ] || [ $rc = 3 ] || { cat "$TMP/rec.err"; fail "record of a target that exits: exit $rc"; }
[ -e /tmp/perf-$P.map ] && fail "the map file of the exited target $P is left"
ok "perf record of a target killed meanwhile: its map file removed at the end"

# ---- 4. the agent with --dotnet-cpu perf SIGKILLed
start 300
P=$TPID
"$R" agent --listen 127.0.0.1:0 --target "pid=$P,service=guard$$" --dotnet-cpu perf \
  --dotnet-counters none --max-cpu 800% > "$TMP/agent.out" 2> "$TMP/agent.err" &
k=$!; PIDS+=($k)
within 60 map_open $P || { cat "$TMP/agent.err"; fail "the agent never switched the perf map on"; }
kill -9 $k
undone $P "agent SIGKILLed"
ok "agent --dotnet-cpu perf SIGKILLed: perf map off again, its file removed, target running"
echo PASS
