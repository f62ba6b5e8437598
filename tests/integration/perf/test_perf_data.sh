# perf.data read by rtdiag (rtd_perf_data_source, `rtdiag convert x.data`)
# against Debian's perf reading the same file: every sample with the same
# call chain and the same names as `perf script --no-inline`, the same
# self shares as `perf report --no-children`, for perf record -g,
# --call-graph dwarf, -z, -e sched:sched_switch and two events; the
# tracepoint's fields and --switch-events waits in a timeline; a cut file
# converted up to the cut with exit 3. And the other way: perf script and
# perf report reading `rtdiag perf record -o x.data` (fp, dwarf, -p PID)
# as rtdiag's own profile of it.
. "$(dirname "$0")/lib.sh"
command -v perf >/dev/null || skip "perf (linux-perf) not installed: nothing to compare with"
FP=$RTD_BINARY_DIR/tests/targets/cpu_shares_fp
NOFP=$RTD_BINARY_DIR/tests/targets/cpu_shares_nofp
[ -x "$FP" ] && [ -x "$NOFP" ] || fail "cpu_shares not built"
CMP=$(dirname "$0")/perf_script_stacks.py

# same NAME PERF_RECORD_ARGS... -- CMD: record with perf, then compare
# perf script's stacks with rtdiag's, sample for sample
same() {
  local name=$1 ev=${EVENT:-}; shift
  perf record -q -o "$TMP/$name.data" "$@" > /dev/null 2> "$TMP/$name.rec" || { cat "$TMP/$name.rec"; fail "$name: perf record"; }
  perf script -i "$TMP/$name.data" -F tid,event,ip,sym --no-inline 2> /dev/null > "$TMP/$name.script"
  "$R" convert "$TMP/$name.data" --no-inline ${ev:+--event "$ev"} --type samples -f folded -o "$TMP/$name.folded" || fail "$name: rtdiag convert"
  python3 "$CMP" "$TMP/$name.script" "$TMP/$name.folded" ${ev:+--event "$ev"} || fail "$name: perf script and rtdiag differ"
  ok "$name: every sample as perf script has it"
}

same g -g -F 999 -- "$FP" rounds=300
same dwarf --call-graph dwarf -F 499 -- "$NOFP" rounds=150
# a call that ends its function (one to a function that never returns):
# the caller's return address lies past the caller. perf unwinds a caller
# as its return address minus one and names the caller; rtdiag named what
# lies past it ("?": CI saw exit's frame so, once in 102 samples)
printf '%s\n' '#include <stdlib.h>' '#include <unistd.h>' 'volatile unsigned long sink;' \
  '__attribute__((noreturn, noinline)) void nr_finish(long n) { for (long i = 0; i < n; i++) sink += (unsigned long)i; _exit(0); }' \
  '__attribute__((noinline)) void nr_caller(long n) { nr_finish(n); }' \
  'int main(int argc, char **argv) { nr_caller(argc > 1 ? atol(argv[1]) : 1); return (int)sink; }' > "$TMP/nr.c"
gcc -O2 -fno-optimize-sibling-calls "$TMP/nr.c" -o "$TMP/nr" || fail "cannot build nr"
# the case itself: nr_caller's last instruction (nm's start + size) is
# its call of nr_finish
objdump -d "$TMP/nr" > "$TMP/nr.dis" && nm -S "$TMP/nr" > "$TMP/nr.nm" || fail "nr: objdump, nm"
python3 - "$TMP/nr.dis" "$TMP/nr.nm" <<'PY' || fail "nr: nr_caller does not end with its call of nr_finish"
import re, sys
start, size = next((int(w[0], 16), int(w[1], 16)) for w in (l.split() for l in open(sys.argv[2]))
                   if len(w) == 4 and w[3] == "nr_caller")
last = None
for l in open(sys.argv[1]):
    m = re.match(r"\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t(.*)", l)
    if m and start <= int(m.group(1), 16) < start + size:
        last = (int(m.group(1), 16) + len(m.group(2).split()), m.group(3))
sys.exit(0 if last and last[0] == start + size and re.match(r"call.*<nr_finish>", last[1]) else 1)
PY
same noreturn --call-graph dwarf -F 499 -- "$TMP/nr" 100000000
grep -q ';nr_caller;nr_finish ' "$TMP/noreturn.folded" || fail "noreturn: no stack names nr_caller under nr_finish"
same z -z -g -F 999 -- "$FP" rounds=300
same sched_switch -g -e sched:sched_switch -- sh -c 'for i in 1 2 3 4 5; do sleep 0.01; done'
# the vDSO, which no file holds: a program that spends its time in
# clock_gettime (rtdiag reads the kernel's image, as perf does)
printf '%s\n' '#include <time.h>' 'int main(void) { struct timespec t; long s = 0;' \
  '  for (long i = 0; i < 30000000; i++) { clock_gettime(CLOCK_MONOTONIC, &t); s += t.tv_nsec; }' \
  '  return (int)(s & 1) * 0; }' > "$TMP/vd.c"
