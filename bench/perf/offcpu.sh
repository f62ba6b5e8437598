#!/usr/bin/env bash
# off-CPU bench: rtdiag perf record --off-cpu against perf's BPF-less way,
# perf record -e sched:sched_switch -g (Debian's perf 6.1 has no working
# --off-cpu: it needs a perf built with BPF skeletons), on the same
# program, one run, rounds interleaved.
#
# perf's way has two forms: -e sched:sched_switch -g alone records each
# switch-out with its stack, but with -p nothing says when the thread ran
# again (the switch-in is another task's sched_switch, out of scope): not
# enough to time a wait. With --switch-events (attr.context_switch, what
# rtdiag asks for too) it has the switch-ins: the fair anchor. Both run.
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
  for tool in none rtdiag perf perfsw; do
    "$T/pingpong" "$N" 0.5 > "$T/out" & wp=$!
    sleep 0.2
    case $tool in
      rtdiag)
        /usr/bin/time -f "%U %S %M" -o "$T/rt.time" "$R" perf record --off-cpu -p $wp -m 512 --stats \
          -o "$T/o.folded" 2> "$T/rt.err" > /dev/null
        awk '{print $1 + $2 >> "'"$T"'/cpu.rtdiag"; print $3 >> "'"$T"'/rss.rtdiag"}' "$T/rt.time"
        grep -o '[0-9]* waits paired' "$T/rt.err" | awk '{print $1}' >> "$T/n.rtdiag"
        grep -o '[0-9]* lost' "$T/rt.err" | head -1 | awk '{print $1}' >> "$T/lost.rtdiag" ;;
      perf|perfsw)
        sw=; [ $tool = perfsw ] && sw=--switch-events
        /usr/bin/time -f "%U %S %M" -o "$T/pf.time" perf record -q -e sched:sched_switch -g $sw -m 512 -p $wp \
          -o "$T/p.data" > /dev/null 2> "$T/pf.err"
        awk '{print $1 + $2 >> "'"$T"'/cpu.'$tool'"; print $3 >> "'"$T"'/rss.'$tool'"}' "$T/pf.time"
        /usr/bin/time -f "%U %S %M" -o "$T/ps.time" perf script -i "$T/p.data" > "$T/p.txt" 2>/dev/null
        awk '{print $1 + $2 >> "'"$T"'/cpu.script.'$tool'"}' "$T/ps.time"
        grep -c 'sched:sched_switch' "$T/p.txt" >> "$T/n.$tool"
        rm -f "$T/p.data" "$T/p.txt" ;;
    esac
    wait $wp
    cat "$T/out" >> "$T/wall.$tool"
  done
done
base=$(median < "$T/wall.none"); rw=$(median < "$T/wall.rtdiag")
rc=$(median < "$T/cpu.rtdiag")
awk -v b="$base" -v r="$rw" -v n="$N" -v rc="$rc" -v rr="$(median < "$T/rss.rtdiag")" \
    -v nr="$(median < "$T/n.rtdiag")" -v lr="$(median < "$T/lost.rtdiag")" 'BEGIN {
  printf "pingpong alone %.3f s (%.0f switches/s)\n", b, 4*n/b;
  printf "rtdiag --off-cpu: target %.3f s (+%.1f%%); CPU %.3f s (record, pair, name, write; %d waits, %d lost; peak RSS %.1f MB)\n", r, (r/b-1)*100, rc, nr, lr, rr/1024 }'
for tool in perf perfsw; do
  pw=$(median < "$T/wall.$tool"); pc=$(median < "$T/cpu.$tool"); sc=$(median < "$T/cpu.script.$tool")
  awk -v b="$base" -v r="$rw" -v p="$pw" -v rc="$rc" -v pc="$pc" -v sc="$sc" -v t=$tool \
      -v np="$(median < "$T/n.$tool")" -v pr="$(median < "$T/rss.$tool")" 'BEGIN {
    printf "perf record -e sched:sched_switch -g%s: target %.3f s (+%.1f%%); CPU record %.3f s + script %.3f s = %.3f s (%d samples; peak RSS %.1f MB)\n", (t == "perfsw" ? " --switch-events" : ""), p, (p/b-1)*100, pc, sc, pc+sc, np, pr/1024;
    printf "   rtdiag/this: slowdown %.2f, CPU %.2f of record alone, %.2f of record + script\n", ((r-b) > 0 ? (r-b) : 0.0001) / ((p-b) > 0 ? (p-b) : 0.0001), rc/pc, rc/(pc+sc) }'
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
