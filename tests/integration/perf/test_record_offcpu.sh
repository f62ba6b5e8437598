# perf record --off-cpu: a real program (tests/targets/perf-offcpu) waits
# in three functions (nanosleep, a pipe read fed by another thread, a
# contended pthread mutex) and times each wait itself; rtdiag's off-CPU
# delay per function and per thread is checked against those times, with
# frame pointers and with --call-graph dwarf, in every output format. Part 1 runs
# both paths, the BPF one (waits summed in the kernel) and the perf one
# (every switch copied out), checks each against the program and compares
# their answers: for each wait function, the chain holding most of its
# delay, from the thread's body down to __schedule, is the same in both.
#
# Tolerances (derived, not tuned): each wait is timed by its caller around
# the call, so the off-CPU time of stacks holding wait_X lies inside the
# measured time: O <= W (+1 ms for clock reads). O falls short of W only
# by the CPU time spent inside the calls (syscall entry/exit, futex and
# wake-up paths: microseconds each) and by a stack the unwinder could not
# take past wait_X: O >= W - 5% - 2 ms. Per thread, its NAME_body function
# is timed with CLOCK_MONOTONIC and CLOCK_THREAD_CPUTIME_ID around it: its
# wall = its CPU + the off-CPU time (every state) of stacks holding
# NAME_body, up to the clock reads: within 2% + 2 ms. Nothing depends on
# the machine's load: a busy machine makes waits longer on both sides.
. "$(dirname "$0")/lib.sh"
FP=$RTD_BINARY_DIR/tests/targets/offcpu_waits_fp
NOFP=$RTD_BINARY_DIR/tests/targets/offcpu_waits_nofp
[ -x "$FP" ] && [ -x "$NOFP" ] || fail "offcpu_waits not built"

check() { # label program-output folded [states]
  python3 - "$@" <<'EOF'
import sys, re
label, progout, folded = sys.argv[1:4]
states = sys.argv[4] if len(sys.argv) > 4 else "all"
waits, threads = {}, {}
for l in open(progout):
    f = l.split()
    if f[:1] == ["wait"]:
        waits[f[1]] = (int(f[2]), float(f[3]))
    elif f[:1] == ["thread"]:
        threads[f[1]] = (int(f[2]), float(f[3]), float(f[4]))
stacks = []
for l in open(folded):
    s, v = l.rstrip("\n").rsplit(" ", 1)
    stacks.append((s.split(";"), int(v) / 1e9))
bad = 0
for name, (calls, w) in sorted(waits.items()):
    o = sum(v for fr, v in stacks if name in fr)
    lo, hi = w - 0.05 * w - 0.002, w + 0.001
    good = lo <= o <= hi
    print("%s: %-10s %2d waits: program %.4f s, rtdiag %.4f s (want %.4f..%.4f)%s"
          % (label, name, calls, w, o, lo, hi, "" if good else "  <-- FAIL"))
    bad += not good
if states == "all":
    for name, (tid, wall, cpu) in sorted(threads.items()):
        root = "(tid %d)" % tid
        o = sum(v for fr, v in stacks if fr[0].endswith(root) and name + "_body" in fr)
        d = abs(o + cpu - wall)
        good = d <= 0.02 * wall + 0.002
        print("%s: thread %-8s wall %.4f s = CPU %.4f + off-CPU %.4f (off by %.4f)%s"
              % (label, name, wall, cpu, o, d, "" if good else "  <-- FAIL"))
        bad += not good
sys.exit(1 if bad else 0)
EOF
}

# 1. frame pointers, every state, per thread: through BPF and through perf
vias=perf
if "$R" perf record --off-cpu --off-cpu-via bpf -- true > /dev/null 2> "$TMP/bpf.err"; then
  vias="bpf perf"
elif grep -Eq 'built without BPF|libbpf.so.1' "$TMP/bpf.err"; then
  echo "SKIP part: no BPF path here: $(cat "$TMP/bpf.err")"
