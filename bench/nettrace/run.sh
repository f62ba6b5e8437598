#!/usr/bin/env bash
# bench/nettrace: `rtdiag nettrace stats` on a >=100 MB real trace made by
# tests/targets/nettrace-app, side by side in one run with TraceEvent's
# EventPipeEventSource (NuGet Microsoft.Diagnostics.Tracing.TraceEvent 4.0.0)
# and with `cat FILE > /dev/null`. Prints MB/s, events/s, peak RSS, ratios.
# Usage: bench/nettrace/run.sh [BUILD_DIR]   (env NT_BENCH_EVENTS to resize)
set -u
B=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
out=$src/bench/out/nettrace
mkdir -p "$out"
R=$B/rtdiag
[ -x "$R" ] || { echo "no $R: build first"; exit 1; }
command -v dotnet >/dev/null || { echo "SKIP: no dotnet"; exit 0; }
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
T=$out/bench.nettrace
N=${NT_BENCH_EVENTS:-6500000}
if [ ! -s "$T" ]; then
  echo "building the test program and writing a trace of $N event batches..."
  mkdir -p "$out/app-src"
  cp "$src"/tests/targets/nettrace-app/{Program.cs,nettrace-app.csproj} "$out/app-src/"
  dotnet build "$out/app-src/nettrace-app.csproj" -c Release -o "$out/app" >"$out/app-build.log" 2>&1 || { tail "$out/app-build.log"; exit 1; }
  DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath=$T \
  DOTNET_EventPipeConfig='Rtdiag-Test:0xFFFFFFFFFFFF:5,Microsoft-Windows-DotNETRuntime:0x1:5,Microsoft-DotNETCore-SampleProfiler:0:5' \
    "$out/app/nettrace-app" bench "$N" || exit 1
fi
size=$(stat -c %s "$T")
mb=$(awk -v s="$size" 'BEGIN{printf "%.1f", s/1e6}')
echo "trace: $T ($mb MB)"

te=""
if [ ! -x "$out/te/te-count" ]; then
  mkdir -p "$out/te-src"
  cp "$here"/traceevent/{Program.cs,te-count.csproj} "$out/te-src/"
  if ! dotnet build "$out/te-src/te-count.csproj" -c Release -o "$out/te" >"$out/te-build.log" 2>&1; then
    echo "TraceEvent: could not build (NuGet feed lacks Microsoft.Diagnostics.Tracing.TraceEvent?):"; tail -3 "$out/te-build.log"
  fi
fi
[ -x "$out/te/te-count" ] && te="$out/te/te-count"

cat "$T" >/dev/null   # warm the page cache for everyone
t() { /usr/bin/time -f "%e %M" -o "$out/time" "$@" >"$out/stdout" 2>"$out/stderr"; read -r secs rss <"$out/time"; }
best() { # runs a command 3 times, keeps the fastest
  local b=999999 r=0
  for i in 1 2 3; do t "$@"; if awk -v a="$secs" -v b="$b" 'BEGIN{exit !(a<b)}'; then b=$secs; r=$rss; fi; done
  secs=$b; rss=$r
}
best cat "$T"; cat_s=$secs; cat_rss=$rss
best "$R" nettrace stats "$T"; rt_s=$secs; rt_rss=$rss
events=$(awk -F': ' '/^events:/ {print $2}' "$out/stdout")
printf "%-22s %8s %10s %14s %10s\n" tool seconds MB/s events/s "peak RSS"
row() { printf "%-22s %8.2f %10.1f %14.0f %8.1f MB\n" "$1" "$2" "$(awk -v s="$size" -v t="$2" 'BEGIN{print s/1e6/(t>0?t:1e-9)}')" "$(awk -v e="$3" -v t="$2" 'BEGIN{print e/(t>0?t:1e-9)}')" "$(awk -v k="$4" 'BEGIN{print k/1024}')"; }
row "cat > /dev/null" "$cat_s" 0 "$cat_rss"
row "rtdiag nettrace stats" "$rt_s" "$events" "$rt_rss"
if [ -n "$te" ]; then
  best "$te" "$T"; te_s=$secs; te_rss=$rss
  te_events=$(awk '{print $2}' "$out/stdout")
  row "TraceEvent (C#)" "$te_s" "$te_events" "$te_rss"
  [ "$te_events" = "$events" ] || echo "note: TraceEvent counted $te_events events, rtdiag $events"
  awk -v a="$te_s" -v b="$rt_s" 'BEGIN{printf "rtdiag vs TraceEvent: %.1fx faster (goal >= 10x)\n", a/b}'
else
  echo "TraceEvent: not available on this machine"
fi
awk -v a="$rt_s" -v b="$cat_s" 'BEGIN{printf "rtdiag vs cat: %.1fx the time of cat (goal <= 4x)\n", a/(b>0?b:0.001)}'
awk -v k="$rt_rss" 'BEGIN{printf "rtdiag peak RSS: %.1f MB (goal < 64 MB)\n", k/1024}'
