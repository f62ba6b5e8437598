#!/usr/bin/env bash
# bench/dotnet/heap_counters.sh [BUILD] - rtdiag's gcdump of a large heap
# and its counters monitor. dotnet-gcdump and dotnet-counters are not
# served by this machine's NuGet: counters are compared with
# bench/dotnet/te-counters, Microsoft.Diagnostics.NETCore.Client +
# TraceEvent doing the same work (built here from NuGet); the gcdump is
# put beside ClrMD (tests/targets/clrmd-heap: Microsoft.Diagnostics.Runtime
# reading the same heap through the runtime's DAC, type histogram of the
# objects reachable from its roots and of the whole heap) - not the same
# work as dotnet-gcdump's (no dominators, no graph kept), but the
# independent reader that is served:
#   gcdump: tests/targets/dotnet-kinds (heap) keeping K tree nodes, each with a
#           byte[100] (2K+1 objects; HEAP_K=6000000 by default, ~1 GB of
#           heap): wall time, CPU and peak RSS of 'rtdiag dotnet gcdump',
#           then of clrmd-heap
#   counters: time from the command's start to the first System.Runtime
#           EventCounters value on stdout, CPU and peak RSS over 5 s, for
#           'rtdiag dotnet counters monitor' (piped: a line per value) and
#           te-counters
set -uo pipefail
B=$(cd "${1:-build}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
R="$B/rtdiag"
K=${HEAP_K:-6000000}
export RTD_SOURCE_DIR=$SRC RTD_BINARY_DIR=$B DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
HD=$(bash "$SRC/tests/integration/dotnet/build.sh" dotnet-kinds tests/targets) || exit 1
W=$(mktemp -d /tmp/rtd-heap.XXXXXX)
HP=
trap '[ -n "$HP" ] && kill $HP 2>/dev/null; rm -rf "$W"' EXIT
"$HD/dotnet-kinds" "$W" heap "$K" >/dev/null 2>&1 &
HP=$!
for i in $(seq 600); do [ -s "$W/ready" ] && break; sleep 0.2; done
[ -s "$W/ready" ] || { echo "dotnet-kinds heap did not start"; exit 1; }
heap_mb=$(awk '/^VmRSS/{printf "%.0f", $2/1024}' /proc/$HP/status)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f '%e %U %S %M' -o "$W/t" "$R" dotnet gcdump -p "$HP" --format json -o "$W/h.json" 2>"$W/err" \
  || { cat "$W/err"; exit 1; }
read -r e u s m <"$W/t"
objs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["objects"])' "$W/h.json")
printf 'gcdump: %s objects (target RSS %s MB): %.2f s wall, %.2f s CPU, peak RSS %.0f MB (%.0f bytes/object)\n' \
  "$objs" "$heap_mb" "$e" "$(echo "$u + $s" | bc -l)" "$(echo "$m / 1024" | bc -l)" "$(echo "$m * 1024 / $objs" | bc -l)"
CM=$(bash "$SRC/tests/integration/dotnet/build.sh" clrmd-heap tests/targets) || CM=
if [ -n "$CM" ]; then
  /usr/bin/time -f '%e %U %S %M' -o "$W/tc" "$CM/clrmd-heap" "$HP" >"$W/clrmd.txt" 2>"$W/clrmd.err" \
    && read -r e2 u2 s2 m2 <"$W/tc" \
    && printf 'ClrMD:  %s objects reachable, %s on the heap: %.2f s wall, %.2f s CPU, peak RSS %.0f MB\n' \
         "$(awk -F'\t' '$1=="R"{n+=$2} END{print n}' "$W/clrmd.txt")" "$(awk -F'\t' '$1=="H"{n+=$2} END{print n}' "$W/clrmd.txt")" \
         "$e2" "$(echo "$u2 + $s2" | bc -l)" "$(echo "$m2 / 1024" | bc -l)" \
    && printf 'gcdump/ClrMD: wall %.2fx, CPU %.2fx, peak RSS %.2fx\n' "$(echo "$e / $e2" | bc -l)" \
         "$(echo "($u + $s) / ($u2 + $s2)" | bc -l)" "$(echo "$m / $m2" | bc -l)" \
    || { echo "clrmd-heap failed:"; tail -3 "$W/clrmd.err"; }
fi
TE="$B/bench-tools/te-counters/te-counters"
if [ ! -x "$TE" ]; then
  mkdir -p "$B/bench-tools/te-counters-src"
  cp "$SRC"/bench/dotnet/te-counters/{Program.cs,te-counters.csproj} "$B/bench-tools/te-counters-src/"
  dotnet build -c Release -o "$B/bench-tools/te-counters" "$B/bench-tools/te-counters-src/te-counters.csproj" \
    >"$B/bench-tools/te-counters.log" 2>&1 || { echo "te-counters: could not build"; tail -3 "$B/bench-tools/te-counters.log"; TE=; }
fi
# run_first NAME CMD...: seconds from the start to the first line on stdout
run_first() {
  local name=$1; shift
  local t0 t1
  t0=$(date +%s%N)
  /usr/bin/time -f '%e %U %S %M' -o "$W/t.$name" "$@" 2>/dev/null |
    { read -r l; date +%s%N >"$W/first.$name"; wc -l >"$W/n.$name"; }
  t1=$(cat "$W/first.$name")
  read -r e u s m <"$W/t.$name"
  printf '  %-12s first value %.2f s, CPU %.3f s, peak RSS %.1f MB, %d values\n' "$name" \
    "$(echo "($t1 - $t0) / 1000000000" | bc -l)" "$(echo "$u + $s" | bc -l)" "$(echo "$m / 1024" | bc -l)" \
    "$(( $(cat "$W/n.$name") + 1 ))"
}
echo "counters, System.Runtime EventCounters every second, 5 s:"
run_first rtdiag "$R" dotnet counters monitor -p "$HP" --counters 'System.Runtime' --duration 5
[ -n "$TE" ] && run_first te-counters "$TE" "$HP" 5
