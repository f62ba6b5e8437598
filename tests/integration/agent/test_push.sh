#!/usr/bin/env bash
# Push to Pyroscope's /ingest, with the backend going away and coming back.
# No Pyroscope server can run here: fake_pyroscope.py, A FAKE RECEIVER
# labelled as such, checks every upload against Pyroscope's documented
# ingest API (query name/from/until/format=pprof, multipart form files
# profile and sample_type_config) and keeps the profiles, which Debian's
# `go tool pprof` then decodes. The target is a real .NET 10 program.
# Windows of 1 s and a queue of 4: while the receiver is down windows are
# dropped (counted), and when it is back the queued ones arrive; every
# window the agent closed is either received once or counted as dropped.
. "$(dirname "$0")/lib.sh"
command -v dotnet >/dev/null 2>&1 || skip "no dotnet SDK on PATH"
[ -n "$GO" ] || skip "no Go toolchain (go tool pprof) in /usr/lib/go-1.*"
TD=$(build_dotnet dotnet-target tests/targets) || { echo "FAIL: dotnet build"; exit 1; }
FAKE="$SRC/tests/integration/agent/fake_pyroscope.py"
export PPROF_TMPDIR="$WORK/pprof"

RECV="$WORK/recv"
start_receiver() {
  rm -f "$WORK/port"
  python3 "$FAKE" "$WORK/port" "$RECV" ${1:-0} >"$WORK/fake.log" 2>&1 &
  FAKE_PID=$!
  PIDS+=("$FAKE_PID")
  wait_for 10 test -s "$WORK/port" || { bad "fake receiver did not start: $(cat "$WORK/fake.log")"; exit 1; }
  PORT=$(cat "$WORK/port")
}
uploads() { [ -f "$RECV/uploads.jsonl" ] && wc -l < "$RECV/uploads.jsonl" || echo 0; }
at_least() { [ "$(uploads)" -ge "$1" ]; }

start_receiver
start_program TPID "$TD/dotnet-target" "$WORK/t" burn || { bad "the .NET target did not start"; exit 1; }

SVC=rtdtest-push-$$
start_agent --target "pid=$TPID,service=$SVC" --scan-interval 200ms \
  --push "http://127.0.0.1:$PORT" --window 1s --push-queue 4 --label suite=push \
  || { bad "agent did not start"; exit 1; }
wait_for 20 at_least 3 && ok "windows arrive at the receiver ($(uploads) after the first seconds)" \
  || { bad "no uploads: $(cat "$AGENT_LOG")"; exit 1; }

# the backend goes away until the agent has dropped a window (its queue of
# 4 full: at least 5 windows closed while away), then comes back on the
# same port
kill -TERM "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null
before=$(uploads)
dropped_some() { local d; d=$(metric rtdiag_agent_dropped_windows_total); [ "${d%.*}" -ge 1 ]; }
wait_until dropped_some || bad "no window dropped while the backend was away"
start_receiver "$PORT"
wait_for 20 at_least $((before + 2)) && ok "after the outage the queued windows arrive" \
  || bad "nothing delivered after the outage: $(tail -5 "$AGENT_LOG")"
dropped=$(metric rtdiag_agent_dropped_windows_total)
[ "${dropped%.*}" -ge 1 ] 2>/dev/null && ok "windows dropped while the backend was away: $dropped (in /metrics)" \
  || bad "rtdiag_agent_dropped_windows_total is '$dropped'"
grep -q "retrying with backoff" "$AGENT_LOG" && grep -q "answers again" "$AGENT_LOG" \
  && [ "$(grep -c "retrying with backoff" "$AGENT_LOG")" = 1 ] \
  && ok "the outage logged once, and the return" || bad "outage log: $(grep push "$AGENT_LOG")"

sleep 1.2
TSTOP=$(date +%s)
stop_agent; rc=$?
TEND=$(date +%s)
[ $rc = 0 ] || bad "agent exit status $rc"
summary=$(grep -o "stopped: .*" "$AGENT_LOG")
read -r W U D < <(sed -E 's/.* ([0-9]+) windows, ([0-9]+) uploaded, ([0-9]+) dropped.*/\1 \2 \3/' <<<"$summary")
python3 - "$RECV" "$TPID" "$SVC" "$W" "$U" "$D" "$TSTOP" "$TEND" <<'PY' && ok "every upload in Pyroscope's documented form; windows $W = uploaded $U + dropped $D; none twice; the window open at SIGTERM pushed" || bad "uploads: see above ($summary)"
import json, sys, re
recv, pid, svc, W, U, D, tstop, tend = sys.argv[1], sys.argv[2], sys.argv[3], *map(int, sys.argv[4:])
recs = [json.loads(l) for l in open(recv + "/uploads.jsonl")]
errs = [r for r in recs if r["errors"]]
assert not errs, errs
assert W == U + D, (W, U, D)
assert len(recs) == U, (len(recs), U)
# one upload per window and profile kind, none twice (mutex and block
# have the same sample types: Pyroscope tells them by display name)
keys = [(r["name"], r["from"], tuple(r["sample_types"]), tuple(r["display"])) for r in recs]
assert len(set(keys)) == len(keys), "duplicates: %s" % keys
want = re.compile(r"^%s\{pid=%s,executable=dotnet-target,runtime=dotnet,host=[^,]+,suite=push\}$" % (re.escape(svc), pid))
kinds = {("cpu", "samples"), ("alloc_objects", "alloc_space"), ("contentions", "delay"), ("exceptions",)}
for r in recs:
    assert want.match(r["name"]), r["name"]
    assert tuple(r["sample_types"]) in kinds, r
    if r["sample_types"] == ["contentions", "delay"]:
        assert r["display"] in (["mutex_count", "mutex_duration"],
                                ["block_count", "block_duration"]), r
    assert int(r["until"]) - int(r["from"]) <= 2, r
cpu = [r for r in recs if r["sample_types"] == ["cpu", "samples"]]
assert len(cpu) >= 3, cpu
fr = [int(r["from"]) for r in cpu]
assert fr == sorted(set(fr)), fr
# the SIGTERM flush: the CPU window open at the stop, ending there
# (between the SIGTERM and the agent's exit, which on a loaded machine can
# be seconds apart)
last = cpu[-1]
assert int(last["from"]) <= tstop <= int(last["until"]) <= tend + 2, (last, tstop, tend)
open(recv + "/cpu.list", "w").write("\n".join("%s/%d.pprof" % (recv, r["n"]) for r in cpu) + "\n")
PY
# the profiles decode with go tool pprof, hot function in them
n=$(wc -l < "$RECV/cpu.list")
okp=0
for f in $(head -2 "$RECV/cpu.list") $(tail -1 "$RECV/cpu.list"); do
  "$GO" tool pprof -raw "$f" > "$WORK/raw.txt" 2>&1 && grep -q "RtdiagBurn" "$WORK/raw.txt" && okp=$((okp+1)) \
    || { echo "$f:"; head -30 "$WORK/raw.txt"; }
done
[ $okp = 3 ] && ok "go tool pprof decodes the uploaded CPU profiles ($n received), RtdiagBurn in them" \
  || bad "pprof decode: $(head -20 "$WORK/raw.txt")"
touch "$WORK/t/stop"
[ $fail = 0 ] || { echo "agent log:"; cat "$AGENT_LOG"; }
exit $((fail > 0))
