#!/usr/bin/env bash
# The pull endpoints' parameters against Go's own net/http/pprof (Go 1.23,
# tests/targets/go-pprof-server), on 127.0.0.1: the same ?seconds=,
# ?debug= requests go to both, and the statuses (and Go's error texts)
# must be the same, as Alloy, Parca and go tool pprof are written against
# Go's handlers:
# - /block, /allocs, /mutex: ?seconds= a positive base-10 integer or
#   400 'invalid value for "seconds" - must be a positive integer'
#   (0x10, 1.5, 0, -1, abc, out of range); seconds with debug=N (N != 0)
#   400; an empty seconds= or debug=abc change nothing;
# - ?debug=1 of /block: Go's legacy text form ("--- contention:",
#   cycles/second, "N M @ 0x..." records with "#" frame lines), which
#   go tool pprof's legacy parser reads, as Go's;
# - /profile?seconds=0x10 and ?seconds=1.5: Go takes 30 s (its default)
#   for anything but a positive integer: the profiles' Duration, both;
# - an unknown profile: 404 "Unknown profile".
# The agent's target is tests/targets/perf-offcpu (a native program whose
# /block is its off-CPU waits); /allocs and /mutex are asked only what is
# refused before any source is needed.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root for perf_event tracepoints"
GO123=/usr/lib/go-1.23/bin/go
[ -x "$GO123" ] || skip "no Go 1.23 ($GO123) for net/http/pprof"
PROG=$BIN/tests/targets/offcpu_waits_fp
[ -x "$PROG" ] || { bad "offcpu_waits_fp not built"; exit 1; }
export PPROF_TMPDIR="$WORK/pprof" HOME="$WORK"

# built once per build tree (the go_targets fixture), no timeout of its own
GPS=$(bash "$SRC/tests/targets/go_build.sh" "$GO123" tests/targets/go-pprof-server 2> "$WORK/builderr") \
  || { cat "$WORK/builderr"; bad "go build go-pprof-server"; exit 1; }
mkdir -p "$WORK/go"
"$GPS" "$WORK/go" > "$WORK/go/out" 2>&1 &
PIDS+=("$!")
wait_for 30 test -s "$WORK/go/addr" || { bad "Go's pprof server did not start: $(cat "$WORK/go/out")"; exit 1; }
GOURL="http://$(cat "$WORK/go/addr")/debug/pprof"

"$PROG" 100000 > "$WORK/prog.out" &   # rounds of ~30 ms: it outlives the test
P=$!; PIDS+=("$P")
SVC=params$$
start_agent --target "pid=$P,service=$SVC" --scan-interval 200ms --max-cpu 800% \
  || { bad "agent did not start"; exit 1; }
wait_for 15 has_profile "$P" block || { bad "no block in /targets: $(curl -s "$AGENT_URL/targets")"; exit 1; }
AURL="$AGENT_URL/targets/$SVC/debug/pprof"

# ask SIDE NAME PATH?QUERY: status, content type and body into $WORK/SIDE.NAME.*
ask() {
  curl -s -o "$WORK/$1.$2.body" -w '%{http_code} %{content_type}' "$3" > "$WORK/$1.$2.st"
}

# the long ones first, in the background: 30 s CPU profiles (Go's one
# at a time: a second while one runs is a 500 "already in use")
(for q in "0x10" "1.5"; do ask go "cpu-${q/./_}" "$GOURL/profile?seconds=$q"; done) &
CPUJOBS=("$!")
for q in "0x10" "1.5"; do
  (ask rtd "cpu-${q/./_}" "$AURL/profile?seconds=$q") &
  CPUJOBS+=("$!")
done

