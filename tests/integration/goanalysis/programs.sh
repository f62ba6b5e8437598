# programs.sh - sourced by test_programs_go1XX.sh with GOV set: builds
# tests/targets/go-analysis and gotrace-workload with Go $GOV, records
# their traces, compares rtdiag with that Go's go tool trace on each, and
# checks the waits go-analysis is known to make.
. "$(dirname "$0")/lib.sh"
need_go "$GOV"
build_target go-analysis || { bad "go$GOV build go-analysis"; finish; }
build_target gotrace-workload || { bad "go$GOV build gotrace-workload"; finish; }
"$B/go-analysis" trace "$TMP/k.trace" >"$TMP/k.measured" || { bad "go-analysis trace"; finish; }
"$B/gotrace-workload" "$TMP/w.trace" >/dev/null || { bad "gotrace-workload"; finish; }
gotool "$TMP/k.trace"
gotool "$TMP/w.trace"
if [ "$GOV" != 1.19 ]; then
  # several generations, 4 Ps
  GOMAXPROCS=4 "$B/gotrace-workload" "$TMP/long.trace" 60 >/dev/null || bad "long workload run"
  ng=$("$R" gotrace stats "$TMP/long.trace" | awk '/^generations:/{print $2}')
  echo "note: long trace: $(wc -c <"$TMP/long.trace") bytes, ${ng:-?} generations"
  [ "${ng:-0}" -ge 2 ] && gotool "$TMP/long.trace" || echo "note: one generation only; the multi-generation case is not covered by this run"
fi

# CPU samples (go-analysis runs the CPU profiler while it traces, and
# spins ~50 ms): the samples, and their leaf functions, are the ones Go's
# own decoding shows
nr=$("$R" gotrace pprof -t cpu -f raw "$TMP/k.trace" | awk -F'\t' '{s += $1} END {print s + 0}')
if [ "$GOV" = 1.19 ]; then
  ng=$("$GO" tool trace -d "$TMP/k.trace" 2>/dev/null | grep -c ' CPUSample ')
  [ "$ng" = "$nr" ] && [ "$nr" -gt 0 ] && ok "cpu: the $nr CPU samples of go tool trace -d" || bad "cpu: $nr samples, go tool trace -d has $ng"
else
  "$GO" tool trace -d=1 "$TMP/k.trace" 2>/dev/null | awk '/ StackSample /{want = 1; next} want && /^\t[^\t]/ {sub(/^\t/, ""); sub(/ @ .*/, ""); print; want = 0}' | sort >"$TMP/cpu.go"
  "$R" gotrace pprof -t cpu -f raw "$TMP/k.trace" | awk -F'\t' '{ split($3, a, " "); for (i = 0; i < $1; i++) print (NF >= 3 ? a[2] : "") }' | sort >"$TMP/cpu.rt"
  cmp -s "$TMP/cpu.go" "$TMP/cpu.rt" && [ "$nr" -gt 0 ] && ok "cpu: the $nr CPU samples of go tool trace -d=1, with the same leaf functions" ||
    { bad "cpu: $nr samples; differ from go tool trace -d=1 (< go, > rtdiag)"; diff "$TMP/cpu.go" "$TMP/cpu.rt" | head -5; }
fi

