# lib.sh - shared by the dotnet integration tests (sourced, not run).
# Builds the .NET test programs once per build dir (under a lock, since
# ctest runs tests in parallel), starts them, cleans up after them.
set -u
R=${RTDIAG:?RTDIAG not set}
SRC=${RTD_SOURCE_DIR:?}
BIN=${RTD_BINARY_DIR:?}
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
skip() { echo "SKIP: $*"; exit 77; }
. "$SRC/tests/integration/wait.sh"
command -v dotnet >/dev/null 2>&1 || skip "no dotnet SDK on PATH"

# build_dotnet NAME FROM -> prints the output dir (see build.sh).
build_dotnet() { bash "$SRC/tests/integration/dotnet/build.sh" "$@"; }

PIDS=()
WORK=$(mktemp -d /tmp/rtd-dn-test.XXXXXX)
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  # a runtime killed by SIGKILL leaves its socket: do not leave them to
  # pile up in /tmp (pids are reused)
  for p in "${PIDS[@]}"; do rm -f /tmp/dotnet-diagnostic-"$p"-*-socket; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# start_target DIR [ENV=VALUE...] [-- ARGS]: start dotnet-target with DIR as
# its work dir; sets TPID once its Main has run.
TARGET_DIR=
start_target() {
  local dir=$1; shift
  mkdir -p "$dir"
  local envs=() args=()
  while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then shift; args=("$@"); break; fi
    envs+=("$1"); shift
  done
  env "${envs[@]}" "$TARGET_DIR/dotnet-target" "$dir" "${args[@]}" \
      >"$dir/stdout" 2>"$dir/stderr" &
  TPID=$!
  PIDS+=("$TPID")
}

# wait_file FILE [SECONDS]: until FILE is not empty. SECONDS is what it
# takes on a quiet machine, for the reader; the bound is wait_until's
# (minutes: a loaded 2-core machine starts a runtime in tens of seconds).
wait_file() { wait_until test -s "$1"; }
# has_socket PID: PID's diagnostic socket is in /tmp
has_socket() { ls /tmp/dotnet-diagnostic-"$1"-* >/dev/null 2>&1; }

# ticks DIR: how many Ticks the dotnet-target working in DIR has emitted
# (DIR/ticks, written every 10th); ticked DIR N: at least N
ticks() { cat "$1/ticks" 2>/dev/null || echo 0; }
ticked() { [ "$(ticks "$1")" -ge "$2" ]; }
# session_ran ERR DIR N: rtdiag's session is on ("session ID started" in
# its stderr ERR) and the target of DIR has since emitted N more Ticks (at
# least N - 10 inside the session): a session as long as the program needs
# to show what a test looks for, not a time a loaded machine may not give
session_ran() {
  wait_until grep -q "session [0-9]* started" "$1" || return 1
  local t0; t0=$(ticks "$2")
  wait_until ticked "$2" $((t0 + $3))
}
