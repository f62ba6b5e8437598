#!/usr/bin/env bash
# bench/flight/rss.sh [SECONDS] [RING] [gc|marks|idle] - the flight recorder's
# memory and idle cost over a long run (issue #31: "RSS stays flat over a
# 10-minute ring run, sampled every 10 s"). Records a .NET program
# (tests/targets/dotnet-record; gc: two threads burning CPU in managed code,
# a blocking GC every 100 ms; marks: its plain loop of an event, a 40 ms
# sleep and 10 ms of CPU; idle: nothing runs) with `rtdiag record --ring
# RING` (default 8s) for SECONDS (default 600), no trigger: nothing is
# written until the end. Every 10 s prints rtdiag's RSS and CPU time; at
# the end whether RSS stayed flat, rtdiag's CPU per hour, and the ring's
# own figures (rtdiag's last lines: records kept, bytes a record).
#
# Flat, as this bench decides it (printed with the figures): after the
# first 2 minutes (the ring full, the runtime's and the kernel's paths
# met once), RSS grows at most FLAT_LAST_KB (512) over the last 5 minutes,
# and the least-squares slope of RSS over minutes 2..end is at most
# FLAT_SLOPE_KB (32) KB a minute.
#
# Environment: RTDIAG=path of the rtdiag to measure (default ./build's:
# run two at once, old and new, each on a target of its own); HEAPSTAT=1
# preloads bench/flight/heapstat.c into it (glibc's bytes in use, free
# and arenas beside each RSS line: live data or fragmentation);
# RECORD=1 measures plain `rtdiag record -o x.pftrace` instead of a ring.
# Run from the source tree with a build in ./build (the target is built
# there); needs dotnet and perf_event (root or perf_event_paranoid <= 1).
set -eu
secs=${1:-600} ring=${2:-8s} mode=${3:-gc}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${RTD_BINARY_DIR:-$SRC/build}
R=${RTDIAG:-$BIN/rtdiag}
FLAT_LAST_KB=${FLAT_LAST_KB:-512} FLAT_SLOPE_KB=${FLAT_SLOPE_KB:-32}
export RTD_SOURCE_DIR=$SRC RTD_BINARY_DIR=$BIN
D=$(bash "$SRC/tests/integration/dotnet/build.sh" dotnet-record tests/targets)
W=$(mktemp -d /tmp/rtd-flight-bench-XXXXXX)
TP= RP=
cleanup() {
  [ -n "$RP" ] && kill -9 "$RP" 2>/dev/null
  [ -n "$TP" ] && { kill -9 "$TP" 2>/dev/null; wait "$TP" 2>/dev/null; }
  rm -rf "$W"
}
trap cleanup EXIT
case $mode in
  gc|idle) "$D/dotnet-record" "$W/ready" "$mode" >/dev/null 2>&1 & ;;
  *) "$D/dotnet-record" "$W/ready" >/dev/null 2>&1 & ;;
esac
TP=$!
until [ -s "$W/ready" ]; do sleep 0.1; done
pre=()
if [ "${HEAPSTAT:-0}" = 1 ]; then
  cc -shared -fPIC -O2 -o "$W/heapstat.so" "$SRC/bench/flight/heapstat.c" -lpthread
  pre=(env LD_PRELOAD="$W/heapstat.so" RTD_HEAPSTAT="$W/heap" RTD_HEAPSTAT_SEC=10)
fi
if [ "${RECORD:-0}" = 1 ]; then
  "${pre[@]}" "$R" record -p "$TP" -o "$W/rec.pftrace" 2>"$W/err" &
else
  "${pre[@]}" "$R" record -p "$TP" --ring "$ring" --snapshot-dir "$W" 2>"$W/err" &
fi
RP=$!
until grep -q '^rtdiag: recording' "$W/err"; do kill -0 "$RP" || { cat "$W/err"; exit 1; }; sleep 0.1; done
tick=$(getconf CLK_TCK)
sample() { # elapsed_s rss_kb cpu_s [heap]
  local st rss h=
  st=$(cut -d' ' -f14,15 "/proc/$RP/stat" 2>/dev/null) || return 1
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$RP/status")
  [ -s "$W/heap" ] && h=" $(tail -1 "$W/heap" | cut -d' ' -f2-)"
  echo "$1 $rss $(echo "$st" | awk -v t="$tick" '{printf "%.2f", ($1 + $2) / t}')$h"
}
echo "# $(basename "$R") ($R), mode $mode, $( [ "${RECORD:-0}" = 1 ] && echo "record -o" || echo "ring $ring")"
echo "# t_s rss_kb cpu_s (load: $(cut -d' ' -f1-3 /proc/loadavg))"
t=0 t0=$(date +%s)
while [ $t -le "$secs" ]; do
  sample $t | tee -a "$W/samples"
  t=$((t + 10))
  # every 10 s of the clock, not 10 s after the sample: no drift
  while [ $(( $(date +%s) - t0 )) -lt $t ]; do sleep 0.5; done
done
kill -INT "$RP"; wait "$RP" || true; RP=
tail -3 "$W/err"
python3 - "$W/samples" "$FLAT_LAST_KB" "$FLAT_SLOPE_KB" <<'PY'
import sys
rows = [tuple(float(x) for x in l.split()[:3]) for l in open(sys.argv[1]) if l.strip()]
last_kb, slope_kb = float(sys.argv[2]), float(sys.argv[3])
end = rows[-1][0]
tail = [r for r in rows if r[0] >= 120]
if len(tail) >= 3 and end >= 420:
    at = {r[0]: r[1] for r in rows}
    start5 = max(r[0] for r in rows if r[0] <= end - 300)
    last5 = at[end] - at[start5]
    n = len(tail)
    mx = sum(r[0] for r in tail) / n
    my = sum(r[1] for r in tail) / n
    slope = sum((r[0] - mx) * (r[1] - my) for r in tail) / sum((r[0] - mx) ** 2 for r in tail)
    slope_min = slope * 60
    print(f"rss: {rows[0][1]/1024:.1f} MB at {rows[0][0]:.0f} s, {at[120]/1024:.1f} MB at 120 s, "
          f"{at[end]/1024:.1f} MB at {end:.0f} s (max after 120 s {max(r[1] for r in tail)/1024:.1f})")
    print(f"growth over the last 5 minutes ({start5:.0f}..{end:.0f} s): {last5:+.0f} KB "
          f"(bound {last_kb:.0f}); slope over 120..{end:.0f} s: {slope_min:+.1f} KB a minute "
          f"(bound {slope_kb:.0f})")
    flat = last5 <= last_kb and slope_min <= slope_kb
    print(f"flat: {'yes' if flat else 'NO'}")
else:
    print(f"rss: {rows[0][1]/1024:.1f} MB -> {rows[-1][1]/1024:.1f} MB over {end:.0f} s "
          "(flatness needs 420 s or more)")
cpu = rows[-1][2] - rows[0][2]
wall = rows[-1][0] - rows[0][0]
print(f"rtdiag cpu: {cpu:.1f} s in {wall:.0f} s = {cpu / wall * 100:.2f}% of a core, "
      f"{cpu / wall * 3600:.0f} s per hour")
PY
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
