# Shared by the perf integration tests (sourced).
set -u
R=${RTDIAG:?RTDIAG not set}
TARGET=${RTD_BINARY_DIR:?}/tests/targets/perf_target
. "$(dirname "${BASH_SOURCE[0]}")/../wait.sh"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }
not() { ! "$@"; }
# within SECONDS CMD...: until CMD succeeds, polled every 0.1 s; status 1
# when it has not within SECONDS (a generous bound, not a wait)
within() { local n=$(($1 * 10)); shift; until "$@"; do n=$((n - 1)); [ $n -gt 0 ] || return 1; sleep 0.1; done; }
# map_open PID: the .NET runtime of PID holds a perf map open (it is on)
map_open() { ls -l /proc/$1/fd 2>/dev/null | grep -q "/perf-[0-9]*\.map"; }
[ "$(id -u)" = 0 ] || skip "needs root for perf_event and tracefs"
[ -x "$TARGET" ] || fail "perf_target not built at $TARGET"
mnt_of() { awk -v t="$1" '{for (i=7;i<=NF;i++) if ($i=="-") { if ($(i+1)==t) { print $5; exit } break } }' /proc/self/mountinfo; }
if [ -z "$(mnt_of tracefs)" ]; then
  mkdir -p /sys/kernel/tracing 2>/dev/null
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || skip "tracefs is not mounted and cannot be mounted"
fi
TRACEFS=$(mnt_of tracefs)
[ -n "$TRACEFS" ] || skip "tracefs not found in /proc/self/mountinfo"
[ -d "$TRACEFS/events" ] || skip "no events in $TRACEFS"
TMP=$(mktemp -d /tmp/rtdiag-perf-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# perf_dotnet_app [NOTE]: the .NET program perf-dotnet (tests/targets),
# built, and copied with its P/Invoke library to $APP; skips (saying NOTE)
# without a dotnet SDK
perf_dotnet_app() {
  command -v dotnet >/dev/null 2>&1 || skip "no dotnet SDK on PATH${1:+ ($1)}"
  local lib=$RTD_BINARY_DIR/tests/targets/libperfnative.so out
  [ -f "$lib" ] || fail "libperfnative.so not built"
  out=$(bash "$RTD_SOURCE_DIR/tests/integration/dotnet/build.sh" perf-dotnet tests/targets) || fail "dotnet build of perf-dotnet"
  APP=$TMP/app
  mkdir -p "$APP" && cp -r "$out"/. "$APP"/ && cp "$lib" "$APP"/
}
