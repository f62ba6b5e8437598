#!/usr/bin/env bash
# perf bench: consume a syscall flood's tracepoint (syscalls:sys_enter_getppid,
# N calls by perf_target) with librtdiag and with `perf record -e` side by
# side in one run, same tracepoint, same ring size (-m PAGES per CPU), both
# attached to the flooding process with -p. Prints records consumed, lost,
# the consumer's CPU time (task-clock from perf stat), CPU ns per record,
# records/s over the flood's wall time, and the ratios. perf record runs
# with -B (no build-id pass at exit): only its ring reading and writing are
# measured; rtdiag decodes every record and every tracepoint field.
# Usage: bench/perf/run.sh BUILD_DIR [N] [PAGES] [ROUNDS]
# With RTD_BENCH_HEAP=1 the rtdiag side merges the rings with the heap
# (normally used from 9 rings on) instead of the scan.
set -u
B=${1:?build dir}; N=${2:-2000000}; PAGES=${3:-64}; ROUNDS=${4:-3}
here=$(cd "$(dirname "$0")" && pwd); src=$(cd "$here/../.." && pwd)
T=$B/tests/targets/perf_target
[ "$(id -u)" = 0 ] || { echo "bench perf: needs root"; exit 1; }
command -v perf >/dev/null || { echo "bench perf: perf (linux-perf) not installed"; exit 1; }
[ -x "$T" ] || { echo "bench perf: build first ($T missing)"; exit 1; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cc -O2 -D_GNU_SOURCE -I"$src/include" "$here/consume.c" "$B/librtdiag.a" -o "$W/consume" \
  $(pkg-config --libs libtraceevent libtracefs libelf zlib) -lpthread -lm || exit 1
EV=syscalls:sys_enter_getppid

cpu_ms() { awk -F, '$3=="task-clock"{print $1}' "$1"; }
one() { # tool -> "samples lost cpu_ms wall_s"
  "$T" flood $N 1500 & local tp=$!
  sleep 0.2
  local t0=$(date +%s.%N)
  if [ "$1" = rtdiag ]; then
    perf stat -x, -o "$W/st" -e task-clock -- "$W/consume" $tp $PAGES $EV > "$W/out" &
  else
    perf stat -x, -o "$W/st" -e task-clock -- perf record -q -B -e $EV -m $PAGES -o "$W/perf.data" -p $tp 2> "$W/rec.err" &
  fi
  local cp=$!
  wait $tp; local t1=$(date +%s.%N)
  wait $cp
  local s l
  if [ "$1" = rtdiag ]; then
    read -r _ s _ l < "$W/out"
  else
    s=$(perf report -i "$W/perf.data" --stats 2>/dev/null | awk '/^ *SAMPLE events:/{print $3; exit}')
    # lost: the calls made that perf did not record (both attach well
    # before the flood begins)
    l=$(( N > ${s:-0} ? N - ${s:-0} : 0 ))
  fi
  echo "${s:-0} ${l:-0} $(cpu_ms "$W/st") $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.6f", b-a-1.3}')"
}
echo "perf bench: $N getppid() calls, $EV, $PAGES pages per CPU ring, $ROUNDS rounds each"
printf "%-8s %10s %10s %10s %12s %12s\n" tool records lost cpu_ms ns/record records/s
for r in $(seq $ROUNDS); do
  for tool in rtdiag perf; do
    read -r s l c w <<< "$(one $tool)"
    printf "%-8s %10s %10s %10.1f %12.1f %12.0f\n" $tool $s $l $c \
      $(awk -v c=$c -v s=$s 'BEGIN{print (s ? c*1e6/s : 0)}') $(awk -v s=$s -v w=$w 'BEGIN{print (w > 0 ? s/w : 0)}')
    echo "$tool $s $l $c $w" >> "$W/all"
  done
done
awk '{n[$1]++; s[$1]+=$2; l[$1]+=$3; c[$1]+=$4; w[$1]+=$5}
  END {
    rs = s["rtdiag"]/n["rtdiag"]; ps = s["perf"]/n["perf"];
    rc = c["rtdiag"]/s["rtdiag"]*1e6; pc = c["perf"]/s["perf"]*1e6;
    printf "mean: rtdiag %.0f records (lost %.0f), perf %.0f records (lost %.0f)\n", rs, l["rtdiag"]/n["rtdiag"], ps, l["perf"]/n["perf"];
    printf "records/s over the flood: rtdiag %.0f, perf %.0f\n", s["rtdiag"]/w["rtdiag"], s["perf"]/w["perf"];
    printf "ratio records consumed rtdiag/perf: %.2f   CPU ns per record rtdiag %.1f, perf %.1f, ratio rtdiag/perf: %.2f\n", rs/ps, rc, pc, rc/pc }' "$W/all"
