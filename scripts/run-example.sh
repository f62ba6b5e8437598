#!/usr/bin/env bash
# rtdiag's main job on a built-in example: build the .NET demo program in
# examples/dotnet-demo, start it, profile it for five seconds, print its
# hottest methods and write the folded stacks.
set -euo pipefail
B=${1:-build}
R="$B/rtdiag"
SRC=$(cd "$(dirname "$0")/.." && pwd)
echo "== rtdiag $("$R" --version | cut -d' ' -f2): built-in example"
if ! command -v dotnet >/dev/null 2>&1; then
  echo "no .NET SDK (dotnet) on PATH: the demo needs it; install it and rerun"
  exit 1
fi
echo "== building examples/dotnet-demo"
DEMO=$(RTD_SOURCE_DIR="$SRC" RTD_BINARY_DIR="$(cd "$B" && pwd)" \
       bash "$SRC/tests/integration/dotnet/build.sh" dotnet-demo examples)
"$DEMO/dotnet-demo" 60 >/dev/null &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true' EXIT
for i in $(seq 100); do ls /tmp/dotnet-diagnostic-$PID-* >/dev/null 2>&1 && break; sleep 0.05; done
echo "== rtdiag dotnet ps"
"$R" dotnet ps
echo "== rtdiag dotnet info -p $PID"
"$R" dotnet info -p "$PID"
OUT="$B/dotnet-demo.folded"
echo "== rtdiag dotnet profile -p $PID --duration 5"
"$R" dotnet profile -p "$PID" --duration 5 -o "$OUT" --top
echo "== folded stacks written to $OUT ($(wc -l <"$OUT") stacks)"
