#!/usr/bin/env bash
# bench/agent: the continuous profiling agent over a long run, side by side
# with `perf record` of the same processes, in one run:
#   1. base   - 4 .NET and 4 native CPU-bound workloads, nothing watching
#   2. agent  - the same 8 under `rtdiag agent` (found by name=) for
#               AGENT_SECONDS (600 by default), scraped every PULL_EVERY s
#               as Grafana Alloy's pyroscope.scrape does (each target's
#               /debug/pprof/profile?seconds=PULL_EVERY-1 at once, and
#               /metrics); the agent's CPU and RSS are sampled all along
#   3. agent2 - the same with --dotnet-cpu perf (every target sampled by
#               perf at 99 Hz: the anchor's terms) for AGENT2_SECONDS (300)
#   4. perf   - the same 8 under `perf record -F 99 -g -p ...`
# Prints the agent's CPU (% of one core; the anchor is <= 1% at 19-100 Hz),
# its RSS over time (first, min, max, last), scrape latencies, each phase's
# workload throughput against the base, and each workload's work per CPU-
# second of its own (the slowdown inside the target: a profiler's cost in
# the process, apart from the cores it takes), perf record's CPU, and the
# ratios. Each workload writes its iteration count and its own CPU time,
# so the slowdown is measured, not guessed; the machine load (loadavg) is
# printed per phase, as other work on it moves the figures.
#
# Usage: bench/agent/run.sh BUILD_DIR
# Env: AGENT_SECONDS (600) AGENT2_SECONDS (300; 0 skips) AGENT2_ARGS (the
#      second agent phase's options instead of --dotnet-cpu perf) BASE_SECONDS (60)
#      PERF_SECONDS (60) PULL_EVERY (15) N_DOTNET (4) N_NATIVE (4)
# Run it alone: flock /work/locks/bench.lock bench/agent/run.sh build
set -u
B=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
AGENT_SECONDS=${AGENT_SECONDS:-600}
AGENT2_SECONDS=${AGENT2_SECONDS:-300}
BASE_SECONDS=${BASE_SECONDS:-60}
PERF_SECONDS=${PERF_SECONDS:-60}
PULL_EVERY=${PULL_EVERY:-15}
N_DOTNET=${N_DOTNET:-4}
N_NATIVE=${N_NATIVE:-4}
R="$B/rtdiag"
[ -x "$R" ] || { echo "bench agent: build first ($R missing)"; exit 1; }
command -v dotnet >/dev/null || { echo "bench agent: no dotnet SDK"; exit 1; }
command -v perf >/dev/null || { echo "bench agent: no perf (linux-perf)"; exit 1; }
CC=${CC:-cc}
. "$here/lib.sh" agent

# ---- the workloads: named agw-dN (.NET) and agw-nN (native) by symlinks
"$CC" -O2 -fno-omit-frame-pointer -o "$W/work" "$here/work.c" || exit 1
cp -r "$here/dotnet-work" "$W/dotnet-work-src"
DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build -c Release -o "$W/dotnet-work" \
  "$W/dotnet-work-src" > "$W/dotnet-build.log" 2>&1 || { tail -20 "$W/dotnet-build.log"; exit 1; }
for i in $(seq "$N_DOTNET"); do ln -s "$W/dotnet-work/dotnet-work" "$W/agw-d$i"; done
for i in $(seq "$N_NATIVE"); do ln -s "$W/work" "$W/agw-n$i"; done

WPIDS=()
start_work() { # PHASE SECONDS
  WPIDS=()
  for i in $(seq "$N_DOTNET"); do "$W/agw-d$i" "$W/$1-d$i.out" "$2" & WPIDS+=($!); done
  for i in $(seq "$N_NATIVE"); do "$W/agw-n$i" "$W/$1-n$i.out" "$2" & WPIDS+=($!); done
  PIDS+=("${WPIDS[@]}")
}
wait_work() { for p in "${WPIDS[@]}"; do wait "$p"; done; }
rate() { # PHASE d|n -> mean iterations per second of that kind
  cat "$W/$1-$2"*.out 2>/dev/null | awk '{ s += $1 / $2; n++ } END { if (n) printf "%.2f", s / n; else print 0 }'
}
rate_all() { # PHASE -> iterations per second of all workloads together
  cat "$W/$1-"*.out 2>/dev/null | awk '{ s += $1 / $2 } END { printf "%.2f", s }'
}
eff() { # PHASE d|n -> mean iterations per CPU-second of the workload itself
  # (the process's own CPU time, every thread: what a profiler costs inside
  # it — EventPipe's sampler suspending threads, perf's interrupts — apart
  # from the cores it takes, and little moved by other load)
  cat "$W/$1-$2"*.out 2>/dev/null | awk '$4 > 0 { s += $1 / $4; n++ } END { if (n) printf "%.2f", s / n; else print 0 }'
}
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

stats() { sort -n "$1" | awk '{ v[NR] = $1 }
  END { if (!NR) { print "none"; exit } i = int(NR * 0.9 + 0.5); if (i < 1) i = 1
        printf "p50 %.1f ms, p90 %.1f ms, max %.1f ms (%d)", v[int((NR + 1) / 2)], v[i], v[NR], NR }'; }
rel() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }

