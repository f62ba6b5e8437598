# perf record of Go programs built with Go 1.19 and Go 1.23, with their
# symbol table and stripped (-ldflags=-s: named from .gopclntab): the hot
# Go functions are named as Go names them (main.hotLoop, runtime.main),
# with their 3:1 share of the work, under runtime.main.
. "$(dirname "$0")/lib.sh"
ran=0
for GOV in 1.19 1.23; do
  GO=/usr/lib/go-$GOV/bin/go
  if [ ! -x "$GO" ]; then echo "note: Go $GOV not installed ($GO): not tested"; continue; fi
  # built once per build tree (tests/targets/go_build.sh; the fixture go_targets does it first)
  pg=$(bash "$RTD_SOURCE_DIR/tests/targets/go_build.sh" "$GO" tests/targets/perf-go 2>"$TMP/builderr") &&
    bash "$RTD_SOURCE_DIR/tests/targets/go_build.sh" "$GO" tests/targets/perf-go perf-go-s -ldflags=-s >/dev/null 2>>"$TMP/builderr" ||
    { cat "$TMP/builderr"; fail "go$GOV build"; }
  B=$(dirname "$pg")
  readelf -S "$B/perf-go-s" | grep -q '\.symtab' && fail "go$GOV -ldflags=-s left a .symtab"
  # fp: a frameless Go leaf (hotLoop) hides its caller main.main, for perf
  # too; dwarf: Go's .debug_frame gives the whole chain
  for mode in perf-go:fp perf-go-s:fp perf-go:dwarf; do
    bin=${mode%:*} cg=${mode#*:}
    "$R" perf record -g $cg -F 499 -o "$TMP/$bin.folded" -- "$B/$bin" 1.5 2> "$TMP/err" || { cat "$TMP/err"; fail "go$GOV $bin: record"; }
    python3 - "$TMP/$bin.folded" "go$GOV $bin -g $cg" $cg <<'PY' || fail "go$GOV $bin $cg: see above"
import sys
hot = warm = tot = 0
stacks = []
for line in open(sys.argv[1]):
    s, v = line.rsplit(" ", 1); v = int(v); tot += v
    fr = s.split(";"); stacks.append(fr)
    if "main.hotLoop" in fr: hot += v
    if "main.warmLoop" in fr: warm += v
print("%s: main.hotLoop %.1f%%, main.warmLoop %.1f%% of %d ns" % (sys.argv[2], 100.0*hot/tot, 100.0*warm/tot, tot))
assert hot > 0 and warm > 0, "hot functions not named"
assert 1.8 < hot / warm < 6, "hotLoop:warmLoop is not about 3:1"
# Go's own names, and the Go root frames
assert any(f[:2] == ["runtime.goexit", "runtime.main"] and f[-1] == "main.hotLoop" for f in stacks), "no runtime.goexit;runtime.main;...;main.hotLoop stack"
if sys.argv[3] == "dwarf":
    assert any(f[:4] == ["runtime.goexit", "runtime.main", "main.main", "main.hotLoop"] for f in stacks), "dwarf: no runtime.goexit;runtime.main;main.main;main.hotLoop"
assert not any(x.endswith(".abi0") for f in stacks for x in f), "ABI wrapper suffix shown"
PY
    ok "go$GOV $bin -g $cg"
  done
  ran=1
done
[ $ran = 1 ] || skip "neither Go 1.19 nor Go 1.23 is installed"
echo PASS
