#!/usr/bin/env bash
# rtdiag perf stat agrees with Debian's perf stat within 5% on task-clock,
# page-faults and context-switches of the same command. Both tools attach
# (-p) to the same execution of the command, both before it begins its
# work, so the machine's noise (it is shared) and its load cannot make them
# differ; the -- COMMAND form is checked too.
. "$(dirname "$0")/lib.sh"
command -v perf > /dev/null || skip "perf (Debian linux-perf) is not installed"
perf stat -x, -e task-clock -- /bin/true > /dev/null 2>&1 || skip "perf stat does not run here"
EV=task-clock,page-faults,context-switches

rtd_vals() { # rtdiag's layout -> "event value" lines
  awk '$2=="msec" && $3=="task-clock" {print $3, $1} $2=="page-faults" || $2=="context-switches" {print $2, $1}' "$1"
}
perf_vals() { awk -F, '$3 != "" {print $3, $1}' "$1"; }
within() { awk -v p="$1" -v q="$2" 'BEGIN { d = p - q; if (d < 0) d = -d; exit !(p > 0 && d / p <= 0.05) }'; }

# The target waits (work ... sig) until both tools count: rtdiag from the
# moment its three counters are open, perf (-D -1: opened disabled) from
# its "enable" on --control, acknowledged; only then does the work begin.
same_run() {
  mkfifo "$TMP/ctl" "$TMP/ack"
  "$TARGET" work 60 400 sig > "$TMP/ready" & local tp=$! pp= rp=
  if ! wait_until grep -qx ready "$TMP/ready"; then echo "the target did not start"; kill $tp; return 1; fi
  perf stat -x, -o "$TMP/perf.csv" -e $EV -p $tp -D -1 --control "fifo:$TMP/ctl,$TMP/ack" 2>/dev/null & pp=$!
  "$R" perf stat -e $EV -o "$TMP/one" -p $tp & rp=$!
  local a=""
  if wait_until perf_fds $rp 3; then
    echo enable > "$TMP/ctl"
    read -r -t "${RTD_TEST_WAIT:-300}" a < "$TMP/ack"
    [ "$a" = ack ] || echo "perf did not enable its counters"
  else echo "rtdiag did not attach"; fi
  [ "$a" = ack ] || { kill $tp $pp $rp; return 1; }
  kill -USR1 $tp
  wait $tp
  wait $pp || return 1
  wait $rp || return 1
  perf_vals "$TMP/perf.csv" > "$TMP/p"; rtd_vals "$TMP/one" > "$TMP/q"
}
same_run || fail "a tool failed: $(cat "$TMP/one" "$TMP/perf.csv" 2>&1)"
cat "$TMP/one"
bad=0
for e in task-clock page-faults context-switches; do
  p=$(awk -v e=$e '$1==e {print $2}' "$TMP/p"); q=$(awk -v e=$e '$1==e {print $2}' "$TMP/q")
  [ -n "$p" ] && [ -n "$q" ] || fail "$e: no value (perf '$p', rtdiag '$q')"
  if within "$p" "$q"; then ok "$e (same process, both attached with -p): perf $p, rtdiag $q"
  else echo "FAIL: $e: perf $p, rtdiag $q (more than 5% apart)"; bad=1; fi
done
[ $bad = 0 ] || { cat "$TMP/perf.csv"; exit 1; }

# -- COMMAND: page-faults are deterministic; the times are shown
perf stat -x, -e $EV -- "$TARGET" work 20 50 2>&1 >/dev/null | awk -F, '{print $3, $1}' > "$TMP/p2"
"$R" perf stat -e $EV -o "$TMP/one2" -- "$TARGET" work 20 50 > /dev/null || fail "rtdiag perf stat -- COMMAND exited $?"
rtd_vals "$TMP/one2" > "$TMP/q2"
p=$(awk '$1=="page-faults" {print $2}' "$TMP/p2"); q=$(awk '$1=="page-faults" {print $2}' "$TMP/q2")
within "$p" "$q" || fail "-- COMMAND page-faults: perf $p, rtdiag $q"
ok "-- COMMAND: page-faults perf $p, rtdiag $q; task-clock perf $(awk '$1=="task-clock"{print $2}' "$TMP/p2") ms, rtdiag $(awk '$1=="task-clock"{print $2}' "$TMP/q2") ms (separate runs)"
grep -q "^ Performance counter stats for '$TARGET work 20 50':" "$TMP/one2" || fail "header"
grep -q 'seconds time elapsed$' "$TMP/one2" || fail "elapsed line"
grep -q 'CPUs utilized' "$TMP/one2" || fail "task-clock comment"

# a counter this machine lacks is reported as perf does, not as an error
"$R" perf stat -e task-clock,cycles -o "$TMP/hw" -- /bin/true || fail "stat with cycles"
if [ ! -e /sys/bus/event_source/devices/cpu ]; then
  grep -q '<not supported>.*cycles' "$TMP/hw" || fail "cycles without a CPU PMU: $(cat "$TMP/hw")"
  ok "cycles: <not supported> (no CPU PMU here)"
fi
# a group read with PERF_FORMAT_GROUP
"$R" perf stat -e '{task-clock,page-faults}' -o "$TMP/grp" -- "$TARGET" work 5 0 > /dev/null || fail "group stat"
grep -q 'page-faults' "$TMP/grp" && grep -q 'task-clock' "$TMP/grp" || fail "group: $(cat "$TMP/grp")"
ok "group {task-clock,page-faults}"
# like perf: counts go to stderr, the command's own output alone to stdout
"$R" perf stat -e task-clock -- /bin/echo only-this > "$TMP/so" 2> "$TMP/se" || fail "stat -- echo"
[ "$(cat "$TMP/so")" = "only-this" ] || fail "stdout holds more than the command's output: $(cat "$TMP/so")"
grep -q "Performance counter stats for '/bin/echo only-this'" "$TMP/se" && grep -q 'msec task-clock' "$TMP/se" \
  || fail "counts not on stderr: $(cat "$TMP/se")"
ok "counts on stderr, command output untouched on stdout"