else
  fail "--off-cpu-via bpf: $(cat "$TMP/bpf.err")"
fi
for via in $vias; do
  "$R" perf record --off-cpu --off-cpu-via $via --off-cpu-state all --per-thread --stats -o "$TMP/fp-$via.folded" -- "$FP" > "$TMP/fp-$via.out" 2> "$TMP/fp-$via.err" || { cat "$TMP/fp-$via.err"; fail "record --off-cpu-via $via fp"; }
  grep -q "off-CPU: [0-9]* waits paired.*through $(echo $via | tr a-z A-Z | sed 's/PERF/perf/')" "$TMP/fp-$via.err" || { cat "$TMP/fp-$via.err"; fail "--stats: no off-CPU line through $via"; }
  check fp-$via "$TMP/fp-$via.out" "$TMP/fp-$via.folded" || { cat "$TMP/fp-$via.out" "$TMP/fp-$via.err"; cut -c1-400 "$TMP/fp-$via.folded"; fail "fp through $via: off-CPU times differ from the program's"; }
  grep -q ';wait_mutex;.*futex' "$TMP/fp-$via.folded" || fail "fp through $via: no wait_mutex;...futex stack"
  ok "fp through $via: off-CPU per function and per thread"
done
cp "$TMP/fp-perf.folded" "$TMP/fp.folded"
# the default takes the BPF path where it can
if [ "$vias" != perf ]; then
  "$R" perf record --off-cpu --stats -o "$TMP/auto.folded" -- sleep 0.1 2> "$TMP/auto.err" > /dev/null || fail "record --off-cpu (auto)"
  grep -q 'through BPF)' "$TMP/auto.err" || { cat "$TMP/auto.err"; fail "--off-cpu did not take the BPF path"; }
  python3 - "$TMP/fp-bpf.folded" "$TMP/fp-perf.folded" <<'EOF' || fail "BPF and perf paths: other chains"
import sys
def heaviest(path):
    by = {}
    for l in open(path):
        s, v = l.rstrip("\n").rsplit(" ", 1)
        fr = s.split(";")
        for w in ("wait_sleep", "wait_pipe", "wait_mutex"):
            if w in fr:
                b = next((i for i, f in enumerate(fr) if f.endswith("_body")), 1)
                chain = ";".join(fr[b:])
                by.setdefault(w, {}).setdefault(chain, 0)
                by[w][chain] += int(v)
    return {w: max(c, key=c.get) for w, c in by.items()}
b, p = heaviest(sys.argv[1]), heaviest(sys.argv[2])
bad = 0
for w in sorted(set(b) | set(p)):
    same = b.get(w) == p.get(w)
    print("%s: %s\n   bpf:  %s\n   perf: %s" % (w, "same" if same else "DIFFER", b.get(w), p.get(w)))
    bad += not same
sys.exit(1 if bad or len(b) != 3 else 0)
EOF
  ok "BPF and perf paths: the same heaviest chain per wait function"
fi

# 2. dwarf (no frame pointers): full stacks through libc
"$R" perf record --off-cpu --off-cpu-state all --per-thread --call-graph dwarf -o "$TMP/dw.folded" -- "$NOFP" > "$TMP/dw.out" || fail "record --off-cpu dwarf"
check dwarf "$TMP/dw.out" "$TMP/dw.folded" || { cat "$TMP/dw.out"; fail "dwarf: off-CPU times differ from the program's"; }
grep -Eq ';locker_body;timed;wait_mutex;do_lock;pthread_mutex_lock;' "$TMP/dw.folded" || { head -3 "$TMP/dw.folded"; fail "dwarf: stacks not unwound through libc"; }
ok "dwarf: off-CPU per function and per thread, full stacks"

