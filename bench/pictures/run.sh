#!/usr/bin/env bash
# bench/pictures/run.sh - pictures (issue #15): time and peak RSS of each
# output format on the largest inputs, and the Go timeline against Go
# 1.23's `go tool trace` preparing its view of the same trace (until its
# first page is served), in one run, with the ratios.
#
#   bench/pictures/run.sh [BUILD_DIR]     (default build/; bench/run.sh passes it)
#   GO_MB=1024 bench/pictures/run.sh      a 1 GB Go trace (default 64 MB)
#   NT_MB=1024 bench/pictures/run.sh      also a 1 GB nettrace (default: none)
#   BENCH_CACHE=DIR BENCH_TMP=DIR         where the inputs are kept and outputs go
#                                         (large: put them on disk, not /tmp or /dev/shm)
#
# NT_MB: a real .NET 10 program (tests/targets/nettrace-app bench N:
# EventSource events as fast as it can, allocations and GCs) records the
# trace with the runtime's EventPipe file output (about 16.5 MB per
# million events); it is cached in the build folder like the Go trace.
# Each big input is also converted at a tenth of its size, so the peak RSS
# printed for both shows whether memory grows with the input.
#
# The Go trace comes from tests/integration/pictures/gen (a busy program
# of ours: channels, mutexes, GC, syscalls, tasks, regions, logs, CPU
# samples), built with Debian's Go 1.23; it is cached in the build folder.
# Run it under flock /work/locks/bench.lock on a shared machine.
set -eu
cd "$(dirname "$0")/../.."
B=$(cd "${1:-build}" && pwd)
R=$B/rtdiag
GO=/usr/lib/go-1.23/bin/go
GO_MB=${GO_MB:-64}
# ../shared beside the repository (a worktree: beside its main checkout)
SH=${RTD_SHARED_DIR:-../shared}
[ -d "$SH" ] || SH=$(cd "$(git rev-parse --git-common-dir)/../.." && pwd)/shared
T=$SH/testdata
OUT=$(mktemp -d "${BENCH_TMP:-/tmp}/rtd-bench-pictures-XXXXXX")
trap 'rm -rf "$OUT"; [ -n "${TP:-}" ] && kill $TP 2>/dev/null || true' EXIT
[ -x "$R" ] || { echo "no $R: build first"; exit 1; }
[ -x "$GO" ] || { echo "Go 1.23 ($GO) missing"; exit 1; }
CACHE=${BENCH_CACHE:-$B/bench-pictures}
mkdir -p "$CACHE"
HOME=$CACHE GOCACHE=$CACHE/gocache GO111MODULE=off "$GO" build -o "$CACHE/gen" tests/integration/pictures/gen/main.go
TRACE=$CACHE/go-${GO_MB}MB.trace
if [ ! -s "$TRACE" ]; then
  # about 2.9 KB of trace a round with Go 1.23
  "$CACHE/gen" "$TRACE" $((GO_MB * 1024 * 1024 / 2900)) 2>/dev/null
fi
size=$(stat -c %s "$TRACE")
echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== Go trace: $TRACE, $((size / 1048576)) MB"

measure() { # label cmd... -> "label wall-seconds cpu-seconds peakKB"
  local label=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$OUT/t" "$@" >/dev/null 2>"$OUT/err" || { echo "$label: failed: $(tail -2 "$OUT/err")"; return 1; }
  read -r s kb u sy <"$OUT/t"
  c=$(echo "$u + $sy" | bc)
  printf '%-34s %8.2f s %7.2f s CPU %9d KB\n' "$label" "$s" "$c" "$kb"
  echo "$s $kb $c" >"$OUT/last"
}

echo "-- rtdiag convert (output to a file in $OUT)"
measure "Go trace -> perfetto (default)" "$R" convert "$TRACE" -o "$OUT/go.pftrace"
read -r r_s r_kb r_c <"$OUT/last"
echo "   perfetto output: $(( $(stat -c %s "$OUT/go.pftrace") / 1048576 )) MB"
rm -f "$OUT/go.pftrace"
# the default decodes a Go 1.22+ trace on a second thread only when the
# load average leaves a core idle: both ways forced, for the comparison
RTDIAG_THREADS=1 measure "Go trace -> perfetto (1 thread)" "$R" convert "$TRACE" -o "$OUT/go.pftrace"
read -r r1_s r1_kb r1_c <"$OUT/last"
rm -f "$OUT/go.pftrace"
RTDIAG_THREADS=2 measure "Go trace -> perfetto (2 threads)" "$R" convert "$TRACE" -o "$OUT/go.pftrace"
read -r r2_s r2_kb r2_c <"$OUT/last"
rm -f "$OUT/go.pftrace"
if [ "$GO_MB" -le 128 ]; then
  measure "Go trace -> chrome-json" "$R" convert "$TRACE" -f chrome-json -o "$OUT/go.json"
  rm -f "$OUT/go.json"
else
  echo "   (Chrome JSON of a $GO_MB MB trace not written: tens of GB of text)"
fi

