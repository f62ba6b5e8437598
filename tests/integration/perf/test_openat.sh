#!/usr/bin/env bash
# syscalls:sys_enter_openat on a child shows its flags and the pointer
# value of filename (the tracepoint carries no string), and only the child.
. "$(dirname "$0")/lib.sh"
[ -d "$TRACEFS/events/syscalls/sys_enter_openat" ] || skip "no syscalls:sys_enter_openat (CONFIG_FTRACE_SYSCALLS off)"
"$R" perf trace -e syscalls:sys_enter_openat -- /bin/sh -c \
  "echo \$\$ > $TMP/pid; exec $TARGET open /etc/hostname /nonexistent-rtdiag" > "$TMP/out" 2> "$TMP/err" \
  || { cat "$TMP/err"; fail "perf trace exited $?"; }
cat "$TMP/out"
pid=$(cat "$TMP/pid")
[ -s "$TMP/out" ] || fail "no events"
others=$(awk -v p="$pid" '{split($3,a,"/"); if (a[1] != p) print}' "$TMP/out")
[ -z "$others" ] || fail "events of other processes: $others"
ok "all $(wc -l < "$TMP/out") events are the child's (pid $pid)"
# the target's own two opens come last: O_RDONLY (flags=0), filename a pointer
n=$(grep -c ' filename=0x[0-9a-f]* flags=0 mode=0$' "$TMP/out")
[ "$n" -ge 2 ] || fail "want >= 2 O_RDONLY opens with a pointer filename, got $n"
grep -q 'filename="' "$TMP/out" && fail "filename printed as a string: the tracepoint has none"
ok "flags and filename pointer decoded"
# JSON: the pointer is a hex string
"$R" perf trace --json -e syscalls:sys_enter_openat -- "$TARGET" open /etc/hostname > "$TMP/json" || fail "json run"
tail -1 "$TMP/json" | grep -q '"filename":"0x[0-9a-f]*","flags":0,' || fail "json: $(tail -1 "$TMP/json")"
ok "json"
