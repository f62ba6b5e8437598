#!/usr/bin/env bash
# bench/dotnet/slowdown.sh [BUILD] - how much a .NET program loses while a
# tool observes it: rtdiag against dotnet-trace, alternating, in one run.
#
# The target (bench/dotnet/dotnet-bench-work) counts small units of work
# (~5 ms each) on its main thread. For each run the target is started and
# warmed up, a mark is set, the tool runs for SECS seconds (attach, session,
# stop, rundown, exit: all of it), a second mark is set; the target prints
# the units, its own CPU (every thread, the runtime's EventPipe threads
# included) and the wall time between the marks. 'none' waits SECS seconds.
#
# Per tool: median and range over RUNS runs of the target's units per wall
# second (what its users feel: the two cores are shared with the tool) and
# per CPU second (the work the target's process spends on being observed),
# the slowdown of each median against 'none', and the tool's own CPU
# (user+sys), peak RSS and voluntary context switches (wake-ups). The order of the tools rotates from run to run,
# so drift in the machine's load reaches every tool alike. 'others' is the
# CPU the rest of the machine used during the runs (cores), from /proc/stat.
#
# Environment:
#   RUNS=7  SECS=6  MODE=cpu|mixed (the target's work)
#   TOOLS="none rt-profile rt-collect dt-default dt-same"   what to compare:
#     none        no tool
#     rt-profile  rtdiag dotnet profile -o FILE.folded
#     rt-collect  rtdiag dotnet collect -o FILE.nettrace (its default providers)
#     rt-cpu      rtdiag dotnet profile --cpu (perf_event at 99 Hz, JIT frames
#                 named by the runtime's perf map; no EventPipe session)
#     rt-cpu-ep   rtdiag dotnet profile --cpu --sampler eventpipe (EventPipe's
#                 sampler, the fallback)
#     dt-default  dotnet-trace collect (its default: dotnet-common +
#                 dotnet-sampled-thread-time)
#     dt-same     dotnet-trace collect --providers "what rtdiag's profile
#                 requests" (so both sessions ask the runtime the same)
#     rt-TYPE     rtdiag dotnet profile --type TYPE (alloc, lock, exception)
#     rt0-...     the same with the rtdiag binary R0 (before/after a change,
#                 side by side in one run)
#     dt-TYPE     dotnet-trace collect with the providers of that type
#   RT_PROFILE_ARGS / RT_COLLECT_ARGS: extra arguments for rtdiag (split at spaces)
#   DT: a dotnet-trace to use (else the pinned version is installed into
#       BUILD/bench-tools from NuGet)
# Every tool run must exit 0 and write its output (a trace must not be
# empty), else the bench stops: a tool that failed would be measured as
# "no slowdown".
set -uo pipefail
B=$(cd "${1:-build}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
R="$B/rtdiag"
RUNS=${RUNS:-7} SECS=${SECS:-6} MODE=${MODE:-cpu}
TOOLS=${TOOLS:-none rt-profile rt-collect dt-default dt-same}
DT_VERSION=10.0.750501
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
[ -x "$R" ] || { echo "no $R: build first"; exit 1; }
command -v dotnet >/dev/null || { echo "SKIP: no dotnet SDK"; exit 0; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package 'time')"; exit 1; }

if [ -z "${DT:-}" ]; then
  DT="$B/bench-tools/dotnet-trace"
  if [ ! -x "$DT" ]; then
    dotnet tool install --tool-path "$B/bench-tools" dotnet-trace \
      --version "$DT_VERSION" >/dev/null 2>&1 ||
      { echo "could not install dotnet-trace $DT_VERSION from NuGet"; exit 1; }
  fi
fi
export RTD_SOURCE_DIR=$SRC RTD_BINARY_DIR=$B
WK=$(bash "$SRC/tests/integration/dotnet/build.sh" dotnet-bench-work bench/dotnet) || exit 1
W=$(mktemp -d /tmp/rtd-slow.XXXXXX)
TPID=
cleanup() {
  [ -n "$TPID" ] && kill -9 "$TPID" 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT

# What rtdiag's CPU profile asks the runtime for, in dotnet-trace's syntax
# (rtdiag prints its request with --dry-run).
same_providers() { "$R" dotnet profile --dry-run "$@" 2>/dev/null | sed -n 's/^providers: //p'; }
DT_SAME=$(same_providers) || true
[ -n "$DT_SAME" ] || { echo "rtdiag dotnet profile --dry-run printed no providers"; exit 1; }

dur_dt() { printf '00:00:00:%02d' "$1"; }

# tool_cmd NAME PID: the tool's command for SECS seconds into the array CMD
tool_cmd() {
  local t=$1 p=$2
  case $t in
    none) CMD=(sleep "$SECS"); echo ok >"$W/out.none" ;;
    rt0-*) [ -x "${R0:-}" ] || { echo "rt0-* tools want R0=another rtdiag" >&2; return 2; }
           local r=$R; R=$R0; tool_cmd "rt-${t#rt0-}" "$p"; local rc=$?; R=$r; return $rc ;;
    rt-profile) CMD=("$R" dotnet profile -p "$p" --duration "$SECS" ${RT_PROFILE_ARGS:-} -o "$W/out.$t.folded") ;;
    rt-cpu) CMD=("$R" dotnet profile -p "$p" --duration "$SECS" --cpu ${RT_PROFILE_ARGS:-} -o "$W/out.$t.folded") ;;
    rt-cpu-ep) CMD=("$R" dotnet profile -p "$p" --duration "$SECS" --cpu --sampler eventpipe ${RT_PROFILE_ARGS:-} -o "$W/out.$t.folded") ;;
    rt-collect) CMD=("$R" dotnet collect -p "$p" --duration "$SECS" ${RT_COLLECT_ARGS:-} -o "$W/out.$t.nettrace") ;;
    rt-*) CMD=("$R" dotnet profile -p "$p" --duration "$SECS" --type "${t#rt-}" ${RT_PROFILE_ARGS:-} -o "$W/out.$t.folded") ;;
    dt-default) CMD=("$DT" collect -p "$p" --duration "$(dur_dt "$SECS")" -o "$W/out.$t.nettrace") ;;
    dt-same) CMD=("$DT" collect -p "$p" --providers "$DT_SAME" --duration "$(dur_dt "$SECS")" -o "$W/out.$t.nettrace") ;;
    dt-*) CMD=("$DT" collect -p "$p" --providers "$(same_providers --type "${t#dt-}")" \
            --duration "$(dur_dt "$SECS")" -o "$W/out.$t.nettrace") ;;
    *) echo "unknown tool $t" >&2; return 2 ;;
  esac
}

