#!/usr/bin/env bash
# perf record's CPU samples as a timeline (issue #15), from the running
# kernel and a real program (tests/targets/perf-cpu: alpha, beta and
# gamma_fn burn CPU 1:2:3, here on two threads):
# - one recording written at once as Perfetto, folded and pprof (-o three
#   times); protoc decodes the Perfetto file against Perfetto's proto and
#   tlcheck.py reads it as trace processor does (clocks, interning,
#   nesting): a track for the recording's span, the process, its sampled
#   threads; every sample's interned callstack, counted per stack, equals
#   the same run's pprof sample counts (converted with --type samples), and
#   its stacks are exactly the folded file's;
# - --format chrome-json: the same structure in Chrome JSON; the samples
#   on the threads add up to the recording's "samples" argument.
# No Perfetto viewer is run: trace_processor and the Perfetto UI cannot be
# had offline here (pypi's perfetto downloads trace_processor at run time).
set -u
R=${RTDIAG:?}; SRC=${RTD_SOURCE_DIR:?}; BIN=${RTD_BINARY_DIR:?}
SH=${RTD_SHARED_DIR:-$SRC/../shared}; P=$SH/reference/perfetto
HERE=$SRC/tests/integration/pictures
FP=$BIN/tests/targets/cpu_shares_fp
[ "$(id -u)" = 0 ] || { echo "SKIP: perf_event sampling needs root here"; exit 77; }
[ -x "$FP" ] || { echo "FAIL: $FP not built"; exit 1; }
command -v protoc >/dev/null && [ -f "$P/perfetto_trace.proto" ] ||
  { echo "SKIP: protoc or Perfetto's proto missing"; exit 77; }
W=$(mktemp -d /tmp/rtd-perfrectl-XXXXXX)
trap 'rm -rf "$W"' EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! "$R" perf record -F 999 -o "$W/t.pftrace" -o "$W/t.folded" -o "$W/t.pb.gz" \
     -- "$FP" rounds=300 2 2>"$W/err"; then
  echo "SKIP: perf record cannot sample here: $(head -2 "$W/err")"; exit 77
fi

# ---- Perfetto: structure, then the samples against the same run's profile ----
protoc --proto_path="$P" --decode=perfetto.protos.Trace perfetto_trace.proto \
  <"$W/t.pftrace" >"$W/t.txt" 2>"$W/err" || bad "protoc --decode: $(head -2 "$W/err")"
python3 "$HERE/tlcheck.py" perfetto "$W/t.txt" >"$W/t.sum" || bad "tlcheck perfetto: $(cat "$W/t.sum")"
python3 - "$W/t.sum" <<'PY' || bad "perfetto tracks: $(cut -c1-400 "$W/t.sum")"
import json, sys
s = json.load(open(sys.argv[1]))
kinds = s["kinds"]; tracks = s["tracks"]
threads = [tracks[u] for u, k in kinds.items() if k == "thread"]
procs = [tracks[u] for u, k in kinds.items() if k == "process"]
# the program's main thread and its worker both burn CPU: two thread
# tracks, named by their comm, under the program's process track
ok = (s["slices"].get("perf record") == 1 and "recording" in s["names"]
      and procs == ["cpu_shares_fp"] and len(threads) >= 2
      and all(t == "cpu_shares_fp" for t in threads) and s["samples"] > 0)
print(s)
sys.exit(0 if ok else 1)
PY
python3 "$HERE/tlcheck.py" perfetto-stacks "$W/t.txt" >"$W/tl.stacks"
"$R" convert "$W/t.pb.gz" --type samples -o "$W/count.folded" || bad "convert --type samples"
sort "$W/count.folded" >"$W/count.stacks"
if cmp -s "$W/tl.stacks" "$W/count.stacks"; then
  ok "perfetto: $(awk '{n+=$NF} END {print n}' "$W/tl.stacks") samples on $(wc -l <"$W/tl.stacks") stacks, each stack's count equal to the same run's pprof samples"
else
  bad "perfetto sample stacks differ from the pprof's counts"; diff "$W/tl.stacks" "$W/count.stacks" | head -6
fi
# the folded file (cpu ns) of the same run has exactly these stacks
cut -d' ' -f1 "$W/tl.stacks" >"$W/a"; sed 's/ [0-9]*$//' "$W/t.folded" | sort >"$W/b"
cmp -s "$W/a" "$W/b" && ok "perfetto: the same stacks as perf record's folded output" ||
  { bad "perfetto stacks differ from the folded file's"; diff "$W/a" "$W/b" | head -6; }
grep -q ';gamma_fn ' "$W/tl.stacks" || bad "no gamma_fn in the samples: $(head -3 "$W/tl.stacks")"

# ---- Chrome JSON ---------------------------------------------------------------
"$R" perf record -F 999 --format chrome-json -o "$W/c.trace" -- "$FP" rounds=100 2 2>/dev/null ||
  bad "perf record --format chrome-json"
python3 "$HERE/tlcheck.py" json "$W/c.trace" >"$W/c.sum" || bad "tlcheck json: $(cat "$W/c.sum")"
python3 - "$W/c.trace" "$W/c.sum" <<'PY' || bad "chrome json: $(cut -c1-400 "$W/c.sum")"
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
s = json.load(open(sys.argv[2]))
rec = [e for e in evs if e.get("name") == "recording" and e["ph"] == "B"]
samples = [e for e in evs if e.get("cat") == "sample"]
leaves = {e["args"]["stack"][0] for e in samples}
ok = (len(rec) == 1 and rec[0]["args"]["samples"] == len(samples) > 0
      and s["processes"] and "cpu_shares_fp" in s["processes"].values()
      and {"alpha", "beta", "gamma_fn"} <= leaves
      and all(rec[0]["ts"] <= e["ts"] for e in samples))
print(len(samples), "samples", sorted(leaves)[:5])
sys.exit(0 if ok else 1)
PY
[ $fails = 0 ] && ok "perf record --format chrome-json: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"])' "$W/c.sum") samples in the recording's span, on the program's threads"

# ---- the options ---------------------------------------------------------------
"$R" perf record --format perfetto -o "$W/x.pftrace" -o "$W/y.folded" -- true 2>"$W/err"
[ $? = 2 ] && grep -q 'several -o' "$W/err" || bad "--format with two -o not refused: $(cat "$W/err")"
[ -e "$W/x.pftrace" ] && bad "a refused command left x.pftrace"
echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
[ $fails = 0 ]