gcc -O1 -fno-omit-frame-pointer "$TMP/vd.c" -o "$TMP/vd" || fail "cannot build vd"
same vdso -g -F 999 -- "$TMP/vd"
grep -q '__vdso_clock_gettime' "$TMP/vdso.folded" || fail "vdso: no vDSO frame named"
# PLT stubs, which perf names "symbol@plt" from .rela.plt (a loop of
# calls to abs through the PLT: a few percent of its samples in the stub)
printf '%s\n' '#include <stdlib.h>' 'int main(void) { volatile long s = 0;' \
  '  for (long i = 0; i < 100000000; i++) s += abs((int)i);' '  return (int)(s & 1) * 0; }' > "$TMP/pl.c"
gcc -O1 -fno-omit-frame-pointer -fno-builtin "$TMP/pl.c" -o "$TMP/pl" || fail "cannot build pl"
same plt -g -F 999 -- "$TMP/pl"
grep -q 'abs@plt' "$TMP/plt.folded" || fail "plt: no sample named abs@plt"
EVENT=page-faults same two -g -e task-clock,page-faults -F 999 -- "$FP" rounds=300

# perf report --no-children: each symbol's share of the period, as rtdiag
# weighs its samples (the profile's default type: cpu nanoseconds)
perf report -i "$TMP/g.data" --no-children --stdio --sort sym -g none 2> /dev/null > "$TMP/g.report"
"$R" convert "$TMP/g.data" -f folded -o "$TMP/g.cpu.folded" || fail "convert with periods"
python3 - "$TMP/g.report" "$TMP/g.cpu.folded" <<'PY' || fail "perf report --no-children and rtdiag differ"
import collections, re, sys
perf = {}
for line in open(sys.argv[1]):
    m = re.match(r"\s+([\d.]+)%\s+\[[.k]\]\s+(.+?)\s*$", line)
    if m:
        perf[m.group(2)] = perf.get(m.group(2), 0) + float(m.group(1))
self, tot = collections.Counter(), 0
for line in open(sys.argv[2]):
    stack, v = line.rsplit(" ", 1)
    self[stack.split(";")[-1]] += int(v); tot += int(v)
bad = [(s, p, 100.0 * self[s] / tot) for s, p in perf.items() if abs(p - 100.0 * self[s] / tot) > 0.011]
print("perf report: %d symbols, %.2f%% in all; rtdiag: %d symbols" % (len(perf), sum(perf.values()), len(self)))
for s, p, r in bad:
    print("  %s: perf %.2f%% rtdiag %.3f%%" % (s, p, r))
if not perf or bad or len(perf) != len(self):
    sys.exit(1)
PY
ok "perf report --no-children: the same symbols with the same shares"

