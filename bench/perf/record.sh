#!/usr/bin/env bash
# perf record bench: rtdiag perf record side by side with Debian's
# perf record -g + perf report, same frequency, same workloads, one run.
#
#  1. overhead on the profiled program: a fixed amount of work
#     (cpu_shares rounds=N, 2 threads on this 2-core machine) timed alone,
#     under rtdiag perf record -- CMD and under perf record -g -- CMD;
#     the slowdown of each (median of ROUNDS runs).
#  2. the profiler's own CPU for record + symbolize: both attach with -p to
#     the same running workload for D seconds; rtdiag's user+sys CPU
#     (it records and names) against perf record's plus perf report's.
#  3. from the end of recording to the printed top table on a large
#     binary: clang-14 (libLLVM-14.so.1, ~90 MB, 100k+ symbols) compiling
#     C files; rtdiag's own figure (--stats) against perf report --stdio's
#     wall time on the same workload's perf.data; peak RSS of each.
#
# Usage: bench/perf/record.sh BUILD_DIR [FREQ] [ROUNDS] [CALLGRAPH]
# Run under flock /work/locks/bench.lock; say how loaded the machine was.
set -u
B=${1:?build dir}; F=${2:-999}; ROUNDS=${3:-3}; CG=${4:-fp}
here=$(cd "$(dirname "$0")" && pwd); src=$(cd "$here/../.." && pwd)
R=$B/rtdiag
W=$B/tests/targets/cpu_shares_fp
[ "$CG" = dwarf ] && W=$B/tests/targets/cpu_shares_nofp
[ "$(id -u)" = 0 ] || { echo "bench perf record: needs root"; exit 1; }
command -v perf >/dev/null || { echo "bench perf record: perf (linux-perf) not installed"; exit 1; }
[ -x "$R" ] && [ -x "$W" ] || { echo "bench perf record: build first"; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
PG="-g"; [ "$CG" = dwarf ] && PG="--call-graph dwarf"
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "perf record bench: $F Hz, call graph $CG, $ROUNDS rounds; load: $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. overhead
N=400
for tool in none rtdiag perf; do
  for r in $(seq "$ROUNDS"); do
    t0=$(now)
    case $tool in
      none) "$W" rounds=$N 2 ;;
      rtdiag) "$R" perf record -F "$F" -g "$CG" -o "$T/o.folded" -- "$W" rounds=$N 2 2>/dev/null ;;
      perf) perf record -q $PG -F "$F" -o "$T/o.data" -- "$W" rounds=$N 2 >/dev/null 2>&1 ;;
    esac
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f\n", b-a}' >> "$T/wall.$tool"
  done
done
base=$(median < "$T/wall.none"); rw=$(median < "$T/wall.rtdiag"); pw=$(median < "$T/wall.perf")
awk -v b="$base" -v r="$rw" -v p="$pw" 'BEGIN {
  printf "1. workload alone %.3f s; under rtdiag %.3f s (+%.1f%%); under perf record %.3f s (+%.1f%%)\n", b, r, (r/b-1)*100, p, (p/b-1)*100;
  printf "   slowdown ratio rtdiag/perf: %.2f\n", ((r-b) > 0 ? (r-b) : 0.0001) / ((p-b) > 0 ? (p-b) : 0.0001) }'

# 2. the profilers' own CPU, attached to the same running workload
D=5
cpu_of() { awk '{print $1 + $2}' "$1"; } # user sys from /usr/bin/time -f "%U %S %M"
for r in $(seq "$ROUNDS"); do
  "$W" $((D + 3)) 2 & wp=$!; sleep 0.5
  /usr/bin/time -f "%U %S %M" -o "$T/rt.time" "$R" perf record -p $wp -F "$F" -g "$CG" -d $D -o "$T/rt.txt" 2>/dev/null
  wait $wp
  "$W" $((D + 3)) 2 & wp=$!; sleep 0.5
  /usr/bin/time -f "%U %S %M" -o "$T/pr.time" perf record -q $PG -F "$F" -p $wp -o "$T/p.data" -- sleep $D >/dev/null 2>&1
  /usr/bin/time -f "%U %S %M" -o "$T/rp.time" perf report -i "$T/p.data" --no-children --stdio > /dev/null 2>&1
  wait $wp
  echo "$(cpu_of "$T/rt.time") $(cpu_of "$T/pr.time") $(cpu_of "$T/rp.time") $(awk '{print $3}' "$T/rt.time") $(awk '{print $3}' "$T/pr.time") $(awk '{print $3}' "$T/rp.time")" >> "$T/cpu"
done
awk '{ rt += $1; pr += $2; rp += $3; if ($4 > m1) m1 = $4; if ($5 > m2) m2 = $5; if ($6 > m3) m3 = $6; n++ }
  END { printf "2. own CPU, %d s at %s Hz of a 2-thread workload (mean of %d): rtdiag record+names %.3f s; perf record %.3f s + perf report %.3f s = %.3f s; ratio %.2f\n", '"$D"', "'"$F"'", n, rt/n, pr/n, rp/n, (pr+rp)/n, rt/(pr+rp);
        printf "   peak RSS: rtdiag %.1f MB; perf record %.1f MB, perf report %.1f MB\n", m1/1024, m2/1024, m3/1024 }' "$T/cpu"

# 3. a large binary: clang-14 compiling rtdiag's own sources
CLANG=$(command -v clang-14 || true)
if [ -n "$CLANG" ]; then
  files=$(ls "$src"/src/profile/profile.c "$src"/src/gotrace/order1.c "$src"/src/nettrace/decoder.c "$src"/src/gotrace/order2.c | tr "\n" " ")
  cmd="for f in $files; do $CLANG -O2 -I$src/include -I$src/src -D_GNU_SOURCE -c \$f -o /dev/null; done"
  for r in $(seq "$ROUNDS"); do
    /usr/bin/time -f "%e %M" -o "$T/rtbig.time" "$R" perf record -F "$F" -g "$CG" --stats -o "$T/big.txt" -- sh -c "$cmd" 2> "$T/big.err"
    ms=$(awk '/end of sampling to the written output/{print $(NF-1)}' "$T/big.err")
    perf record -q $PG -F "$F" -o "$T/big.data" -- sh -c "$cmd" >/dev/null 2>&1
    /usr/bin/time -f "%e %M" -o "$T/prbig.time" perf report -i "$T/big.data" --no-children --stdio > "$T/big.report" 2>/dev/null
    echo "$ms $(awk '{print $1*1000, $2}' "$T/prbig.time") $(awk '{print $2}' "$T/rtbig.time")" >> "$T/big"
  done
  echo "   rtdiag's top rows: $(grep -v '^#' "$T/big.txt" | sed -n 2,4p | awk '{print $4" ("$3")"}' | paste -sd, )"
  echo "   perf report's top rows: $(grep -v '^#' "$T/big.report" | grep '%' | head -3 | awk '{print $3" "$4" "$5}' | paste -sd, )"
  awk '{ r += $1; p += $2; if ($3 > pm) pm = $3; if ($4 > rm) rm = $4; n++ }
    END { printf "3. clang-14 (libLLVM-14.so.1): end of recording to top table: rtdiag %.0f ms, perf report %.0f ms (mean of %d); ratio %.3f (1/%.1f)\n", r/n, p/n, n, r/p, p/r;
          printf "   peak RSS: rtdiag (recording and naming) %.1f MB, perf report %.1f MB\n", rm/1024, pm/1024 }' "$T/big"
else
  echo "3. skipped: no clang-14"
fi
