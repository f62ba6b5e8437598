# lib.sh - shared by the agent's integration tests (sourced, not run).
# Starts the agent and the programs it watches, on 127.0.0.1 only, and
# cleans up after them (every process it started, by pid).
set -u
R=${RTDIAG:?RTDIAG not set}
SRC=${RTD_SOURCE_DIR:?}
BIN=${RTD_BINARY_DIR:?}
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
skip() { echo "SKIP: $*"; exit 77; }

GO=
for v in 1.23 1.22 1.19; do
  [ -x /usr/lib/go-$v/bin/go ] && { GO=/usr/lib/go-$v/bin/go; break; }
done

PIDS=()
WORK=$(mktemp -d /tmp/rtd-agent-test.XXXXXX)
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  # a runtime killed by SIGKILL leaves its socket behind
  for p in "${PIDS[@]}"; do rm -f /tmp/dotnet-diagnostic-"$p"-*-socket; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# build_dotnet NAME FROM -> prints the output dir (dotnet tests' build.sh)
build_dotnet() { bash "$SRC/tests/integration/dotnet/build.sh" "$@"; }

. "$SRC/tests/integration/wait.sh"
# wait_for SECONDS CMD...: until CMD succeeds. SECONDS is what it takes on
# a quiet machine, for the reader; the bound is wait_until's (minutes: a
# loaded 2-core machine starts a runtime in tens of seconds).
wait_for() { shift; wait_until "$@"; }
# within SECONDS CMD...: CMD succeeds within SECONDS, for the few checks
# whose issue asks for a time (with margin)
within() {
  local secs=$1; shift
  local end=$(( $(date +%s) + secs ))
  until "$@" 2>/dev/null; do
    [ "$(date +%s)" -ge $end ] && return 1
    sleep 0.1
  done
  return 0
}

# start_program VAR PROGRAM DIR ARGS...: PROGRAM DIR ARGS... in the
# background (its output in DIR/out), its pid in $VAR and in PIDS; then
# waits for it to write DIR/ready (status 1 when it did not)
start_program() {
  local var=$1 prog=$2 dir=$3
  shift 3
  mkdir -p "$dir"
  "$prog" "$dir" "$@" >"$dir/out" 2>&1 &
  printf -v "$var" '%s' "$!"
  PIDS+=("$!")
  wait_for 30 test -s "$dir/ready"
}

# start_agent ARGS...: sets AGENT_PID, AGENT_URL, AGENT_LOG
AGENT_N=0
start_agent() {
  AGENT_N=$((AGENT_N+1))
  AGENT_LOG="$WORK/agent$AGENT_N.log"
  "$R" agent --listen 127.0.0.1:0 "$@" >"$WORK/agent$AGENT_N.out" 2>"$AGENT_LOG" &
  AGENT_PID=$!
  PIDS+=("$AGENT_PID")
  wait_for 10 grep -Eq "serving https?://" "$AGENT_LOG" || { cat "$AGENT_LOG"; return 1; }
  AGENT_URL=$(grep -Eo 'https?://127.0.0.1:[0-9]*' "$AGENT_LOG" | head -1)
}

# stop_agent: SIGTERM, wait for it to flush and exit; returns its status
stop_agent() {
  kill -TERM "$AGENT_PID"
  wait "$AGENT_PID"
}

# pprof_has URL FILE PATTERN...: go tool pprof -raw of URL into FILE holds
# every PATTERN (grep's); for wait_until, as a profile fills in
pprof_has() {
  local url=$1 out=$2 pat
  shift 2
  "$GO" tool pprof -raw "$url" > "$out" 2>&1 || return 1
  for pat in "$@"; do grep -q -- "$pat" "$out" || return 1; done
}

# has_target PID: /targets lists it
has_target() { curl -sf "$AGENT_URL/targets" | grep -q "\"pid\":$1,"; }
# has_profile PID KIND: /targets lists it with that profile (e.g. block)
has_profile() {
  curl -sf "$AGENT_URL/targets" | python3 -c '
import json, sys
t = [x for x in json.load(sys.stdin) if x["pid"] == int(sys.argv[1])]
assert t and sys.argv[2] in t[0]["profiles"], t' "$1" "$2"
}

# metric NAME: the value of an unlabelled (or first) series
metric() { curl -sf "$AGENT_URL/metrics" | awk -v n="$1" '$1 == n || index($1, n "{") == 1 { print $2; exit }'; }
