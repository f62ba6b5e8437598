#!/usr/bin/env bash
# Uprobes: a tracefs uprobe with a string fetch argument on libc's open()
# shows exactly the paths the child opened; a uprobe on a function of a
# non-PIE test binary fires once per call with its int and string
# arguments; the PMU form (no fetch args) and a uretprobe; probes are
# removed on exit, and stale ones of dead rtdiag processes at start.
. "$(dirname "$0")/lib.sh"
[ -e "$TRACEFS/uprobe_events" ] || skip "no uprobe_events in $TRACEFS (CONFIG_UPROBE_EVENTS off)"
LIBC=$(realpath "$(ldd "$TARGET" | awk '/libc\.so/{print $3; exit}')")
[ -r "$LIBC" ] || fail "cannot find the target's libc (ldd says: $(ldd "$TARGET"))"

# 1. libc open() with the path fetched as a string
"$R" perf trace --uprobe "$LIBC:open path=+0(%di):string" -- "$TARGET" open "$TMP/a" /etc/hostname "$TMP/c d" \
  > "$TMP/out" 2> "$TMP/err" || { cat "$TMP/err"; fail "libc open uprobe run"; }
cat "$TMP/out"
got=$(sed -n 's/.* path="\([^"]*\)"$/\1/p' "$TMP/out" | tr '\n' '|')
[ "$got" = "$TMP/a|/etc/hostname|$TMP/c d|" ] || fail "paths: '$got'"
grep -q " $LIBC:open " "$TMP/out" || fail "lines do not name the symbol"
ok "libc open: exactly the three paths, lines name $LIBC:open"

# 2. the test binary's function: int and string arguments, once per call
"$R" perf trace --uprobe "$TARGET:rtd_target_func n=%di:s32 s=+0(%si):string" -- "$TARGET" call 5 \
  > "$TMP/out" 2> "$TMP/err" || { cat "$TMP/err"; fail "target uprobe run"; }
cat "$TMP/out"
got=$(sed -n 's/.* n=\([0-9-]*\) s="\([^"]*\)"$/\1:\2/p' "$TMP/out" | tr '\n' ' ')
[ "$got" = "0:call-0 1:call-1 2:call-2 3:call-3 4:call-4 " ] || fail "calls: '$got'"
ok "rtd_target_func: 5 calls with int and string args (non-PIE: file offset != address)"

# 3. uretprobe with the return value
"$R" perf trace --uprobe "$TARGET:rtd_target_func%return ret=\$retval:s32" -- "$TARGET" call 3 \
  > "$TMP/out" 2> "$TMP/err" || { cat "$TMP/err"; fail "uretprobe run"; }
got=$(sed -n 's/.* ret=\([0-9-]*\)$/\1/p' "$TMP/out" | tr '\n' ' ')
[ "$got" = "0 2 4 " ] || { cat "$TMP/out"; fail "return values: '$got'"; }
ok "uretprobe: return values 0 2 4"

# 4. the uprobe PMU (no fetch args: nothing created in tracefs)
"$R" perf trace --uprobe "$TARGET:rtd_target_func" -- "$TARGET" call 7 > "$TMP/out" 2> "$TMP/err" \
  || { cat "$TMP/err"; fail "PMU uprobe run"; }
n=$(grep -c 'uprobe:rtd_target_func: .*:rtd_target_func$' "$TMP/out")
[ "$n" = 7 ] || { cat "$TMP/out"; fail "PMU uprobe: $n hits, want 7"; }
ok "uprobe PMU: 7 hits for 7 calls"

# 4b. by address, as nm prints it (non-PIE: not the file offset)
addr=$(nm "$TARGET" | awk '$3=="rtd_target_func"{print $1}')
[ -n "$addr" ] || fail "nm finds no rtd_target_func"
addr=$(printf '%x' "0x$addr")
"$R" perf trace --uprobe "$TARGET:0x$addr" -- "$TARGET" call 3 > "$TMP/out" 2> "$TMP/err" \
  || { cat "$TMP/err"; fail "uprobe by address"; }
n=$(grep -c ":0x$addr\$" "$TMP/out")
[ "$n" = 3 ] || { cat "$TMP/out"; fail "uprobe at 0x$addr: $n hits, want 3"; }
ok "uprobe at address 0x$addr: 3 hits for 3 calls"

# 5. nothing of ours left behind
# (probes of a live rtdiag pid belong to another rtdiag running right now,
# e.g. a test running in parallel; ours have all exited)
left=""
for g in $(sed -n 's/^[pr]:rtdiag_\([0-9]*\)[_/].*/\1/p' "$TRACEFS/uprobe_events" | sort -u); do
  [ -d "/proc/$g" ] || left="$left $g"
done
[ -z "$left" ] || fail "probes of exited rtdiag pids left:$left: $(cat "$TRACEFS/uprobe_events")"
ok "no probes of exited rtdiag processes left in uprobe_events"

# 6. a stale probe of a dead "rtdiag" pid is removed when a monitor starts
sh -c 'exit 0' & dead=$!; wait $dead
off=$(printf '0x%x' 4096)
# another rtdiag starting in parallel may clean it up at once: try a few times
for try in 1 2 3 4 5; do
  echo "p:rtdiag_$dead/stale $TARGET:$off" >> "$TRACEFS/uprobe_events" || fail "cannot create a stale probe"
  grep -q "rtdiag_$dead/stale" "$TRACEFS/uprobe_events" && break
  [ $try = 5 ] && fail "stale probe not created (or removed at once, 5 times)"
done
"$R" perf trace -e sched:sched_process_exec -- /bin/true > /dev/null || fail "trace run"
grep -q "rtdiag_$dead/" "$TRACEFS/uprobe_events" && fail "stale probe of dead pid $dead not removed"
ok "stale probe of dead pid $dead removed at start"

# 7. a bad symbol says what and where
"$R" perf trace --uprobe "$TARGET:no_such_function_xyz" -- /bin/true 2> "$TMP/err" && fail "bad symbol accepted"
grep -q "no_such_function_xyz" "$TMP/err" || fail "error does not name the symbol: $(cat "$TMP/err")"
ok "unknown symbol: $(cat "$TMP/err")"
