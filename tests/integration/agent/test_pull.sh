#!/usr/bin/env bash
# The agent's pull side against real peers, all on 127.0.0.1:
# - a real .NET 10 program (tests/targets/dotnet-target, burning CPU in
#   RtdiagBurn.Spin -> Hash) profiled over EventPipe, and a native one
#   (tests/targets/perf-cpu: CPU split 1:2:3 between alpha, beta, gamma)
#   sampled with perf;
# - `go tool pprof -raw URL/.../debug/pprof/profile?seconds=3` (Debian's
#   Go, as Parca and Alloy fetch) reads both CPU profiles, hot functions in
#   them;
# - /targets is JSON with pid, service, runtime and the pprof prefix;
# - `promtool check metrics` accepts /metrics;
# - Debian's prometheus server, started here with a generated scrape
#   config, has the agent's series with their labels after two scrapes.
. "$(dirname "$0")/lib.sh"
command -v dotnet >/dev/null 2>&1 || skip "no dotnet SDK on PATH"
[ -n "$GO" ] || skip "no Go toolchain (go tool pprof) in /usr/lib/go-1.*"
TD=$(build_dotnet dotnet-target tests/targets) || { echo "FAIL: dotnet build"; exit 1; }
export PPROF_TMPDIR="$WORK/pprof"   # where go tool pprof keeps what it fetched

start_program TPID "$TD/dotnet-target" "$WORK/t" burn || { bad "the .NET target did not start"; exit 1; }

NAT="$BIN/tests/targets/cpu_shares_fp"
[ -x "$NAT" ] || { bad "build: $NAT missing"; exit 1; }
"$NAT" 60 > /dev/null &
NPID=$!
PIDS+=("$NPID")

SVC=rtdtest-pull-$$
# the native program at 999 Hz: at the default 99 Hz a 3 s window under
# load holds ~80 samples and the 1:2:3 ranking was lost once in a landing
# (beta 53%, gamma 29%); no CPU cap then (the caps have their own test)
# .NET CPU from EventPipe's sampler (the checks below are of its managed
# threads and its safe-point bias; perf, the default, sees the runtime's
# own threads too: 82% in Spin, not 90%, in one run; test_dotnet and
# test_follow check perf's .NET profiles)
start_agent --target "pid=$TPID,service=$SVC" --target "pid=$NPID,service=native-$$" \
  --scan-interval 200ms --label suite=agent-test --cpu-hz 999 --max-cpu 800% \
  --dotnet-cpu eventpipe || { bad "agent did not start"; exit 1; }
ok "agent serving $AGENT_URL"
wait_for 10 has_target "$TPID" || { bad "target $TPID not listed"; cat "$AGENT_LOG"; exit 1; }
# the session up and its first counters read: the runtime's own work of
# being observed is done (its EventSources build their manifests by
# reflection as the session enables them, on the program's threads, up to
# 1.9 s of CPU at load 23: not the program's profile checked below)
session_up() { curl -sf "$AGENT_URL/metrics" | grep -q "^dotnet_.*pid=\"$TPID\""; }
wait_for 10 session_up || bad "no counters of $TPID in /metrics"

# ---- /targets
curl -sf "$AGENT_URL/targets" > "$WORK/targets.json"
python3 - "$WORK/targets.json" "$TPID" "$SVC" <<'PY' && ok "/targets: pid, service, runtime dotnet, pprof prefix" || bad "/targets: $(cat "$WORK/targets.json")"
import json, sys
arr = json.load(open(sys.argv[1]))
t = [x for x in arr if x["pid"] == int(sys.argv[2])]
assert len(t) == 1, arr
t = t[0]
assert t["service"] == sys.argv[3], t
assert t["runtime"] == "dotnet", t
assert t["pprof"] == "/targets/%s/debug/pprof" % sys.argv[3], t
assert "profile" in t["profiles"], t
PY

