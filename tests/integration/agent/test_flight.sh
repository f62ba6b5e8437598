#!/usr/bin/env bash
# The agent's flight recorder (issue #31): a target with a flight: section
# in the config is recorded into a ring (the library's rtd_flight_recorder,
# the wiring of 'rtdiag record --ring'). With the real agent, behind a
# token, on the real .NET program of the CLI's flight tests
# (tests/targets/dotnet-flight, through record/flight_lib.sh):
# - POST without the token, with a wrong one, or from a web page (Origin)
#   is refused and writes nothing; GET on it is 405; an unknown pid 404;
# - POST /targets/PID/snapshot (and PREFIX/snapshot) returns where it wrote (JSON), and that
#   snapshot passes the CLI flight tests' check (flight_check.py span: the
#   last ring of the program's marks, with their thread's kernel slices);
#   the actions' files (folded, pprof) are beside it;
# - the size cap (max-size below one snapshot) keeps the newest only: the
#   older snapshot and its action files are removed, /snapshots drops it;
# - a trigger of the config (exception=System.TimeoutException) writes a
#   snapshot of that cause, listed by /snapshots.
# The dump action: test_flight_dump.sh.
SRC=${RTD_SOURCE_DIR:?}
. "$SRC/tests/integration/agent/flight_agent.sh"
start_flight_agent "actions: [folded, pprof]"
# refused: nothing written
st=$(post); [ "$st" = 401 ] && ok "POST without the token: 401" || bad "POST without the token: $st"
st=$(post -H "Authorization: Bearer wrong$TOKEN"); [ "$st" = 401 ] && ok "a wrong token: 401" || bad "a wrong token: $st"
st=$(post "${auth[@]}" -H "Origin: http://evil.example"); [ "$st" = 403 ] &&
  ok "from a web page (Origin): 403 $(cat "$W/body")" || bad "with an Origin header: $st"
st=$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "$URL/targets/$TP/snapshot")
[ "$st" = 405 ] && ok "GET on it: 405" || bad "GET on it: $st"
st=$(curl -s -o /dev/null -w '%{http_code}' -X POST "${auth[@]}" "$URL/targets/999999999/snapshot")
[ "$st" = 404 ] && ok "an unknown pid: 404" || bad "an unknown pid: $st"
[ -z "$(ls -A "$S")" ] && ok "the refused requests wrote nothing" || bad "written: $(ls -A "$S")"

# one POST a round of the program until a snapshot holds its marks (the
# recorder's EventPipe session runs), bounded by 100 rounds as usr1_until
first= n=0 got=
for i in $(seq 1 100); do
  r0=$(rounds); next_round() { [ "$(rounds)" -gt "$r0" ]; }
  wait_until next_round || break
  st=$(post "${auth[@]}")
  [ "$st" = 200 ] || { bad "POST: $st $(cat "$W/body")"; finish; }
  n=$((n + 1)); answer; f=$a_file
  [ -z "$first" ] && first=$f
  grep -q Rtd-Flight-Test/Mark "$f" && { got=$(date +%s%N); break; }
done
[ -n "$got" ] || { bad "no snapshot held the program's marks after $n POSTs"; finish; }
ok "POST answered with its file ($n POSTs until the session's events came): $(cat "$W/body")"
[ "$a_cause" = request ] && [ "$a_pid" = "$TP" ] && [ "$a_incomplete" = false ] &&
  ok "its cause, pid, complete" || bad "the answer: $(cat "$W/body")"
# the ring fills: the marks of the last RING seconds, then one more
full() { [ $(($(date +%s%N) - got)) -ge $(((RING + 1) * 1000000000)) ]; }
wait_until full
st=$(post "${auth[@]}"); answer; f=$a_file
[ "$st" = 200 ] && [ -s "$f" ] || { bad "POST: $st $(cat "$W/body")"; finish; }
if python3 "$HERE/flight_check.py" span "$f" Rtd-Flight-Test/Mark "$RING" >"$W/span"; then
  ok "the endpoint's snapshot passes the CLI's check: $(cat "$W/span")"
else
  bad "the endpoint's snapshot: $(cat "$W/span")"
fi
[ "$a_size" -gt "$(stat -c %s "$f")" ] && [ "$a_actions" = folded,pprof ] &&
  ok "size $a_size counts its files, actions $a_actions" || bad "size $a_size, actions $a_actions"
stem=${f%.json}
[ -s "$stem.folded" ] && grep -q ' [0-9]*$' "$stem.folded" && ok "the folded profile beside it: $(wc -l <"$stem.folded") stacks" ||
  bad "no folded profile: $(ls "$S")"
[ "$(head -c2 "$stem.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] && ok "the pprof beside it (gzip)" || bad "no pprof"
# the cap: only the newest is kept
[ ! -e "$first" ] && [ ! -e "${first%.json}.folded" ] && ok "the size cap removed the oldest with its action files" ||
  bad "the oldest is still there: $first"
list() { curl -s "${auth[@]}" "$URL/snapshots" >"$W/list"; }
list
python3 - "$W/list" "$f" "$first" >"$W/l" <<'EOF' && ok "/snapshots: $(cat "$W/l")" || bad "/snapshots: $(cat "$W/l") $(cat "$W/list")"
import json, sys
l = json.load(open(sys.argv[1]))
files = [s["file"] for s in l]
print(json.dumps([(s["cause"], s["size"], s["incomplete"]) for s in l]))
sys.exit(0 if files == [sys.argv[2]] and sys.argv[3] not in files else 1)
EOF
st=$(curl -s -o /dev/null -w '%{http_code}' "$URL/snapshots"); [ "$st" = 401 ] && ok "/snapshots without the token: 401" || bad "/snapshots: $st"

# the target's pprof prefix names it too
st=$(curl -s -o "$W/body" -w '%{http_code}' -X POST "${auth[@]}" "$URL/targets/flighttest/snapshot")
answer; f=$a_file
[ "$st" = 200 ] && [ -s "$f" ] && ok "POST PREFIX/snapshot: $f" || bad "POST PREFIX/snapshot: $st $(cat "$W/body")"

# a trigger of the config: the program throws a TimeoutException a round
echo -1 >"$W/level.tmp" && mv "$W/level.tmp" "$W/level"
wait_until has_snaps exception 1 || { bad "the trigger wrote no snapshot"; finish; }
e=$(snaps exception | head -1)
python3 "$HERE/flight_check.py" info "$e" >"$W/info" && grep -q '"cause": "exception"' "$W/info" &&
  ok "the config's trigger wrote a snapshot: $(cat "$W/info")" || bad "the trigger's snapshot: $(cat "$W/info")"
listed() { list; grep -q '"cause":"exception"' "$W/list"; }
wait_until listed && ok "/snapshots lists it" || bad "/snapshots: $(cat "$W/list")"
[ ! -e "$f" ] && ok "and the cap removed the one before" || bad "the one before is still there"
kill -TERM "$RP"; wait "$RP"; rc=$?; RP=
[ $rc = 0 ] && ok "the agent stopped: exit 0" || bad "the agent's exit: $rc"
[ -z "$(ls -A "$S" | grep '^\.')" ] && ok "no temporary file left" || bad "temporary files left: $(ls -A "$S")"

finish
