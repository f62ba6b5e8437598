#!/usr/bin/env bash
# `rtdiag record --syscalls` against Debian's strace -T, on one run: rtdiag
# records `strace -f -T -o FILE rec_syscalls 10` (tests/targets/
# rec-syscalls: known calls: an openat failing ENOENT, getppid, a 4 KiB
# write, a 10 ms clock_nanosleep, a pipe round trip, close(-1) EBADF, ten
# rounds) and both see the same calls of the same process:
# - names, order, results and errno names equal strace's exactly, from
#   the program's execve on (exit_group never returns: strace prints
#   "= ?", rtdiag has no slice for it);
# - durations: the kernel's raw_syscalls tracepoints fire inside the
#   ptrace stops strace times (syscall_trace_enter() stops for ptrace
#   before trace_sys_enter(); syscall_exit_work() calls trace_sys_exit()
#   before the exit stop), so each slice is no longer than strace's <time>
#   (plus its 1 us rounding); the difference is ptrace's cost and strace's
#   wakeups, which a loaded box stretches, so only its distribution is
#   printed; each clock_nanosleep slice is >= 10 ms.
set -u
R=${RTDIAG:?}; BIN=${RTD_BINARY_DIR:?}
PROG=$BIN/tests/targets/rec_syscalls
command -v strace >/dev/null || { echo "SKIP: no strace (Debian package strace)"; exit 77; }
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ] ||
  { echo "SKIP: raw_syscalls tracepoints need root or perf_event_paranoid <= 1"; exit 77; }
[ -d /sys/kernel/tracing/events/raw_syscalls ] || [ -d /sys/kernel/debug/tracing/events/raw_syscalls ] ||
  { echo "SKIP: no tracefs raw_syscalls events here"; exit 77; }
[ -x "$PROG" ] || { echo "FAIL: $PROG not built"; exit 1; }
W=$(mktemp -d /tmp/rtd-record-syscalls-XXXXXX)
trap 'rm -rf "$W"' EXIT

"$R" record --syscalls -o "$W/t.json" -- strace -f -T -o "$W/strace" "$PROG" 10 2>"$W/err"
rc=$?
cat "$W/err"
if [ $rc != 0 ] && grep -q "perf_event\|Permission\|not permitted" "$W/err"; then
  echo "SKIP: perf_event is unavailable here: $(head -2 "$W/err")"; exit 77
fi
[ $rc = 0 ] || { echo "FAIL: rtdiag record exited $rc"; exit 1; }
python3 - "$W/t.json" "$W/strace" <<'PY'
import json, re, statistics, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
line = re.compile(r'^(\d+)\s+(\w+)\(.*\)\s+=\s+(\S+)(?:\s+(E[A-Z0-9]+)\s.*?)?\s+<([\d.]+)>$')
st = []
for l in open(sys.argv[2]):
    m = line.match(l.rstrip("\n"))
    if m:
        st.append((int(m[1]), m[2], m[3], m[4], float(m[5]) * 1e6))
    elif "exit_group" not in l and not l.split(None, 1)[1].startswith(("+++", "---")):
        print("FAIL: strace line not understood:", l.strip()); sys.exit(1)
pid = st[0][0]
assert all(s[0] == pid for s in st), "strace traced more than the program"
# the program's calls: whole slices ("X", handed over as they end) on its
# thread
calls = sorted((e["ts"], e["name"], e["args"], e["dur"]) for e in evs
               if e.get("tid") == pid and e.get("ph") == "X" and e.get("cat") == "syscall")
first = next(i for i, c in enumerate(calls) if c[1] == "execve" and c[2]["ret"] == 0)
calls = calls[first:]
names_r = [(c[1], c[2].get("errno")) for c in calls]
names_s = [(s[1], s[3]) for s in st]
if names_r != names_s:
    for i, (a, b) in enumerate(zip(names_r, names_s)):
        if a != b:
            print("FAIL: call %d: rtdiag %s, strace %s" % (i, a, b)); break
    print("FAIL: rtdiag %d calls, strace %d" % (len(names_r), len(names_s))); sys.exit(1)
for c, s in zip(calls, st):
    if s[2] != "?" and not s[2].startswith("0x") and int(s[2]) != (c[2]["ret"] if not c[2].get("errno") else -1):
        print("FAIL: %s: rtdiag ret %s, strace %s" % (c[1], c[2]["ret"], s[2])); sys.exit(1)
longer = [(c[1], c[3], s[4]) for c, s in zip(calls, st) if c[3] > s[4] + 1]
if longer:
    print("FAIL: slices longer than strace's time:", longer[:5]); sys.exit(1)
sleeps = [c[3] for c in calls if c[1] == "clock_nanosleep"]
if len(sleeps) != 10 or min(sleeps) < 10000:
    print("FAIL: clock_nanosleep slices", sleeps); sys.exit(1)
d = sorted(s[4] - c[3] for c, s in zip(calls, st))
print("ok: %d calls of pid %d, names, order, results and errno names equal strace's "
      "(%d distinct); each slice <= strace's time; strace - rtdiag: median %.1f us, "
      "p90 %.1f us, max %.1f us; sleeps %.2f..%.2f ms"
      % (len(calls), pid, len(set(n for n, _ in names_r)), statistics.median(d),
         d[int(len(d) * 0.9)], d[-1], min(sleeps) / 1000, max(sleeps) / 1000))
PY