# ---- go tool pprof reads a 3 s CPU profile, as a scraper fetches it
PURL="$AGENT_URL/targets/$SVC/debug/pprof/profile?seconds=3"
t0=$(date +%s.%N)
"$GO" tool pprof -raw "$PURL" > "$WORK/raw.txt" 2> "$WORK/raw.err"; rc=$?
t1=$(date +%s.%N)
if [ $rc = 0 ] && grep -q "RtdiagBurn.Hash" "$WORK/raw.txt" && grep -q "RtdiagBurn.Spin" "$WORK/raw.txt"; then
  ok "go tool pprof -raw $PURL: a CPU profile with RtdiagBurn.Spin -> Hash ($(python3 -c "print('%.1f' % ($t1 - $t0))") s)"
else
  bad "go tool pprof -raw: rc $rc: $(head -c 600 "$WORK/raw.err") $(head -c 600 "$WORK/raw.txt")"
fi
grep -q "PeriodType: cpu nanoseconds" "$WORK/raw.txt" && grep -q "^Samples:" "$WORK/raw.txt" \
  && ok "pprof: cpu nanoseconds period type, samples" || bad "pprof header: $(head -5 "$WORK/raw.txt")"
# the burn holds the time (in the profile fetched above): RtdiagBurn.Spin
# and what it calls; the runtime's sampler stops a thread at a safe point,
# so the time of Hash's call-free loop partly shows at the GC poll in Spin
"$GO" tool pprof -top -cum -nodecount=20 "$(ls "$PPROF_TMPDIR"/*.pb.gz | head -1)" > "$WORK/top.txt" 2>/dev/null
# of the time the agent's own counters (--dotnet-counters: the runtime's
# CounterGroup polling thread, 11% of a 3 s window at load 40 while it
# first compiled its event types) leave to the program
cum() { awk -v re="$1" '$0 ~ re { sub(/%/, "", $5); print $5; exit }' "$WORK/top.txt"; }
spin_cum=$(awk -v s="$(cum 'RtdiagBurn[.]Spin')" -v c="$(cum 'CounterGroup[.]PollForValues')" \
  'BEGIN { printf "%d", (c < 100 ? 100 * s / (100 - c) : 0) }')
[ "${spin_cum:-0}" -ge 90 ] && grep -q "RtdiagBurn.Hash" "$WORK/top.txt" \
  && ok "go tool pprof -top: RtdiagBurn.Spin (with Hash under it) holds $spin_cum% of the time the counters' thread leaves" \
  || bad "top: $(cat "$WORK/top.txt")"

# ---- the native program, sampled by perf: gamma > beta > alpha
wait_for 10 has_target "$NPID" || bad "native target $NPID not listed"
"$GO" tool pprof -raw "$AGENT_URL/targets/native-$$/debug/pprof/profile?seconds=3" > "$WORK/nraw.txt" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q " alpha" "$WORK/nraw.txt" && grep -q " beta" "$WORK/nraw.txt" && grep -q " gamma" "$WORK/nraw.txt"; then
  ok "go tool pprof -raw of the native program's /profile?seconds=3: alpha, beta, gamma"
else
  bad "native profile: rc $rc: $(head -c 800 "$WORK/nraw.txt")"
fi
"$GO" tool pprof -top -nodecount=3 "$(ls -t "$PPROF_TMPDIR"/*.pb.gz | head -1)" > "$WORK/ntop.txt" 2>/dev/null
awk '/flat%/ {getline; print; exit}' "$WORK/ntop.txt" | grep -q "gamma" \
  && ok "go tool pprof -top: gamma, half the work, is the hottest" || bad "native top: $(cat "$WORK/ntop.txt")"
# pprof takes the first mapping for the program: the executable, not libc
grep -q "^File: cpu_shares_fp$" "$WORK/ntop.txt" \
  && ok "go tool pprof names the executable (File: cpu_shares_fp)" || bad "native File: $(head -2 "$WORK/ntop.txt")"

