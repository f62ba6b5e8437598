#!/usr/bin/env bash
# rtdiag perf trace -- COMMAND ends when COMMAND exits, as perf record does:
# a grandchild that outlives it is not traced further. The shell exits at
# once; its background child exits 1 s later (exec'ing /bin/true first),
# and neither that exec nor its exit may be in the output. The shell's own
# exit must be.
. "$(dirname "$0")/lib.sh"
"$R" perf trace -e sched:sched_process_exec -e sched:sched_process_exit \
  -- /bin/sh -c '(sleep 1; exec /bin/true) & exit 0' > "$TMP/out" 2> "$TMP/err" < /dev/null ||
  { cat "$TMP/err"; fail "trace -- COMMAND failed"; }
grep -q 'sched:sched_process_exit: comm="sh"' "$TMP/out" || fail "no exit of the shell: $(cat "$TMP/out")"
grep -q 'comm="true"\|filename=/bin/true\|filename="/bin/true"' "$TMP/out" &&
  fail "traced the grandchild after COMMAND exited: $(cat "$TMP/out")"
ok "trace ended with COMMAND: $(wc -l < "$TMP/out") events, none of the grandchild that outlived it"
# the grandchild is still running: let it finish before the temp dir goes
sleep 1.1
