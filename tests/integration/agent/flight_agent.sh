# flight_agent.sh - sourced by the agent's flight recorder tests
# (test_flight*.sh): the CLI flight tests' program and checks
# (record/flight_lib.sh: dotnet-flight, $W, $S, cleanup, ok/bad/finish),
# and the real agent recording it, behind a token, on 127.0.0.1.
SRC=${RTD_SOURCE_DIR:?}
. "$SRC/tests/integration/record/flight_lib.sh"
command -v curl >/dev/null || { echo "SKIP: no curl"; exit 77; }
RING=${RING:-4}
TOKEN=flight-$RANDOM$RANDOM
auth=(-H "Authorization: Bearer $TOKEN")

# start_flight_agent ACTIONS_LINE: dotnet-flight, then the agent with a
# flight: section for it; returns once its recorder records (a perf_event
# refused: the test is skipped). Sets URL, RP (the agent's pid).
start_flight_agent() {
  start_target
  (umask 077; printf '%s\n' "$TOKEN" >"$W/token")
  cat >"$W/agent.yaml" <<EOF
listen: 127.0.0.1:0
auth-token-file: $W/token
dotnet-profiles: none
dotnet-counters: none
target:
  - pid: $TP
    service: flighttest
    flight:
      ring: ${RING}s
      dir: $S
      format: chrome-json
      providers: Rtd-Flight-Test
      trigger: [exception=System.TimeoutException]
      cooldown: 10m
      max-size: 1k
      $1
EOF
  "$R" agent --config "$W/agent.yaml" 2>"$W/err" &
  RP=$!
  serving() { grep -Eq "serving https?://" "$W/err" || ! kill -0 "$RP" 2>/dev/null; }
  wait_until serving
  URL=$(grep -Eo 'http://127.0.0.1:[0-9]*' "$W/err" | head -1)
  [ -n "$URL" ] || { echo "FAIL: the agent did not start: $(cat "$W/err")"; exit 1; }
  recording() { grep -q "flight: recording into" "$W/err" || grep -q "flight: .*\(perf_event\|ermission\|not permitted\)" "$W/err"; }
  wait_until recording || { bad "the flight recorder did not start"; finish; }
  if ! grep -q "flight: recording into" "$W/err"; then
    echo "SKIP: perf_event is unavailable here: $(grep -m1 flight: "$W/err")"; exit 77
  fi
}

# post [CURL ARGS...]: POST /targets/$TP/snapshot; prints the status, the
# body in $W/body
post() { curl -s -o "$W/body" -w '%{http_code}' -X POST "$@" "$URL/targets/$TP/snapshot"; }
# answer: the last answer's fields as shell variables a_file, a_cause,
# a_pid, a_size, a_incomplete, a_actions (one python3 start: they are slow
# on a loaded machine)
answer() {
  eval "$(python3 -c '
import json, shlex, sys
try: a = json.load(open(sys.argv[1]))
except Exception: a = {}
for k in ("file", "cause", "pid", "size", "incomplete", "actions"):
    v = a.get(k, "")
    v = ",".join(v) if isinstance(v, list) else str(v).lower() if isinstance(v, bool) else str(v)
    print("a_%s=%s" % (k, shlex.quote(v)))
' "$W/body")"
}