echo "bench agent: $N_DOTNET .NET + $N_NATIVE native CPU-bound workloads on $(nproc) CPUs"
echo "phases: base ${BASE_SECONDS}s, agent ${AGENT_SECONDS}s and ${AGENT2_SECONDS}s (scraped every ${PULL_EVERY}s), perf record ${PERF_SECONDS}s"

# ---- 1. base
L_BASE=$(load)
start_work base "$BASE_SECONDS"; wait_work
BD=$(rate base d); BN=$(rate base n); BALL=$(rate_all base)
ED=$(eff base d); EN=$(eff base n)

# ---- 2./3. the agent: agent_phase NAME SECONDS TITLE [AGENT ARGS]
agent_phase() {
  local name=$1 secs_total=$2 title=$3; shift 3
  local lavg; lavg=$(load)
  start_work "$name" "$secs_total"
  sleep 1
  "$R" agent --listen 127.0.0.1:0 --target 'name=^agw-[dn][0-9]+$' \
    --log-level warn "$@" > "$W/$name.out" 2> "$W/$name.log" &
  local ag=$!; PIDS+=("$ag")
  for _ in $(seq 100); do grep -q "serving http" "$W/$name.log" && break; sleep 0.1; done
  local url; url=$(grep -o 'http://127.0.0.1:[0-9]*' "$W/$name.log" | head -1)
  [ -n "$url" ] || { echo "agent did not start: $(cat "$W/$name.log")"; exit 1; }
  sleep 3 # targets found (scan every 2 s), sessions open
  local t0 c0 c1 t1 end secs p prefixes
  t0=$(date +%s.%N); c0=$(cpu_ticks "$ag")
  echo "$c0" > "$W/$name.startup_ticks"
  : > "$W/$name.rss"; : > "$W/$name.metrics_ms"; : > "$W/$name.pprof_over_ms"
  secs=$((PULL_EVERY - 1))
  end=$(( $(date +%s) + secs_total - 6 ))
  while [ "$(date +%s)" -lt "$end" ]; do
    echo "$(date +%s) $(rss_kb "$ag")" >> "$W/$name.rss"
    curl -s -o "$W/$name.metrics.cur" -w '%{time_total}\n' "$url/metrics" | awk '{ printf "%.1f\n", $1 * 1000 }' >> "$W/$name.metrics_ms"
    # the last /metrics that still lists the targets (they may have ended
    # before the final fetch below)
    grep -q '^rtdiag_target_profiled_cpu_seconds_total' "$W/$name.metrics.cur" 2>/dev/null && mv "$W/$name.metrics.cur" "$W/$name.metrics.txt"
    prefixes=$(curl -s "$url/targets" | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if "profile" in t["profiles"]:
        print(t["pprof"])')
    for p in $prefixes; do
      ( curl -s -o /dev/null -w '%{time_total}\n' "$url$p/profile?seconds=$secs" |
          awk -v s="$secs" '{ printf "%.1f\n", ($1 - s) * 1000 }' >> "$W/$name.pprof_over_ms" ) &
    done
    sleep "$PULL_EVERY"
  done
  sleep 1
  c1=$(cpu_ticks "$ag"); t1=$(date +%s.%N)
  echo "$(date +%s) $(rss_kb "$ag")" >> "$W/$name.rss"
  for _ in 1 2 3; do # a loaded machine can make one fetch fail
    curl -s --max-time 20 "$url/metrics" > "$W/$name.metrics.cur" &&
      grep -q '^rtdiag_target_profiled_cpu_seconds_total' "$W/$name.metrics.cur" && { mv "$W/$name.metrics.cur" "$W/$name.metrics.txt"; break; }
    sleep 1
  done
  kill -TERM "$ag"; wait "$ag" 2>/dev/null
  wait_work
  local pct asecs rss samples used
  pct=$(awk -v a="$c0" -v b="$c1" -v t="$TCK" -v s="$t0" -v e="$t1" 'BEGIN { printf "%.3f", (b - a) / t / (e - s) * 100 }')
  asecs=$(awk -v s="$t0" -v e="$t1" 'BEGIN { printf "%.0f", e - s }')
  rss=$(awk '{ r = $2 / 1024; if (NR == 1) { f = r; mn = r; mx = r } if (r < mn) mn = r; if (r > mx) mx = r; l = r }
    END { printf "first %.1f MB, min %.1f, max %.1f, last %.1f MB", f, mn, mx, l }' "$W/$name.rss")
  # over time: the RSS at each whole minute of the run (flat or growing)
  rss_min=$(awk 'NR == 1 { s = $1 } { m = int(($1 - s) / 60); if (!(m in seen)) { seen[m] = 1; printf "%s%dm %.1f", (m ? ", " : ""), m, $2 / 1024 } }
    END { print " MB" }' "$W/$name.rss")
  samples=$(awk '/^rtdiag_target_profiled_cpu_seconds_total/ { s += $NF } END { printf "%.0f", s }' "$W/$name.metrics.txt" 2>/dev/null)
  used=$(awk '/^rtdiag_process_cpu_seconds_total/ { s += $NF } END { printf "%.0f", s }' "$W/$name.metrics.txt" 2>/dev/null)
  echo "$pct" > "$W/$name.pct"
  {
    echo
    echo "rtdiag agent ($title), ${asecs}s, loadavg before $lavg:"
    echo "  CPU: ${pct}% of one core (anchor: <= 1% at 19-100 Hz); before that, $(awk -v c="$(cat "$W/$name.startup_ticks")" -v t="$TCK" 'BEGIN { printf "%.2f", c / t }') CPU-seconds in its first seconds, before the measured span (which holds the rest of its start-up)"
    echo "  RSS: $rss (sampled every ${PULL_EVERY}s)"
    echo "  RSS by minute: $rss_min"
    echo "  /metrics latency: $(stats "$W/$name.metrics_ms")"
    echo "  pprof ?seconds=$secs answered after the N seconds: $(stats "$W/$name.pprof_over_ms")"
    echo "  CPU seconds the targets' samples account for: ${samples:-?}, of the ${used:-?} CPU seconds they used since they started (the last /metrics that listed them)"
    echo "  targets' throughput against the base run: .NET $(rel "$(rate "$name" d)" "$BD"), native $(rel "$(rate "$name" n)" "$BN"), all $(rel "$(rate_all "$name")" "$BALL")"
    echo "  targets' work per own CPU-second against the base run (the slowdown inside them): .NET $(rel "$(eff "$name" d)" "$ED"), native $(rel "$(eff "$name" n)" "$EN")"
  } > "$W/$name.report"
}
agent_phase agent "$AGENT_SECONDS" \
  "defaults: .NET by EventPipe at the runtime's 1 kHz + alloc/lock/exception + counters; native by perf at 99 Hz"
if [ -n "${AGENT2_ARGS:-}" ]; then # another configuration to set beside the defaults
  # shellcheck disable=SC2086
  [ "$AGENT2_SECONDS" -gt 0 ] && agent_phase agent2 "$AGENT2_SECONDS" "$AGENT2_ARGS" $AGENT2_ARGS
else
  [ "$AGENT2_SECONDS" -gt 0 ] && agent_phase agent2 "$AGENT2_SECONDS" \
    "--dotnet-cpu perf: every target's CPU by perf at 99 Hz; .NET alloc/lock/exception + counters by EventPipe" \
    --dotnet-cpu perf
fi

# ---- 4. perf record
L_PERF=$(load)
start_work perf "$PERF_SECONDS"
sleep 1
pids=$(IFS=,; echo "${WPIDS[*]}")
perf stat -x, -o "$W/perf.stat" -e task-clock -- \
  perf record -q -F 99 -g -p "$pids" -o "$W/perf.data" -- sleep $((PERF_SECONDS - 3)) 2> "$W/perf.err"
wait_work
PERF_MS=$(awk -F, '$3 == "task-clock" { print $1 }' "$W/perf.stat")
PERF_PCT=$(awk -v ms="$PERF_MS" -v s="$((PERF_SECONDS - 3))" 'BEGIN { printf "%.3f", ms / 10 / s }')
PERF_MB=$(du -m "$W/perf.data" | cut -f1)
rstart=$(date +%s.%N)
perf report -i "$W/perf.data" --stdio > /dev/null 2>&1
REPORT_S=$(awk -v s="$rstart" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')

# ---- results
cat "$W/agent.report"
[ -f "$W/agent2.report" ] && cat "$W/agent2.report"
echo
echo "perf record -F 99 -g -p (the 8 pids), $((PERF_SECONDS - 3))s, loadavg before $L_PERF:"
echo "  CPU: ${PERF_PCT}% of one core; perf.data ${PERF_MB} MB; perf report afterwards ${REPORT_S}s"
echo "  targets' throughput against the base run: .NET $(rel "$(rate perf d)" "$BD"), native $(rel "$(rate perf n)" "$BN"), all $(rel "$(rate_all perf)" "$BALL")"
echo "  targets' work per own CPU-second against the base run: .NET $(rel "$(eff perf d)" "$ED"), native $(rel "$(eff perf n)" "$EN")"
echo "base run: loadavg before $L_BASE; iterations/s .NET $BD, native $BN; per CPU-second .NET $ED, native $EN"
echo "(throughput: the 8 busy workloads share 2 cores, so the scheduler's split between .NET and native moves; 'all' sums them, and its loss is the profiler's cost to the machine)"
echo "(throughput ratios compare phases run one after another: on a machine others load, the load moves them more than the profilers do)"
A1=$(cat "$W/agent.pct")
line="ratios: agent CPU / perf record CPU = $(rel "$A1" "$PERF_PCT"); agent CPU / 1% anchor = $(rel "$A1" 1)"
if [ -f "$W/agent2.pct" ]; then
  A2=$(cat "$W/agent2.pct")
  line="$line; with --dotnet-cpu perf: $(rel "$A2" "$PERF_PCT") and $(rel "$A2" 1)"
fi
echo "$line"
