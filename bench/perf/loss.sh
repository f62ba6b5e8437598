#!/usr/bin/env bash
# perf loss bench: system-wide tracepoints (sched:sched_switch,
# sched:sched_wakeup by default) at each tool's DEFAULT ring size, traced
# for SECONDS by `rtdiag perf trace -a` (with its reader thread, and
# without: --no-reader-thread), Debian's `perf trace -a` and
# `perf record -a`, one after the other, ROUNDS times, on a machine kept
# loaded: two CPU hogs (yes) and a context-switch flood (perf bench sched
# pipe) besides whatever else runs. Prints per run the events delivered
# and lost (rtdiag: --stats' exact count; perf trace: the sum of its
# "LOST n events!" lines; perf record: perf report --stats' LOST
# records), and the load average.
# Usage: bench/perf/loss.sh BUILD_DIR [SECONDS] [ROUNDS] [EVENTS...]
# RTDIAG_PAGES=N runs rtdiag with -m N instead of its default; RTDIAG=PATH
# another rtdiag (an older build, to compare); FLOOD=0 leaves the
# context-switch flood out (the hogs and the machine's own load stay),
# FLOOD=burst makes it bursts (50000 round trips, then 0.5 s of rest);
# TOOLS="rtdiag perf-record" picks the tools: rtdiag (its default, the
# reader thread), rtdiag-1thread (--no-reader-thread: the rings read on
# the printing thread), perf-trace, perf-record.
set -u
B=${1:?build dir}; S=${2:-10}; ROUNDS=${3:-3}
shift; [ $# -gt 0 ] && shift; [ $# -gt 0 ] && shift
EVS=("$@"); [ ${#EVS[@]} -gt 0 ] || EVS=(sched:sched_switch sched:sched_wakeup)
R=${RTDIAG:-$B/rtdiag}
[ "$(id -u)" = 0 ] || { echo "bench perf loss: needs root"; exit 1; }
command -v perf >/dev/null || { echo "bench perf loss: perf (linux-perf) not installed"; exit 1; }
[ -x "$R" ] || { echo "bench perf loss: build first ($R missing)"; exit 1; }
W=$(mktemp -d); LOAD=()
# each load in a process group of its own (setsid): perf bench forks its
# partner, which a kill of the parent alone would leave running
stop_load() { for p in "${LOAD[@]}"; do kill -- -"$p" 2>/dev/null; done; for p in "${LOAD[@]}"; do wait "$p" 2>/dev/null; done; LOAD=(); }
trap 'stop_load; rm -rf "$W"' EXIT
E=(); for e in "${EVS[@]}"; do E+=(-e "$e"); done
M=(); [ -n "${RTDIAG_PAGES:-}" ] && M=(-m "$RTDIAG_PAGES")

one() { # tool -> "delivered lost"
  setsid yes > /dev/null & LOAD+=($!)
  setsid yes > /dev/null & LOAD+=($!)
  case ${FLOOD:-1} in
  0) ;;
  burst) setsid bash -c 'while :; do perf bench sched pipe -l 50000 > /dev/null 2>&1; sleep 0.5; done' & LOAD+=($!) ;;
  *) setsid perf bench sched pipe -l 100000000 > /dev/null 2>&1 & LOAD+=($!) ;;
  esac
  case $1 in
  rtdiag|rtdiag-1thread)
    NR=(); [ "$1" = rtdiag-1thread ] && NR=(--no-reader-thread)
    "$R" perf trace -a "${E[@]}" "${M[@]}" "${NR[@]}" -d "$S" --stats > "$W/out" 2> "$W/err"
    echo "$(wc -l < "$W/out") $(sed -n 's/.* lost \([0-9]*\) (.*/\1/p' "$W/err" | head -1)" ;;
  perf-trace)
    # perf trace writes its events (and LOST lines) on stderr
    timeout -s INT "$S" perf trace -a "${E[@]}" > /dev/null 2> "$W/err"
    echo "$(grep -vc 'LOST [0-9]* events' "$W/err") $(awk '/LOST [0-9]+ events/{s+=$2} END{print s+0}' "$W/err")" ;;
  perf-record)
    perf record -q -a "${E[@]}" -o "$W/perf.data" -- sleep "$S" > /dev/null 2>&1
    perf report -i "$W/perf.data" --stats 2> /dev/null > "$W/st"
    echo "$(awk '/^ *SAMPLE events:/{print $3; exit}' "$W/st") $(awk '/^ *LOST events:/{print $3; exit}' "$W/st")"
    rm -f "$W/perf.data" ;;
  esac
  stop_load
}

echo "perf loss bench: ${EVS[*]} system-wide, $S s a run, $ROUNDS rounds, default rings${RTDIAG_PAGES:+ (rtdiag -m $RTDIAG_PAGES)}"
printf "%-12s %12s %10s %8s  %s\n" tool delivered lost lost% load
for r in $(seq "$ROUNDS"); do
  for tool in ${TOOLS:-rtdiag rtdiag-1thread perf-trace perf-record}; do
    read -r d l <<< "$(one $tool)"
    d=${d:-0}; l=${l:-0}
    printf "%-12s %12s %10s %8s  %s\n" $tool "$d" "$l" \
      "$(awk -v d="$d" -v l="$l" 'BEGIN{printf "%.3f", (d + l) ? 100 * l / (d + l) : 0}')" \
      "$(cut -d' ' -f1-3 /proc/loadavg)"
  done
done