# 3. the default keeps waits (S, D, T), not preemption; R alone has no
# sleeps in it (a sleep is S)
"$R" perf record --off-cpu -o "$TMP/def.folded" -- "$FP" > "$TMP/def.out" || fail "record --off-cpu default states"
check default "$TMP/def.out" "$TMP/def.folded" waits || fail "default states: waits differ"
"$R" perf record --off-cpu --off-cpu-state R -o "$TMP/r.folded" -- "$FP" > "$TMP/r.out" || fail "record --off-cpu-state R"
python3 - "$TMP/r.folded" "$TMP/r.out" <<'EOF' || fail "--off-cpu-state R: sleeps counted as preemption"
import sys
w = [float(l.split()[3]) for l in open(sys.argv[2]) if l.startswith("wait wait_sleep ")][0]
o = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[1]) if ";wait_sleep;" in l) / 1e9
print("state R: wait_sleep %.4f s of the program's %.4f s" % (o, w))
sys.exit(0 if o < 0.05 * w else 1)
EOF
ok "states: default waits only, R alone"

# 4. the other formats: top table, pprof (Go's block profile types and the
# state label, read by go tool pprof), SVG, speedscope
"$R" perf record --off-cpu -- "$FP" > "$TMP/top.txt" || fail "record --off-cpu top"
grep -Eq '^# [0-9]+ waits, [0-9.]+ s off the CPU' "$TMP/top.txt" || { head -3 "$TMP/top.txt"; fail "top: no waits header"; }
grep -Eq ' wait_pipe( |$)' "$TMP/top.txt" || fail "top: no wait_pipe row"
"$R" perf record --off-cpu -o "$TMP/oc.svg" -- "$FP" > /dev/null || fail "record --off-cpu svg"
grep -q 'wait_mutex' "$TMP/oc.svg" || fail "svg: no wait_mutex"
"$R" perf record --off-cpu -o "$TMP/oc.speedscope.json" -- "$FP" > /dev/null || fail "record --off-cpu speedscope"
grep -q '"wait_sleep"' "$TMP/oc.speedscope.json" || fail "speedscope: no wait_sleep"
GO=$(ls /usr/lib/go-1.23/bin/go /usr/lib/go-1.19/bin/go 2>/dev/null | head -1)
if [ -n "$GO" ]; then
  "$R" perf record --off-cpu -o "$TMP/oc.pb.gz" -- "$FP" > "$TMP/pb.out" || fail "record --off-cpu pprof"
  HOME=$TMP GOCACHE=$TMP/gocache "$GO" tool pprof -raw "$TMP/oc.pb.gz" > "$TMP/raw" 2>&1 || { cat "$TMP/raw"; fail "go tool pprof -raw"; }
  grep -q '^PeriodType: contentions count' "$TMP/raw" || { head "$TMP/raw"; fail "pprof: period type is not contentions count"; }
  grep -Eq 'contentions/count delay/nanoseconds' "$TMP/raw" || { head "$TMP/raw"; fail "pprof: not Go's block profile types"; }
  grep -q 'state:\[S\]' "$TMP/raw" || fail "pprof: no state label"
  HOME=$TMP GOCACHE=$TMP/gocache "$GO" tool pprof -top -sample_index=delay "$TMP/oc.pb.gz" > "$TMP/pp.top" 2>&1
  grep -q ' wait_pipe$' "$TMP/pp.top" || { cat "$TMP/pp.top"; fail "pprof -top: no wait_pipe"; }
  ok "pprof read by go tool pprof: block profile types, state label"
else
  echo "SKIP part: no Go toolchain for go tool pprof"
fi

# 6. timelines: each wait a slice on its thread, named by its state, with
# its stack as a sample at its start. Chrome JSON: the slices' lengths by
# the wait functions in their stacks hold the program's own times (the
# check above, on a folded file made from the slices); Perfetto (with a
# folded file of the same recording): protoc decodes it against
# Perfetto's proto, tlcheck.py reads it as trace processor does, and its
# "sleep" slices are as many as the folded file's waits in state S.
"$R" perf record --off-cpu --format chrome-json -o "$TMP/oc.json" -- "$FP" > "$TMP/tl.out" || fail "record --off-cpu chrome-json"
python3 - "$TMP/oc.json" "$TMP/tl.folded" <<'EOF2' || fail "chrome json: off-CPU slices without their stacks"
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
stacks = {(e["tid"], e["ts"]): e["args"]["stack"] for e in evs if e.get("cat") == "sample"}
waits = [e for e in evs if e.get("cat") == "off-cpu"]
out = open(sys.argv[2], "w")
for e in waits:
    st = stacks.get((e["tid"], e["ts"]))
    if st is None or e["ph"] != "X" or e["name"] not in ("sleep", "disk", "other"):
        print("a wait without its stack or of a state not asked for:", e); sys.exit(1)
    out.write("%s %d\n" % (";".join(reversed(st)), round(e["dur"] * 1000)))
