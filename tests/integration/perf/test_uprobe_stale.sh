# Probes left by an rtdiag killed with SIGKILL (it cannot remove them) are
# removed by the next rtdiag that starts a monitor; a group whose pid now
# belongs to another process (pids are reused) is stale too, told apart by
# the process start time in the group name; a live owner's group stays.
. "$(dirname "$0")/lib.sh"
LIBC=$(ldd /bin/true | awk '/libc.so/{print $3}')
[ -f "$LIBC" ] || skip "libc not found"
UE=$TRACEFS/uprobe_events
[ -w "$UE" ] || skip "$UE not writable"

# 1. a real SIGKILL while tracing with a tracefs uprobe (fetch arguments)
"$R" perf trace --uprobe "$LIBC:open path=+0(%di):string" -a --duration 30 > /dev/null 2>&1 &
k=$!
for i in $(seq 100); do grep -q "^p:rtdiag_${k}_[0-9]*/" "$UE" && break; sleep 0.05; done
grep -q "^p:rtdiag_${k}_[0-9]*/" "$UE" || { kill $k; fail "the probe of pid $k never appeared: $(cat "$UE")"; }
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
echo PASS
