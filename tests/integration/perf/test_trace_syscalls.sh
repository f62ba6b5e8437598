# perf trace's system call view against strace on the same program: the
# same calls in the same order with the same return values; path
# arguments, flags by name, errno names, durations; -e by name; -s
# summary counts equal to the calls printed; -o into a file that a
# failure never touches; -- COMMAND's exit code; fractional durations;
# the help names no option the command rejects.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "no python3"
# the interpreter itself, not a wrapper script (pyenv's shims are bash)
PYTHON=$(python3 -c 'import sys; print(sys.executable)')
PYN=$(basename "$PYTHON" | cut -c1-15)
# bytes paths: Python hands their own buffer to the call, alive after it
# (a str path is encoded into a temporary freed at once: rtdiag reads a
# string when it handles the call, after the fact, see --help)
PY='import os, time
a = b"/etc/hostname"; b = b"/nonexistent/rtdiag-trace-test"
fd = os.open(a, os.O_RDONLY | os.O_CLOEXEC); os.close(fd)
try:
    os.open(b, os.O_RDONLY)
except OSError:
    pass
time.sleep(0.4)'

# 1. the calls and their return values, as strace sees them
"$R" perf trace -e openat,close -o "$TMP/rt.txt" -- "$PYTHON" -c "$PY" 2> "$TMP/rt.err" || { cat "$TMP/rt.err"; fail "trace"; }
grep -q 'openat(dfd: CWD, filename: "/etc/hostname", flags: RDONLY|CLOEXEC' "$TMP/rt.txt" || { grep hostname "$TMP/rt.txt"; fail "no decoded openat of /etc/hostname"; }
grep -q 'filename: "/nonexistent/rtdiag-trace-test".*= -1 ENOENT (No such file or directory)$' "$TMP/rt.txt" || fail "no ENOENT line"
grep -Eq "^ *[0-9]+\\.[0-9]{3} \\( *[0-9]+\\.[0-9]{3} ms\\): $PYN/[0-9]+ close\\(fd: [0-9]+\\) = 0\$" "$TMP/rt.txt" || { head -3 "$TMP/rt.txt"; fail "close lines not in 'TIME (DUR ms): COMM/TID name(args) = ret' form"; }
grep -vE ' (openat|close)\(' "$TMP/rt.txt" | grep -q . && fail "-e openat,close printed other calls"
if command -v strace >/dev/null; then
  strace -qq -e trace=openat,close -o "$TMP/st.txt" "$PYTHON" -c "$PY" || fail "strace"
  # name and return value of each call, in order
  sed -nE 's/^([a-z0-9_]+)\(.*\) += (-?[0-9]+).*/\1 \2/p' "$TMP/st.txt" > "$TMP/st.seq"
  sed -nE "s/.*: $PYN\\/[0-9]+ ([a-z0-9_]+)\\(.*\\) = (-?[0-9]+).*/\\1 \\2/p" "$TMP/rt.txt" > "$TMP/rt.seq"
  [ "$(wc -l < "$TMP/st.seq")" -gt 5 ] || fail "strace saw too few calls"
  diff "$TMP/st.seq" "$TMP/rt.seq" > "$TMP/diff" || { head -20 "$TMP/diff"; fail "rtdiag and strace disagree on the calls or their results"; }
  ok "the same $(wc -l < "$TMP/st.seq") openat/close calls and results as strace"
else
  echo "SKIP part: no strace to compare with"
fi
ok "system calls decoded (paths, flags, errno names, durations)"

# 2. -s: a summary whose counts are the calls printed with -S
"$R" perf trace -e openat,close -S -o "$TMP/s.txt" -- "$PYTHON" -c "$PY" 2>/dev/null || fail "trace -S"
n_open=$(grep -c ' openat(' "$TMP/s.txt")
n_close=$(grep -c ' close(' "$TMP/s.txt")
s_open=$(awk '$1=="openat"{print $2}' "$TMP/s.txt")
s_close=$(awk '$1=="close"{print $2}' "$TMP/s.txt")
s_err=$(awk '$1=="openat"{print $3}' "$TMP/s.txt")
[ "$n_open" = "$s_open" ] && [ "$n_close" = "$s_close" ] || fail "summary counts $s_open/$s_close, lines $n_open/$n_close"
n_enoent=$(grep -c '= -1 E' "$TMP/s.txt")
[ "$s_err" = "$n_enoent" ] || fail "summary errors $s_err, error lines $n_enoent"
grep -q 'Summary of events' "$TMP/s.txt" || fail "no summary header"
"$R" perf trace -e openat -s -- "$PYTHON" -c "$PY" > "$TMP/so.txt" 2>/dev/null || fail "trace -s"
grep -q ' openat(' "$TMP/so.txt" && fail "-s printed calls, not only the summary"
grep -q '^   openat ' "$TMP/so.txt" || fail "-s: no openat row"
ok "summary: $s_open openat ($s_err errors), $s_close close"

# 3. exit codes, durations, unknown names
"$R" perf trace -e openat -o "$TMP/f.txt" -- false; rc=$?
[ $rc = 1 ] || fail "-- false: exit $rc, want 1"
"$R" perf trace -e openat -o "$TMP/f.txt" -- sh -c 'exit 7'; rc=$?
[ $rc = 7 ] || fail "-- sh -c 'exit 7': exit $rc"
"$R" perf trace -e sched:sched_process_exec -a -d 0.3 > /dev/null || fail "--duration 0.3"
"$R" perf trace -e sched:sched_process_exec -a -d 00:00:00.2 > /dev/null || fail "--duration hh:mm:ss.f"
"$R" perf trace -e no_such_call -- true 2> "$TMP/err"; rc=$?
[ $rc = 1 ] && grep -q 'no_such_call: not a system call' "$TMP/err" || fail "unknown call: rc $rc $(cat "$TMP/err")"
ok "exit codes passed on; fractional and hh:mm:ss durations; unknown names named"

# 4. -o: an existing file is replaced only when tracing ran
echo keep > "$TMP/keep.txt"
"$R" perf trace -e openat -p 999999 -o "$TMP/keep.txt" 2>/dev/null; rc=$?
[ $rc = 1 ] && [ "$(cat "$TMP/keep.txt")" = keep ] || fail "a failed trace touched the output file (rc $rc)"
"$R" perf trace -e openat -o "$TMP/keep.txt" -- "$PYTHON" -c "$PY" 2>/dev/null || fail "trace -o"
grep -q 'hostname' "$TMP/keep.txt" || fail "-o did not write the trace"
ok "-o: safe output file"

# 5. help: every option it shows is accepted (no '-i')
"$R" help perf trace > "$TMP/help"
grep -Eq '(^| )-i[ ,]' "$TMP/help" && fail "help mentions -i"
for o in $(grep -oE '^  (-[a-zA-Z], )?--[a-z-]+' "$TMP/help" | grep -oE -- '--[a-z-]+'); do
  # in $TMP: an option taking a FILE (-o) writes "x" there
  (cd "$TMP" && timeout 5 "$R" perf trace "$o" x -d 0.05 -e sched:sched_process_exec -a 2>&1 >/dev/null) |
    grep -q "unknown option" && fail "help shows $o, which is rejected"
done
ok "help shows only accepted options"

# 6. the ring: perf's default size, and --stats says how to raise it
"$R" perf trace -e sched:sched_process_exec --stats -- true 2> "$TMP/st.err" > /dev/null || fail "--stats"
grep -q 'rings of 128 pages' "$TMP/st.err" || fail "default ring is not 128 pages: $(cat "$TMP/st.err")"
ok "128-page rings by default"
echo PASS