print(len(waits), "waits;", sorted({e["args"]["in"] for e in waits})[:6])
sys.exit(0 if waits else 1)
EOF2
check timeline "$TMP/tl.out" "$TMP/tl.folded" waits || { cat "$TMP/tl.out"; fail "timeline: the slices' lengths differ from the program's waits"; }
P=${RTD_SHARED_DIR:-$RTD_SOURCE_DIR/../shared}/reference/perfetto
if command -v protoc >/dev/null && [ -f "$P/perfetto_trace.proto" ]; then
  "$R" perf record --off-cpu -o "$TMP/oc.pftrace" -o "$TMP/pf.folded" -- "$FP" > /dev/null || fail "record --off-cpu perfetto"
  protoc --proto_path="$P" --decode=perfetto.protos.Trace perfetto_trace.proto < "$TMP/oc.pftrace" > "$TMP/oc.txt" || fail "protoc --decode of the off-CPU timeline"
  python3 "$RTD_SOURCE_DIR/tests/integration/pictures/tlcheck.py" perfetto "$TMP/oc.txt" > "$TMP/oc.sum" || fail "tlcheck: $(cat "$TMP/oc.sum")"
  python3 - "$TMP/oc.sum" "$RTD_BINARY_DIR" <<'EOF2' || fail "perfetto: $(cut -c1-300 "$TMP/oc.sum")"
import json, sys
s = json.load(open(sys.argv[1]))
print("slices:", {k: v for k, v in s["slices"].items()}, "samples:", s["samples"])
sys.exit(0 if s["samples"] > 0 and "sleep" in s["names"] else 1)
EOF2
  ok "perfetto: the off-CPU timeline decodes and nests"
else
  echo "SKIP part: protoc or Perfetto's proto missing"
fi
ok "timeline: a slice per wait with its stack; lengths hold the program's waits"

