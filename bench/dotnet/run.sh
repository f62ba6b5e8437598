#!/usr/bin/env bash
# bench/dotnet/run.sh [BUILD] - rtdiag's .NET IPC client against dotnet-trace,
# side by side in one run:
#   1. `ps`: listing .NET processes (3 started here, plus any others) - rtdiag dotnet ps vs dotnet-trace ps
#   2. attach to first event: attach, start a session, see the first event of
#      the target's own EventSource, stop, exit - rtdiag (bench helper on the
#      library, no rundown) vs dotnet-trace collect --stopping-event-provider-name
#      --rundown false
#   3. slowdown of a CPU-bound program (examples/dotnet-demo, work rounds
#      per CPU second over 8 s) while CPU-profiled for 6 s: none vs rtdiag dotnet profile vs
#      dotnet-trace collect --profile cpu-sampling
# Needs dotnet-trace (dotnet tool install -g dotnet-trace).
set -uo pipefail
B=$(cd "${1:-build}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
R="$B/rtdiag"
export PATH="$PATH:$HOME/.dotnet/tools"
DT=$(command -v dotnet-trace) || { echo "dotnet-trace not installed (dotnet tool install -g dotnet-trace)"; exit 1; }
export RTD_SOURCE_DIR=$SRC RTD_BINARY_DIR=$B
T=$(bash "$SRC/tests/integration/dotnet/build.sh" dotnet-target tests/targets)
D=$(bash "$SRC/tests/integration/dotnet/build.sh" dotnet-demo examples)
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

rounds() { # MODE -> rounds done in 8 s
  "$D/dotnet-demo" 8 >"$W/demo.out" 2>&1 & local dp=$!
  sleep 1
  case $1 in
    rtdiag) "$R" dotnet profile -p $dp --duration 6 -o "$W/r.folded" 2>/dev/null ;;
    dotnet-trace) "$DT" collect -p $dp --profile cpu-sampling --duration 00:00:00:06 -o "$W/d.nettrace" >/dev/null 2>&1 </dev/null ;;
  esac
  wait $dp
  # rounds per CPU second of the whole process (sampler thread included):
  # on a shared machine wall-clock rounds mostly measure the neighbours
  local r c
  r=$(sed -n 's/^rounds: //p' "$W/demo.out"); c=$(sed -n 's/^cpu_ms: //p' "$W/demo.out")
  echo "scale=2; $r * 1000 / $c" | bc -l
}
median() { printf "%s\n" "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
B0=(); B1=(); B2=()
for k in 1 2 3; do   # interleaved, so drift in machine load hits all three
  B0+=("$(rounds none)"); B1+=("$(rounds rtdiag)"); B2+=("$(rounds dotnet-trace)")
done
base=$(median "${B0[@]}"); rr=$(median "${B1[@]}"); dr=$(median "${B2[@]}")
printf "CPU-bound demo, work rounds per CPU second, 6 s of 8 profiled (median of 3; runs: none %s / rtdiag %s / dotnet-trace %s):\n" \
  "${B0[*]}" "${B1[*]}" "${B2[*]}"
printf "  none %s   rtdiag %s (slowdown %.1f%%)   dotnet-trace %s (slowdown %.1f%%)\n" \
  "$base" "$rr" "$(echo "100*($base-$rr)/$base" | bc -l)" "$dr" "$(echo "100*($base-$dr)/$base" | bc -l)"
