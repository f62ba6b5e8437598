#!/usr/bin/env bash
# rtdiag perf trace -p PID sees exactly that process's events and ends when
# it exits; -a sees the whole system for --duration; a rejected filter is a
# clear error; rtdiag perf list shows tracepoints, counters and probes.
. "$(dirname "$0")/lib.sh"
[ -d "$TRACEFS/events/syscalls/sys_enter_getppid" ] || skip "no syscalls:sys_enter_getppid"
n=5000
# both flood once told (SIGUSR1), after rtdiag has attached to the first
"$TARGET" flood $n sig > "$TMP/r1" & tp=$!
"$TARGET" flood $n sig > "$TMP/r2" & other=$!
wait_until grep -qx ready "$TMP/r1" && wait_until grep -qx ready "$TMP/r2" || fail "the targets did not start"
"$R" perf trace -m 256 -p $tp -e syscalls:sys_enter_getppid > "$TMP/out" 2> "$TMP/err" & rp=$!
# attached = reading: its reader thread starts (rtd_perf_monitor_run) only
# after every event is open and writes into its ring. Its first perf fd
# (the first CPU's ring) is not enough: on a loaded machine the flood could
# start before the tracepoint was open, and the target exit before the
# last CPU's was ("-p run failed", "950 lines (want 5000)").
reading() { ! kill -0 "$1" || [ "$(ls /proc/"$1"/task | wc -l)" -ge 2 ]; }
wait_until reading $rp && kill -0 $rp || { kill $tp $other $rp; fail "rtdiag did not attach: $(cat "$TMP/err")"; }
kill -USR1 $tp $other
wait $tp $other
gone() { ! kill -0 "$1"; }
wait_until gone $rp || { kill $rp; fail "-p: still running after the process exited"; }
wait $rp || { cat "$TMP/err"; fail "-p run failed"; }
got=$(wc -l < "$TMP/out")
others=$(awk -v p=$tp '{split($3,a,"/"); if (a[1] != p) print}' "$TMP/out" | wc -l)
[ "$got" = $n ] && [ "$others" = 0 ] || fail "-p $tp: $got lines (want $n), $others of other pids"
ok "-p: exactly the $n calls of pid $tp, none of pid $other; ended with the process"

"$R" perf trace -a --duration 1 -e sched:sched_switch > "$TMP/all" 2> "$TMP/err" || { cat "$TMP/err"; fail "-a run"; }
pids=$(awk '{split($3,a,"/"); print a[1]}' "$TMP/all" | sort -u | wc -l)
[ "$pids" -ge 3 ] || fail "-a: switches of only $pids pids"
sort -k1,1 -g -c "$TMP/all" || fail "-a: lines out of time order"
ok "-a --duration 1: $(wc -l < "$TMP/all") switches of $pids pids, in time order"

"$R" perf trace -e 'sched:sched_switch/no_such_field == 1/' -a 2> "$TMP/err" && fail "bad filter accepted"
grep -q "sched:sched_switch: the kernel rejected the filter 'no_such_field == 1'" "$TMP/err" || fail "filter error: $(cat "$TMP/err")"
"$R" perf trace -e 'sched:no_such_event' -a 2> "$TMP/err" && fail "unknown event accepted"
grep -q 'sched:no_such_event: no such tracepoint' "$TMP/err" || fail "unknown event error: $(cat "$TMP/err")"
"$R" perf trace -e sched:sched_switch -p 999999999 2> "$TMP/err"; rc=$?
[ $rc = 2 ] || grep -q 'pid 999999999: no such process' "$TMP/err" || fail "bad pid: rc $rc $(cat "$TMP/err")"
ok "clear errors: $(head -1 "$TMP/err")"

"$R" perf list > "$TMP/list" || fail "perf list"
for want in 'sched:sched_switch +\[Tracepoint event\]' 'task-clock +\[Software event' 'uprobe' 'software// +\[Kernel PMU'; do
  grep -Eq "$want" "$TMP/list" || fail "perf list lacks /$want/"
done
"$R" perf list 'sched:sched_proc*' > "$TMP/l2" || fail "perf list pattern"
grep -q sched:sched_process_exec "$TMP/l2" && ! grep -q sched_switch "$TMP/l2" || fail "pattern: $(cat "$TMP/l2")"
ok "perf list: tracepoints, counters, PMUs, probes; glob filter"
