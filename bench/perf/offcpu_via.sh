#!/usr/bin/env bash
# off-CPU through BPF against off-CPU through perf, on a switch-heavy
# target: bench/perf/pingpong.c, two threads passing a byte over pipes N
# round trips (4 context switches a round trip; ~500k switches/s alone on
# a quiet 2-core box). Each round runs the target four times, alone,
# under rtdiag perf record --off-cpu --off-cpu-via bpf, the same with
# --no-kernel (bpf-user: user stacks only, as perf's own --off-cpu takes
# them) and under --off-cpu-via perf (the order rotates each round: A/B interleaved, so
# a change of load hits every variant alike); the target's own time for
# its N round trips is the measure. Prints each variant's median and
# range, the slowdown of the medians against the target alone, the
# waits each profiler found (the same answer: 2 per round trip), and the
# load before and after. The issue's goal: BPF slowdown <= 15%.
# Usage: bench/perf/offcpu_via.sh BUILD_DIR [N] [ROUNDS]
# Run under flock /work/locks/bench.lock; say how loaded the machine was.
set -u
B=${1:?build dir}; N=${2:-100000}; ROUNDS=${3:-7}
here=$(cd "$(dirname "$0")" && pwd)
R=$B/rtdiag
[ "$(id -u)" = 0 ] || { echo "bench offcpu_via: needs root"; exit 1; }
[ -x "$R" ] || { echo "bench offcpu_via: build first"; exit 1; }
T=$(mktemp -d /tmp/offcpu-via-bench.XXXXXX); trap 'rm -rf "$T"' EXIT
cc -O2 -g -fno-omit-frame-pointer "$here/pingpong.c" -o "$T/pingpong" -lpthread || exit 1
"$R" perf record --off-cpu --off-cpu-via bpf -- true 2> "$T/e" > /dev/null ||
  { echo "bench offcpu_via: no BPF path: $(cat "$T/e")"; exit 1; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
range() { sort -g | awk 'NR==1 {lo=$1} {hi=$1} END {printf "%.3f..%.3f", lo, hi}'; }
run() { # VARIANT: one timed run of the target, alone or profiled
  "$T/pingpong" "$N" 0.5 > "$T/out" & local wp=$!
  case $1 in
    none) ;;
    *) sleep 0.2
       "$R" perf record --off-cpu --off-cpu-via "${1%-user}" $([ "$1" = bpf-user ] && echo --no-kernel) --stats -p $wp -o "$T/o.folded" > /dev/null 2> "$T/err"
       grep -o '[0-9]* waits paired' "$T/err" | awk '{print $1}' >> "$T/n.$1" ;;
  esac
  wait $wp
  cat "$T/out" >> "$T/wall.$1"
}
echo "off-CPU via bench: pingpong $N round trips ($((4 * N)) switches), $ROUNDS rounds interleaved; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
vs=(none bpf bpf-user perf)
for r in $(seq 0 $((ROUNDS - 1))); do
  for k in 0 1 2 3; do run "${vs[$(( (r + k) % 4 ))]}"; done
done
base=$(median < "$T/wall.none")
printf "%-6s target median %.3f s  range %s  (%.0f switches/s)\n" none "$base" "$(range < "$T/wall.none")" "$(echo "4 * $N / $base" | bc -l)"
for v in bpf bpf-user perf; do
  m=$(median < "$T/wall.$v")
  printf "%-6s target median %.3f s  range %s  slowdown %+.1f%%  waits found (median) %d of ~%d\n" \
    "$v" "$m" "$(range < "$T/wall.$v")" "$(echo "($m / $base - 1) * 100" | bc -l)" "$(median < "$T/n.$v")" $((2 * N))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
