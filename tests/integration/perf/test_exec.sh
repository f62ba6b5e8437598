#!/usr/bin/env bash
# sched:sched_process_exec on a child shell that runs known programs shows
# exactly those filenames (a __data_loc string), each with its own pid.
. "$(dirname "$0")/lib.sh"
[ -d "$TRACEFS/events/sched/sched_process_exec" ] || skip "no sched:sched_process_exec tracepoint"
"$R" perf trace -e sched:sched_process_exec -- /bin/sh -c \
  "echo \$\$ > $TMP/shpid; /bin/true; /bin/echo x > /dev/null; /bin/ls / > /dev/null; :" \
  > "$TMP/out" 2> "$TMP/err" || { cat "$TMP/err"; fail "perf trace exited $?"; }
cat "$TMP/out"
shpid=$(cat "$TMP/shpid")
got=$(sed -n 's/.* filename="\([^"]*\)".*/\1/p' "$TMP/out" | tr '\n' ' ')
[ "$got" = "/bin/sh /bin/true /bin/echo /bin/ls " ] || fail "filenames: got '$got'"
ok "exactly the four filenames, in order"
# each line: the record's pid, the tracepoint's pid field and old_pid agree
bad=$(awk '{ split($3, a, "/"); p=a[1]; f=""; for (i=1;i<=NF;i++) if ($i ~ /^pid=/) f=substr($i,5); if (p != f) print }' "$TMP/out")
[ -z "$bad" ] || fail "pid mismatch: $bad"
first=$(awk 'NR==1{split($3,a,"/"); print a[1]}' "$TMP/out")
[ "$first" = "$shpid" ] || fail "the shell's exec has pid $first, the shell says $shpid"
n=$(awk '{split($3,a,"/"); print a[1]}' "$TMP/out" | sort -u | wc -l)
[ "$n" = 4 ] || fail "want 4 distinct pids, got $n"
ok "each exec has its own pid (the shell's is $shpid)"
grep -q 'events lost' "$TMP/err" && fail "losses reported: $(cat "$TMP/err")"
# JSON form
"$R" perf trace --json -e sched:sched_process_exec -- /bin/true > "$TMP/json" || fail "json run"
grep -q '"event":"sched:sched_process_exec","fields":{"filename":"/bin/true","pid":[0-9]*,"old_pid":[0-9]*}' "$TMP/json" \
  || fail "json line: $(cat "$TMP/json")"
ok "json"