# /proc/stat: busy and total jiffies of the whole machine
cpu_jiffies() { awk '/^cpu /{b=$2+$3+$4+$7+$8+$9; t=b+$5+$6; print b, t; exit}' /proc/stat; }
HZ=$(getconf CLK_TCK)

# one_run TOOL -> "units_per_wall_s units_per_cpu_s tool_cpu_s tool_rss_kb others_cores tool_wakeups"
one_run() {
  local t=$1
  rm -f "$W"/out.* "$W/target.out"
  mkfifo "$W/ctl" 2>/dev/null || true
  "$WK/dotnet-bench-work" "$MODE" <"$W/ctl" >"$W/target.out" 2>&1 &
  TPID=$!
  exec 7>"$W/ctl"
  local i=0
  until grep -q '^ready' "$W/target.out" 2>/dev/null; do
    sleep 0.05; i=$((i+1))
    [ $i -lt 400 ] || { echo "target did not start" >&2; return 1; }
  done
  read -r b0 t0 < <(cpu_jiffies)
  echo mark >&7
  tool_cmd "$t" "$TPID" || return 1
  /usr/bin/time -f '%U %S %M %w' -o "$W/time" "${CMD[@]}" >"$W/tool.log" 2>&1 </dev/null
  local rc=$?
  echo mark >&7
  read -r b1 t1 < <(cpu_jiffies)
  exec 7>&-
  wait "$TPID" 2>/dev/null
  rm -f /tmp/dotnet-diagnostic-"$TPID"-*-socket
  TPID=
  local out
  out=$(ls "$W"/out.* 2>/dev/null | head -1)
  if [ $rc -ne 0 ] || [ -z "$out" ]; then
    echo "$t failed (exit $rc) or wrote no file; its output:" >&2
    cat "$W/tool.log" >&2
    return 1
  fi
  # an empty profile is an answer (nothing of that kind happened); an
  # empty trace is not
  case $out in *.nettrace) [ -s "$out" ] || { echo "$t wrote an empty trace" >&2; cat "$W/tool.log" >&2; return 1; } ;; esac
  local line
  line=$(grep '^window' "$W/target.out" | tail -1)
  [ -n "$line" ] || { echo "target printed no window" >&2; cat "$W/target.out" >&2; return 1; }
  awk -v l="$line" -v tm="$(tail -1 "$W/time")" -v db=$((b1-b0)) -v hz="$HZ" 'BEGIN{
    n=split(l, f, /[ =]/); for (i=2;i<n;i+=2) v[f[i]]=f[i+1]
    split(tm, x, " "); tc=x[1]+x[2]
    others=(db/hz - v["cpu_ms"]/1000 - tc) / (v["wall_ms"]/1000)
    if (others < 0) others=0
    printf "%.2f %.2f %.3f %d %.2f %d\n", v["units"]*1000/v["wall_ms"], v["units"]*1000/v["cpu_ms"], tc, x[3], others, x[4] }'
}

