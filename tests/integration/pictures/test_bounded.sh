#!/usr/bin/env bash
# Timelines are written in bounded memory: a Go program of our own
# (tests/integration/pictures/gen, built with Debian's Go 1.23) writes two
# execution traces, one five times the other; each is converted to
# Perfetto and to Chrome JSON, and the larger input must not take memory
# in proportion: peak RSS for 5x the input stays under 2x. (The 1 GB runs
# are in bench/pictures/run.sh.) The timelines are also checked by
# tlcheck.py for the smaller trace.
set -u
R=${RTDIAG:?}; SRC=${RTD_SOURCE_DIR:?}
GO=/usr/lib/go-1.23/bin/go
[ -x "$GO" ] || { echo "SKIP: $GO (Debian golang-1.23-go) not installed"; exit 77; }
[ -x /usr/bin/time ] || { echo "SKIP: /usr/bin/time not installed"; exit 77; }
W=$(mktemp -d /tmp/rtd-bounded-XXXXXX)
trap 'rm -rf "$W"' EXIT
GEN=$(bash "$SRC/tests/targets/go_build.sh" "$GO" tests/integration/pictures/gen) || { echo "FAIL: go build"; exit 1; }
"$GEN" "$W/small.trace" 200 2>/dev/null || { echo "FAIL: gen"; exit 1; }
fails=0
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
# under ASan peak RSS is the sanitizer's shadow memory: the sizes are
# compared in the normal build, the conversions below run in both
[ -n "${RTD_SANITIZED:-}" ] && echo "SKIP part: RSS not compared in the sanitizer build"
[ -z "${RTD_SANITIZED:-}" ] && "$GEN" "$W/big.trace" 1000 2>/dev/null
for fmt in perfetto chrome-json; do
  [ -n "${RTD_SANITIZED:-}" ] && break
  s=$(rss "$R" convert "$W/small.trace" -f $fmt -o /dev/null)
  b=$(rss "$R" convert "$W/big.trace" -f $fmt -o /dev/null)
  si=$(stat -c %s "$W/small.trace"); bi=$(stat -c %s "$W/big.trace")
  if [ "$b" -lt $((2 * s)) ]; then
    echo "ok: $fmt: $((si / 1024)) KB trace -> peak RSS $s KB; $((bi / 1024)) KB trace -> $b KB"
  else
    echo "FAIL: $fmt: peak RSS $s KB for $si bytes, $b KB for $bi bytes (grows with the input)"; fails=$((fails + 1))
  fi
done
P=${RTD_SHARED_DIR:-$SRC/../shared}/reference/perfetto
if command -v protoc >/dev/null && [ -f "$P/perfetto_trace.proto" ]; then
  "$R" convert "$W/small.trace" -o "$W/s.pftrace" &&
  protoc --proto_path="$P" --decode=perfetto.protos.Trace perfetto_trace.proto <"$W/s.pftrace" >"$W/s.txt" &&
  python3 "$SRC/tests/integration/pictures/tlcheck.py" perfetto "$W/s.txt" >"$W/s.sum" &&
  grep -q '"samples": [1-9]' "$W/s.sum" && grep -q '"flows": [1-9]' "$W/s.sum" &&
    echo "ok: a Go 1.23 trace with CPU samples: $(cut -c1-160 "$W/s.sum")..." ||
    { echo "FAIL: Go 1.23 trace timeline: $(cut -c1-300 "$W/s.sum" 2>/dev/null)"; fails=$((fails + 1)); }
fi
# the trace's CPU samples as a profile: equal weights in every format
H=$SRC/tests/integration/pictures
for f in folded svg speedscope.json pb.gz; do
  "$R" convert "$W/small.trace" -o "$W/g.$f" --min-width 0.000001 2>/dev/null || { echo "FAIL: convert to $f"; fails=$((fails + 1)); }
done
python3 "$H/weights.py" folded "$W/g.folded" >"$W/w1"
python3 "$H/weights.py" svg "$W/g.svg" >"$W/w2"
python3 "$H/weights.py" speedscope "$W/g.speedscope.json" >"$W/w3"
HOME=$W GOCACHE=$W/gocache "$GO" tool pprof -raw "$W/g.pb.gz" >"$W/raw" 2>/dev/null && python3 "$H/weights.py" pprof-raw "$W/raw" >"$W/w4"
if [ -s "$W/w1" ] && cmp -s "$W/w1" "$W/w2" && cmp -s "$W/w1" "$W/w3" && cmp -s "$W/w1" "$W/w4"; then
  echo "ok: the Go trace's CPU samples: $(wc -l <"$W/w1") stacks, equal weights in folded, SVG, speedscope, pprof (go tool pprof)"
else
  echo "FAIL: Go CPU-sample profile weights differ between formats (or no samples)"; fails=$((fails + 1))
fi
echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
[ $fails = 0 ]