# Known waits: the program measures each of its waits itself (wall
# clock around the blocking call); the trace's analyses must find that
# time, for that start function, within 10% + 2 ms (the trace's clock is
# not the wall clock, and a goroutine runs a little before and after).
# The wall clock also holds the time the goroutine, unblocked, waited for
# a P before it read the clock again: its scheduler wait, which the trace
# counts apart (go tool trace's "Scheduler wait"), near nothing on a
# quiet machine and 56 ms of a 106 ms measure beside busy loops. So the
# wait found may not exceed the measure (10% + 2 ms), and with the
# goroutine's scheduler wait beside it must reach it (10% + 2 ms): on a
# quiet machine the check above, on a busy one no check of its speed.
near() { awk -v v="$1" -v m="$2" 'BEGIN { d = v - m; if (d < 0) d = -d; exit !(m > 0 && d <= m * 0.1 + 2000000) }'; }
near_sched() { # WAIT MEASURED SCHED
  awk -v v="$1" -v m="$2" -v s="${3:-0}" 'BEGIN { exit !(m > 0 && v <= m * 1.1 + 2000000 && v + s >= m * 0.9 - 2000000) }'
}
"$R" gotrace goroutines --json --top 0 "$TMP/k.trace" >"$TMP/g.json" || bad "goroutines --json"
gstat() { # GROUP STAT
  python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("group") == sys.argv[2] and "goroutine" in r: print(r["stats"].get(sys.argv[3], 0))' "$TMP/g.json" "$1" "$2" | head -1
}
if [ "$GOV" = 1.19 ]; then sw="Scheduler wait"; else sw="Sched wait time"; fi
measured() { awk -v k="$1" -v n="$2" '$1 == k && $2 == n { print $3 }' "$TMP/k.measured"; }
prof_ns() { # TYPE FUNCTION LEAF: ns of the stacks through FUNCTION whose leaf matches LEAF
  "$R" gotrace pprof --type "$1" --format raw "$TMP/k.trace" | awk -F'\t' -v fn=" $2 " -v leaf="$3" '
    index($3, leaf) { for (i = 3; i <= NF; i++) if (index($i, fn)) { s += $2; break } } END { print s + 0 }'
}
for spec in "sync main.chanWaiter chanrecv" "sync main.mutexWaiter Mutex" "net main.netClient FD).Read" "syscall main.sleeper Nanosleep"; do
  set -- $spec
  v=$(prof_ns "$1" "$2" "$3"); m=$(measured wait "$2")
  if [ "$GOV" = 1.19 ] && [ "$1" = syscall ] && [ "$v" = 0 ]; then
    # Go 1.19 counts a syscall only when the runtime handed its P off
    # (GoSysBlock); sysmon may not, when Ps are idle and it sleeps long
    sg=$("$R" gotrace goroutines --json --top 0 "$TMP/k.trace" | sed -n 's/.*"goroutine":\([0-9]*\),"group":"main.sleeper".*/\1/p' | head -1)
    if ! "$R" gotrace grep --ordered -e '^GoSysBlock$' -G "${sg:-x}" -c "$TMP/k.trace" | grep -qv '^0$'; then
      echo "note: main.sleeper's nanosleep did not lose its P (no GoSysBlock in the trace): Go 1.19's syscall profile has nothing for it, nor has rtdiag's"
      continue
    fi
  fi
  if [ "$GOV" != 1.19 ] && [ "$1" = syscall ]; then
    # Go 1.22+ counts a syscall to the goroutine's next transition with a
    # stack (here the sleep after it): the call, and whatever scheduling
    # delay came between (large on a loaded machine)
    awk -v v="$v" -v m="${m:-0}" 'BEGIN { exit !(m > 0 && v >= m * 0.9 - 2000000 && v <= m * 20 + 1e9) }' &&
      ok "known wait: $1 profile, $2: $v ns; the program measured a $m ns call (Go 1.22+ counts on to the next stack)" ||
      bad "known wait: $1 profile, $2: $v ns; the program measured a ${m:-nothing} ns call"
    continue
  fi
  sc=$(gstat "$2" "$sw")
  near_sched "$v" "${m:-0}" "${sc:-0}" && ok "known wait: $1 profile, $2: $v ns; the program measured $m ns (scheduler wait ${sc:-0} ns)" ||
    bad "known wait: $1 profile, $2: $v ns; the program measured ${m:-nothing} ns (scheduler wait ${sc:-none} ns)"
done
if [ "$GOV" = 1.19 ]; then cw="Sync block"; nw="Network wait"; mw="Sync block"
else cw="Block time (chan receive)"; nw="Block time (network)"; mw="Block time (sync)"; fi
for spec in "main.chanWaiter|$cw" "main.mutexWaiter|$mw"; do
  g=${spec%%|*}; st=${spec#*|}
  v=$(gstat "$g" "$st"); m=$(measured wait "$g"); sc=$(gstat "$g" "$sw")
  near_sched "${v:-0}" "${m:-0}" "${sc:-0}" && ok "known wait: $g's '$st' is $v ns; the program measured $m ns (scheduler wait ${sc:-0} ns)" ||
    bad "$g's '$st' is ${v:-none} ns; the program measured ${m:-nothing} ns (scheduler wait ${sc:-none} ns)"
done
# the client's network time is its read's wait and its dial's connect wait
v=$(gstat main.netClient "$nw"); m=$(measured wait main.netClient); d=$(measured dial main.netClient)
sc=$(gstat main.netClient "$sw")
awk -v v="${v:-0}" -v lo="${m:-0}" -v hi="$(( ${m:-0} + ${d:-0} ))" -v s="${sc:-0}" 'BEGIN { exit !(lo > 0 && v + s >= lo * 0.9 - 2000000 && v <= hi * 1.1 + 2000000) }' &&
  ok "known wait: main.netClient's '$nw' is $v ns; the program measured a $m ns read after a $d ns dial" ||
  bad "main.netClient's '$nw' is ${v:-none} ns; the program measured a ${m:-?} ns read after a ${d:-?} ns dial"
"$R" gotrace tasks --regions --json "$TMP/k.trace" >"$TMP/t.json" || bad "tasks --json"
for name in sleep-25ms spin; do
  v=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("region") == sys.argv[2]: print(r["duration_ns"])' "$TMP/t.json" "$name"); m=$(measured region "$name")
  near "${v:-0}" "${m:-0}" && ok "known region: $name lasts $v ns; the program measured $m ns" || bad "region $name lasts ${v:-none} ns; the program measured ${m:-nothing} ns"
done
grep -q '"type":"known-task".*"complete":true.*"regions":2' "$TMP/t.json" && ok "known task: known-task, complete, 2 regions" || bad "known-task not found complete with 2 regions: $(grep known-task "$TMP/t.json")"
finish
