# perf record --off-cpu through perf while another tracer is attached to
# sched_switch: with a second probe on the tracepoint the kernel calls
# them through __traceiter_sched_switch, and every switch's call chain
# (perf_fetch_caller_regs in the perf probe) began there instead of at
# __schedule, so the off-CPU profile's leaf was the tracing plumbing and
# the BPF and perf paths disagreed whenever anyone else traced switches
# (seen as 'BPF and perf paths: other chains' in test_record_offcpu under
# load). The second probe here is ftrace's: sched_switch enabled in a
# tracefs instance of this test's own, removed on exit.
. "$(dirname "$0")/lib.sh"
[ -d "$TRACEFS/instances" ] || skip "no tracefs instances in $TRACEFS"
INST=$TRACEFS/instances/rtdiag-test-$$
mkdir "$INST" 2>/dev/null || skip "cannot make a tracefs instance ($INST)"
trap 'echo 0 > "$INST/events/sched/sched_switch/enable" 2>/dev/null; rmdir "$INST" 2>/dev/null; rm -rf "$TMP"' EXIT
echo 1 > "$INST/events/sched/sched_switch/enable" || skip "cannot enable sched_switch in $INST"
"$R" perf record --off-cpu --off-cpu-via perf -o "$TMP/oc.folded" -- sh -c 'sleep 0.2; sleep 0.2' 2> "$TMP/err" ||
  { cat "$TMP/err"; fail "record --off-cpu-via perf"; }
[ -s "$TMP/oc.folded" ] || fail "no off-CPU stacks"
grep -q 'clock_nanosleep' "$TMP/oc.folded" || { cat "$TMP/oc.folded"; fail "no clock_nanosleep chain"; }
# the leaf (last frame) of every chain is where the thread left the CPU
bad=$(awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); print f[n] }' "$TMP/oc.folded" |
  grep -E '^(__traceiter_|__bpf_trace_|bpf_trace_run|bpf_prog_|perf_trace_)' | sort | uniq -c)
[ -z "$bad" ] || { cut -c1-300 "$TMP/oc.folded"; fail "chains end in the tracing path: $bad"; }
leaf=$(grep 'clock_nanosleep' "$TMP/oc.folded" | head -1 | awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); print f[n] }')
[ "$leaf" = __schedule ] || fail "the sleep's chain ends in '$leaf', want __schedule"
ok "with ftrace's probe on sched_switch too, $(wc -l < "$TMP/oc.folded") chains end where the thread left the CPU ($leaf)"
