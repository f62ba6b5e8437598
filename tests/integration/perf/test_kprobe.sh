#!/usr/bin/env bash
# kprobes and kretprobes, live: a kprobe on the kernel's openat path with a
# string fetch argument sees the child's paths. Kernels without kprobes
# (no kprobe_events in tracefs and no kprobe PMU) skip with the reason,
# after checking that rtdiag says so clearly.
. "$(dirname "$0")/lib.sh"
if [ ! -e "$TRACEFS/kprobe_events" ] && [ ! -e /sys/bus/event_source/devices/kprobe ]; then
  # the error a user sees must name the missing support
  "$R" perf trace --kprobe 'do_sys_openat2 path=+0(%si):string' -- /bin/true 2> "$TMP/err" && fail "kprobe accepted on a kernel without kprobes"
  grep -q 'no kprobe events' "$TMP/err" || fail "unclear error: $(cat "$TMP/err")"
  "$R" perf trace --kprobe 'do_sys_openat2' -- /bin/true 2> "$TMP/err" && fail "PMU kprobe accepted on a kernel without kprobes"
  grep -q 'no kprobe PMU' "$TMP/err" || fail "unclear error: $(cat "$TMP/err")"
  skip "this kernel has no kprobes (no $TRACEFS/kprobe_events, no kprobe PMU); errors checked: $(cat "$TMP/err")"
fi
"$R" perf trace --kprobe 'do_sys_openat2 path=+0(%si):string' -- "$TARGET" open "$TMP/kp-a" "$TMP/kp-b" \
  > "$TMP/out" 2> "$TMP/err" || { cat "$TMP/err"; fail "kprobe run"; }
grep -q "path=\"$TMP/kp-a\"" "$TMP/out" && grep -q "path=\"$TMP/kp-b\"" "$TMP/out" || { cat "$TMP/out"; fail "paths not seen"; }
ok "kprobe with a string fetch arg"
"$R" perf trace --kprobe 'do_sys_openat2%return' -- "$TARGET" open "$TMP/kp-a" > "$TMP/out" || fail "kretprobe run"
[ -s "$TMP/out" ] || fail "no kretprobe hits"
ok "kretprobe (PMU form)"
grep -q '^[pr]:rtdiag_' "$TRACEFS/kprobe_events" && fail "kprobes left behind"
ok "no kprobes left"
