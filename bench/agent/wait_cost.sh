#!/usr/bin/env bash
# bench/agent/wait_cost.sh: what the wait events (/block, .NET 9+) cost,
# in one run: the agent with its default .NET profiles against the same
# without `wait`, on a .NET program that does nothing but wait
# (tests/targets/dotnet-wait pingpong: PAIRS pairs of threads handing a
# turn back and forth through AutoResetEvents, two waits a turn), first
# as fast as it can (the worst case: every wait a Start and a Stop event
# with a stack), then sleeping SLEEP_MS between turns (a service's pace).
# For each: the agent's CPU (% of one core, from /proc/PID/stat over the
# measured span after a warm-up), the target's turns a second (its
# slowdown) and waits a second, against a run with no agent, and the waits
# the agent recorded a second (/block's contentions over the measured span:
# a wait that finds its event already set sends no event). Phases run one
# after another, so the machine's load (printed) moves them: read the
# ratios of one run.
#
# Usage: bench/agent/wait_cost.sh BUILD_DIR
# Env: SECONDS_EACH (20) WARMUP (5) PAIRS (2) SLEEP_MS (1)
# Run it alone: flock /work/locks/bench.lock bench/agent/wait_cost.sh build
set -u
B=$(cd "${1:?usage: wait_cost.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$here/../.." && pwd)
SECONDS_EACH=${SECONDS_EACH:-20}
WARMUP=${WARMUP:-5}
PAIRS=${PAIRS:-2}
SLEEP_MS=${SLEEP_MS:-1}
R="$B/rtdiag"
[ -x "$R" ] || { echo "wait_cost: build first ($R missing)"; exit 1; }
command -v dotnet >/dev/null || { echo "wait_cost: no dotnet SDK"; exit 1; }
. "$here/lib.sh" wait
GO=
for v in 1.23 1.22 1.19; do [ -x /usr/lib/go-$v/bin/go ] && { GO=/usr/lib/go-$v/bin/go; break; }; done
export PPROF_TMPDIR="$W/pprof"
cp -r "$SRC/tests/targets/dotnet-wait" "$W/src"
DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build -c Release -o "$W/bin" \
  "$W/src" > "$W/build.log" 2>&1 9>&- || { tail -20 "$W/build.log"; exit 1; }


# phase NAME SLEEP AGENT_PROFILES|-: prints one line of figures
phase() {
  local name=$1 sleep=$2 prof=$3 d="$W/$1"
  mkdir -p "$d"
  "$W/bin/dotnet-wait" "$d" pingpong "$PAIRS" "$sleep" > "$d/out" 2>&1 &
  local tp=$! ap=
  PIDS+=("$tp")
  for _ in $(seq 300); do [ -s "$d/ready" ] && break; sleep 0.1; done
  if [ "$prof" != - ]; then
    "$R" agent --listen 127.0.0.1:0 --target "pid=$tp,service=w" --dotnet-counters none --log-level info \
      --dotnet-profiles "$prof" --max-cpu 800% > "$d/agent.out" 2> "$d/agent.log" &
    ap=$!
    PIDS+=("$ap")
  fi
  sleep "$WARMUP"
  local a0=0 a1=0 l0 l1
  [ -n "$ap" ] && a0=$(cpu_ticks "$ap")
  local t0; t0=$(date +%s.%N)
  l0=$(cut -d' ' -f1 /proc/loadavg)
  # the program writes its turns once, at stop: turns/s are over the
  # warm-up and the measured span together (the agent's CPU over the span)
  local rec=0
  if [ -n "$ap" ] && [ -n "$GO" ] && [[ $prof == *wait* ]]; then
    # the waits the agent records over the span: /block?seconds=N
    local url; url=$(grep -o 'http://127.0.0.1:[0-9]*' "$d/agent.log" | head -1)
    "$GO" tool pprof -raw "$url/targets/w/debug/pprof/block?seconds=$SECONDS_EACH" > "$d/block.txt" 2>&1
    rec=$(awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && $2 ~ /:$/ { n += $1 } END { print n + 0 }' "$d/block.txt")
  else
    sleep "$SECONDS_EACH"
  fi
  [ -n "$ap" ] && a1=$(cpu_ticks "$ap")
  local t1; t1=$(date +%s.%N)
  l1=$(cut -d' ' -f1 /proc/loadavg)
  touch "$d/stop"
  wait "$tp"
  [ -n "$ap" ] && { kill -TERM "$ap"; wait "$ap"; }
  local turns; turns=$(cat "$d/turns" 2>/dev/null || echo 0)
  local el; el=$(echo "$t1 - $t0" | bc -l)
  python3 - "$name" "$turns" "$a0" "$a1" "$el" "$WARMUP" "$TCK" "$l0" "$l1" "$rec" <<'PY'
import sys
name, turns, a0, a1, el, warm, tck, l0, l1, rec = sys.argv[1:]
turns, el = int(turns), float(el)
span = el + float(warm)  # the program ran warm-up + measured span
cpu = (int(a1) - int(a0)) / int(tck) / el * 100
print("%-26s turns/s %8.0f  waits/s %8.0f  recorded/s %7.0f  agent CPU %5.2f%% of a core  (load %s -> %s)"
      % (name, turns / span, 2 * turns / span, int(rec) / el, cpu, l0, l1))
PY
}

echo "wait_cost: $PAIRS pairs, ${SECONDS_EACH}s each after ${WARMUP}s warm-up; $(uptime)"
phase "busy, no agent" 0 - | tee "$W/r1"
phase "busy, agent without wait" 0 cpu,alloc,lock,exception | tee "$W/r2"
phase "busy, agent with wait" 0 cpu,alloc,lock,exception,wait | tee "$W/r3"
phase "paced, no agent" "$SLEEP_MS" - | tee "$W/r4"
phase "paced, agent without wait" "$SLEEP_MS" cpu,alloc,lock,exception | tee "$W/r5"
phase "paced, agent with wait" "$SLEEP_MS" cpu,alloc,lock,exception,wait | tee "$W/r6"
python3 - "$W" <<'PY'
import re, sys
w = sys.argv[1]
def f(i):
    s = open("%s/r%d" % (w, i)).read()
    return float(re.search(r"turns/s\s+(\S+)", s)[1]), float(re.search(r"CPU\s+(\S+)%", s)[1])
for label, base, off, on in (("busy", 1, 2, 3), ("paced", 4, 5, 6)):
    b, _ = f(base); t0, c0 = f(off); t1, c1 = f(on)
    print("%s: agent CPU with wait / without = %.2f%% / %.2f%% (x%.1f); target turns/s with / without agent-with-wait: %.2f"
          % (label, c1, c0, c1 / c0 if c0 else float("nan"), t1 / b if b else float("nan")))
PY
echo "end: $(uptime)"
