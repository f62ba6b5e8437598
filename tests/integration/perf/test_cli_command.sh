#!/usr/bin/env bash
# rtdiag perf trace -- COMMAND ends when COMMAND exits, as perf record does:
# a grandchild that outlives it is not traced further. The shell exits at
# once; its background child waits (a read of a FIFO, no exec) until rtdiag
# has ended, then execs /bin/true and exits, and neither that exec nor its
# exit may be in the output. The shell's own exit must be. (It slept 1 s:
# on a loaded machine that could end before rtdiag saw the shell exit.)
. "$(dirname "$0")/lib.sh"
mkfifo "$TMP/go"
exec 7<>"$TMP/go" # the test's end stays open: the grandchild's read waits for a line
"$R" perf trace -e sched:sched_process_exec -e sched:sched_process_exit \
  -- /bin/sh -c "(read x < '$TMP/go'; exec /bin/true) & exit 0" > "$TMP/out" 2> "$TMP/err" < /dev/null ||
  { cat "$TMP/err"; fail "trace -- COMMAND failed"; }
echo go >&7
grep -q 'sched:sched_process_exit: comm="sh"' "$TMP/out" || fail "no exit of the shell: $(cat "$TMP/out")"
grep -q 'comm="true"\|filename=/bin/true\|filename="/bin/true"' "$TMP/out" &&
  fail "traced the grandchild after COMMAND exited: $(cat "$TMP/out")"
ok "trace ended with COMMAND: $(wc -l < "$TMP/out") events, none of the grandchild that outlived it"
# the grandchild is still running: let it finish before the temp dir goes
gone() { ! pgrep -f "read x < '$TMP/go'" >/dev/null; }
wait_until gone
