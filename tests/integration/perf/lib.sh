# Shared by the perf integration tests (sourced).
set -u
R=${RTDIAG:?RTDIAG not set}
TARGET=${RTD_BINARY_DIR:?}/tests/targets/perf_target
. "$(dirname "${BASH_SOURCE[0]}")/../wait.sh"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }
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
