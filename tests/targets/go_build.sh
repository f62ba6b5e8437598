#!/usr/bin/env bash
# go_build.sh GO DIR [OUT [GO-BUILD-ARGS...]] - build DIR/main.go (DIR
# relative to the source tree: tests/targets/NAME, ...) with GO (a path to
# a go command, or a version such as 1.22 for Debian's /usr/lib/go-1.22)
# into $RTD_BINARY_DIR/go-targets/<go version>/OUT (OUT defaults to DIR's
# last component), once per build tree and whenever main.go is newer;
# prints the program's path. Status 1 (with the compiler's output on
# stderr) when the build fails, 77 when that Go is not installed.
#
# Builds run one at a time under a lock (ctest runs tests in parallel and
# the CMake fixture go_targets builds them all first) and share Go's build
# cache ($HOME's, else one in the build tree), so a fresh machine compiles
# the standard library once per Go version, not once per test. No timeout
# of its own: a cold build on a loaded 2-core box takes minutes, and the
# test that asked (or the fixture, with its long bound) is the bound.
set -u
go=$1 dir=$2 out=${3:-$(basename "$2")}
shift 2
[ $# -gt 0 ] && shift
case $go in */*) ;; *) go=/usr/lib/go-$go/bin/go ;; esac
[ -x "$go" ] || { echo "$go is not installed" >&2; exit 77; }
SRC=${RTD_SOURCE_DIR:?} BIN=${RTD_BINARY_DIR:?}
v=$("$go" version | awk '{print $3}')
[ -n "$v" ] || { echo "$go does not run" >&2; exit 1; }
B=$BIN/go-targets/$v
mkdir -p "$B"
exec 9>"$BIN/go-targets/.lock"
flock 9
if [ ! -x "$B/$out" ] || [ "$SRC/$dir/main.go" -nt "$B/$out" ]; then
  cache="$BIN/go-targets/gocache"
  [ -n "${HOME:-}" ] && [ -w "$HOME" ] && cache=$(HOME=$HOME "$go" env GOCACHE 2>/dev/null)
  t0=$(date +%s)
  if ! (cd "$SRC/$dir" && GOCACHE="${cache:-$BIN/go-targets/gocache}" GOPATH="$BIN/go-targets/gopath" \
          GOTOOLCHAIN=local GOPROXY=off GOFLAGS= GO111MODULE=off \
          "$go" build "$@" -o "$B/$out.new" main.go) 9>&-; then
    echo "$v build of $dir failed" >&2
    exit 1
  fi
  mv "$B/$out.new" "$B/$out"
  echo "note: built $dir with $v in $(( $(date +%s) - t0 )) s" >&2
fi
echo "$B/$out"