n=0
for q in "block?seconds=1.5" "block?seconds=0x10" "block?seconds=0" "block?seconds=-1" \
         "block?seconds=abc" "block?seconds=99999999999999999999" "block?seconds=1&debug=1" \
         "block?seconds=1&debug=x" "block?seconds=+1" "block?seconds=%2B1" "block?seconds=" "block?debug=abc" \
         "block?debug=1" "allocs?seconds=1.5" "allocs?seconds=0x10" "allocs?seconds=2&debug=2" \
         "mutex?seconds=1.5" "mutex?seconds=-5" "mutex?seconds=1&debug=-1" "nosuch" "nosuch?seconds=1"; do
  n=$((n+1))
  ask go "q$n" "$GOURL/$q"
  ask rtd "q$n" "$AURL/$q"
  read -r gs gt < "$WORK/go.q$n.st"
  read -r rs rt < "$WORK/rtd.q$n.st"
  if [ "$gs" != "$rs" ]; then
    bad "$q: Go answers $gs, the agent $rs ($(head -c 200 "$WORK/rtd.q$n.body"))"
  elif [ "$gt" != "$rt" ]; then
    bad "$q: Go's Content-Type '$gt', the agent's '$rt'"
  elif [ "$gs" = 400 ] && ! cmp -s "$WORK/go.q$n.body" "$WORK/rtd.q$n.body"; then
    bad "$q: 400 with another text: Go '$(cat "$WORK/go.q$n.body")', the agent '$(cat "$WORK/rtd.q$n.body")'"
  elif [ "$gs" = 404 ] && [ "$(head -1 "$WORK/go.q$n.body")" != "$(head -1 "$WORK/rtd.q$n.body")" ]; then
    bad "$q: 404 with another first line: Go '$(head -1 "$WORK/go.q$n.body")', the agent '$(head -1 "$WORK/rtd.q$n.body")'"
  else
    ok "$q: $gs $gt, as Go$([ "$gs" = 400 ] && echo ": $(cat "$WORK/go.q$n.body")")"
  fi
  [ "$q" = "block?debug=1" ] && DBG=$n
done

# ?debug=1: the same text form, read by go tool pprof's legacy parser
python3 - "$WORK/go.q$DBG.body" "$WORK/rtd.q$DBG.body" <<'PY' && ok "block?debug=1: Go's contention text form, wait_sleep in its frames" || bad "block?debug=1: see above"
import re, sys
def shape(path):
    lines = open(path).read().split("\n")
    assert lines[0] == "--- contention:", lines[:2]
    assert re.fullmatch(r"cycles/second=\d+", lines[1]), lines[1]
    recs = [l for l in lines[2:] if re.fullmatch(r"\d+ \d+ @( 0x[0-9a-f]+)+", l)]
    frames = [l for l in lines[2:] if l.startswith("#\t")]
    assert all(re.fullmatch(r"#\t0x[0-9a-f]+\t\S.*\+0x[0-9a-f]+\t.*:\d+", l) for l in frames), frames[:3]
    return recs, frames
g, gf = shape(sys.argv[1]); r, rf = shape(sys.argv[2])
print("Go: %d records, %d frame lines; agent: %d records, %d frame lines" % (len(g), len(gf), len(r), len(rf)))
assert g and r
assert any("wait_sleep" in l for l in rf), rf[:5]
PY
for side in go rtd; do
  cp "$WORK/$side.q$DBG.body" "$WORK/$side.block.txt"
  "$GO123" tool pprof -raw "$WORK/$side.block.txt" > "$WORK/$side.block.raw" 2>&1
  grep -q "^PeriodType: contentions count" "$WORK/$side.block.raw" && grep -q "^Samples:" "$WORK/$side.block.raw" \
    && ok "go tool pprof reads the $side block?debug=1 text" || bad "go tool pprof -raw of $side's text: $(head -5 "$WORK/$side.block.raw")"
done

wait "${CPUJOBS[@]}"
for q in "0x10" "1.5"; do
  n=cpu-${q/./_}
  for side in go rtd; do
    read -r s t < "$WORK/$side.$n.st"
    [ "$s" = 200 ] || { bad "profile?seconds=$q: $side answers $s: $(head -c 200 "$WORK/$side.$n.body")"; continue; }
    "$GO123" tool pprof -raw "$WORK/$side.$n.body" > "$WORK/$side.$n.raw" 2>&1
    d=$(awk '/^Duration:/ { print $2 }' "$WORK/$side.$n.raw")
    echo "profile?seconds=$q: $side's Duration $d"
    python3 -c '
import re, sys
m = re.fullmatch(r"(?:(\d+)m)?([0-9.]+)s?", sys.argv[1])
s = (int(m.group(1) or 0) * 60 + float(m.group(2))) if m else 0
sys.exit(0 if 29 <= s <= 40 else 1)' "${d:-x}" \
      && ok "profile?seconds=$q: $side took Go's default 30 s" || bad "profile?seconds=$q: $side's Duration '$d', want 30 s"
  done
done

[ $fail = 0 ] && echo PASS || { echo "$fail FAILED"; exit 1; }
