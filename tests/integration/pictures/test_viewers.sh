#!/usr/bin/env bash
# Pictures checked in real viewers and against each other (issue #15):
# - every shared .nettrace vector with CPU samples, converted to folded,
#   pprof, SVG and speedscope: the same stacks with the same weights in all
#   four (SVG read back from its frames' geometry, pprof through
#   `go tool pprof -raw`, speedscope from its samples);
# - SVG: well-formed (xmllint); in headless Chromium the title and the
#   hottest frame are shown, a click zooms, search highlights and prints
#   the matched share, reset restores;
# - speedscope: validates against the npm package's file-format-schema.json
#   and loads in speedscope's own page (its npm release served on
#   127.0.0.1), which names the threads and the hottest frame; a Chrome
#   JSON timeline of a Go trace is imported there too;
# - Perfetto: a Go trace's timeline decodes with protoc against Perfetto's
#   proto, and tlcheck.py finds every kind of track and nested slices.
# Screenshots are kept in $RTD_BINARY_DIR/pictures-shots.
# npm packages (pinned) are installed under the build folder once; without
# npm, the registry or chromium the viewer parts are skipped with a reason.
set -u
R=${RTDIAG:?RTDIAG not set}
SRC=${RTD_SOURCE_DIR:?}
BIN=${RTD_BINARY_DIR:?}
SH=${RTD_SHARED_DIR:-$SRC/../shared}
T=$SH/testdata
HERE=$SRC/tests/integration/pictures
W=$(mktemp -d /tmp/rtd-pictures-XXXXXX)
trap 'rm -rf "$W"' EXIT
SHOTS=$BIN/pictures-shots
mkdir -p "$SHOTS"
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
[ -d "$T/nettrace" ] || { echo "SKIP: $T missing (../shared/testdata)"; exit 77; }
GO=/usr/lib/go-1.23/bin/go
[ -x "$GO" ] || GO=/usr/lib/go-1.19/bin/go

