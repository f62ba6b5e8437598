#!/usr/bin/env bash
# What rtdiag cannot read or would draw empty is refused before anything is
# written, and an existing output stays as it was (issue #27 item 3, #32
# items 2 and 6). Each case: `echo OLD > OUT`, the command exits non-zero
# with its message, OUT still reads OLD, no temporary file is left beside
# it. Inputs: /etc/passwd, 8 bytes of junk, the first 100 bytes of a real
# nettrace, 16 bytes of binary garbage (all made here: a damaged or foreign
# input is what they stand for), a real Go trace without CPU samples, folded
# stacks asked as a PNG. Then the one extension rule: a Go trace to t.json
# is the Chrome JSON timeline gotrace cat writes, by convert as by cat.
set -u
R=${RTDIAG:?RTDIAG not set}
SRC=${RTD_SOURCE_DIR:?}
SH=${RTD_SHARED_DIR:-$SRC/../shared}
T=$SH/testdata
W=$(mktemp -d /tmp/rtd-refused-XXXXXX)
trap 'rm -rf "$W"' EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
[ -d "$T/nettrace" ] && [ -d "$T/gotrace" ] || { echo "SKIP: $T missing (../shared/testdata)"; exit 77; }
NT=$T/nettrace/only_managed_samples.nettrace
GT=$T/gotrace/v1/http_1_19_good # no CPU samples in it

printf 'junkjunk' >"$W/junk8"
head -c 100 "$NT" >"$W/cut100.nettrace"
printf '\xde\xad\xbe\xef\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c' >"$W/garbage.bin"
printf 'main;work;spin 12\nmain;idle 3\n' >"$W/hot.folded"

# refused NAME WANT OUT -- COMMAND...: COMMAND exits non-zero, says WANT
# (a grep -E pattern), leaves OUT reading OLD and nothing else beside it
refused() {
  local name=$1 want=$2 out=$3
  shift 4
  echo OLD >"$out"
  "$@" >"$W/stdout" 2>"$W/err"
  local rc=$?
  local left
  left=$(find "$(dirname "$out")" -name '.*rtdiag-*' | head -1)
  if [ $rc = 0 ]; then
    bad "$name: exit 0 ($(cat "$W/err"))"
  elif ! grep -qE "$want" "$W/err"; then
    bad "$name: exit $rc, message '$(cat "$W/err")' does not say /$want/"
  elif [ "$(cat "$out")" != OLD ]; then
    bad "$name: $out replaced ($(wc -c <"$out") bytes)"
  elif [ -n "$left" ]; then
    bad "$name: left $left"
  else
    ok "$name: exit $rc, '$(head -1 "$W/err" | cut -c1-110)', old file kept"
  fi
}

refused "convert /etc/passwd -o out.svg" "passwd: not a format rtdiag reads .*line 1" \
  "$W/out.svg" -- "$R" convert /etc/passwd -o "$W/out.svg"
refused "convert 8 bytes of junk -o out.folded" "junk8: not a format rtdiag reads" \
  "$W/out.folded" -- "$R" convert "$W/junk8" -o "$W/out.folded"
refused "convert the first 100 bytes of a nettrace -o out.folded" "no samples to convert" \
  "$W/out.folded" -- "$R" convert "$W/cut100.nettrace" -o "$W/out.folded"
refused "convert garbage.bin -o g.pb.gz" "garbage.bin: not a format rtdiag reads \(tried nettrace, netperf, Go trace.*pprof, folded stacks" \
  "$W/g.pb.gz" -- "$R" convert "$W/garbage.bin" -o "$W/g.pb.gz"
"$R" convert "$W/garbage.bin" >"$W/so" 2>"$W/se"; rc=$?
[ $rc = 1 ] && [ ! -s "$W/so" ] && grep -q 'not a format rtdiag reads' "$W/se" &&
  ok "convert garbage.bin to stdout: exit 1, nothing printed" || bad "convert garbage.bin: $rc $(cat "$W/se")"
refused "convert hot.folded -o x.png" "x.png: '.png' is a PNG image, which rtdiag does not draw" \
  "$W/x.png" -- "$R" convert "$W/hot.folded" -o "$W/x.png"
refused "convert hot.folded -o x.json (a timeline of a profile)" "'.json' is a Chrome JSON timeline.*speedscope.json" \
  "$W/x.json" -- "$R" convert "$W/hot.folded" -o "$W/x.json"
refused "convert a Go trace without CPU samples -o t.svg" "no samples to convert" \
  "$W/t.svg" -- "$R" convert "$GT" -o "$W/t.svg"
refused "convert a Go trace without CPU samples -o t.pb.gz" "no samples to convert" \
  "$W/t.pb.gz" -- "$R" convert "$GT" -o "$W/t.pb.gz"
