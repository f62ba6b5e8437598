# Probes left by an rtdiag killed with SIGKILL (it cannot remove them) are
# removed by the next rtdiag that starts a monitor; a group whose pid now
# belongs to another process (pids are reused) is stale too, told apart by
# the process start time in the group name; so is the group of a zombie
# (kill(pid, 0) succeeds on one); a live owner's group stays.
. "$(dirname "$0")/lib.sh"
LIBC=$(ldd /bin/true | awk '/libc.so/{print $3}')
[ -f "$LIBC" ] || skip "libc not found"
UE=$TRACEFS/uprobe_events
[ -w "$UE" ] || skip "$UE not writable"

# 1. a real SIGKILL while tracing with a tracefs uprobe (fetch arguments),
# its guardian (which would remove the probe: test_guard) killed first, as
# an rtdiag without one would leave it
tag=$$.$RANDOM
RTD_TEST_TAG=$tag "$R" perf trace --uprobe "$LIBC:open path=+0(%di):string" -a --duration 30 > /dev/null 2>&1 &
k=$!
within 60 grep -q "^p:rtdiag_${k}_[0-9]*/" "$UE" || { kill $k; fail "the probe of pid $k never appeared: $(cat "$UE")"; }
guard=
for g in $(pgrep -x rtdiag-guard); do
  { tr '\0' '\n' < /proc/$g/environ; } 2>/dev/null | grep -qx "RTD_TEST_TAG=$tag" && guard=$g
done
[ -n "$guard" ] || { kill $k; fail "no guardian of pid $k found"; }
kill -9 $guard
kill -9 $k; wait $k 2>/dev/null
grep -q "^p:rtdiag_${k}_" "$UE" || fail "the killed rtdiag's probe vanished by itself (nothing to test)"
"$R" perf trace -e sched:sched_process_exec -- /bin/true > /dev/null || fail "next run"
grep -q "^p:rtdiag_${k}_" "$UE" && fail "probe of SIGKILLed pid $k not removed by the next run: $(grep rtdiag_$k "$UE")"
ok "probe of a SIGKILLed rtdiag removed by the next run"

# 2. pid reuse: a group naming a live process that started at another time
sleep 30 & sp=$!
start=$(awk '{ sub(/.*\) /, ""); print $20 }' /proc/$sp/stat)
off=$(printf '0x%x' 4096)
echo "p:rtdiag_${sp}_$((start + 1))/reused $LIBC:$off" >> "$UE" || fail "cannot create the fake stale probe (labelled fake)"
echo "p:rtdiag_${sp}_${start}/owned $LIBC:$off" >> "$UE" || fail "cannot create the fake owned probe"
"$R" perf trace -e sched:sched_process_exec -- /bin/true > /dev/null || fail "run"
grep -q "rtdiag_${sp}_$((start + 1))/" "$UE" && fail "group of a reused pid (other start time) not removed"
grep -q "rtdiag_${sp}_${start}/" "$UE" || fail "group of a live owner removed"
echo "-:rtdiag_${sp}_${start}/owned" >> "$UE"
kill $sp
ok "reused pid: stale by start time; a live owner's group stays"

# 3. a zombie owner (dead, not yet reaped: kill(pid, 0) still succeeds on
# it): its group is stale. The group is written here (labelled fake): a
# real rtdiag's guardian would remove it first.
python3 -c 'import os, time
p = os.fork()
if p == 0:
    os._exit(0)
print(p, flush=True)
time.sleep(3600)' > "$TMP/zombie" &
holder=$!
within 60 test -s "$TMP/zombie" || fail "no zombie"
z=$(cat "$TMP/zombie")
within 60 grep -q '^State:.*Z' /proc/$z/status || { kill $holder; fail "$z is not a zombie"; }
zstart=$(awk '{ sub(/.*\) /, ""); print $20 }' /proc/$z/stat)
echo "p:rtdiag_${z}_${zstart}/zombie $LIBC:$off" >> "$UE" || { kill $holder; fail "cannot create the fake probe of a zombie"; }
"$R" perf trace -e sched:sched_process_exec -- /bin/true > /dev/null || fail "run (zombie)"
left=$(grep "rtdiag_${z}_${zstart}/" "$UE")
[ -n "$left" ] && echo "-:rtdiag_${z}_${zstart}/zombie" >> "$UE"
kill $holder
[ -z "$left" ] || fail "group of a zombie owner kept by the next run: $left"
ok "a zombie owner's group is stale"
echo PASS
