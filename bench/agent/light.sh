#!/usr/bin/env bash
# bench/agent/light.sh - the agent's own cost, two agents A/B interleaved in
# one run (#33 item 1):
#   cost   - 2 .NET and 2 native CPU-bound workloads (the ones of run.sh)
#            run all along; per round each agent in turn (the order
#            alternating from round to round) follows them (name=) for
#            PHASE seconds, scraped every PULL_EVERY s as Grafana Alloy's
#            pyroscope.scrape does (each target's /debug/pprof/profile?
#            seconds=PULL_EVERY-1, and /metrics); its CPU (% of one core,
#            utime + stime over the phase) and RSS are read
#   churn  - then, per agent, SHORT short-lived native targets (LIFE s
#            each, 6 at a time, a name the agent follows; long enough
#            that a scan every 2 s finds each): the agent's RSS before,
#            at the most, and SETTLE s after the last one is gone, and
#            how many targets it saw (/metrics)
# Prints medians and ranges per agent, and the load average per phase.
#
# Usage: bench/agent/light.sh OLD_RTDIAG NEW_RTDIAG
# Env: ROUNDS (5; 0: the churn only) PHASE (60) PULL_EVERY (15) SHORT (150)
#      LIFE (3) SETTLE (20) AGENT_ARGS (extra options for both agents)
set -u
A_BIN=${1:?usage: light.sh OLD_RTDIAG NEW_RTDIAG}
B_BIN=${2:?usage: light.sh OLD_RTDIAG NEW_RTDIAG}
here=$(cd "$(dirname "$0")" && pwd)
ROUNDS=${ROUNDS:-5} PHASE=${PHASE:-60} PULL_EVERY=${PULL_EVERY:-15}
SHORT=${SHORT:-150} SETTLE=${SETTLE:-20} LIFE=${LIFE:-3}
CC=${CC:-cc}
. "$here/lib.sh" light
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

"$CC" -O2 -fno-omit-frame-pointer -o "$W/work" "$here/work.c" || exit 1
cp -r "$here/dotnet-work" "$W/dotnet-work-src"
DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build -c Release -o "$W/dotnet-work" \
  "$W/dotnet-work-src" > "$W/dotnet-build.log" 2>&1 || { tail -20 "$W/dotnet-build.log"; exit 1; }
for i in 1 2; do ln -s "$W/dotnet-work/dotnet-work" "$W/agl-d$i"; ln -s "$W/work" "$W/agl-n$i"; done
ln -s "$W/work" "$W/agl-s"

TOTAL=$(( ROUNDS * 2 * (PHASE + 40) + 120 ))
for i in 1 2; do
  "$W/agl-d$i" "$W/d$i.out" "$TOTAL" & PIDS+=($!)
  "$W/agl-n$i" "$W/n$i.out" "$TOTAL" & PIDS+=($!)
done
sleep 2

