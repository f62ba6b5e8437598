# perf stat with tracepoints and uprobes as counters (as Debian's perf
# counts them), as a user the kernel allows user space only (':u', as
# perf prints it), perf list's and probes' permission messages; perf
# trace's integer arrays and %pI4 addresses; --uprobe by library name.
. "$(dirname "$0")/lib.sh"

# 1. a tracepoint as a counter: the same count as perf stat
N=7
for tool in perf rtdiag; do
  if [ $tool = perf ]; then
    command -v perf >/dev/null || continue
    perf stat -x, -e syscalls:sys_enter_openat -- "$TARGET" open /etc/hostname /a /b /c /d /e /f 2> "$TMP/p.csv" > /dev/null
    pc=$(awk -F, '$3=="syscalls:sys_enter_openat"{print $1}' "$TMP/p.csv")
  else
    "$R" perf stat -e syscalls:sys_enter_openat,sched:sched_process_exec -o "$TMP/r.txt" -- "$TARGET" open /etc/hostname /a /b /c /d /e /f > /dev/null \
      || fail "rtdiag perf stat -e tracepoints: $(cat "$TMP/r.txt" 2>/dev/null)"
    rc=$(awk '$2=="syscalls:sys_enter_openat"{print $1}' "$TMP/r.txt")
    ex=$(awk '$2=="sched:sched_process_exec"{print $1}' "$TMP/r.txt")
  fi
done
[ -n "$rc" ] || { cat "$TMP/r.txt"; fail "no count for syscalls:sys_enter_openat"; }
[ "$rc" -ge $N ] || fail "openat counted $rc, want at least $N"
[ "$ex" = 1 ] || fail "sched:sched_process_exec counted $ex, want 1"
[ -z "${pc:-}" ] || [ "$pc" = "$rc" ] || fail "openat: perf counts $pc, rtdiag $rc"
ok "tracepoint counters: openat $rc (perf ${pc:-not run}), exec $ex"

# 2. a uprobe as a counter, the binary named as a library
LIBC=$(ldd "$TARGET" | awk '/libc.so/{print $3}')
"$R" perf stat --uprobe libc.so.6:open -o "$TMP/u.txt" -- "$TARGET" open /etc/hostname /a /b > /dev/null || { cat "$TMP/u.txt"; fail "--uprobe libc.so.6:open"; }
uc=$(awk '/libc.so.6:open/{print $1}' "$TMP/u.txt")
[ "$uc" = 3 ] || { cat "$TMP/u.txt"; fail "uprobe counter: $uc calls of open, want 3"; }
ok "uprobe counter libc.so.6:open: $uc calls"
# the library name resolved the same way for perf trace
"$R" perf trace --uprobe 'libc.so.6:open path=+0(%di):string' -- "$TARGET" open /etc/hostname > "$TMP/t.txt" 2>&1 || { cat "$TMP/t.txt"; fail "trace --uprobe libc.so.6:open"; }
grep -q "$(readlink -f "$LIBC"):open .*path=\"/etc/hostname\"" "$TMP/t.txt" || { cat "$TMP/t.txt"; fail "trace --uprobe by library name"; }
ok "perf trace --uprobe libc.so.6:open resolved to $(readlink -f "$LIBC")"

# 3. as a user the kernel allows user space only
par=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$par" -ge 2 ] && command -v setpriv >/dev/null; then
  asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
  asnobody "$R" perf stat -e task-clock,context-switches -- /bin/true 2> "$TMP/n.txt"; rc=$?
  [ $rc = 0 ] || { cat "$TMP/n.txt"; fail "perf stat as nobody: exit $rc"; }
  grep -q 'msec task-clock:u' "$TMP/n.txt" && grep -q 'context-switches:u' "$TMP/n.txt" || { cat "$TMP/n.txt"; fail "no ':u' names"; }
  ok "perf stat as nobody: user space only, task-clock:u"
  asnobody "$R" perf list sched > /dev/null 2> "$TMP/l.err"
  grep -q 'no tracepoints listed.*Permission denied.*root' "$TMP/l.err" || fail "perf list as nobody: '$(cat "$TMP/l.err")'"
  asnobody "$R" perf list uprobe 2>/dev/null | grep -q 'needs root' || fail "perf list as nobody does not say uprobes need root"
  ok "perf list as nobody says why"
  asnobody "$R" perf trace --uprobe "$LIBC:open path=+0(%di):string" -- /bin/true 2> "$TMP/u.err"; rc=$?
  [ $rc = 1 ] && grep -q 'permission denied' "$TMP/u.err" && ! grep -q 'this kernel has no' "$TMP/u.err" \
    || fail "uprobe as nobody: rc $rc, '$(cat "$TMP/u.err")'"
  asnobody "$R" perf stat -e sched:sched_switch -- /bin/true 2> "$TMP/s.err"; rc=$?
  [ $rc = 1 ] && grep -q 'permission denied' "$TMP/s.err" || fail "tracepoint counter as nobody: rc $rc '$(cat "$TMP/s.err")'"
  ok "uprobe and tracepoint as nobody: the cause is permission, said"
else
  echo "SKIP part: perf_event_paranoid $par < 2 or no setpriv"
fi

# 4. integer arrays as arrays; %pI4 fields as addresses (110: getppid on x86-64)
"$R" perf trace -e raw_syscalls:sys_enter --filter 'id == 110' -- "$TARGET" flood 1 > "$TMP/a.txt" || fail "trace raw_syscalls"
grep -Eq ' args=\[[0-9]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+\]$' "$TMP/a.txt" || { head -3 "$TMP/a.txt"; fail "args[6] not printed as an array"; }
if [ -d "$TRACEFS/events/sock/inet_sock_set_state" ] && command -v python3 >/dev/null; then
  "$R" perf trace -e sock:inet_sock_set_state --json -- python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname()); a, _ = s.accept(); c.close(); a.close(); s.close()' > "$TMP/s.json" || fail "trace sock"
  grep -q '"saddr":"127.0.0.1"' "$TMP/s.json" && grep -q '"daddr":"127.0.0.1"' "$TMP/s.json" || { head -2 "$TMP/s.json"; fail "saddr/daddr not 127.0.0.1"; }
  "$R" perf trace -e sock:inet_sock_set_state -- python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname()); c.close(); s.close()' > "$TMP/s.txt" || fail "trace sock (text)"
  grep -q ' saddr=127.0.0.1 ' "$TMP/s.txt" || { head -2 "$TMP/s.txt"; fail "text: saddr not 127.0.0.1"; }
  ok "%pI4 fields as 127.0.0.1, arrays as [..]"
else
  ok "arrays as [..] (no sock:inet_sock_set_state here)"
fi
echo PASS
