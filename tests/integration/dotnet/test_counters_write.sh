#!/usr/bin/env bash
# dotnet counters: a view whose output fails says so once, as a write error
# of that output. A real .NET 10 program, `rtdiag dotnet counters monitor`
# into /dev/full (every write of a value fails, ENOSPC): the session stops
# at the first value, exit 1, and stderr has "rtdiag: stdout: write error"
# as its one error, not "reading the session's stream: Input/output error"
# as well (the stream was read fine; it was stdout that failed).
. "$(dirname "$0")/lib.sh"
TARGET_DIR=$(build_dotnet dotnet-target tests/targets) || { echo "FAIL: build"; exit 1; }
[ -w /dev/full ] || skip "no writable /dev/full"

start_target "$WORK/t"
wait_file "$WORK/t/ready" || { bad "target did not start"; cat "$WORK/t/stderr"; exit 1; }
# --duration is only a bound against a hang: the first value (a second
# after the session starts) ends it
"$R" dotnet counters monitor -p "$TPID" --counters 'System.Runtime[working-set]' -d 300 \
  >/dev/full 2>"$WORK/m.err"
rc=$?
errs=$(grep -v "session [0-9]* started" "$WORK/m.err")
[ $rc = 1 ] && [ "$errs" = "rtdiag: stdout: write error" ] \
  && ok "monitor into /dev/full: exit 1, 'stdout: write error' once" \
  || bad "monitor into /dev/full: rc $rc, stderr: $(cat "$WORK/m.err")"
[ $fail = 0 ] || { echo "$fail failed"; exit 1; }
