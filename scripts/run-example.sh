#!/usr/bin/env bash
# rtdiag's main job on a built-in example: build the .NET demo program in
# examples/dotnet-demo, start it, profile it for five seconds, print its
# hottest methods and write the folded stacks; then sample it through the
# kernel (perf_event) for a mixed-mode flame graph.
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
"$R" dotnet profile -p "$PID" --duration 5 -o "$OUT" --top 10
echo "== folded stacks written to $OUT ($(wc -l <"$OUT") stacks)"
# the same process through the kernel: managed (JIT), runtime, libc and
# kernel frames in one stack, as a flame graph a browser opens
SVG="$B/dotnet-demo.svg"
echo "== rtdiag perf record -p $PID -d 3 -o $SVG -o - (mixed-mode: .NET JIT, native, kernel)"
# one recording: the flame graph and the table printed here are the same
# samples
if "$R" perf record -p "$PID" -d 3 -o "$SVG" -o - --top 10 2>"$B/perf-record.err"; then
  echo "== flame graph of the same recording written to $SVG (open it in a browser)"
else
  echo "== perf record could not run here: $(head -1 "$B/perf-record.err")"
fi