# 7. --no-kernel: the waits are still found (a switch is seen in the
# kernel), their stacks have no kernel frames. Debian's perf records the
# same switches with user call chains only (-e sched:sched_switch
# --user-callchains -g): the chains from each thread's body down to its
# wait function are the same in both. --no-inline: perf script names
# the functions of the addresses only (clang inlines timed() into the
# bodies; rtdiag would show it as an inlined frame of its own). Both
# record preemptions too: a chain whose leaf is the wait function itself
# is one (the thread ran its own code) and is not compared.
KFRAMES='(^|;)(entry_SYSCALL_64[a-z_]*|do_syscall_64|schedule|__schedule)(;|$)'
grep -Eq "$KFRAMES" "$TMP/fp.folded" || fail "the kernel frames looked for are not in a recording with them"
"$R" perf record --off-cpu --off-cpu-state all --per-thread --no-kernel --no-inline -o "$TMP/nk.folded" -- "$FP" > "$TMP/nk.out" 2> "$TMP/nk.err" || { cat "$TMP/nk.err"; fail "record --off-cpu --no-kernel"; }
check no-kernel "$TMP/nk.out" "$TMP/nk.folded" || { cat "$TMP/nk.err"; fail "--no-kernel: off-CPU times differ from the program's"; }
grep -E "$KFRAMES" "$TMP/nk.folded" && fail "--no-kernel: kernel frames in the stacks"
waitchains() { # FORMAT FILE: "body;...;wait_X" chains, one a line
  python3 - "$1" "$2" <<'EOF2'
import sys, re
fmt, path = sys.argv[1:3]
out = set()
def add(frames):  # root first
    frames = [re.sub(r"@.*", "", f) for f in frames]
    for i, f in enumerate(frames):
        # a wait: the wait function called into what blocked (libc's
        # read, lock wait, nanosleep); with the wait function itself the
        # leaf the thread was preempted in its own code (both tools take
        # state R too), which a loaded machine does anywhere, in one run
        # and not the other (CI: "start_thread;locker;wait_go")
        if f.startswith("wait_") and i + 1 < len(frames):
            j = max(k for k in range(i + 1) if frames[k].endswith("_body") or k == 0)
            out.add(";".join(frames[j:i + 1]))
            return
if fmt == "folded":
    for l in open(path):
        add(l.rsplit(" ", 1)[0].split(";"))
else:
    cur = []
    for l in list(open(path)) + [""]:
        p = l.split()
        if len(p) >= 2 and re.fullmatch(r"[0-9a-f]+", p[0]):
            cur.append(p[1])
        elif not p and cur:
            add(list(reversed(cur))); cur = []
for c in sorted(out):
    print(c)
EOF2
}
if command -v perf >/dev/null; then
  perf record -q -e sched:sched_switch --user-callchains -g -o "$TMP/nk.data" -- "$FP" > /dev/null 2>&1 || fail "perf record --user-callchains"
  perf script -i "$TMP/nk.data" -F ip,sym 2> /dev/null > "$TMP/nk.script"
  waitchains script "$TMP/nk.script" > "$TMP/nk.perf"
  waitchains folded "$TMP/nk.folded" > "$TMP/nk.rtd"
  echo "perf --user-callchains:"; cat "$TMP/nk.perf"
  [ "$(wc -l < "$TMP/nk.perf")" = 3 ] || fail "perf's user chains do not show the three waits"
  diff "$TMP/nk.perf" "$TMP/nk.rtd" || fail "--no-kernel: other chains than perf's --user-callchains"
  ok "--no-kernel: the wait chains of perf --user-callchains"
else
  echo "SKIP part: perf (linux-perf) not installed: no comparison"
fi
# the issue's case: sleep 1 is one wait of about a second
"$R" perf record --off-cpu --no-kernel -- sleep 1 > "$TMP/s1.txt" 2> "$TMP/s1.err" || { cat "$TMP/s1.err"; fail "--off-cpu --no-kernel -- sleep 1"; }
cat "$TMP/s1.txt" | head -4
grep -q 'did the process use any CPU' "$TMP/s1.err" && fail "off-CPU worded as CPU samples: $(cat "$TMP/s1.err")"
python3 - "$TMP/s1.txt" <<'EOF2' || fail "sleep 1: $(head -1 "$TMP/s1.txt")"
import re, sys
m = re.match(r"# (\d+) waits, ([0-9.]+) s off the CPU", open(sys.argv[1]).readline())
sys.exit(0 if m and int(m.group(1)) >= 1 and float(m.group(2)) >= 0.99 else 1)
EOF2
grep -q 'clock_nanosleep' "$TMP/s1.txt" || fail "sleep 1: no clock_nanosleep"
ok "--no-kernel: waits found, stacks without kernel frames"

# 5. bad input
"$R" perf record --off-cpu -F 99 -- true 2> "$TMP/e1" && fail "--off-cpu -F accepted"
grep -q 'every context switch' "$TMP/e1" || { cat "$TMP/e1"; fail "--off-cpu -F: message"; }
"$R" perf record --off-cpu --off-cpu-state SX -- true 2> "$TMP/e2" && fail "--off-cpu-state SX accepted"
grep -q 'letters of SDRT' "$TMP/e2" || { cat "$TMP/e2"; fail "--off-cpu-state: message"; }
"$R" perf record --off-cpu-state S -- true 2> "$TMP/e3" && fail "--off-cpu-state without --off-cpu accepted"
ok "bad options refused with a reason"