read -r -a tools <<<"$TOOLS"
echo "rtdiag $("$R" --version | cut -d' ' -f2), dotnet-trace $("$DT" --version | cut -d+ -f1), target $MODE, $RUNS runs x ${SECS} s per tool, $(nproc) cores"
echo "rtdiag's profile session, as dotnet-trace providers: $DT_SAME"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for k in $(seq 0 $((RUNS-1))); do
  n=${#tools[@]}
  for j in $(seq 0 $((n-1))); do
    t=${tools[$(( (j + k) % n ))]}
    r=$(one_run "$t") || exit 1
    echo "$r" >>"$W/res.$t"
    printf '  run %d %-11s wall %8s u/s  cpu %8s u/s  tool cpu %6s s  rss %6s kB  others %s cores  wake-ups %s\n' \
      $((k+1)) "$t" $r >&2
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# med FILE COL; range FILE COL
med() { sort -n -k"$2" "$1" | awk -v c="$2" '{a[NR]=$c} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
rng() { sort -n -k"$2" "$1" | awk -v c="$2" 'NR==1{lo=$c} {hi=$c} END{printf "%s-%s", lo, hi}'; }
printf '\n%-11s %22s %9s %22s %9s %10s %8s %8s %7s\n' tool "units/wall-s med (range)" slowdown \
  "units/CPU-s med (range)" slowdown "tool CPU s" "RSS MB" wake-ups others
bw=$(med "$W/res.none" 1 2>/dev/null || echo 0); bc=$(med "$W/res.none" 2 2>/dev/null || echo 0)
for t in "${tools[@]}"; do
  f="$W/res.$t"
  mw=$(med "$f" 1); mc=$(med "$f" 2)
  awk -v t="$t" -v mw="$mw" -v rw="$(rng "$f" 1)" -v mc="$mc" -v rc="$(rng "$f" 2)" \
      -v bw="$bw" -v bc="$bc" -v tc="$(med "$f" 3)" -v rss="$(med "$f" 4)" -v o="$(med "$f" 5)" -v wk="$(med "$f" 6)" 'BEGIN{
    sw = bw > 0 ? sprintf("%+.1f%%", 100*(mw-bw)/bw) : "-"
    sc = bc > 0 ? sprintf("%+.1f%%", 100*(mc-bc)/bc) : "-"
    printf "%-11s %8.1f (%11s) %9s %8.1f (%11s) %9s %10.3f %8.1f %8d %7.2f\n", t, mw, rw, sw, mc, rc, sc, tc, rss/1024, wk, o }'
done
echo "(slowdown: the median against none's; negative = the target did less work; others = CPU cores the rest of the machine used, median)"