# perf's reading of rtdiag's perf.data (rtdiag perf record -o x.data)
# equals rtdiag's own profile of the same recording: every sample's stack
# as perf script names it, and perf report --no-children's self shares.
# rtdiag's profile is in nanoseconds, 10^9 / F per sample; its names have
# no symbol versions (perf script's do: cut for the comparison)
mine() { # NAME F RTDIAG_PERF_RECORD_ARGS...
  local name=$1 f=$2; shift 2
  "$R" perf record -F "$f" -o "$TMP/$name.data" -o "$TMP/$name.folded" "$@" > /dev/null || fail "$name: rtdiag perf record"
  perf script -i "$TMP/$name.data" -F tid,event,ip,sym --no-inline 2> "$TMP/$name.serr" > "$TMP/$name.script" || { cat "$TMP/$name.serr"; fail "$name: perf script cannot read rtdiag's file"; }
  python3 "$CMP" "$TMP/$name.script" "$TMP/$name.folded" --divide $((1000000000 / f)) --no-versions || fail "$name: perf script of rtdiag's perf.data and rtdiag's profile differ"
  perf report -i "$TMP/$name.data" --no-children --stdio --sort sym -g none 2> /dev/null > "$TMP/$name.report"
  python3 - "$TMP/$name.report" "$TMP/$name.folded" <<'PY' || fail "$name: perf report --no-children of rtdiag's perf.data and rtdiag's profile differ"
import collections, re, sys
perf = collections.Counter()
for line in open(sys.argv[1]):
    m = re.match(r"\s+([\d.]+)%\s+\[[.k]\]\s+(.+?)\s*$", line)
    if m:
        perf[m.group(2).split("@")[0]] += float(m.group(1))
self, tot = collections.Counter(), 0
for line in open(sys.argv[2]):
    stack, v = line.rsplit(" ", 1)
    self[stack.split(";")[-1]] += int(v); tot += int(v)
bad = [(s, perf[s], 100.0 * self[s] / tot) for s in set(perf) | set(self) if abs(perf[s] - 100.0 * self[s] / tot) > 0.011]
print("perf report: %d symbols; rtdiag: %d; %d differ" % (len(perf), len(self), len(bad)))
for b in bad:
    print("  %s: perf %.2f%% rtdiag %.3f%%" % b)
sys.exit(1 if bad or not perf else 0)
PY
  ok "$name: perf script and perf report read rtdiag's perf.data as rtdiag's profile has it"
}
mine mine_fp 999 -- "$FP" rounds=300
mine mine_dwarf 499 --call-graph dwarf -- "$NOFP" rounds=150
# a frame a signal interrupted (--call-graph dwarf): its pc is where the
# thread was, not a return address, and perf names it so; one byte back
# from a function's first instruction names the function before it.
# sig_loop is one jump to itself right after before_fn: every SIGPROF
# interrupts it at its first byte, and the handler spins (rtdiag named
# the interrupted frame before_fn, in the file and live, until the
# unwinder said which frames a signal interrupted)
cat > "$TMP/sig.c" <<'SRC'
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>
__asm__(".text\n.globl before_fn\n.type before_fn,@function\nbefore_fn:\n.cfi_startproc\n\tret\n"
	".cfi_endproc\n.size before_fn,.-before_fn\n.globl sig_loop\n.type sig_loop,@function\n"
	"sig_loop:\n.cfi_startproc\n\tjmp sig_loop\n.cfi_endproc\n.size sig_loop,.-sig_loop\n");
void before_fn(void);
void sig_loop(void);
static volatile unsigned long sink;
static volatile sig_atomic_t left;
__attribute__((noinline)) static void in_handler(long n) { for (long i = 0; i < n; i++) sink += (unsigned long)i; }
static void on_prof(int sig) { (void)sig; in_handler(2000000); if (--left <= 0) _exit(0); }
__attribute__((noinline)) void loop_caller(void) { sig_loop(); before_fn(); }
int main(int argc, char **argv)
{
	left = argc > 1 ? atoi(argv[1]) : 1;
	struct sigaction sa = {0};
	sa.sa_handler = on_prof;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval it = {{0, 1000}, {0, 1000}};
	setitimer(ITIMER_PROF, &it, NULL);
	loop_caller();
	return 0;
}
SRC
gcc -O2 "$TMP/sig.c" -o "$TMP/sig" || fail "cannot build sig"
b=$(nm "$TMP/sig" | awk '$3 == "before_fn" { print $1 }')
s=$(nm "$TMP/sig" | awk '$3 == "sig_loop" { print $1 }')
[ -n "$b" ] && [ -n "$s" ] && [ $((0x$s)) -eq $((0x$b + 1)) ] || fail "sig: sig_loop is not one byte past before_fn"
same signal --call-graph dwarf -F 499 -- "$TMP/sig" 150
mine mine_signal 499 --call-graph dwarf -- "$TMP/sig" 150
for f in signal mine_signal; do
  grep -Eq ';loop_caller;sig_loop;[^ ;]+;on_prof;' "$TMP/$f.folded" || fail "$f: no handler's stack above sig_loop"
  ! grep -q 'before_fn' "$TMP/$f.folded" || fail "$f: an interrupted sig_loop named before_fn"
done
ok "signal: the frame a signal interrupted named where it was, as perf does"
# build ids (HEADER_BUILD_ID), which perf report uses to find the files
# (and perf archive, a perf.data opened on another machine): each file
# mapped executable with the id its ELF notes say, the kernel's that of
# the running kernel; every file the samples of perf's own recording of
# the program hit (g.data above) is there with the same id (perf's also
# has [vdso] and kernel modules, from images rtdiag does not keep)
perf buildid-list -i "$TMP/mine_fp.data" > "$TMP/bid.all" 2> "$TMP/bid.err" || { cat "$TMP/bid.err"; fail "perf buildid-list of rtdiag's file"; }
perf buildid-list -i "$TMP/g.data" --with-hits 2> /dev/null | grep -E ' (/.*|\[kernel\.kallsyms\])$' | grep -vE '\.ko(\.[a-z]+)?$' > "$TMP/bid.perf"
want=$(readelf -n "$FP" | sed -n 's/.*Build ID: //p')
libc=$(ldd "$FP" | sed -n 's/.*=> \(\S*libc\.so\S*\).*/\1/p')
grep -qx "$want $FP" "$TMP/bid.all" || { cat "$TMP/bid.all"; fail "build ids: no '$want $FP'"; }
grep -qx "$(readelf -n "$(readlink -f "$libc")" | sed -n 's/.*Build ID: //p') .*libc\.so.*" "$TMP/bid.all" \
  || { cat "$TMP/bid.all"; fail "build ids: libc's is not its file's"; }
