#!/usr/bin/env bash
# rtdiag perf stat agrees with Debian's perf stat within 5% on task-clock,
# page-faults and context-switches of the same command (medians of 5
# interleaved runs each: the machine is shared, single runs are noisy).
. "$(dirname "$0")/lib.sh"
command -v perf > /dev/null || skip "perf (Debian linux-perf) is not installed"
perf stat -x, -e task-clock -- /bin/true > /dev/null 2>&1 || skip "perf stat does not run here"
EV=task-clock,page-faults,context-switches
CMD=("$TARGET" work 60 400)
for i in 1 2 3 4 5; do
  perf stat -x, -e $EV -- "${CMD[@]}" 2>&1 >/dev/null | awk -F, -v r=$i '{print r, $3, $1}' >> "$TMP/perf"
  "$R" perf stat -e $EV -- "${CMD[@]}" > "$TMP/one" || fail "rtdiag perf stat exited $?"
  awk -v r=$i '$2=="msec" && $3=="task-clock" {print r, $3, $1} $2=="page-faults" || $2=="context-switches" {print r, $2, $1}' \
    "$TMP/one" >> "$TMP/rtd"
done
cat "$TMP/one"
median() { awk -v e="$2" '$2==e {print $3}' "$1" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
bad=0
for e in task-clock page-faults context-switches; do
  p=$(median "$TMP/perf" $e); q=$(median "$TMP/rtd" $e)
  [ -n "$p" ] && [ -n "$q" ] || fail "$e: no value (perf '$p', rtdiag '$q')"
  if awk -v p="$p" -v q="$q" 'BEGIN { d = p - q; if (d < 0) d = -d; exit !(p > 0 && d / p <= 0.05) }'; then
    ok "$e: perf $p, rtdiag $q (within 5%)"
  else
    echo "FAIL: $e: perf $p, rtdiag $q (more than 5% apart)"; bad=1
  fi
done
[ $bad = 0 ] || { echo "perf runs:"; cat "$TMP/perf"; echo "rtdiag runs:"; cat "$TMP/rtd"; exit 1; }
# layout: perf's header and footer
grep -q "^ Performance counter stats for '$TARGET work 60 400':" "$TMP/one" || fail "header"
grep -q 'seconds time elapsed$' "$TMP/one" || fail "elapsed line"
grep -q 'CPUs utilized' "$TMP/one" || fail "task-clock comment"
# a counter this machine lacks is reported as perf does, not as an error
"$R" perf stat -e task-clock,cycles -- /bin/true > "$TMP/hw" || fail "stat with cycles"
if [ ! -e /sys/bus/event_source/devices/cpu ]; then
  grep -q '<not supported>.*cycles' "$TMP/hw" || fail "cycles without a CPU PMU: $(cat "$TMP/hw")"
  ok "cycles: <not supported> (no CPU PMU here)"
fi
# a group read with PERF_FORMAT_GROUP
"$R" perf stat -e '{task-clock,page-faults}' -- "$TARGET" work 5 0 > "$TMP/grp" || fail "group stat"
grep -q 'page-faults' "$TMP/grp" && grep -q 'task-clock' "$TMP/grp" || fail "group: $(cat "$TMP/grp")"
ok "group {task-clock,page-faults}"
