#!/usr/bin/env bash
# The gotrace commands as a user meets them (issue 19, items 1, 8, 9, 12):
# output files that a failure does not destroy, messages that blame the
# right thing, repeated filters, bounded memory of stats.
. "$(dirname "$0")/lib.sh"
V=$V1/stress_1_19_good
[ -e "$V" ] || { echo "skip: $V not found (../shared/testdata missing?)"; exit 77; }

# 1. A failed command leaves an existing output file as it was, and no
# temporary file beside it.
echo "not a trace" >"$TMP/garbage"
cp "$V" "$TMP/keep"
"$R" gotrace text2bin "$TMP/garbage" -o "$TMP/keep" 2>"$TMP/err" && bad "text2bin of garbage succeeded"
cmp -s "$V" "$TMP/keep" && ok "text2bin -o: failed ($(head -c 60 "$TMP/err")...), the old file is intact" || bad "text2bin -o destroyed the old file"
"$R" gotrace grep -o "$TMP/keep" "$TMP/garbage" 2>"$TMP/err" && bad "grep -o of garbage succeeded"
cmp -s "$V" "$TMP/keep" && ok "grep -o: failed, the old file is intact" || bad "grep -o destroyed the old file"
"$R" gotrace grep -e GoCreate -o "$TMP/nodir/out" "$V" 2>"$TMP/err" && bad "grep -o into a missing folder succeeded"
grep -q "nodir" "$TMP/err" && ok "grep -o into a missing folder: $(cat "$TMP/err")" || bad "grep -o missing folder: $(cat "$TMP/err")"
[ "$(ls "$TMP" | grep -vxE 'garbage|keep|err')" = "" ] && ok "no temporary or empty file left behind" || bad "files left: $(ls "$TMP")"
# A whole result replaces it.
"$R" gotrace grep -e '^GoCreate$' -o "$TMP/keep" "$V" && [ "$("$R" gotrace grep -e '^GoCreate$' -c "$TMP/keep")" = "$("$R" gotrace grep -e '^GoCreate$' -c "$V")" ] &&
  ok "grep -o: a whole result replaces the file" || bad "grep -o did not write its result"

# 8. An empty file is not "a trace cut short": no ordering hint.
: >"$TMP/empty"
"$R" gotrace cat --ordered "$TMP/empty" >/dev/null 2>"$TMP/err" && bad "cat --ordered of an empty file succeeded"
[ "$(wc -l <"$TMP/err")" = 1 ] && ! grep -q "needs all of it" "$TMP/err" && ok "cat --ordered empty file: one line: $(cat "$TMP/err")" ||
  bad "cat --ordered empty file says: $(cat "$TMP/err")"
# ... while a trace cut short still gets it
head -c 200000 "$V" >"$TMP/cut"
"$R" gotrace cat --ordered "$TMP/cut" >/dev/null 2>"$TMP/err"
grep -q "needs all of it" "$TMP/err" && ok "cat --ordered of a trace cut short says why" || bad "cut trace: $(cat "$TMP/err")"

