#!/usr/bin/env bash
# bench/dotnet/run.sh [BUILD] - rtdiag's .NET IPC client against dotnet-trace,
# side by side in one run:
#   1. `ps`: listing .NET processes (3 started here, plus any others) - rtdiag dotnet ps vs dotnet-trace ps
#   2. attach to first event: attach, start a session, see the first event of
#      the target's own EventSource, stop, exit - rtdiag (bench helper on the
#      library, no rundown) vs dotnet-trace collect --stopping-event-provider-name
#      --rundown false
#   3. the target's slowdown while observed (bench/dotnet/slowdown.sh)
# dotnet-trace is installed from NuGet into BUILD/bench-tools (pinned).
set -uo pipefail
B=$(cd "${1:-build}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
R="$B/rtdiag"
DT="$B/bench-tools/dotnet-trace"
[ -x "$DT" ] || dotnet tool install --tool-path "$B/bench-tools" dotnet-trace --version 10.0.750501 >/dev/null 2>&1 \
  || { echo "could not install dotnet-trace from NuGet"; exit 1; }
export RTD_SOURCE_DIR=$SRC RTD_BINARY_DIR=$B
T=$(bash "$SRC/tests/integration/dotnet/build.sh" dotnet-target tests/targets)
W=$(mktemp -d /tmp/rtd-bench.XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill $p 2>/dev/null; done; rm -rf "$W"' EXIT
cc -O2 -I"$SRC/include" -o "$W/first_event" "$SRC/bench/dotnet/first_event.c" \
   "$B/librtdiag.a" $(pkg-config --libs libtraceevent libtracefs zlib libelf) -lpthread -lm

ms() { date +%s%N; }
for i in 1 2 3; do mkdir -p "$W/t$i"; "$T/dotnet-target" "$W/t$i" >/dev/null 2>&1 & PIDS+=($!); done
sleep 1.5
P=${PIDS[0]}
echo "rtdiag $("$R" --version | cut -d' ' -f2) vs dotnet-trace $("$DT" --version | cut -d+ -f1)"

N=20
"$R" dotnet ps >/dev/null; "$DT" ps >/dev/null
a=$(ms); for i in $(seq $N); do "$R" dotnet ps >/dev/null; done; b=$(ms)
for i in $(seq $N); do "$DT" ps >/dev/null; done; c=$(ms)
r_ps=$(( (b-a)/N/1000 )); d_ps=$(( (c-b)/N/1000 ))
NP=$(( $("$R" dotnet ps | wc -l) - 1 ))
printf "ps (%d .NET processes, mean of %d):    rtdiag %6d us   dotnet-trace %8d us   ratio %.1fx\n" \
  $NP $N $r_ps $d_ps "$(echo "$d_ps / $r_ps" | bc -l)"

N=5
rf=0; rt=0; dtt=0
for i in $(seq $N); do
  read -r f t < <("$W/first_event" "$P" Rtdiag-Test)
  rf=$(echo "$rf + $f" | bc -l); rt=$(echo "$rt + $t" | bc -l)
  a=$(ms)
  "$DT" collect -p "$P" --providers Rtdiag-Test:0xFFFFFFFFFFFFFFFF:5 --rundown false \
     --stopping-event-provider-name Rtdiag-Test -o "$W/dt.nettrace" >/dev/null 2>&1 </dev/null
  b=$(ms); dtt=$(echo "$dtt + ($b - $a)/1000000" | bc -l)
done
printf "attach->first event->stop->exit (mean of %d): rtdiag %6.1f ms (first event at %.1f ms)   dotnet-trace %7.1f ms   ratio %.1fx\n" \
  $N "$(echo "$rt/$N" | bc -l)" "$(echo "$rf/$N" | bc -l)" "$(echo "$dtt/$N" | bc -l)" "$(echo "$dtt/$rt" | bc -l)"

# 3. the target's slowdown while observed: bench/dotnet/slowdown.sh (7
#    alternating runs per tool, medians and ranges, the tools' own CPU):
#    the CPU profile and collect against dotnet-trace, then the alloc,
#    lock and exception sessions on the mixed workload
bash "$SRC/bench/dotnet/slowdown.sh" "$B"
MODE=mixed TOOLS="none rt-alloc dt-alloc rt-lock dt-lock rt-exception dt-exception" \
  bash "$SRC/bench/dotnet/slowdown.sh" "$B"
# 4. gcdump of a large heap and the counters monitor (rtdiag alone)
bash "$SRC/bench/dotnet/heap_counters.sh" "$B"
