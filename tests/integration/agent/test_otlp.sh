#!/usr/bin/env bash
# Push as OpenTelemetry profiles (alpha: opentelemetry-proto v1.11.0,
# profiles v1development) over OTLP/HTTP. No collector with the profiles
# signal can run here: fake_otlp.py, A FAKE RECEIVER labelled as such,
# checks every export against the OTLP/HTTP spec (path, Content-Type,
# gzip), has Debian's protoc decode the body against otlp_profiles.proto
# (written in the tests from the spec), checks the dictionary rules and
# resolves the stacks to function names. The targets are real: a .NET 10
# program (EventPipe) and a native one (perf). The receiver answers the
# first two exports 503 + Retry-After (retried, not lost) and the first
# accepted one with a partial success (logged once, counted). The agent
# pushes to Pyroscope's fake too: each backend gets every window.
. "$(dirname "$0")/lib.sh"
command -v dotnet >/dev/null 2>&1 || skip "no dotnet SDK on PATH"
command -v protoc >/dev/null 2>&1 || skip "no protoc (Debian's protobuf-compiler) to decode OTLP bodies"
TD=$(build_dotnet dotnet-target tests/targets) || { echo "FAIL: dotnet build"; exit 1; }
FAKE="$SRC/tests/integration/agent/fake_otlp.py"
RECV="$WORK/recv"
python3 "$FAKE" "$WORK/port" "$RECV" 0 busy2,partial >"$WORK/fake.log" 2>&1 &
PIDS+=("$!")
wait_for 10 test -s "$WORK/port" || { bad "fake receiver did not start: $(cat "$WORK/fake.log")"; exit 1; }
PORT=$(cat "$WORK/port")
# beside it, Pyroscope's fake: both backends get every window
python3 "$SRC/tests/integration/agent/fake_pyroscope.py" "$WORK/pport" "$WORK/precv" >"$WORK/pfake.log" 2>&1 &
PIDS+=("$!")
wait_for 10 test -s "$WORK/pport" || { bad "fake Pyroscope did not start: $(cat "$WORK/pfake.log")"; exit 1; }

start_program TPID "$TD/dotnet-target" "$WORK/t" burn || { bad "the .NET target did not start"; exit 1; }
NAT="$BIN/tests/targets/cpu_shares_fp"
[ -x "$NAT" ] || { bad "build: $NAT missing"; exit 1; }
# long rounds (unit=50: ~65 ms, alpha ~11 ms) sampled at 999 Hz: a default
# round of ~1.3 ms aliases with the sampler's period, and at 99 Hz the
# windows of a loaded machine held ~150 samples; one CI run ranked alpha
# (36 samples) above beta (30) that way
"$NAT" unit=50 60 > /dev/null &
NPID=$!
PIDS+=("$NPID")

SVC=rtdtest-otlp-$$
start_agent --target "pid=$TPID,service=$SVC" --target "pid=$NPID,service=native-$$" \
  --scan-interval 200ms --cpu-hz 999 --otlp "http://127.0.0.1:$PORT/" --window 1s --label suite=otlp \
  --push "http://127.0.0.1:$(cat "$WORK/pport")" \
  --dotnet-profiles cpu || { bad "agent did not start"; exit 1; }
accepted() { [ -f "$RECV/exports.jsonl" ] && grep -c '"status": 200' "$RECV/exports.jsonl" || echo 0; }
at_least() { [ "$(accepted)" -ge "$1" ]; }
wait_for 40 at_least 8 && ok "exports accepted by the receiver: $(accepted)" \
  || { bad "too few exports: $(accepted); $(tail -5 "$AGENT_LOG")"; exit 1; }
errors=$(metric rtdiag_agent_otlp_upload_errors_total)
rejected=$(metric rtdiag_agent_otlp_rejected_profiles_total)
[ "${errors%.*}" -ge 2 ] 2>/dev/null && ok "the two 503 answers counted as failed attempts ($errors)" \
  || bad "rtdiag_agent_otlp_upload_errors_total is '$errors'"
[ "${rejected%.*}" = 1 ] && ok "the partial success counted (rtdiag_agent_otlp_rejected_profiles_total 1)" \
  || bad "rtdiag_agent_otlp_rejected_profiles_total is '$rejected'"
[ "$(grep -c "rejected 1 profiles" "$AGENT_LOG")" = 1 ] && grep -q "fake: too old" "$AGENT_LOG" \
  && ok "the partial success logged once, with the server's message" \
  || bad "partial success log: $(grep otlp "$AGENT_LOG")"
grep -q "otlp: .*HTTP 503.*retrying with backoff" "$AGENT_LOG" && grep -q "otlp: .*answers again" "$AGENT_LOG" \
  && ok "503 retried with backoff, and the return logged" || bad "retry log: $(grep otlp "$AGENT_LOG")"

