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
# Each tool runs 5 times; the best wall time, the best CPU time (perf's
# task-clock when perf works, else user+sys) and the peak RSS are kept.
# The machine is shared, so CPU time is the steadier figure.
have_perf=0
perf stat -x, -e task-clock true >/dev/null 2>&1 && have_perf=1
measure() {
  bw=999999; bc=999999; rss=0
  for i in 1 2 3 4 5; do
    # wall time and peak RSS of the tool alone
    /usr/bin/time -f "%e %M %U %S" -o "$out/time" "$@" >"$out/stdout" 2>"$out/stderr"
    read -r w r u s <"$out/time"
    c=$(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}')
    if [ $have_perf = 1 ]; then # finer CPU time
      perf stat -x, -e task-clock -o "$out/perf" "$@" >/dev/null 2>&1
      c=$(awk -F, '/task-clock/ {print $1/1000}' "$out/perf")
    fi
    bw=$(awk -v a="$w" -v b="$bw" 'BEGIN{print (a<b)?a:b}')
    bc=$(awk -v a="$c" -v b="$bc" 'BEGIN{print (a<b)?a:b}')
    [ "$r" -gt "$rss" ] && rss=$r
  done
}
measure cat "$T"; cat_w=$bw; cat_c=$bc; cat_rss=$rss
measure "$R" nettrace stats "$T"; rt_w=$bw; rt_c=$bc; rt_rss=$rss
events=$(awk -F': ' '/^events:/ {print $2}' "$out/stdout")
printf "%-22s %8s %8s %10s %14s %10s\n" tool wall-s cpu-s MB/s events/s "peak RSS"
row() { # name wall cpu events rss_kb  (rates from CPU time)
  printf "%-22s %8.3f %8.3f %10.1f %14.0f %8.1f MB\n" "$1" "$2" "$3" \
    "$(awk -v s="$size" -v t="$3" 'BEGIN{print s/1e6/(t>0?t:1e-9)}')" \
    "$(awk -v e="$4" -v t="$3" 'BEGIN{print e/(t>0?t:1e-9)}')" \
    "$(awk -v k="$5" 'BEGIN{print k/1024}')"
}
row "cat > /dev/null" "$cat_w" "$cat_c" 0 "$cat_rss"
row "rtdiag nettrace stats" "$rt_w" "$rt_c" "$events" "$rt_rss"
if [ -n "$te" ]; then
  measure "$te" "$T"; te_w=$bw; te_c=$bc; te_rss=$rss
  te_events=$(awk '{print $2}' "$out/stdout")
  row "TraceEvent (C#)" "$te_w" "$te_c" "$te_events" "$te_rss"
  [ "$te_events" = "$events" ] || echo "note: TraceEvent counted $te_events events, rtdiag $events"
  awk -v a="$te_c" -v b="$rt_c" -v c="$te_w" -v d="$rt_w" 'BEGIN{printf "rtdiag vs TraceEvent: %.1fx its events/s on CPU time, %.1fx on wall time (goal >= 10x)\n", a/b, c/d}'
else
  echo "TraceEvent: not available on this machine"
fi
awk -v a="$rt_w" -v b="$cat_w" -v c="$rt_c" -v d="$cat_c" 'BEGIN{printf "rtdiag vs cat: %.1fx the wall time of cat, %.1fx its CPU time (goal <= 4x)\n", a/(b>0?b:0.001), c/(d>0?d:0.001)}'
awk -v k="$rt_rss" 'BEGIN{printf "rtdiag peak RSS: %.1f MB (goal < 64 MB)\n", k/1024}'