kid=$(perf buildid-list -k 2> /dev/null)
[ -z "$kid" ] || grep -qx "$kid \[kernel.kallsyms\]" "$TMP/bid.all" || { cat "$TMP/bid.all"; fail "build ids: the kernel's is not $kid"; }
while read -r id path; do
  grep -qxF "$id $path" "$TMP/bid.all" || { cat "$TMP/bid.all"; fail "build ids: perf's $id $path is not in rtdiag's file"; }
done < "$TMP/bid.perf"
[ -s "$TMP/bid.perf" ] || fail "perf's own file lists no build id"
ok "build ids: $(wc -l < "$TMP/bid.all") files, each with its ELF's id; those perf's own file hit, the same"
# a fixed number of rounds, not "4 seconds": a timed run calls
# clock_gettime each round, and a sample in the vDSO is named by perf
# (__vdso_clock_gettime) but not by rtdiag, which reads no [vdso] image yet
# (1 sample of 1498 once in CI)
"$FP" --pid-file "$TMP/pid" rounds=6000 > /dev/null &
tp=$!
within 30 test -s "$TMP/pid" || fail "cpu_shares did not start"
mine mine_pid 999 -p "$tp" -d 1.5
wait "$tp"

# the tracepoint's fields, one instant per sched_switch, in a timeline
"$R" convert "$TMP/sched_switch.data" -o "$TMP/ss.json" || fail "sched_switch timeline"
python3 - "$TMP/ss.json" "$(perf script -i "$TMP/sched_switch.data" -F tid 2>/dev/null | grep -c .)" <<'PY' || fail "sched_switch instants"
import json, sys
d = json.load(open(sys.argv[1])); ev = d["traceEvents"] if isinstance(d, dict) else d
sw = [e for e in ev if e.get("ph") == "i" and e.get("name") == "sched:sched_switch"]
print("timeline: %d sched_switch instants, perf script: %s" % (len(sw), sys.argv[2]))
assert len(sw) == int(sys.argv[2])
assert all({"prev_comm", "prev_pid", "prev_state", "next_comm", "next_pid"} <= set(e["args"]) for e in sw)
assert any(e["args"]["prev_comm"] == "sleep" for e in sw)
PY
ok "sched_switch: an instant per sample with its fields"

# --switch-events: each wait off the CPU a slice
perf record -q --switch-events -o "$TMP/sw.data" -- sh -c 'for i in 1 2 3; do sleep 0.01; done' > /dev/null 2>&1 || fail "perf record --switch-events"
"$R" convert "$TMP/sw.data" -o "$TMP/sw.json" || fail "switch timeline"
outs=$(perf script -i "$TMP/sw.data" --show-switch-events -F tid 2>/dev/null | grep -c 'SWITCH OUT')
python3 - "$TMP/sw.json" "$outs" <<'PY' || fail "switch slices"
import json, sys
d = json.load(open(sys.argv[1])); ev = d["traceEvents"] if isinstance(d, dict) else d
b = [e for e in ev if e.get("ph") == "B" and e.get("cat") == "off-cpu"]
print("timeline: %d off-CPU slices; perf script: %s switches out" % (len(b), sys.argv[2]))
assert len(b) == int(sys.argv[2]) and len(b) > 0
PY
ok "--switch-events: a slice per switch out"

# every profile format; a cut file: what came before, exit 3
for o in cpu.svg cpu.pb.gz cpu.speedscope.json cpu.txt; do
  "$R" convert "$TMP/g.data" -o "$TMP/$o" || fail "convert to $o"
done
grep -q gamma_fn "$TMP/cpu.svg" && grep -q gamma_fn "$TMP/cpu.txt" || fail "no gamma_fn in the pictures"
# cut at 60% of the data section (the feature sections follow it)
python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read(); off, size = struct.unpack("<QQ", d[40:56])
open(sys.argv[2], "wb").write(d[:off + size * 6 // 10])' "$TMP/g.data" "$TMP/cut.data"
"$R" convert "$TMP/cut.data" -o "$TMP/cut.folded" 2> "$TMP/cut.err"; rc=$?
cat "$TMP/cut.err"
[ $rc = 3 ] || fail "a cut perf.data: exit $rc, want 3"
grep -q 'it was cut at offset' "$TMP/cut.err" && [ -s "$TMP/cut.folded" ] || fail "a cut perf.data: no message or no output"
ok "formats; a cut file converted up to the cut (exit 3)"
