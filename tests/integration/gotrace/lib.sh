# lib.sh - shared by the gotrace integration tests (sourced).
set -u
R=${RTDIAG:?RTDIAG not set}
V1=${RTD_SHARED_DIR:-../shared}/testdata/gotrace/v1
V2=${RTD_SHARED_DIR:-../shared}/testdata/gotrace/v2
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
# Debian's Go 1.19 (the anchor), or a go on PATH that is 1.19.
find_go() {
  GO=""
  for c in /usr/lib/go-1.19/bin/go "$(command -v go 2>/dev/null)"; do
    [ -n "$c" ] && [ -x "$c" ] || continue
    if "$c" version 2>/dev/null | grep -q 'go1\.19'; then GO=$c; return 0; fi
  done
  return 1
}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rtd-gotrace.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
finish() {
  if [ "$fail" -ne 0 ]; then echo "$fail failed"; exit 1; fi
  echo "all passed"; exit 0
}
