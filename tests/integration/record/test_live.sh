#!/usr/bin/env bash
# `rtdiag record` streams, in bounded memory, and a recording stopped by a
# signal is complete (issue #30: "streaming, bounded memory for any
# duration"). The target is a busy process of our own: four threads that
# sleep 200 us in a loop (thousands of off-CPU waits a second, each a
# slice of the timeline) while a fifth burns CPU (samples).
# - streaming: while rtdiag records (before any stop), its timeline's
#   file (written under a temporary name beside -o until the end) grows:
#   records reach the writer as they come;
# - bounded: rtdiag's RSS, read from /proc every 0.2 s, once the output
#   has reached WARM bytes (the symbols, the rings, the queues and the
#   Perfetto interning tables are set up) and until it has grown SPAN
#   times that, grows by less than GROW_KB (a recorder that kept its
#   records would grow with the output: tens of MB);
# - stopped by SIGTERM, then by SIGINT (Ctrl-C): exit 0, and both files
#   are whole: the JSON loads and tlcheck.py reads it (every slice
#   closed), the Perfetto file decodes with protoc against Perfetto's
#   proto and tlcheck.py reads the same samples; the folded profile names
#   the burning function.
# Progress is polled, with generous bounds for a loaded 2-core machine.
set -u
R=${RTDIAG:?}; SRC=${RTD_SOURCE_DIR:?}
SH=${RTD_SHARED_DIR:-$SRC/../shared}; P=$SH/reference/perfetto
WARM=$((4 << 20)); SPAN=6; GROW_KB=8192
W=$(mktemp -d /tmp/rtd-record-live-XXXXXX)
TP=; RP=
cleanup() {
  [ -n "$RP" ] && kill "$RP" 2>/dev/null && wait "$RP" 2>/dev/null
  [ -n "$TP" ] && kill "$TP" 2>/dev/null && wait "$TP" 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat >"$W/busy.py" <<'PY'
import sys, threading, time
def sleeper():
    while True:
        time.sleep(0.0002)
def burn_named_function():
    x = 0
    while True:
        for i in range(100000):
            x += i
for _ in range(4):
    threading.Thread(target=sleeper, daemon=True).start()
threading.Thread(target=burn_named_function, daemon=True).start()
open(sys.argv[1], "w").write("ready\n")
time.sleep(1e6)
PY
python3 "$W/busy.py" "$W/ready" &
TP=$!
for _ in $(seq 600); do [ -s "$W/ready" ] && break; sleep 0.1; done
[ -s "$W/ready" ] || { echo "FAIL: the busy target did not start"; exit 1; }

# the bytes written so far of -o FILE: its temporary file until the end
written() {
  local f
  for f in "$W"/."$1".rtdiag-*; do [ -f "$f" ] && { stat -c %s "$f"; return; }; done
  [ -f "$W/$1" ] && stat -c %s "$W/$1" || echo 0
}
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# wait until -o $1 has $2 bytes while rtdiag runs (bound: 600 s); prints
# the highest RSS seen meanwhile
grow_to() {
  local n=0 peak=0 r
  while [ "$(written "$1")" -lt "$2" ]; do
    kill -0 "$RP" 2>/dev/null || { echo "rtdiag ended"; return 1; }
    r=$(rss_kb "$RP"); [ "${r:-0}" -gt "$peak" ] && peak=$r
    n=$((n + 1)); [ $n -gt 3000 ] && { echo "timeout"; return 1; }
    sleep 0.2
  done
  r=$(rss_kb "$RP"); [ "${r:-0}" -gt "$peak" ] && peak=$r
  echo "$peak"
}

# the whole files of a stopped recording: $1 the tag, $2 the exit code
check_files() {
  local tag=$1 rc=$2
  [ "$rc" = 0 ] || { bad "$tag: rtdiag exited $rc: $(tail -3 "$W/err")"; return; }
  python3 "$SRC/tests/integration/pictures/tlcheck.py" json "$W/t.json" >"$W/j.sum" ||
    { bad "$tag: the JSON timeline is not whole: $(cut -c1-300 "$W/j.sum")"; return; }
  python3 - "$W/j.sum" <<'PY' || { bad "$tag: no off-CPU slices or no samples: $(cut -c1-300 "$W/j.sum")"; return; }
import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if s["samples"] > 0 and sum(s["slices"].values()) > 100 else 1)
PY
  ok "$tag: exit 0, the JSON timeline whole: $(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(sum(s["slices"].values()), "slices,", s["samples"], "samples")' "$W/j.sum")"
  if command -v protoc >/dev/null && [ -f "$P/perfetto_trace.proto" ]; then
    if protoc --proto_path="$P" --decode=perfetto.protos.Trace perfetto_trace.proto \
         <"$W/t.pftrace" >"$W/t.txt" 2>"$W/perr" &&
       python3 "$SRC/tests/integration/pictures/tlcheck.py" perfetto "$W/t.txt" >"$W/p.sum"; then
      python3 - "$W/p.sum" "$W/j.sum" <<'PY' && ok "$tag: the Perfetto file decodes with protoc, the same samples as the JSON" || bad "$tag: Perfetto and JSON differ: $(cut -c1-200 "$W/p.sum")"
import json, sys
p, j = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sys.exit(0 if p["samples"] == j["samples"] and sum(p["slices"].values()) == sum(j["slices"].values()) else 1)
PY
    else
      bad "$tag: the Perfetto file does not decode: $(head -3 "$W/perr") $(cut -c1-200 "$W/p.sum" 2>/dev/null)"
    fi
  else
    echo "SKIP part: protoc or Perfetto's proto missing"
  fi
  grep -q "python" "$W/cpu.folded" && ok "$tag: the folded profile has the target's stacks" ||
    bad "$tag: empty folded profile"
}