AG= URL=
start_agent() { # BIN NAME
  "$1" agent --listen 127.0.0.1:0 --target 'name=^agl-[dns][0-9]*$' \
    --log-level warn ${AGENT_ARGS:-} > "$W/$2.out" 2> "$W/$2.log" &
  AG=$!; PIDS+=("$AG")
  for _ in $(seq 200); do grep -q "serving http" "$W/$2.log" && break; sleep 0.1; done
  URL=$(grep -o 'http://127.0.0.1:[0-9]*' "$W/$2.log" | head -1)
  [ -n "$URL" ] || { echo "agent $2 did not start: $(cat "$W/$2.log")"; exit 1; }
}
stop_agent() { kill -TERM "$AG"; wait "$AG" 2>/dev/null; AG=; }
ntargets() { curl -s "$URL/targets" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' 2>/dev/null || echo 0; }

cost_phase() { # BIN NAME -> appends "cpu_pct rss_mb load1" to $W/cost.NAME
  start_agent "$1" "$2"
  for _ in $(seq 300); do [ "$(ntargets)" -ge 4 ] && break; sleep 0.1; done
  sleep 3 # sessions open
  local c0 t0 c1 t1 end prefixes p
  c0=$(cpu_ticks "$AG"); t0=$(date +%s.%N)
  end=$(( $(date +%s) + PHASE ))
  while [ "$(date +%s)" -lt "$end" ]; do
    curl -s -o /dev/null "$URL/metrics"
    prefixes=$(curl -s "$URL/targets" | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if "profile" in t["profiles"]:
        print(t["pprof"])')
    for p in $prefixes; do
      curl -s -o /dev/null "$URL$p/profile?seconds=$((PULL_EVERY - 1))" &
    done
    sleep "$PULL_EVERY"
  done
  wait_curls
  c1=$(cpu_ticks "$AG"); t1=$(date +%s.%N)
  local rss; rss=$(rss_kb "$AG")
  stop_agent
  awk -v a="$c0" -v b="$c1" -v t="$TCK" -v s="$t0" -v e="$t1" -v r="$rss" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
    'BEGIN { printf "%.3f %.1f %s\n", (b - a) / t / (e - s) * 100, r / 1024, l }' >> "$W/cost.$2"
  tail -1 "$W/cost.$2" | awk -v n="$2" '{ printf "  %-4s cpu %6.3f%% of a core  rss %5.1f MB  load %s\n", n, $1, $2, $3 }' >&2
}
wait_curls() { for j in $(jobs -p); do case " ${PIDS[*]} " in *" $j "*) ;; *) wait "$j" 2>/dev/null ;; esac; done; }

churn_phase() { # BIN NAME -> "rss_start peak rss_after short seen load" (MB)
  start_agent "$1" "$2"
  sleep 3
  local r0 peak r i n=0 seen
  r0=$(rss_kb "$AG"); peak=$r0
  while [ $n -lt "$SHORT" ]; do
    for i in 1 2 3 4 5 6; do "$W/agl-s" /dev/null "$LIFE" & done
    n=$((n + 6))
    wait_curls
    r=$(rss_kb "$AG"); [ "$r" -gt "$peak" ] && peak=$r
  done
  sleep "$SETTLE"
  r=$(rss_kb "$AG")
  seen=$(curl -s "$URL/metrics" | awk '/^rtdiag_agent_targets_found_total/ { print $2 }')
  stop_agent
  awk -v a="$r0" -v p="$peak" -v b="$r" -v n="$n" -v s="${seen:-?}" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
    'BEGIN { printf "%.1f %.1f %.1f %d %s %s\n", a / 1024, p / 1024, b / 1024, n, s, l }' >> "$W/churn.$2"
}

echo "bench agent light: A=$A_BIN B=$B_BIN; 2 .NET + 2 native targets, $ROUNDS rounds x ${PHASE}s each, scraped every ${PULL_EVERY}s; $(nproc) CPUs"
echo "load before: $(load)"
for k in $(seq "$ROUNDS"); do # (none with ROUNDS=0)
  if [ $((k % 2)) = 1 ]; then cost_phase "$A_BIN" A; cost_phase "$B_BIN" B
  else cost_phase "$B_BIN" B; cost_phase "$A_BIN" A; fi
done
echo "load after the cost rounds: $(load)"
churn_phase "$A_BIN" A; churn_phase "$B_BIN" B
echo "load after churn: $(load)"

med() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
rng() { sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }'; }
printf '\n%-3s %28s %22s %18s\n' "" "CPU % of a core med (range)" "RSS MB med (range)" "load1 med (range)"
[ "$ROUNDS" -gt 0 ] && for n in A B; do
  f="$W/cost.$n"
  printf '%-3s %10s (%15s) %8s (%11s) %6s (%9s)\n' "$n" \
    "$(cut -d' ' -f1 "$f" | med)" "$(cut -d' ' -f1 "$f" | rng)" \
    "$(cut -d' ' -f2 "$f" | med)" "$(cut -d' ' -f2 "$f" | rng)" \
    "$(cut -d' ' -f3 "$f" | med)" "$(cut -d' ' -f3 "$f" | rng)"
done
echo
for n in A B; do
  read -r r0 pk r1 ns seen l < "$W/churn.$n"
  echo "$n churn: $ns short-lived processes of ${LIFE}s, $seen targets seen: RSS $r0 MB at start, $pk MB at most, $r1 MB ${SETTLE}s after the last (load $l)"
done
