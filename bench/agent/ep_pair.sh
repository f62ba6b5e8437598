#!/usr/bin/env bash
# bench/agent/ep_pair.sh - the CPU of two agents' EventPipe sources, both at
# once on the same two .NET targets (dotnet-kinds `steady` and `alloc`, with
# --dotnet-cpu eventpipe and the default counters). Each agent has its own
# sessions, so the runtime writes the same events to both; their CPU is read
# over the same PHASE seconds, so a busy machine weighs on both alike. Per
# round two fresh agents, the start order alternating; every PULL seconds
# each is scraped (/metrics, each target's profile and allocs). Per round:
# both agents' utime+stime ticks (the whole process) and the run time of
# their main thread, the poll loop (/proc/PID/schedstat, ns), each as B/A,
# and the load average. Prints the medians and ranges of B/A.
#
# Usage: bench/agent/ep_pair.sh A_RTDIAG B_RTDIAG DOTNET_KINDS_DIR
#   DOTNET_KINDS_DIR: a build's dotnet-targets/dotnet-kinds
# Env: ROUNDS (7) PHASE (30) PULL (10)
#      PROMPT=1 runs both agents SCHED_FIFO (chrt -f 10): each wakes as soon
#      as bytes come, as on an idle machine (small rounds), whatever the load
set -u
A=${1:?usage: ep_pair.sh A_RTDIAG B_RTDIAG DOTNET_KINDS_DIR}
B=${2:?usage: ep_pair.sh A_RTDIAG B_RTDIAG DOTNET_KINDS_DIR}
KD=$(cd "${3:?usage: ep_pair.sh A_RTDIAG B_RTDIAG DOTNET_KINDS_DIR}" && pwd) || exit 2
ROUNDS=${ROUNDS:-7} PHASE=${PHASE:-30} PULL=${PULL:-10}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh" ep-pair
RUN=(); [ "${PROMPT:-0}" = 1 ] && RUN=(chrt -f 10)
cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }
mkdir -p "$W/s1" "$W/s2"
ln -s "$KD/dotnet-kinds" "$W/epp-k1"; ln -s "$KD/dotnet-kinds" "$W/epp-k2"
"$W/epp-k1" "$W/s1" steady & PIDS+=($!)
"$W/epp-k2" "$W/s2" alloc & PIDS+=($!)
sleep 5
declare -A URL PID
start() { # NAME RTDIAG
  "${RUN[@]}" "$2" agent --listen 127.0.0.1:0 --target 'name=^epp-k[0-9]$' \
    --dotnet-cpu eventpipe --log-level warn > "$W/$1.out" 2> "$W/$1.log" &
  PID[$1]=$!; PIDS+=($!)
}
ready() { # NAME: serving, both targets attached
  for _ in $(seq 200); do grep -q "serving http" "$W/$1.log" && break; sleep 0.1; done
  URL[$1]=$(grep -o 'http://127.0.0.1:[0-9]*' "$W/$1.log" | head -1)
  for _ in $(seq 300); do
    c=$(curl -s "${URL[$1]}/targets" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' 2>/dev/null || echo 0)
    [ "$c" -ge 2 ] && break; sleep 0.1
  done
}
scrape() { # NAME: /metrics now, each target's profile and allocs over PULL-1 s
  curl -s -o /dev/null "${URL[$1]}/metrics"
  for p in $(curl -s "${URL[$1]}/targets" | python3 -c 'import json,sys
for t in json.load(sys.stdin): print(t["pprof"])'); do
    curl -s -o /dev/null "${URL[$1]}$p/profile?seconds=$((PULL - 1))" & CP+=($!)
    curl -s -o /dev/null "${URL[$1]}$p/allocs?seconds=$((PULL - 1))" & CP+=($!)
  done
}
for k in $(seq "$ROUNDS"); do
  if [ $((k % 2)) = 1 ]; then start A "$A"; start B "$B"; else start B "$B"; start A "$A"; fi
  ready A; ready B
  sleep 3
  a0=$(cpu_ticks "${PID[A]}") b0=$(cpu_ticks "${PID[B]}")
  an0=$(cpu_ns "${PID[A]}") bn0=$(cpu_ns "${PID[B]}") l0=$(cut -d' ' -f1 /proc/loadavg)
  end=$(($(date +%s) + PHASE)) CP=()
  while [ "$(date +%s)" -lt "$end" ]; do scrape A; scrape B; sleep "$PULL"; done
  for c in "${CP[@]}"; do wait "$c" 2>/dev/null; done
  a1=$(cpu_ticks "${PID[A]}") b1=$(cpu_ticks "${PID[B]}")
  an1=$(cpu_ns "${PID[A]}") bn1=$(cpu_ns "${PID[B]}") l1=$(cut -d' ' -f1 /proc/loadavg)
  kill -TERM "${PID[A]}" "${PID[B]}"; wait "${PID[A]}" "${PID[B]}" 2>/dev/null
  echo "$((a1 - a0)) $((b1 - b0)) $(((an1 - an0) / 1000000)) $(((bn1 - bn0) / 1000000)) $l0 $l1" |
    awk '{ printf "round ticks A %d B %d B/A %.4f  main thread ms A %d B %d B/A %.4f  load %s-%s\n", $1, $2, $2/$1, $3, $4, $4/$3, $5, $6 }' |
    tee -a "$W/pairs"
done
med() { sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "median %.3f range %.3f-%.3f (n=%d)", m, v[1], v[NR], NR }'; }
echo "B/A ticks:       $(awk '{ print $8 }' "$W/pairs" | med)"
echo "B/A main thread: $(awk '{ print $17 }' "$W/pairs" | med)"
echo "load: $(awk '{ print $19 }' "$W/pairs" | tr '-' '\n' | sort -n | sed -n '1p;$p' | paste -sd-)"
