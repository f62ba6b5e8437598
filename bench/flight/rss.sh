#!/usr/bin/env bash
# bench/flight/rss.sh [SECONDS] [RING] [gc|marks] - the flight recorder's memory and
# idle cost over a long run (issue #31: "RSS stays flat over a 10-minute
# ring run, sampled every 10 s"). Records a busy .NET program
# (tests/targets/dotnet-record in its gc mode: two threads burning CPU in
# managed code, a blocking GC every 100 ms; "marks": its plain loop of an
# event, a 40 ms sleep and 10 ms of CPU) with `rtdiag record --ring RING`
# (default 8s) for SECONDS (default 600), no trigger: nothing is written
# until the end. Every 10 s prints rtdiag's RSS and CPU time; at the end
# the RSS growth after the ring has filled (the first 2 rings excluded),
# rtdiag's CPU per hour, and the ring's own figures (rtdiag's last lines:
# records kept, bytes a record). Run from the source tree with a build in
# ./build; needs dotnet and perf_event (root or perf_event_paranoid <= 1).
set -eu
secs=${1:-600} ring=${2:-8s} mode=${3:-gc}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${RTD_BINARY_DIR:-$SRC/build}
R=$BIN/rtdiag
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
if [ "$mode" = gc ]; then "$D/dotnet-record" "$W/ready" gc >/dev/null 2>&1 &
else "$D/dotnet-record" "$W/ready" >/dev/null 2>&1 &
fi
TP=$!
until [ -s "$W/ready" ]; do sleep 0.1; done
"$R" record -p "$TP" --ring "$ring" --snapshot-dir "$W" 2>"$W/err" &
RP=$!
until grep -q '^rtdiag: recording' "$W/err"; do kill -0 "$RP" || { cat "$W/err"; exit 1; }; sleep 0.1; done
tick=$(getconf CLK_TCK)
sample() { # elapsed_s rss_kb cpu_s
  local st rss
  st=$(cut -d' ' -f14,15 "/proc/$RP/stat" 2>/dev/null) || return 1
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$RP/status")
  echo "$1 $rss $(echo "$st" | awk -v t="$tick" '{printf "%.2f", ($1 + $2) / t}')"
}
echo "# t_s rss_kb cpu_s (load: $(cut -d' ' -f1-3 /proc/loadavg))"
t=0
while [ $t -le "$secs" ]; do
  sample $t | tee -a "$W/samples"
  sleep 10
  t=$((t + 10))
done
kill -INT "$RP"; wait "$RP" || true; RP=
tail -3 "$W/err"
ringsec=$(echo "$ring" | sed 's/s$//')
python3 - "$W/samples" "$ringsec" <<'PY'
import sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
ring = float(sys.argv[2])
full = [r for r in rows if r[0] >= 2 * ring]
if len(full) >= 2:
    growth = full[-1][1] - full[0][1]
    print(f"rss after the ring filled: {full[0][1]/1024:.1f} MB -> {full[-1][1]/1024:.1f} MB "
          f"(max {max(r[1] for r in full)/1024:.1f}), growth {growth/1024:+.1f} MB over "
          f"{full[-1][0]-full[0][0]:.0f} s")
cpu = rows[-1][2] - rows[0][2]
wall = rows[-1][0] - rows[0][0]
print(f"rtdiag cpu: {cpu:.1f} s in {wall:.0f} s = {cpu / wall * 100:.2f}% of a core, "
      f"{cpu / wall * 3600:.0f} s per hour")
PY
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