# 1. SIGTERM, after the memory has been watched over a long-ish recording
"$R" record -p "$TP" -F 499 -o "$W/t.json" -o "$W/t.pftrace" -o "$W/cpu.folded" 2>"$W/err" &
RP=$!
w=$(grow_to t.json "$WARM")
if [ "$w" = timeout ] || [ "$w" = "rtdiag ended" ]; then
  bad "nothing written while recording ($w; $(written t.json) bytes of t.json): records do not stream"
  if grep -q "perf_event\|Permission\|not permitted" "$W/err"; then
    echo "SKIP: perf_event is unavailable here: $(head -2 "$W/err")"; exit 77
  fi
else
  ok "streams: $(written t.json) bytes of the timeline written while recording"
  warm=$(rss_kb "$RP")
  peak=$(grow_to t.json $((SPAN * WARM)))
  if [ "$peak" = timeout ] || [ "$peak" = "rtdiag ended" ]; then
    bad "the recording did not reach $((SPAN * WARM)) bytes ($peak)"
  elif [ -n "${RTD_SANITIZED:-}" ]; then
    echo "SKIP part: RSS not compared in the sanitizer build (warm $warm KB, peak $peak KB)"
  elif [ $((peak - warm)) -lt $GROW_KB ]; then
    ok "bounded: RSS $warm KB at $WARM bytes written, at most $peak KB until $((SPAN * WARM)) (+$((peak - warm)) KB)"
  else
    bad "RSS grows with the recording: $warm KB at $WARM bytes written, $peak KB at $((SPAN * WARM))"
  fi
fi
before=$(written t.json)
kill -TERM "$RP"
wait "$RP"; rc=$?; RP=
cat "$W/err"
check_files SIGTERM $rc
[ "$(stat -c %s "$W/t.json" 2>/dev/null || echo 0)" -ge "$before" ] ||
  bad "SIGTERM: the timeline is shorter than what was written before the stop"

# 2. SIGINT (Ctrl-C) in the first moments of a recording
rm -f "$W/t.json" "$W/t.pftrace" "$W/cpu.folded"
"$R" record -p "$TP" -F 499 -o "$W/t.json" -o "$W/t.pftrace" -o "$W/cpu.folded" 2>"$W/err" &
RP=$!
w=$(grow_to t.json 1)
kill -INT "$RP"
wait "$RP"; rc=$?; RP=
check_files SIGINT $rc
kill -0 "$TP" 2>/dev/null && ok "the target runs on after the recording" || bad "the target died"
echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
[ $fails = 0 ]