"$R" convert "$GT" -f folded >"$W/so" 2>"$W/se"; rc=$?
[ $rc = 1 ] && [ ! -s "$W/so" ] && grep -q 'no samples to convert (nothing written)$' "$W/se" &&
  ok "convert a Go trace without CPU samples to stdout: exit 1, '(nothing written)'" ||
  bad "convert a Go trace without CPU samples to stdout: $rc $(cat "$W/se")"
refused "nettrace profile -o y.png" "'.png' is a PNG image" \
  "$W/y.png" -- "$R" nettrace profile "$NT" -o "$W/y.png"
refused "perf record -o cpu.png" "'.png' is a PNG image" \
  "$W/cpu.png" -- "$R" perf record -o "$W/cpu.png" -- true
refused "perf trace -o t.png" "'.png' is a PNG image" \
  "$W/t.png" -- "$R" perf trace -o "$W/t.png" -- true
refused "gotrace pprof -t cpu (no CPU samples) -o c.svg" "no samples of this type" \
  "$W/c.svg" -- "$R" gotrace pprof -t cpu "$GT" -o "$W/c.svg"
refused "gotrace pprof -o c.json" "'.json' is a Chrome JSON timeline" \
  "$W/c.json" -- "$R" gotrace pprof -t sync "$GT" -o "$W/c.json"
# a recording under a picture's name would pass for what it is not
refused "gotrace text2bin -o g.svg" "'.svg' is an SVG flame graph; this writes a Go execution trace" \
  "$W/g.svg" -- "$R" gotrace text2bin "$T/gotrace/v2/go122-gc-stress.test" -o "$W/g.svg"
refused "dotnet collect -o x.pftrace" "'.pftrace' is a Perfetto timeline; this writes an EventPipe trace" \
  "$W/x.pftrace" -- "$R" dotnet collect -p $$ -o "$W/x.pftrace"
# gotrace pprof -o s.svg is a flame graph (it was pprof bytes named .svg)
"$R" gotrace pprof -t sync "$GT" -o "$W/s.svg" 2>"$W/e" && head -c 5 "$W/s.svg" | grep -q '<?xml' &&
  ok "gotrace pprof -o s.svg: an SVG flame graph" || bad "gotrace pprof -o s.svg: $(head -c 20 "$W/s.svg" | od -c | head -2) $(cat "$W/e")"

# gotrace stats refuses what is no Go trace rather than tabling "go 0.0"
"$R" gotrace stats "$W/garbage.bin" >"$W/so" 2>"$W/se"; rc=$?
[ $rc != 0 ] && ! grep -q 'go 0.0' "$W/so" && grep -q 'not a Go execution trace' "$W/se" &&
  ok "gotrace stats garbage.bin: exit $rc, '$(cat "$W/se")'" ||
  bad "gotrace stats garbage.bin: exit $rc, out '$(head -2 "$W/so")', err '$(cat "$W/se")'"
"$R" gotrace stats "$NT" >"$W/so" 2>"$W/se"; rc=$?
[ $rc != 0 ] && [ ! -s "$W/so" ] && grep -q 'nettrace, not a Go execution trace' "$W/se" &&
  ok "gotrace stats of a nettrace names it" || bad "gotrace stats nettrace: exit $rc, '$(cat "$W/se")'"

# one extension rule: .json is the same Chrome JSON timeline from convert
# as from gotrace cat (convert wrote an empty speedscope file, exit 0)
"$R" convert "$GT" -o "$W/t.json" 2>"$W/e1" && "$R" gotrace cat "$GT" -o "$W/t2.json" 2>"$W/e2" &&
  grep -q '"traceEvents"' "$W/t.json" && cmp -s "$W/t.json" "$W/t2.json" &&
  ok "convert and gotrace cat: t.json is the same Chrome JSON timeline ($(wc -c <"$W/t.json") bytes)" ||
  bad "t.json differs: $(head -c 80 "$W/t.json") / $(head -c 80 "$W/t2.json") $(cat "$W/e1" "$W/e2")"
# and what can be read still converts: folded to every profile format
for o in f.folded f.pb.gz f.svg f.speedscope.json f.txt; do
  "$R" convert "$W/hot.folded" -o "$W/$o" 2>"$W/e" && [ -s "$W/$o" ] || bad "convert hot.folded -o $o: $(cat "$W/e")"
done
"$R" convert "$W/f.pb.gz" -o "$W/back.folded" && sort "$W/back.folded" | cmp -s - <(sort "$W/hot.folded") &&
  ok "folded -> pprof -> folded: the same stacks" || bad "folded round trip: $(cat "$W/back.folded")"

echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
[ $fails = 0 ]
