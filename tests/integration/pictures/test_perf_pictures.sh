#!/usr/bin/env bash
# perf record's pictures (issue #15), from the running kernel and a real
# program (tests/targets/perf-cpu: alpha, beta and gamma_fn burn CPU 1:2:3,
# here on two worker threads):
# - equal weights: one recording written as pprof, converted to folded,
#   SVG and speedscope: every stack has the same weight in all four
#   (pprof read by `go tool pprof -raw`, the SVG from its frames' geometry);
# - `perf record -o x.svg` / `-o x.speedscope.json` / `--format svg`:
#   the format from the name or the option; the SVG is well-formed and
#   shows the 1:2:3; speedscope has one profile per sampled thread (named
#   with the thread's tid), validates against speedscope's schema and
#   loads in speedscope's own page in headless Chromium (when the npm
#   packages test_viewers.sh installs are there).
set -u
R=${RTDIAG:?}; SRC=${RTD_SOURCE_DIR:?}; BIN=${RTD_BINARY_DIR:?}
HERE=$SRC/tests/integration/pictures
FP=$BIN/tests/targets/cpu_shares_fp
[ "$(id -u)" = 0 ] || { echo "SKIP: perf_event sampling needs root here"; exit 77; }
[ -x "$FP" ] || { echo "FAIL: $FP not built"; exit 1; }
W=$(mktemp -d /tmp/rtd-perfpic-XXXXXX)
trap 'rm -rf "$W"' EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
GO=/usr/lib/go-1.23/bin/go
[ -x "$GO" ] || GO=/usr/lib/go-1.19/bin/go

if ! "$R" perf record -F 999 -o "$W/cpu.pb.gz" -- "$FP" rounds=300 2 2>"$W/err"; then
  echo "SKIP: perf record cannot sample here: $(head -2 "$W/err")"; exit 77
fi

# ---- equal weights: pprof, folded, SVG, speedscope of one recording ----------
"$R" convert "$W/cpu.pb.gz" -o "$W/cpu.folded" &&
"$R" convert "$W/cpu.pb.gz" -o "$W/cpu.svg" --min-width 0.000001 &&
"$R" convert "$W/cpu.pb.gz" -o "$W/cpu.speedscope.json" || bad "convert cpu.pb.gz"
python3 "$HERE/weights.py" folded "$W/cpu.folded" >"$W/w.folded"
python3 "$HERE/weights.py" svg "$W/cpu.svg" >"$W/w.svg"
python3 "$HERE/weights.py" speedscope "$W/cpu.speedscope.json" >"$W/w.ss"
n=$(wc -l <"$W/w.folded")
[ "$n" -ge 3 ] || bad "perf profile: only $n stacks"
grep -q 'gamma_fn' "$W/w.folded" || bad "perf profile: no gamma_fn: $(head -3 "$W/w.folded")"
cmp -s "$W/w.folded" "$W/w.svg" || { bad "perf: SVG weights differ from folded"; diff "$W/w.folded" "$W/w.svg" | head -5; }
cmp -s "$W/w.folded" "$W/w.ss" || { bad "perf: speedscope weights differ from folded"; diff "$W/w.folded" "$W/w.ss" | head -5; }
if [ -x "$GO" ]; then
  # -raw shows the last sample type (cpu nanoseconds), as folded does
  HOME=$W GOCACHE=$W/gocache "$GO" tool pprof -raw "$W/cpu.pb.gz" >"$W/raw" 2>"$W/err" &&
    python3 "$HERE/weights.py" pprof-raw "$W/raw" >"$W/w.pprof" || bad "go tool pprof -raw: $(head -2 "$W/err")"
  cmp -s "$W/w.folded" "$W/w.pprof" || { bad "perf: pprof weights (go tool pprof -raw) differ from folded"; diff "$W/w.folded" "$W/w.pprof" | head -5; }
fi
[ $fails = 0 ] && ok "perf record profile (cpu_shares, 2 threads): $n stacks, equal weights in pprof${GO:+ (go tool pprof -raw)}, folded, SVG, speedscope"

# ---- perf record's own writers: the format from -o's name, or --format --------
"$R" perf record -F 999 -o "$W/rec.svg" -- "$FP" rounds=300 2 2>/dev/null || bad "perf record -o x.svg"
"$R" perf record -F 999 -o "$W/rec.speedscope.json" -- "$FP" rounds=300 2 2>/dev/null || bad "perf record -o x.speedscope.json"
"$R" perf record -F 999 --format svg -o "$W/rec2.out" -- "$FP" rounds=50 2>/dev/null || bad "perf record --format svg"
head -c 300 "$W/rec2.out" | grep -q '<svg' || bad "perf record --format svg -o rec2.out: not an SVG"
if command -v xmllint >/dev/null; then
  xmllint --noout "$W/rec.svg" 2>"$W/err" || bad "perf record SVG: xmllint: $(head -2 "$W/err")"
fi
# the SVG and speedscope each show the program's 1:2:3 (self time)
for f in svg:rec.svg speedscope:rec.speedscope.json; do
  python3 "$HERE/weights.py" "${f%%:*}" "$W/${f#*:}" | python3 -c '
import sys
w = {"alpha": 0, "beta": 0, "gamma_fn": 0}; tot = 0
for line in sys.stdin:
    stack, v = line.rsplit(" ", 1); v = int(v); tot += v
    for fr in reversed(stack.split(";")):
        if fr in w: w[fr] += v; break
s = [100.0 * w[k] / tot if tot else 0 for k in ("alpha", "beta", "gamma_fn")]
print("%s: alpha %.1f%% beta %.1f%% gamma %.1f%% (want 16.7 33.3 50.0)" % (sys.argv[1], *s))
sys.exit(0 if all(abs(a - b) <= 6 for a, b in zip(s, (16.7, 33.3, 50.0))) else 1)' "${f#*:}" ||
    bad "${f#*:}: shares off the program's 1:2:3 by more than 6 points"
done
# speedscope: a profile per sampled thread, named with its tid
python3 - "$W/rec.speedscope.json" >"$W/threads" <<'EOF' || bad "speedscope threads: $(cat "$W/threads")"
import json, re, sys
j = json.load(open(sys.argv[1]))
ps = j["profiles"]
named = [p["name"] for p in ps if re.search(r"\b\d+\b", p["name"])]
busy = [p for p in ps if sum(p["weights"]) > 0]
print("%d profiles: %s" % (len(ps), ", ".join(p["name"] for p in ps)))
# the two workers burn the CPU: two threads at least, each with samples
sys.exit(0 if len(busy) >= 2 and len(named) == len(ps) else 1)
EOF
ok "perf record -o x.speedscope.json: $(cat "$W/threads")"

# ---- speedscope's own checks, when test_viewers.sh installed them --------------
NM=$BIN/npm-pictures
if [ -z "${RTD_SANITIZED:-}" ] && command -v chromium >/dev/null && [ -d "$NM/node_modules/speedscope" ]; then
  V="node $HERE/viewers.js $NM/node_modules $BIN/pictures-shots"
  mkdir -p "$BIN/pictures-shots"
  $V schema "$W/rec.speedscope.json" "$W/cpu.speedscope.json" || bad "speedscope schema"
  $V speedscope "$W/rec.speedscope.json" gamma_fn || bad "speedscope page"
else
  echo "SKIP part: speedscope's page (normal build, chromium, and the npm packages test_viewers.sh installs)"
fi
echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
[ $fails = 0 ]