# ---- equal weights, every shared nettrace vector with samples --------------
hot_vec=""
for v in "$T"/nettrace/*.nettrace "$T"/nettrace/*.netperf; do
  b=$(basename "$v")
  if ! "$R" convert "$v" -o "$W/$b.folded" 2>"$W/err"; then
    # no CPU samples in this vector: refused, and nothing written
    grep -q "no samples to convert" "$W/err" && [ ! -e "$W/$b.folded" ] && continue
    bad "$b: convert: $(cat "$W/err")"; continue
  fi
  "$R" convert "$v" -o "$W/$b.svg" --min-width 0.000001 &&
  "$R" convert "$v" -o "$W/$b.speedscope.json" &&
  "$R" convert "$v" -o "$W/$b.pb.gz" || { bad "$b: convert"; continue; }
  python3 "$HERE/weights.py" folded "$W/$b.folded" >"$W/w.folded"
  python3 "$HERE/weights.py" svg "$W/$b.svg" >"$W/w.svg"
  python3 "$HERE/weights.py" speedscope "$W/$b.speedscope.json" >"$W/w.ss"
  same=1
  cmp -s "$W/w.folded" "$W/w.svg" || { same=0; bad "$b: SVG weights differ from folded"; diff "$W/w.folded" "$W/w.svg" | head -5; }
  cmp -s "$W/w.folded" "$W/w.ss" || { same=0; bad "$b: speedscope weights differ from folded"; }
  if [ -x "$GO" ]; then
    HOME=$W GOCACHE=$W/gocache "$GO" tool pprof -raw "$W/$b.pb.gz" >"$W/raw" 2>/dev/null &&
      python3 "$HERE/weights.py" pprof-raw "$W/raw" >"$W/w.pprof"
    cmp -s "$W/w.folded" "$W/w.pprof" || { same=0; bad "$b: pprof weights (go tool pprof -raw) differ from folded"; }
  fi
  [ $same = 1 ] && ok "$b: $(wc -l <"$W/w.folded") stacks, equal weights in folded, SVG, speedscope${GO:+, pprof (go tool pprof)}"
  [ -z "$hot_vec" ] && hot_vec=$b
  if command -v xmllint >/dev/null; then
    xmllint --noout "$W/$b.svg" 2>"$W/err" && ok "$b.svg is well-formed XML (xmllint)" || bad "$b.svg: xmllint: $(head -3 "$W/err")"
  fi
done
[ -n "$hot_vec" ] || bad "no nettrace vector gave CPU samples"

# ---- the commands' own outputs: nettrace profile picks the format from -o ----
"$R" nettrace profile "$T/nettrace/$hot_vec" -o "$W/np.svg" && xmllint --noout "$W/np.svg" 2>/dev/null &&
  "$R" nettrace profile "$T/nettrace/$hot_vec" -o "$W/np.speedscope.json" &&
  python3 "$HERE/weights.py" svg "$W/np.svg" | cmp -s - <(python3 "$HERE/weights.py" speedscope "$W/np.speedscope.json") &&
  ok "nettrace profile -o x.svg / x.speedscope.json: the formats from the extension, equal weights" ||
  bad "nettrace profile -o x.svg / x.speedscope.json"

# ---- Perfetto: a Go trace's timeline, decoded by protoc ----------------------
P=$SH/reference/perfetto
GT=$T/gotrace/v1/user_task_region_1_19_good
if command -v protoc >/dev/null && [ -f "$P/perfetto_trace.proto" ] && [ -f "$GT" ]; then
  "$R" convert "$GT" -o "$W/go.pftrace" &&
  protoc --proto_path="$P" --decode=perfetto.protos.Trace perfetto_trace.proto <"$W/go.pftrace" >"$W/go.txt" &&
  python3 "$HERE/tlcheck.py" perfetto "$W/go.txt" >"$W/go.sum" || bad "Go timeline: protoc or tlcheck failed"
  for want in '"GC"' '"STW"' '"P0"' '"Heap"' 'running' 'runnable' 'blocked' '"task ' 'region' ; do
    grep -q -- "$want" "$W/go.sum" || bad "Go timeline: $want missing: $(cut -c1-300 "$W/go.sum")"
  done
  ok "Go trace timeline: protoc decodes it; tracks GC, STW, P, goroutines, tasks, regions; slices nest ($(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(d["slices"].values()), "slices,", d["flows"], "flows")' "$W/go.sum"))"
else
  echo "SKIP part: protoc, the Perfetto proto or the Go vector missing"
fi

# ---- Perfetto and Chrome JSON: a nettrace's timeline ---------------------------
NT=$T/nettrace/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace
if command -v protoc >/dev/null && [ -f "$P/perfetto_trace.proto" ] && [ -f "$NT" ]; then
  "$R" convert "$NT" -o "$W/nt.pftrace" &&
  protoc --proto_path="$P" --decode=perfetto.protos.Trace perfetto_trace.proto <"$W/nt.pftrace" >"$W/nt.txt" &&
  python3 "$HERE/tlcheck.py" perfetto "$W/nt.txt" >"$W/nt.sum" || bad "nettrace timeline: protoc or tlcheck failed"
  for want in '"GC": ' '"GC suspension": ' '"Contention"' '"JIT ' '"Allocated": ' '"GC heap size": ' '"samples": [1-9]'; do
    grep -q -- "$want" "$W/nt.sum" || bad "nettrace timeline: $want missing: $(cut -c1-300 "$W/nt.sum")"
  done
  "$R" convert "$NT" -f chrome-json -o "$W/nt.json" && python3 "$HERE/tlcheck.py" json "$W/nt.json" >/dev/null ||
    bad "nettrace Chrome JSON: tlcheck failed"
  ok "nettrace timeline (objver4): GC, suspensions, contention, JIT slices nest; heap and allocation counters; CPU samples; Perfetto and Chrome JSON"
fi

# ---- the cat commands as timelines ----------------------------------------------
# gotrace cat -o/--format: the same file convert writes; nettrace cat:
# sampled frames named from the trace's method events (golden: all of
# them), --event filters what is drawn
if command -v protoc >/dev/null && [ -f "$P/perfetto_trace.proto" ] && [ -f "$GT" ]; then
  "$R" gotrace cat "$GT" -o "$W/gocat.pftrace" && cmp -s "$W/gocat.pftrace" "$W/go.pftrace" &&
    "$R" gotrace cat --format chrome-json "$GT" >"$W/gocat.json" && python3 "$HERE/tlcheck.py" json "$W/gocat.json" >/dev/null &&
    ok "gotrace cat -o x.pftrace (as convert writes it) and --format chrome-json" || bad "gotrace cat as a timeline"
  GV=$T/nettrace/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
  "$R" nettrace cat "$GV" -o "$W/ntcat.pftrace" &&
  protoc --proto_path="$P" --decode=perfetto.protos.Trace perfetto_trace.proto <"$W/ntcat.pftrace" >"$W/ntcat.txt" &&
  python3 "$HERE/tlcheck.py" perfetto "$W/ntcat.txt" >"$W/ntcat.sum" || bad "nettrace cat -o x.pftrace: protoc or tlcheck failed"
  named=$(grep -A2 function_names "$W/ntcat.txt" | grep -c 'str: ".*Example.Program.Work(int32)')
  addrs=$(grep -A2 function_names "$W/ntcat.txt" | grep -c 'str: "0x')
  [ "$named" -ge 1 ] && [ "$addrs" = 0 ] && grep -q '"samples": [1-9]' "$W/ntcat.sum" &&
    ok "nettrace cat -o x.pftrace: CPU samples with named frames (mvc-hello-world!Example.Program.Work...), no bare addresses" ||
    bad "nettrace cat timeline: $named named Work frames, $addrs addresses: $(cut -c1-200 "$W/ntcat.sum")"
  "$R" nettrace cat "$NT" -e 'GC/*' -f chrome-json >"$W/ntgc.json" && python3 "$HERE/tlcheck.py" json "$W/ntgc.json" >"$W/ntgc.sum" &&
    grep -q '"GC": [1-9]' "$W/ntgc.sum" && ! grep -q '"JIT ' "$W/ntgc.sum" &&
    ok "nettrace cat -e 'GC/*' -f chrome-json: GC slices, no JIT" || bad "nettrace cat -e GC/* -f chrome-json: $(cut -c1-300 "$W/ntgc.sum")"
fi

# ---- real viewers ----------------------------------------------------------------
if [ -n "${RTD_SANITIZED:-}" ]; then
  # the browser runs no rtdiag code: the sanitizer build checked the
  # conversions above; the viewers run in the normal build
  echo "SKIP part: viewers not opened again in the sanitizer build"
  [ $fails = 0 ] && { echo "1 passed, 0 failed"; exit 0; } || exit 1
fi
if ! command -v chromium >/dev/null || ! command -v npm >/dev/null; then
  echo "SKIP part: chromium or npm missing: viewers not opened"
  [ $fails = 0 ] && { echo "1 passed, 0 failed"; exit 0; } || exit 1
fi
NM=$BIN/npm-pictures
PKGS="speedscope@1.25.0 playwright-core@1.65.1 ajv@8.17.1"
if [ "$(cat "$NM/.pkgs" 2>/dev/null)" != "$PKGS" ]; then
  mkdir -p "$NM"
  (cd "$NM" && flock "$NM" npm install --no-audit --no-fund --no-save --prefix "$NM" $PKGS >"$W/npm.log" 2>&1) ||
    { echo "SKIP part: npm install $PKGS failed: $(tail -2 "$W/npm.log")"; [ $fails = 0 ] && exit 77 || exit 1; }
  echo "$PKGS" >"$NM/.pkgs"
fi
V="node $HERE/viewers.js $NM/node_modules $SHOTS"
b=$hot_vec
hot=$("$R" convert "$T/nettrace/$b" -f top | sed -n 3p | sed 's/^ *[^ ]* *[^ ]* *[^ ]* *[^ ]*  //')
title=$(grep -o '<text id="title"[^<]*' "$W/$b.svg" | sed 's/.*>//')
$V schema "$W"/*.speedscope.json || bad "speedscope schema"
$V svg "$W/$b.svg" "$title" "$hot" "${hot%%(*}" || bad "SVG in Chromium"
$V speedscope "$W/$b.speedscope.json" "${hot%%(*}" || bad "speedscope page"
"$R" convert "$GT" -f chrome-json -o "$W/go.json" && $V speedscope "$W/go.json" "G1" || bad "speedscope importing a Chrome JSON timeline"
echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
[ $fails = 0 ]
