# go_lib.sh - sourced by the tests of the Go runtime side of `rtdiag
# record` (test_gotrace_roll.sh, test_flight_go.sh): a work folder, the
# clean-up of the Go program and rtdiag, and tests/targets/go-record
# started with a chosen Go. Every wait polls a condition (wait.sh).
set -u
R=${RTDIAG:?}; SRC=${RTD_SOURCE_DIR:?}
HERE=$SRC/tests/integration/record
. "$SRC/tests/integration/wait.sh"
W=$(mktemp -d /tmp/rtd-record-go-XXXXXX)
GP= RP=
# A failed run's folder (rtdiag's stderr, the program's output, the
# snapshots) is kept, each under a name of its own, for whoever looks
# next: a flake under load may be seen once.
cleanup() {
  local st=$? keep
  [ -n "$RP" ] && { kill -9 "$RP" 2>/dev/null; wait "$RP" 2>/dev/null; }
  [ -n "$GP" ] && { kill "$GP" 2>/dev/null; wait "$GP" 2>/dev/null; }
  if [ "$st" != 0 ] && [ "$st" != 77 ]; then
    keep=${RTD_BINARY_DIR:-/tmp}/Testing/failed/$(basename "$0" .sh)-$(date +%Y%m%d-%H%M%S)-$$
    mkdir -p "$(dirname "$keep")" && mv "$W" "$keep" && echo "kept: $keep"
  fi
  rm -rf "$W"
}
trap cleanup EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# start_go GO: go-record built with that Go (1.23, or a go command's
# path) running as $GP, listening at $(cat "$W/addr"); status 77 when that
# Go is not installed, 1 when the build fails
start_go() {
  local p rc GO=$1
  p=$(bash "$SRC/tests/targets/go_build.sh" "$GO" tests/targets/go-record)
  rc=$?
  [ $rc = 0 ] || return $rc
  rm -f "$W/addr"
  "$p" "$W" >"$W/out" 2>&1 &
  GP=$!
  wait_until test -s "$W/addr" || { echo "FAIL: go-record ($1) did not start: $(head -5 "$W/out")"; exit 1; }
}
stop_go() { kill "$GP" 2>/dev/null; wait "$GP" 2>/dev/null; GP=; }

# go_gens PID N: rtdiag PID's Go trace pieces (the unlinked file it holds,
# one piece at a time) have brought N generations or more, summed over the
# pieces seen (`gotrace stats` of each, its largest count kept by inode in
# $W/gens), or PID ended. Counted, not weighed: on a loaded machine the
# program writes fewer bytes a generation, never fewer generations.
go_gens() {
  local f g
  kill -0 "$1" 2>/dev/null || return 0
  for f in /proc/"$1"/fd/*; do
    case $(readlink "$f") in /tmp/rtd-gotrace-*)
      g=$("$R" gotrace stats "$f" 2>/dev/null | awk '$1 == "generations:" {print $2}')
      echo "$(stat -L -c %i "$f" 2>/dev/null) ${g:-0}" >> "$W/gens" ;;
    esac
  done
  [ "$(awk '$1 != "" { if ($2 > m[$1]) m[$1] = $2 } END { for (i in m) s += m[i]; print s + 0 }' "$W/gens" 2>/dev/null)" -ge "$2" ]
}
