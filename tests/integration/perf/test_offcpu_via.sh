# perf record --off-cpu takes the BPF path where it can and says, in one
# line, why it takes the perf path otherwise: asked for (--off-cpu-via
# perf), an option BPF cannot serve (--call-graph dwarf), a process that may not
# load BPF (root without CAP_BPF and CAP_SYS_ADMIN, through setpriv: it
# keeps CAP_PERFMON, so the perf path still works and finds the wait).
# --off-cpu-via bpf fails with the same reason instead of falling back.
. "$(dirname "$0")/lib.sh"
# a build without BPF, or a machine without libbpf.so.1, skips; anything
# else failing is a failure
if ! "$R" perf record --off-cpu --off-cpu-via bpf -- true > /dev/null 2> "$TMP/bpf.err"; then
  grep -Eq 'built without BPF|libbpf.so.1' "$TMP/bpf.err" && skip "no BPF path here: $(cat "$TMP/bpf.err")"
  fail "--off-cpu-via bpf: $(cat "$TMP/bpf.err")"
fi
REASON='^rtdiag: off-CPU through perf, every switch copied out: '
onewait() { # FILE: the top table of sleep 0.2 holds its wait in clock_nanosleep
  grep -Eq '^# [1-9][0-9]* waits' "$1" && grep -q 'clock_nanosleep' "$1"
}

# 1. auto: BPF, and nothing said about it
"$R" perf record --off-cpu -- sleep 0.2 > "$TMP/a.txt" 2> "$TMP/a.err" || { cat "$TMP/a.err"; fail "record --off-cpu"; }
grep -q "$REASON" "$TMP/a.err" && fail "BPF path gave a fallback reason: $(cat "$TMP/a.err")"
onewait "$TMP/a.txt" || { cat "$TMP/a.txt"; fail "auto: no wait in clock_nanosleep"; }
ok "auto: BPF, no reason printed"

# 2. forced off
"$R" perf record --off-cpu --off-cpu-via perf -- sleep 0.2 > "$TMP/p.txt" 2> "$TMP/p.err" || { cat "$TMP/p.err"; fail "--off-cpu-via perf"; }
grep -Eq "${REASON}asked for$" "$TMP/p.err" || { cat "$TMP/p.err"; fail "--off-cpu-via perf: no reason line"; }
[ "$(grep -c "$REASON" "$TMP/p.err")" = 1 ] || fail "more than one reason line"
onewait "$TMP/p.txt" || { cat "$TMP/p.txt"; fail "perf: no wait in clock_nanosleep"; }
ok "forced off: the perf path, and says so"

# 3. an option BPF cannot serve
"$R" perf record --off-cpu --call-graph dwarf -- sleep 0.2 > "$TMP/d.txt" 2> "$TMP/d.err" || { cat "$TMP/d.err"; fail "--off-cpu --call-graph dwarf"; }
grep -Eq "${REASON}--call-graph dwarf: BPF takes frame-pointer stacks only$" "$TMP/d.err" || { cat "$TMP/d.err"; fail "--call-graph dwarf: no reason line"; }
"$R" perf record --off-cpu --off-cpu-via bpf --call-graph dwarf -- sleep 0.1 > /dev/null 2> "$TMP/d2.err" && fail "--off-cpu-via bpf --call-graph dwarf accepted"
grep -q 'off-CPU through BPF: --call-graph dwarf' "$TMP/d2.err" || { cat "$TMP/d2.err"; fail "--off-cpu-via bpf --call-graph dwarf: message"; }
ok "--call-graph dwarf: perf with the reason; refused when BPF is asked for"

# 4. a process that may not load BPF
if command -v setpriv > /dev/null; then
  NOBPF="setpriv --bounding-set=-bpf,-sys_admin --inh-caps=-bpf,-sys_admin"
  $NOBPF "$R" perf record --off-cpu -- sleep 0.2 > "$TMP/n.txt" 2> "$TMP/n.err" || { cat "$TMP/n.err"; fail "--off-cpu without CAP_BPF"; }
  grep -Eq "${REASON}loading BPF object offcpu: .*\(needs root, or CAP_BPF and CAP_PERFMON\)$" "$TMP/n.err" || { cat "$TMP/n.err"; fail "without CAP_BPF: no reason line"; }
  onewait "$TMP/n.txt" || { cat "$TMP/n.txt"; fail "without CAP_BPF: the perf path found no wait"; }
  $NOBPF "$R" perf record --off-cpu --off-cpu-via bpf -- sleep 0.1 > /dev/null 2> "$TMP/n2.err" && fail "--off-cpu-via bpf without CAP_BPF succeeded"
  grep -q 'needs root, or CAP_BPF' "$TMP/n2.err" || { cat "$TMP/n2.err"; fail "--off-cpu-via bpf without CAP_BPF: message"; }
  ok "without CAP_BPF: perf with the reason; refused when BPF is asked for"
else
  echo "SKIP part: no setpriv to drop CAP_BPF"
fi
"$R" perf record --off-cpu-via bpf -- true 2> "$TMP/u.err" && fail "--off-cpu-via without --off-cpu accepted"
grep -q 'needs --off-cpu' "$TMP/u.err" || fail "--off-cpu-via alone: message"
ok "bad options refused"