stop_agent; rc=$?
[ $rc = 0 ] || bad "agent exit status $rc"
summary=$(grep -o "stopped: .*" "$AGENT_LOG")
read -r W OU OD < <(sed -E 's/.* ([0-9]+) windows, .*otlp: ([0-9]+) uploaded, ([0-9]+) dropped.*/\1 \2 \3/' <<<"$summary")
read -r PU PD < <(sed -E 's/.* windows, ([0-9]+) uploaded, ([0-9]+) dropped;.*/\1 \2/' <<<"$summary")
pyro=$(wc -l < "$WORK/precv/uploads.jsonl" 2>/dev/null || echo 0)
[ "$W" = $((PU + PD)) ] && [ "$pyro" = "$PU" ] && ! grep -q '"errors": \[[^]]' "$WORK/precv/uploads.jsonl" \
  && ok "with --push too, Pyroscope got every window as well: $W = $PU uploaded + $PD dropped ($pyro received)" \
  || bad "Pyroscope beside OTLP: $summary; $pyro received"
python3 - "$RECV" "$TPID" "$NPID" "$SVC" "$W" "$OU" "$OD" <<'PY' && ok "every export decodes with protoc; dictionary rules kept; resource attributes, stacks (RtdiagBurn; gamma_fn > beta > alpha), frame types, thread attributes and times as sent; windows $W = exported $OU + dropped $OD, none twice" || bad "exports: see above ($summary)"
import json, sys, time
recv, tpid, npid, svc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
W, OU, OD = map(int, sys.argv[5:8])
recs = [json.loads(l) for l in open(recv + "/exports.jsonl")]
bad = [r for r in recs if r["errors"]]
assert not bad, bad[:2]
acc = [r for r in recs if r["status"] == 200]
assert len(acc) == OU, (len(acc), OU)
assert W == OU + OD, (W, OU, OD)
seen, by_pid, spans = set(), {}, {}
for r in acc:
    assert len(r["resources"]) == 1, r
    res = r["resources"][0]
    a = res["attrs"]
    assert a["host.name"] and a["suite"] == "otlp", a
    pid = a["process.pid"]
    assert isinstance(pid, int) and pid in (tpid, npid), a
    want = svc if pid == tpid else "native-" + svc.split("-")[-1]
    assert a["service.name"] == want, a
    assert a["process.executable.name"] in ("dotnet-target", "cpu_shares_fp"), a
    assert (a.get("process.runtime.name") == "dotnet") == (pid == tpid), a
    types = sorted((p["type"], p["unit"]) for p in res["profiles"])
    assert types == [("cpu", "nanoseconds"), ("samples", "count")], types
    t0 = res["profiles"][0]["time"]
    key = (pid, t0)
    assert key not in seen, "window twice: %s" % (key,)
    seen.add(key)
    for p in res["profiles"]:
        assert abs(p["time"] / 1e9 - time.time()) < 120, p["time"]
        # 1 s windows, each from where the last one ended: a tick late on
        # a loaded box makes one longer (CI at load 22: 5.6 s), so no
        # bound on a window's length; they must not overlap (below)
        assert p["duration"] > 0, p["duration"]
        spans.setdefault((pid, p["type"]), []).append((p["time"], p["duration"]))
        assert p["samples"] > 0 and p["total"] > 0, p
        assert "thread.id" in p["sample_attrs"], p["sample_attrs"]
    by_pid.setdefault(pid, []).extend(p for p in res["profiles"] if p["type"] == "cpu")
for k, v in spans.items():
    v.sort()
    assert all(t + d <= u for (t, d), (u, _) in zip(v, v[1:])), ("windows overlap", k, v)
assert len(by_pid.get(tpid, [])) >= 2 and len(by_pid.get(npid, [])) >= 2, {k: len(v) for k, v in by_pid.items()}
# the .NET program burns in RtdiagBurn
burn = sum(v for p in by_pid[tpid] for st, v in p["stacks"].items() if "RtdiagBurn" in st)
alln = sum(p["total"] for p in by_pid[tpid])
assert burn > 0.5 * alln, (burn, alln, list(by_pid[tpid][0]["stacks"])[:5])
assert "dotnet" in set(t for p in by_pid[tpid] for t in p["frame_types"]), by_pid[tpid][0]["frame_types"]
# the native one: gamma_fn (3 shares) > beta (2) > alpha (1), leaf first
leaf = {}
for p in by_pid[npid]:
    for st, v in p["stacks"].items():
        f = st.split(";")[0]
        leaf[f] = leaf.get(f, 0) + v
tot = sum(leaf.get(k, 0) for k in ("alpha", "beta", "gamma_fn")) or 1
print("native leaves: alpha %.1f%% beta %.1f%% gamma %.1f%% of %d ms (want 16.7 33.3 50.0)" % tuple(
    [100.0 * leaf.get(k, 0) / tot for k in ("alpha", "beta", "gamma_fn")] + [tot // 1000000]))
assert leaf.get("gamma_fn", 0) > leaf.get("beta", 0) > leaf.get("alpha", 0) > 0, leaf
assert "native" in set(t for p in by_pid[npid] for t in p["frame_types"])
PY
touch "$WORK/t/stop"
[ $fail = 0 ] || { echo "agent log:"; cat "$AGENT_LOG"; echo "receiver:"; cat "$WORK/fake.log"; }
exit $((fail > 0))