# ---- /debug/pprof/... without a prefix, two targets live: the paths named
out=$(curl -s -w ' %{http_code}' "$AGENT_URL/debug/pprof/allocs")
grep -q "^/debug/pprof/allocs: 2 targets are live, each at its own path" <<<"$out" \
  && grep -q "^  /targets/$SVC/debug/pprof/allocs$" <<<"$out" && grep -q "^  /targets/native-$$/debug/pprof/allocs$" <<<"$out" \
  && grep -q " 404$" <<<"$out" && ok "no prefix with two targets: 404 naming the paths that answer" || bad "no prefix: $out"

# ---- /metrics: promtool, and the series
curl -sf "$AGENT_URL/metrics" > "$WORK/metrics.txt" || bad "GET /metrics"
if command -v promtool >/dev/null; then
  promtool check metrics < "$WORK/metrics.txt" > "$WORK/promtool.out" 2>&1 \
    && ok "promtool check metrics accepts /metrics" || bad "promtool: $(cat "$WORK/promtool.out")"
else
  echo "SKIP part: no promtool (Debian's prometheus package)"
fi
grep -q "^rtdiag_process_cpu_seconds_total{service=\"$SVC\",pid=\"$TPID\",suite=\"agent-test\"} " "$WORK/metrics.txt" \
  && ok "/metrics: the target's CPU with service and pid labels" || bad "metrics: $(grep rtdiag_process_cpu "$WORK/metrics.txt")"

# ---- a real Prometheus scrapes the agent
if ! command -v prometheus >/dev/null; then
  echo "SKIP part: no prometheus server"
else
  PPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  HOSTPORT=${AGENT_URL#http://}
  cat > "$WORK/prom.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: rtdiag-agent
    static_configs:
      - targets: ["$HOSTPORT"]
YML
  prometheus --config.file="$WORK/prom.yml" --storage.tsdb.path="$WORK/prom-data" \
    --web.listen-address="127.0.0.1:$PPORT" >"$WORK/prom.log" 2>&1 &
  PROM=$!
  PIDS+=("$PROM")
  q() { curl -sfG "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1"; }
  got() { q "count_over_time(rtdiag_process_cpu_seconds_total{service=\"$SVC\"}[1m])" | grep -q '"value":\[[0-9.]*,"[2-9]'; }
  # two scrape intervals after Prometheus is up
  if wait_for 30 got; then
    q "rtdiag_process_cpu_seconds_total{service=\"$SVC\"}" > "$WORK/q.json"
    python3 - "$WORK/q.json" "$TPID" "$SVC" "$HOSTPORT" <<'PY' && ok "prometheus: the agent's series after two scrapes, labels service, pid, job, instance" || bad "prometheus query: $(cat "$WORK/q.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "success", r
res = r["data"]["result"]
assert len(res) == 1, res
m = res[0]["metric"]
assert m["__name__"] == "rtdiag_process_cpu_seconds_total", m
assert m["service"] == sys.argv[3] and m["pid"] == sys.argv[2], m
assert m["suite"] == "agent-test" and m["job"] == "rtdiag-agent", m
assert m["instance"] == sys.argv[4], m
assert float(res[0]["value"][1]) > 0, res
PY
    q 'rtdiag_agent_targets' | grep -q '"job":"rtdiag-agent"' \
      && ok "prometheus: the agent's own health series" || bad "rtdiag_agent_targets not in prometheus"
    q 'up{job="rtdiag-agent"}' | grep -q '"value":\[[0-9.]*,"1"\]' \
      && ok "prometheus: up == 1 (every scrape parsed)" || bad "up: $(q 'up')"
  else
    bad "prometheus did not get two scrapes in 30 s: $(tail -5 "$WORK/prom.log")"
  fi
fi

stop_agent; rc=$?
[ $rc = 0 ] && ok "SIGTERM: the agent flushed and exited 0" || bad "agent exit status $rc: $(tail -5 "$AGENT_LOG")"
touch "$WORK/t/stop"
[ $fail = 0 ] || { echo "agent log:"; cat "$AGENT_LOG"; }
exit $((fail > 0))
