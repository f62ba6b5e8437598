#!/usr/bin/env bash
# build.sh NAME FROM [AS [DOTNET-BUILD-ARGS...]] - build the .NET program
# FROM/NAME (tests/targets or examples) with `dotnet build -c Release`
# (and ARGS: another target framework, a self-contained runtime) into
# $RTD_BINARY_DIR/dotnet-targets/AS (AS defaults to NAME), once, under a
# lock (ctest runs tests in parallel); prints that directory. The log is
# dotnet-targets/AS.log. The sources are copied first so obj/ never lands
# in the source tree.
set -eu
name=$1 from=$2 as=${3:-$1}
shift 2
[ $# -gt 0 ] && shift
SRC=${RTD_SOURCE_DIR:?} BIN=${RTD_BINARY_DIR:?}
out="$BIN/dotnet-targets/$as"
mkdir -p "$BIN/dotnet-targets"
exec 9>"$BIN/dotnet-targets/.lock"
flock 9   # fd 9 is closed for dotnet: a build server inheriting it would hold the lock
stamp="$out/.stamp"
if [ ! -f "$stamp" ] || [ -n "$(find "$SRC/$from/$name" -newer "$stamp" -type f | head -1)" ]; then
  rm -rf "$BIN/dotnet-targets/src/$as"
  mkdir -p "$BIN/dotnet-targets/src"
  cp -r "$SRC/$from/$name" "$BIN/dotnet-targets/src/$as"
  if ! DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 \
       dotnet build -c Release "$@" -o "$out" "$BIN/dotnet-targets/src/$as" \
       >"$BIN/dotnet-targets/$as.log" 2>&1 9>&-; then
    echo "dotnet build of $as failed:" >&2
    tail -20 "$BIN/dotnet-targets/$as.log" >&2
    exit 1
  fi
  touch "$stamp"
fi
echo "$out"
