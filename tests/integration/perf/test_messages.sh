#!/usr/bin/env bash
# Messages that name the cause (#32): a pid that is gone is named by its
# number in perf stat, perf trace and gotrace capture (one of several
# given: the gone one); an out-of-range pid is refused with its range in
# digits; perf record of another user's process says whose it is.
. "$(dirname "$0")/lib.sh"

"$R" perf stat -e task-clock -p 999999 > /dev/null 2> "$TMP/err"; rc=$?
[ $rc = 1 ] && grep -q '^rtdiag: pid 999999: no such process$' "$TMP/err" \
  || fail "perf stat -p 999999: rc $rc $(cat "$TMP/err")"
"$R" perf stat -e task-clock -p $$,999998 > /dev/null 2> "$TMP/err"; rc=$?
[ $rc = 1 ] && grep -q 'pid 999998: no such process' "$TMP/err" \
  || fail "perf stat -p \$\$,999998: rc $rc $(cat "$TMP/err")"
"$R" perf trace -e sched:sched_switch -p $$,999997 > /dev/null 2> "$TMP/err"; rc=$?
[ $rc = 1 ] && grep -q 'pid 999997: no such process' "$TMP/err" \
  || fail "perf trace -p \$\$,999997: rc $rc $(cat "$TMP/err")"
ok "a gone pid named: $(head -1 "$TMP/err")"

"$R" gotrace capture --pid 999999999 -o "$TMP/t.out" 2> "$TMP/err"; rc=$?
[ $rc = 1 ] && grep -q 'pid 999999999: no such process' "$TMP/err" \
  || fail "gotrace capture --pid 999999999: rc $rc $(cat "$TMP/err")"
"$R" gotrace capture --pid 9999999999 -o "$TMP/t.out" 2> "$TMP/err"; rc=$?
[ $rc = 2 ] && grep -q "'9999999999' is out of range (1 to 2147483647)" "$TMP/err" \
  || fail "gotrace capture --pid 9999999999: rc $rc $(cat "$TMP/err")"
ok "gotrace capture: no such process; a range in digits"

command -v setpriv > /dev/null || skip "no setpriv to run as another user"
tp=$$   # this shell, root's
chmod 711 "$TMP"; mkdir -m 777 "$TMP/pub"   # somewhere nobody may write
setpriv --reuid nobody --regid nogroup --clear-groups \
  "$R" perf record -p $tp -d 1 -o "$TMP/pub/x.folded" > /dev/null 2> "$TMP/err"; rc=$?
[ $rc = 1 ] && grep -q "pid $tp belongs to another user, root (uid 0): profiling it needs root or CAP_PERFMON" "$TMP/err" \
  || fail "perf record of root's process as nobody: rc $rc $(cat "$TMP/err")"
ok "another user's process: $(head -1 "$TMP/err")"
