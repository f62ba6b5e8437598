# lib.sh - shared by the goanalysis integration tests (sourced).
set -u
R=${RTDIAG:?RTDIAG not set}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRCDIR=${RTD_SOURCE_DIR:-$(cd "$HERE/../../.." && pwd)}
V1=${RTD_SHARED_DIR:-../shared}/testdata/gotrace/v1
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
. "$HERE/../wait.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rtd-goan.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
finish() {
  if [ "$fail" -ne 0 ]; then echo "$fail failed"; exit 1; fi
  echo "all passed"; exit 0
}
command -v python3 >/dev/null || { echo "skip: python3 is needed to read go tool trace's pages"; exit 77; }

# need_go V: GO=/usr/lib/go-V/bin/go, or exit 77 saying why.
need_go() {
  GO=/usr/lib/go-$1/bin/go
  [ -x "$GO" ] || { echo "skip: Go $1 is not installed ($GO; Debian's golang-$1-go, see scripts/install-deps.sh)"; exit 77; }
  "$GO" version | grep -q "go$1" || { echo "skip: $GO is not Go $1"; exit 77; }
}

# build_target NAME: tests/targets/NAME built with $GO (once per build
# tree: tests/targets/go_build.sh), in $B/NAME.
build_target() {
  local p
  p=$(bash "$SRCDIR/tests/targets/go_build.sh" "$GO" "tests/targets/$1") || return 1
  B=$(dirname "$p")
}

# analyses_run TRACE: every analysis runs to the end (the sanitizer build
# runs them where it leaves the comparison with Go to the normal build).
analyses_run() {
  local t=$1 x
  for x in "pprof -t net -f raw" "pprof -t sync -f raw" "pprof -t syscall -f raw" "pprof -t sched -f raw" \
           "pprof -t cpu -f raw" "goroutines --json --top 0" "goroutines --group-by region --json" \
           "tasks --regions --json" "gc --json" "gc --per-proc --util stw,background,assist,sweep --json" \
           "pprof -t sched -f raw --go 1.23"; do
    "$R" gotrace $x "$t" >/dev/null 2>"$TMP/err" || bad "$(basename "$t"): gotrace $x: $(cat "$TMP/err")"
  done
  ok "$(basename "$t"): every analysis runs"
}
# gotool TRACE: rtdiag's analyses against $GO's go tool trace (pages, profiles, MMU).
gotool() {
  mkdir -p "$TMP/work"
  python3 "$HERE/gotool_cmp.py" "$GO" "$R" "$1" "$TMP/work" >"$TMP/cmp.out" 2>&1
  local rc=$?
  cat "$TMP/cmp.out"
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || fail=$((fail+1))
}
