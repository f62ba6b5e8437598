#!/usr/bin/env bash
# gcdump_tool.sh - prints the path of dotnet-gcdump 10.0.750501 (the NuGet
# tool, the reader rtdiag's .gcdump files are checked with), installed
# once per build dir under $RTD_BINARY_DIR/dotnet-tools, under a lock
# (ctest runs tests in parallel). When it cannot be installed: exit 1 and
# why on stdout (the caller skips and says so).
set -u
VER=10.0.750501
BIN=${RTD_BINARY_DIR:?}
TOOLS="$BIN/dotnet-tools/dotnet-gcdump-$VER"
DG="$TOOLS/dotnet-gcdump"
mkdir -p "$BIN/dotnet-tools"
(
  exec 9>"$BIN/dotnet-tools.lock"
  flock 9
  [ -x "$DG" ] || DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 \
    dotnet tool install --tool-path "$TOOLS" dotnet-gcdump --version "$VER" \
    >"$TOOLS.log" 2>&1 9>&-
)
[ -x "$DG" ] || { echo "dotnet-gcdump $VER did not install from NuGet: $(tail -3 "$TOOLS.log" 2>/dev/null | tr '\n' ' ')"; exit 1; }
echo "$DG"
