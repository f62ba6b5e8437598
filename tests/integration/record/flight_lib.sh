# flight_lib.sh - sourced by the flight recorder's tests (test_flight_*.sh):
# the checks that say why a test cannot run here, the program they record
# (tests/targets/dotnet-flight), and the clean-up of both it and rtdiag.
# Every wait polls a condition (wait.sh); none sleeps for "long enough".
set -u
R=${RTDIAG:?}; SRC=${RTD_SOURCE_DIR:?}
HERE=$SRC/tests/integration/record
. "$SRC/tests/integration/wait.sh"
command -v dotnet >/dev/null || { echo "SKIP: no dotnet SDK on PATH"; exit 77; }
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ] ||
  { echo "SKIP: off-CPU waits need sched_switch samples: root or perf_event_paranoid <= 1"; exit 77; }
D=$(bash "$SRC/tests/integration/dotnet/build.sh" dotnet-flight tests/targets) || exit 1
W=$(mktemp -d /tmp/rtd-flight-test-XXXXXX)
S=$W/snap
mkdir -p "$S"
TP= RP=
cleanup() {
  [ -n "$RP" ] && { kill -9 "$RP" 2>/dev/null; wait "$RP" 2>/dev/null; }
  [ -n "$TP" ] && { kill -9 "$TP" 2>/dev/null; wait "$TP" 2>/dev/null; rm -f /tmp/dotnet-diagnostic-"$TP"-*-socket /tmp/perf-"$TP".map; }
  rm -rf "$W"
}
trap cleanup EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
finish() { [ $fails = 0 ] && exit 0; echo "--- rtdiag's stderr:"; cat "$W/err"; exit 1; }

# start_target [ROUNDS]: dotnet-flight, its gauge at the value in $W/level
start_target() {
  echo 0 >"$W/level"
  "$D/dotnet-flight" "$W/ready" "$W/level" "$@" >"$W/out" 2>&1 &
  TP=$!
  TPID=$TP # the snapshots' names keep it after the program is gone
  wait_until test -s "$W/ready" || { echo "FAIL: dotnet-flight did not start: $(head -5 "$W/out")"; exit 1; }
}

# start_rtdiag ARGS...: rtdiag record -p $TP --ring ... in the background,
# until it says it records (a perf_event refused: the test is skipped)
start_rtdiag() {
  "$R" record -p "$TP" --snapshot-dir "$S" --format chrome-json --providers Rtd-Flight-Test "$@" 2>"$W/err" &
  RP=$!
  recording() { grep -q '^rtdiag: recording pid' "$W/err" || ! kill -0 "$RP" 2>/dev/null; }
  wait_until recording
  if ! kill -0 "$RP" 2>/dev/null; then
    wait "$RP"; local rc=$?; RP=
    if grep -q "perf_event\|Permission\|not permitted" "$W/err"; then
      echo "SKIP: perf_event is unavailable here: $(head -2 "$W/err")"; exit 77
    fi
    echo "FAIL: rtdiag record --ring exited $rc at once: $(cat "$W/err")"; exit 1
  fi
}

# rounds: the rounds the program has run
rounds() { wc -l <"$W/out"; }

# snaps CAUSE: the finished snapshots of that cause, -2, -3... too (temporary
# files are .NAME.rtdiag-XXXXXX until renamed into place)
snaps() { ls "$S"/rtdiag-flight-*-p"$TPID"-"$1".json "$S"/rtdiag-flight-*-p"$TPID"-"$1"-[0-9]*.json 2>/dev/null; }
nsnaps() { snaps "$1" | wc -l; }
has_snaps() { [ "$(nsnaps "$1")" -ge "$2" ]; }

# usr1_until PATTERN: SIGUSR1 snapshots, one a round of the program (each
# round is >= 50 ms of its own: the bound below is 100 rounds of it, not a
# count a fast machine runs through), until the latest holds PATTERN (a
# sign that a session runs: its events have come); prints how many it
# took; status 1 after 100
usr1_until() {
  local i r0
  for i in $(seq 1 100); do
    r0=$(rounds)
    next_round() { [ "$(rounds)" -gt "$r0" ]; }
    wait_until next_round || return 1
    kill -USR1 "$RP"
    wait_until has_snaps signal "$i" || return 1
    grep -q "$1" "$(snaps signal | tail -1)" && { echo "$i"; return 0; }
  done
  return 1
}
