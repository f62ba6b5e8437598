#!/usr/bin/env bash
# off-CPU bench: rtdiag perf record --off-cpu against perf's BPF-less way,
# perf record -e sched:sched_switch -g (Debian's perf 6.1 has no working
# --off-cpu: it needs a perf built with BPF skeletons), on the same
# program, one run, rounds interleaved.
#
# Workload: bench/perf/pingpong.c, two threads passing a byte over pipes
# N round trips (4 context switches a round trip: the worst case for a
# profiler that samples every switch with its stack). It sleeps 0.5 s
# first; each profiler attaches with -p meanwhile and ends when it exits.
#  1. target slowdown: the program's own time for the N round trips,
#     alone, under rtdiag, under perf record (median of ROUNDS).
#  2. profiler CPU (user+sys of the profiler process, /usr/bin/time):
#     rtdiag records, pairs, names and writes the profile (folded); perf
#     record only writes perf.data: the off-CPU answer needs a pass over
#     it too, so perf script's CPU (the stacks as text, before any
#     pairing) is shown beside it. Same ring size (-m 512) for both.
#     Peak RSS of each.
# Usage: bench/perf/offcpu.sh BUILD_DIR [N] [ROUNDS]
# Run under flock /work/locks/bench.lock; say how loaded the machine was.
set -u
B=${1:?build dir}; N=${2:-50000}; ROUNDS=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
R=$B/rtdiag
[ "$(id -u)" = 0 ] || { echo "bench offcpu: needs root"; exit 1; }
command -v perf >/dev/null || { echo "bench offcpu: perf (linux-perf) not installed"; exit 1; }
[ -x "$R" ] || { echo "bench offcpu: build first"; exit 1; }
T=$(mktemp -d /work/scratch/offcpu-bench.XXXXXX 2>/dev/null || mktemp -d); trap 'rm -rf "$T"' EXIT
cc -O2 -g -fno-omit-frame-pointer "$here/pingpong.c" -o "$T/pingpong" -lpthread || exit 1
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "off-CPU bench: pingpong $N round trips, $ROUNDS rounds; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  for tool in none rtdiag perf; do
    "$T/pingpong" "$N" 0.5 > "$T/out" & wp=$!
    sleep 0.2
    case $tool in
      rtdiag)
        /usr/bin/time -f "%U %S %M" -o "$T/rt.time" "$R" perf record --off-cpu -p $wp -m 512 --stats \
          -o "$T/o.folded" 2> "$T/rt.err" > /dev/null
        awk '{print $1 + $2 >> "'"$T"'/cpu.rtdiag"; print $3 >> "'"$T"'/rss.rtdiag"}' "$T/rt.time"
        grep -o '[0-9]* waits paired' "$T/rt.err" | awk '{print $1}' >> "$T/n.rtdiag"
        grep -o '[0-9]* lost' "$T/rt.err" | head -1 | awk '{print $1}' >> "$T/lost.rtdiag" ;;
      perf)
        /usr/bin/time -f "%U %S %M" -o "$T/pf.time" perf record -q -e sched:sched_switch -g -m 512 -p $wp \
          -o "$T/p.data" > /dev/null 2> "$T/pf.err"
        awk '{print $1 + $2 >> "'"$T"'/cpu.perf"; print $3 >> "'"$T"'/rss.perf"}' "$T/pf.time"
        /usr/bin/time -f "%U %S %M" -o "$T/ps.time" perf script -i "$T/p.data" > "$T/p.txt" 2>/dev/null
        awk '{print $1 + $2 >> "'"$T"'/cpu.script"}' "$T/ps.time"
        grep -c 'sched:sched_switch' "$T/p.txt" >> "$T/n.perf"
        rm -f "$T/p.data" "$T/p.txt" ;;
    esac
    wait $wp
    cat "$T/out" >> "$T/wall.$tool"
  done
done
base=$(median < "$T/wall.none"); rw=$(median < "$T/wall.rtdiag"); pw=$(median < "$T/wall.perf")
rc=$(median < "$T/cpu.rtdiag"); pc=$(median < "$T/cpu.perf"); sc=$(median < "$T/cpu.script")
awk -v b="$base" -v r="$rw" -v p="$pw" -v n="$N" 'BEGIN {
  printf "1. pingpong alone %.3f s (%.0f switches/s); under rtdiag --off-cpu %.3f s (+%.1f%%); under perf record -e sched:sched_switch -g %.3f s (+%.1f%%)\n", b, 4*n/b, r, (r/b-1)*100, p, (p/b-1)*100;
  printf "   slowdown ratio rtdiag/perf: %.2f\n", ((r-b) > 0 ? (r-b) : 0.0001) / ((p-b) > 0 ? (p-b) : 0.0001) }'
awk -v r="$rc" -v p="$pc" -v s="$sc" -v rr="$(median < "$T/rss.rtdiag")" -v pr="$(median < "$T/rss.perf")" \
    -v nr="$(median < "$T/n.rtdiag")" -v np="$(median < "$T/n.perf")" -v lr="$(median < "$T/lost.rtdiag")" 'BEGIN {
  printf "2. profiler CPU: rtdiag %.3f s (record, pair, name, write; %d waits paired, %d lost, peak RSS %.1f MB)\n", r, nr, lr, rr/1024;
  printf "   perf record %.3f s (%d sched_switch samples, peak RSS %.1f MB) + perf script %.3f s = %.3f s\n", p, np, pr/1024, s, p+s;
  printf "   ratio rtdiag/perf record: %.2f; rtdiag/(perf record + perf script): %.2f\n", r/p, r/(p+s) }'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
