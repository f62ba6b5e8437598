#!/usr/bin/env bash
# rtdiag perf trace with a one-page ring under a syscall flood reports its
# losses on stderr, per CPU and in total; delivered + lost = the calls made.
# Without the reader thread: with it, 64 MiB of copies may hold the whole
# flood (its exact loss counting is integration test_reader's).
. "$(dirname "$0")/lib.sh"
[ -d "$TRACEFS/events/syscalls/sys_enter_getppid" ] || skip "no syscalls:sys_enter_getppid"
n=100000
"$R" perf trace -m 1 --no-reader-thread -e syscalls:sys_enter_getppid -- "$TARGET" flood $n > "$TMP/out" 2> "$TMP/err" \
  || { cat "$TMP/err"; fail "trace run"; }
cat "$TMP/err" | tail -3
got=$(wc -l < "$TMP/out")
lost=$(sed -n 's/^rtdiag: \([0-9]*\) events lost in total:.*/\1/p' "$TMP/err")
[ -n "$lost" ] || fail "no loss summary on stderr"
[ $((got + lost)) = $n ] || fail "delivered $got + lost $lost != $n"
grep -q '^rtdiag: cpu [0-9]*: [0-9]* events lost' "$TMP/err" || fail "no per-CPU loss lines"
ok "delivered $got + lost $lost = $n"
