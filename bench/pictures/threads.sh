#!/usr/bin/env bash
# bench/pictures/threads.sh - the Go timeline on one thread, on two, and
# by the default (two only when the load average leaves a core idle): the
# same trace converted to Perfetto N times each way, in turn (1, 2,
# default, 1, ...) so all see the same load; wall and CPU (user+sys)
# seconds, the load average next to each run, and the medians.
#
#   bench/pictures/threads.sh [BUILD_DIR] [TRACE] [N]
#     BUILD_DIR  default build/        TRACE  default the 34 MB gen trace
#     N          runs of each (default 5)
#   BENCH_TMP=DIR  where the ~360 MB outputs go (default /tmp; on disk)
# Run it under flock /work/locks/bench.lock on a shared machine.
set -eu
cd "$(dirname "$0")/../.."
B=$(cd "${1:-build}" && pwd)
R=$B/rtdiag
TRACE=${2:-$B/bench-pictures/go-32MB.trace}
N=${3:-5}
[ -x "$R" ] || { echo "no $R: build first"; exit 1; }
[ -s "$TRACE" ] || { echo "no $TRACE: run bench/pictures/run.sh once (GO_MB=32), or give TRACE"; exit 1; }
OUT=$(mktemp -d "${BENCH_TMP:-/tmp}/rtd-bench-threads-XXXXXX")
trap 'rm -rf "$OUT"' EXIT
echo "== $(nproc) cores; trace $TRACE, $(( $(stat -c %s "$TRACE") / 1048576 )) MB; $N runs each, alternating"
one() { # 1|2|default -> appends "wall cpu" to $OUT/tMODE
  local th=$1 env=()
  [ "$th" != default ] && env=(RTDIAG_THREADS=$th)
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  env "${env[@]}" /usr/bin/time -f "%e %U %S" -o "$OUT/t" "$R" convert "$TRACE" -o "$OUT/x.pftrace" 2>/dev/null
  read -r w u s <"$OUT/t"
  local c; c=$(echo "$u + $s" | bc)
  rm -f "$OUT/x.pftrace"
  printf '  %-7s threads: %6.2f s wall %6.2f s CPU   (load %s)\n' "$th" "$w" "$c" "$load"
  echo "$w $c" >>"$OUT/t$th"
}
for i in $(seq "$N"); do one 1; one 2; one default; done
med() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
for th in 1 2 default; do
  printf '== %-7s threads: median %.2f s wall, %.2f s CPU\n' "$th" \
    "$(cut -d' ' -f1 "$OUT/t$th" | med)" "$(cut -d' ' -f2 "$OUT/t$th" | med)"
done
echo "== load now: $(cut -d' ' -f1-3 /proc/loadavg)"