# the largest nettrace vectors: profile formats and timelines
for v in eventpipe-dotnetcore2.1-linux-x64-objver3.netperf eventpipe-dotnetcore3.0-win-x64-objver4.nettrace; do
  [ -f "$T/nettrace/$v" ] || continue
  for f in folded pprof svg speedscope perfetto chrome-json; do
    measure "${v:0:28}.. -> $f" "$R" convert "$T/nettrace/$v" -f $f -o "$OUT/x.$f"
  done
done

# a Go trace a tenth the size: does peak RSS grow with the input?
TRACE10=$CACHE/go-$((GO_MB / 10))MB.trace
[ -s "$TRACE10" ] || "$CACHE/gen" "$TRACE10" $((GO_MB * 1024 * 1024 / 29000)) 2>/dev/null
measure "Go trace / 10 -> perfetto" "$R" convert "$TRACE10" -o "$OUT/go10.pftrace"
echo "   perfetto output: $(( $(stat -c %s "$OUT/go10.pftrace") / 1048576 )) MB from $(( $(stat -c %s "$TRACE10") / 1048576 )) MB"
rm -f "$OUT/go10.pftrace"

NT_MB=${NT_MB:-0}
if [ "$NT_MB" -gt 0 ]; then
  if command -v dotnet >/dev/null; then
    export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
    mkdir -p "$CACHE/nt-src"
    cp tests/targets/nettrace-app/Program.cs tests/targets/nettrace-app/nettrace-app.csproj "$CACHE/nt-src/"
    dotnet build "$CACHE/nt-src/nettrace-app.csproj" -c Release -o "$CACHE/nt-app" >"$OUT/nt-build.log" 2>&1 ||
      { echo "dotnet build failed: $(tail -3 "$OUT/nt-build.log")"; exit 1; }
    for mb in $((NT_MB / 10)) "$NT_MB"; do
      NT=$CACHE/nt-${mb}MB.nettrace
      if [ ! -s "$NT" ]; then
        DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath=$NT \
        DOTNET_EventPipeConfig='Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:0x1:5,Rtdiag-Test:0xFFFFFFFFFFFF:5' \
          "$CACHE/nt-app/nettrace-app" bench $((mb * 63500)) >/dev/null
      fi
      echo "== nettrace: $NT, $(( $(stat -c %s "$NT") / 1048576 )) MB (nettrace-app bench, .NET EventPipe)"
      measure "nettrace ${mb} MB -> perfetto" "$R" convert "$NT" -o "$OUT/nt.pftrace"
      echo "   perfetto output: $(( $(stat -c %s "$OUT/nt.pftrace") / 1048576 )) MB"
      rm -f "$OUT/nt.pftrace"
    done
  else
    echo "-- nettrace: no dotnet SDK, not recorded"
  fi
fi

if [ "$GO_MB" -gt 128 ]; then
  # go tool trace holds ~200 bytes of memory per byte of trace (2.5 GB for
  # 12 MB here): past this size it cannot run on the machine
  echo "-- go tool trace: not run for a $GO_MB MB trace (it would need about $((GO_MB * 200 / 1024)) GB)"
  exit 0
fi
echo "-- go tool trace (Go 1.23): parse and prepare the view until its first page is served"
TOOL=$("$GO" env GOTOOLDIR)/trace
PORT=$((20000 + RANDOM % 20000))
start=$(date +%s.%N)
BROWSER=true "$TOOL" -http=127.0.0.1:$PORT "$TRACE" >"$OUT/tool.log" 2>&1 &
TP=$!
until curl -s -o /dev/null -m 600 "http://127.0.0.1:$PORT/"; do
  kill -0 $TP 2>/dev/null || { echo "go tool trace exited: $(tail -3 "$OUT/tool.log")"; exit 1; }
  sleep 0.05
done
end=$(date +%s.%N)
g_kb=$(awk '/VmHWM/ {print $2}' /proc/$TP/status)
# its CPU time so far (user + system, in clock ticks): on a loaded machine
# CPU time compares the work done, wall time the waiting too
g_c=$(awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' /proc/$TP/stat)
g_s=$(echo "$end - $start" | bc)
kill $TP; wait $TP 2>/dev/null || true; TP=
printf '%-34s %8.2f s %7.2f s CPU %9d KB\n' "go tool trace: first page" "$g_s" "$g_c" "$g_kb"
echo "== ratio: rtdiag's Go timeline (Perfetto) is $(echo "scale=1; $g_s / $r_s" | bc)x faster than go tool trace's first page in wall time, $(echo "scale=1; $g_c / $r_c" | bc)x in CPU time, with $(echo "scale=1; $g_kb / $r_kb" | bc)x less peak RSS (goal: >= 10x, >= 10x; load $(cut -d' ' -f1-3 /proc/loadavg))"
echo "   (on one thread: $(echo "scale=1; $g_s / $r1_s" | bc)x in wall time, $(echo "scale=1; $g_c / $r1_c" | bc)x in CPU time, $(echo "scale=1; $g_kb / $r1_kb" | bc)x less peak RSS)"
echo "   (on two threads: $(echo "scale=1; $g_s / $r2_s" | bc)x in wall time, $(echo "scale=1; $g_c / $r2_c" | bc)x in CPU time, $(echo "scale=1; $g_kb / $r2_kb" | bc)x less peak RSS)"
