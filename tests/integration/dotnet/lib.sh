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

# wait_file FILE [SECONDS]
wait_file() {
  local f=$1 t=${2:-30} i=0
  while [ ! -s "$f" ]; do
    sleep 0.1; i=$((i+1))
    [ $i -ge $((t*10)) ] && return 1
  done
  return 0
}