# 9. Repeated filters are alternatives.
a=$("$R" gotrace grep -e '^GoCreate$' -c "$V"); b=$("$R" gotrace grep -e '^GoEnd$' -c "$V")
ab=$("$R" gotrace grep -e '^GoCreate$' -e '^GoEnd$' -c "$V")
[ "$a" -gt 0 ] && [ "$ab" = $((a + b)) ] && ok "grep -e A -e B: $ab = $a + $b" || bad "grep -e twice: $ab, not $a + $b"
p0=$("$R" gotrace grep -P 0 -c "$V"); p1=$("$R" gotrace grep -P 1 -c "$V"); p01=$("$R" gotrace grep -P 0 -P 1 -c "$V")
[ "$p0" -gt 0 ] && [ "$p01" = $((p0 + p1)) ] && ok "grep -p 0 -p 1: $p01 = $p0 + $p1" || bad "grep -p twice: $p01, not $p0 + $p1"
# --since/--until: durations from the trace's start (ordered: ns)
o1=$("$R" gotrace grep --ordered --since 60ms --until 0.07 -c "$V")
o2=$("$R" gotrace cat --ordered "$V" | awk '{ if ($1 >= 60000000 && $1 <= 70000000) n++ } END { print n + 0 }')
[ "$o1" -gt 0 ] && [ "$o1" = "$o2" ] && ok "grep --ordered --since 60ms --until 0.07: $o1 events (counted: $o2)" || bad "--since 60ms --until 0.07: $o1, counted $o2"
# raw mode: ticks, after a first pass for the frequency and the first time
fr=$("$R" gotrace stats "$V" | sed -nE 's/^duration: .* at ([0-9]+) ticks\/s\)$/\1/p')
r1=$("$R" gotrace grep --since 60ms --until 0.07 -c "$V")
r2=$("$R" gotrace cat "$V" | awk -v fr="$fr" '$1 ~ /^[0-9]+$/ && $2 !~ /^(Batch|Frequency|String|Stack|TimerGoroutine)$/ { t[NR] = $1; if (s == "" || $1 < s) s = $1 }
  END { for (i in t) if (t[i] >= s + int(60000000 * (fr / 1e9)) && t[i] <= s + int(70000000 * (fr / 1e9))) n++; print n + 0 }')
[ "$r1" -gt 0 ] && [ "$r1" = "$r2" ] && ok "grep --since 60ms --until 0.07 (raw, ticks at $fr/s): $r1 events (counted: $r2)" || bad "raw --since/--until: $r1, counted $r2"
cat "$V" | "$R" gotrace grep --since 1s -c - >/dev/null 2>"$TMP/err"
[ $? = 2 ] && grep -q "need a FILE" "$TMP/err" && ok "raw --since 1s from stdin: $(head -1 "$TMP/err")" || bad "raw --since from stdin: $(cat "$TMP/err")"
"$R" gotrace grep --since 1x -c "$V" 2>"$TMP/err" >/dev/null; [ $? = 2 ] && ok "--since 1x: $(head -1 "$TMP/err" | cut -c1-90)..." || bad "--since 1x accepted"

# 12. stats counts a million goroutines in a few MB (a hash set of their
# ids took 31 MB): a Go 1.23 trace of 1,000,000 GoCreate events.
awk 'BEGIN {
  print "Trace Go1.23"; n = 0; sz = 0
  for (g = 1; g <= 1000000; g++) {
    e = 4 + (g < 128 ? 1 : g < 16384 ? 2 : 3); ev[n++] = "GoCreate dt=1 new_g=" g " new_stack=0 stack=0"; sz += e
    if (sz > 65000 || g == 1000000) { print "EventBatch gen=1 m=1 time=0 size=" sz; for (i = 0; i < n; i++) print ev[i]; n = 0; sz = 0 } }
  print "EventBatch gen=1 m=18446744073709551615 time=0 size=6"; print "Frequency freq=1000000000" }' >"$TMP/many.txt"
"$R" gotrace text2bin "$TMP/many.txt" -o "$TMP/many.trace" || bad "text2bin of the 1 M goroutine trace"
rm -f "$TMP/many.txt"
if [ -x /usr/bin/time ] && [ -z "${RTD_SANITIZED:-}" ]; then
  /usr/bin/time -f %M -o "$TMP/rss" "$R" gotrace stats "$TMP/many.trace" >"$TMP/stats"
  kb=$(tail -1 "$TMP/rss")
  grep -qx "goroutines:  1000000" "$TMP/stats" && [ "$kb" -lt 12000 ] && ok "stats: 1000000 goroutines counted in $((kb / 1024)) MB peak RSS" ||
    bad "stats: $(grep goroutines "$TMP/stats"), peak RSS $kb KB"
else
  "$R" gotrace stats "$TMP/many.trace" | grep -qx "goroutines:  1000000" && ok "stats: 1000000 goroutines (RSS not measured here)" || bad "stats goroutines"
fi
# Two threads (the default) and one give the same answers, byte for byte
# (the library test compares them on every vector; this is the CLI).
G23="$(dirname "$0")/../../../fuzz/corpus/goanalysis/go-analysis-1_23"
if [ -e "$G23" ]; then
  same=1
  for c in "pprof -t sync -f raw" "pprof -t sched -f raw" "goroutines --json" "gc --summary" "tasks --json"; do
    "$R" gotrace $c "$G23" >"$TMP/t2" 2>&1; r2=$?
    "$R" gotrace $c --threads 1 "$G23" >"$TMP/t1" 2>&1; r1=$?
    { [ "$r1" = "$r2" ] && [ -s "$TMP/t1" ] && cmp -s "$TMP/t1" "$TMP/t2"; } || { same=0; bad "$c: --threads 1 differs (rc $r1 vs $r2)"; }
  done
  RTDIAG_THREADS=1 "$R" gotrace pprof -t sync -f raw "$G23" >"$TMP/t1" 2>&1
  "$R" gotrace pprof -t sync -f raw "$G23" >"$TMP/t2" 2>&1
  cmp -s "$TMP/t1" "$TMP/t2" || { same=0; bad "RTDIAG_THREADS=1 differs"; }
  [ $same = 1 ] && ok "pprof/goroutines/gc/tasks: --threads 1 (and RTDIAG_THREADS=1) = the default two threads on a Go 1.23 trace"
  "$R" gotrace gc --threads 0 "$G23" >/dev/null 2>"$TMP/err" && bad "--threads 0 accepted"
  grep -q "out of range" "$TMP/err" && ok "--threads 0: $(head -1 "$TMP/err")" || bad "--threads 0 says: $(cat "$TMP/err")"
fi
finish
