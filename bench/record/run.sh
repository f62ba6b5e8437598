#!/usr/bin/env bash
# bench/record/run.sh [BUILD] - rtdiag record against what a user runs
# today for the same picture of a .NET process: `perf record -g
# --switch-events` (CPU samples with stacks, context switches) and
# `dotnet-trace collect` (the runtime's events) together (issue #30,
# "Performance").
#
# Part 1, A/B interleaved: the target (bench/dotnet/dotnet-bench-work,
# MODE mixed: work units of ~5 ms on its main thread, with allocations, a
# contended lock and an exception per unit) is started and warmed up; a
# mark; the tool records SECS seconds (attach, run, stop, write: all of
# it); a second mark; the target prints its units, its CPU and the wall
# time between the marks. Tools, in an order that rotates from run to run:
#   none    sleep SECS
#   rtdiag  rtdiag record -p PID -d SECS -o FILE.pftrace (CPU samples at
#           99 Hz with stacks, off-CPU waits with stacks, EventPipe: GC, JIT,
#           loader, contention, exceptions, threading)
#   ring    rtdiag record -p PID --ring 8s for SECS seconds, then Ctrl-C
#           (the flight recorder: the same sources into a ring, one
#           snapshot written at the end; issue #31's "slowdown with a ring
#           running <= that of rtdiag record")
#   peers   perf record -g --switch-events -F 99 -p PID -- sleep SECS and
#           dotnet-trace collect -p PID --duration SECS (its default
#           providers), started together
# Per tool: median and range of the target's units per wall second and
# per CPU second, each median's slowdown against none's, the tool's own
# CPU (user+sys; peers: perf's and dotnet-trace's summed) and peak RSS.
# Every tool must exit 0 and write a non-empty file, else the bench stops.
#
# Part 2: rtdiag's RSS over one recording of LONG seconds of the same
# target, read from /proc every 10 s: first, median, last, highest.
#
# Environment: RUNS=5 SECS=10 LONG=300 MODE=mixed; TOOLS="none rtdiag
# ring peers" (a subset, e.g. "none rtdiag ring", for more runs of the
# ring against the recording); DT=a dotnet-trace (else the pinned version
# is installed into BUILD/bench-tools from NuGet).
set -uo pipefail
B=$(cd "${1:-build}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
R="$B/rtdiag"
RUNS=${RUNS:-5} SECS=${SECS:-10} LONG=${LONG:-300} MODE=${MODE:-mixed}
DT_VERSION=10.0.750501
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
[ -x "$R" ] || { echo "no $R: build first"; exit 1; }
command -v dotnet >/dev/null || { echo "SKIP: no dotnet SDK"; exit 0; }
command -v perf >/dev/null || { echo "SKIP: no perf (Debian linux-perf)"; exit 0; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package 'time')"; exit 1; }
if [ -z "${DT:-}" ]; then
  DT="$B/bench-tools/dotnet-trace"
  [ -x "$DT" ] || dotnet tool install --tool-path "$B/bench-tools" dotnet-trace \
    --version "$DT_VERSION" >/dev/null 2>&1 ||
    { echo "could not install dotnet-trace $DT_VERSION from NuGet"; exit 1; }
fi
export RTD_SOURCE_DIR=$SRC RTD_BINARY_DIR=$B
WK=$(bash "$SRC/tests/integration/dotnet/build.sh" dotnet-bench-work bench/dotnet) || exit 1
W=$(mktemp -d /tmp/rtd-bench-record.XXXXXX)
TPID=
cleanup() {
  [ -n "$TPID" ] && kill -9 "$TPID" 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT

start_target() {
  rm -f "$W/target.out"
  rm -f "$W/ctl"; mkfifo "$W/ctl"
  "$WK/dotnet-bench-work" "$MODE" <"$W/ctl" >"$W/target.out" 2>&1 &
  TPID=$!
  exec 7>"$W/ctl"
  local i=0
  until grep -q '^ready' "$W/target.out" 2>/dev/null; do
    sleep 0.05; i=$((i + 1))
    [ $i -lt 1200 ] || { echo "target did not start" >&2; return 1; }
  done
}

stop_target() {
  exec 7>&-
  wait "$TPID" 2>/dev/null
  rm -f /tmp/dotnet-diagnostic-"$TPID"-*-socket /tmp/perf-"$TPID".map
  TPID=
}

# one_run TOOL -> "units_per_wall_s units_per_cpu_s tool_cpu_s tool_rss_kb"
one_run() {
  local t=$1 rc=0 rc2=0
  rm -rf "$W"/out.* "$W"/time.*
  start_target || return 1
  echo mark >&7
  case $t in
    none) sleep "$SECS"; echo "0 0 0" >"$W/time.a"; echo x >"$W/out.none" ;;
    rtdiag)
      /usr/bin/time -f '%U %S %M' -o "$W/time.a" \
        "$R" record -p "$TPID" -d "$SECS" -o "$W/out.rt.pftrace" >"$W/log.a" 2>&1 </dev/null
      rc=$? ;;
    ring)
      # the flight recorder: an 8 s ring, nothing written until Ctrl-C's
      # last snapshot (GNU time ignores SIGINT: it goes to rtdiag itself)
      mkdir -p "$W/snaps"
      /usr/bin/time -f '%U %S %M' -o "$W/time.a" \
        "$R" record -p "$TPID" --ring 8s --snapshot-dir "$W/snaps" --format perfetto \
        >"$W/log.a" 2>&1 </dev/null &
      local tp=$!
      sleep "$SECS"
      pkill -INT -P "$tp"
      wait "$tp"; rc=$?
      mv "$W"/snaps/* "$W/out.ring" 2>/dev/null
      rm -rf "$W/snaps" ;;
    peers)
      /usr/bin/time -f '%U %S %M' -o "$W/time.a" \
        perf record -g --switch-events -F 99 -p "$TPID" -o "$W/out.perf.data" -- sleep "$SECS" \
        >"$W/log.a" 2>&1 </dev/null &
      local pp=$!
      /usr/bin/time -f '%U %S %M' -o "$W/time.b" \
        "$DT" collect -p "$TPID" --duration "$(printf '00:00:00:%02d' "$SECS")" \
        -o "$W/out.dt.nettrace" >"$W/log.b" 2>&1 </dev/null
      rc2=$?
      wait "$pp"; rc=$? ;;
  esac
  echo mark >&7
  stop_target
  if [ $rc -ne 0 ] || [ $rc2 -ne 0 ]; then
    echo "$t: a tool failed (exit $rc, $rc2):" >&2; cat "$W"/log.* >&2; return 1
  fi
  for f in "$W"/out.*; do
    [ -s "$f" ] || { echo "$t wrote an empty $f" >&2; cat "$W"/log.* >&2; return 1; }
  done
  local line
  line=$(grep '^window' "$W/target.out" | tail -1)
  [ -n "$line" ] || { echo "target printed no window" >&2; return 1; }
  cat "$W"/time.* | awk -v l="$line" '
    { u += $1 + $2; if ($3 > rss) rss = $3; }
    END { n = split(l, f, /[ =]/); for (i = 2; i < n; i += 2) v[f[i]] = f[i + 1]
          printf "%.2f %.2f %.3f %d\n", v["units"] * 1000 / v["wall_ms"],
                 v["units"] * 1000 / v["cpu_ms"], u, rss }'
}

read -r -a tools <<<"${TOOLS:-none rtdiag ring peers}"
nt=${#tools[@]}
echo "rtdiag $("$R" --version | cut -d' ' -f2), $(perf --version), dotnet-trace $("$DT" --version | cut -d+ -f1)"
echo "target $MODE, $RUNS runs x ${SECS} s per tool, $(nproc) cores; uptime before: $(uptime)"
for k in $(seq 0 $((RUNS - 1))); do
  for j in $(seq 0 $((nt - 1))); do
    t=${tools[$(((j + k) % nt))]}
    r=$(one_run "$t") || exit 1
    echo "$r" >>"$W/res.$t"
    printf '  run %d %-7s wall %8s u/s  cpu %8s u/s  tool cpu %7s s  rss %7s kB\n' $((k + 1)) "$t" $r >&2
  done
done
echo "uptime after: $(uptime)"
med() { sort -n -k"$2" "$1" | awk -v c="$2" '{a[NR]=$c} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
rng() { sort -n -k"$2" "$1" | awk -v c="$2" 'NR==1{lo=$c} {hi=$c} END{printf "%s-%s", lo, hi}'; }
printf '\n%-7s %24s %9s %24s %9s %18s %8s\n' tool "units/wall-s med (range)" slowdown \
  "units/CPU-s med (range)" slowdown "tool CPU s (range)" "RSS MB"
bw=$(med "$W/res.none" 1); bc=$(med "$W/res.none" 2)
for t in "${tools[@]}"; do
  f="$W/res.$t"
  awk -v t="$t" -v mw="$(med "$f" 1)" -v rw="$(rng "$f" 1)" -v mc="$(med "$f" 2)" \
      -v rc="$(rng "$f" 2)" -v bw="$bw" -v bc="$bc" -v tc="$(med "$f" 3)" -v rt="$(rng "$f" 3)" \
      -v rss="$(med "$f" 4)" 'BEGIN{
    printf "%-7s %8.1f (%13s) %+8.1f%% %8.1f (%13s) %+8.1f%% %6.2f (%10s) %8.1f\n", t, mw, rw,
      100 * (mw - bw) / bw, mc, rc, 100 * (mc - bc) / bc, tc, rt, rss / 1024 }'
done
echo "(slowdown: the median against none's; negative = the target did less work)"
[ -f "$W/res.peers" ] &&
  awk -v a="$(med "$W/res.rtdiag" 3)" -v b="$(med "$W/res.peers" 3)" \
    'BEGIN{ if (b > 0) printf "rtdiag CPU / peers CPU (medians): %.2f\n", a / b }'
# the ring against the recording, run by run (each round has both)
if [ -f "$W/res.ring" ] && [ -f "$W/res.rtdiag" ]; then
  paste "$W/res.ring" "$W/res.rtdiag" | awk '{ d = 100 * ($2 - $6) / $6; print d }' | sort -n |
    awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
      printf "ring against rtdiag record, units per CPU second, paired by round: median %+.1f%% (%+.1f%% .. %+.1f%%, %d rounds)\n", m, a[1], a[NR], NR }'
fi

# Part 2: RSS over a long recording
[ "$LONG" -gt 0 ] || exit 0
start_target || exit 1
"$R" record -p "$TPID" -d "$LONG" -o "$W/long.pftrace" 2>"$W/long.err" &
RP=$!
: >"$W/rss"
while kill -0 "$RP" 2>/dev/null; do
  awk '/^VmRSS/ {print $2}' "/proc/$RP/status" 2>/dev/null >>"$W/rss"
  sleep 10
done
wait "$RP"; rc=$?
stop_target
[ $rc = 0 ] || { echo "the long recording failed (exit $rc): $(cat "$W/long.err")"; exit 1; }
n=$(grep -c . "$W/rss")
printf 'RSS over a %s s recording (%d reads, every 10 s): first %s MB, median %s MB, last %s MB, highest %s MB\n' \
  "$LONG" "$n" "$(awk 'NR==1{printf "%.1f", $1/1024}' "$W/rss")" \
  "$(sort -n "$W/rss" | awk -v m=$(((n + 1) / 2)) 'NR==m{printf "%.1f", $1/1024}')" \
  "$(awk 'END{printf "%.1f", $1/1024}' "$W/rss")" "$(sort -n "$W/rss" | awk 'END{printf "%.1f", $1/1024}')"
echo "RSS reads, MB: $(awk '{printf "%.1f ", $1/1024}' "$W/rss")"
echo "its output: $(stat -c %s "$W/long.pftrace") bytes; $(grep -c . "$W/long.err") lines on stderr:"
cat "$W/long.err"
echo "uptime after: $(uptime)"
