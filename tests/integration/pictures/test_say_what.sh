#!/usr/bin/env bash
# Pictures and tables that say what they show (#32 item 5), on Go's own
# test traces (../shared/testdata/gotrace): gotrace gc and tasks list in
# start order; a frame with neither name nor PC reads <unknown>, as go tool
# pprof prints it, not 0x0; a flame graph's legend names only kinds drawn
# and its title the trace, its span and the weight.
set -u
R=${RTDIAG:?RTDIAG not set}
D=${RTD_SHARED_DIR:-../shared}/testdata/gotrace
[ -d "$D/v1" ] && [ -f "$D/v2/go122-gc-stress.test" ] || { echo "skip: no $D (Go's test traces)"; exit 77; }
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
# the times after "at" of the rows that match $1, in the order printed
starts() { grep -E "$1" | awk '{for(i=1;i<NF;i++) if($i=="at"){v=$(i+1); sub(/s\*?$/,"",v); print v; break}}'; }
in_order() { # what, rows pattern, file
  local n; n=$(starts "$2" <"$3" | wc -l)
  [ "$n" -ge 3 ] || { bad "$1: only $n rows"; return; }
  if starts "$2" <"$3" | sort -c -g 2>"$TMP/why"; then ok "$1: $n rows in start order"; else bad "$1: $(cat "$TMP/why")"; fi
}
"$R" gotrace gc "$D/v1/stress_1_19_good" >"$TMP/gc.txt" || bad "gotrace gc: exit $?"
in_order "gotrace gc (cycles and pauses)" '^(GC|STW) ' "$TMP/gc.txt"
"$R" gotrace text2bin -o "$TMP/ann.trace" "$D/v2/go122-annotations-stress.test" || bad "text2bin"
"$R" gotrace tasks "$TMP/ann.trace" >"$TMP/tasks.txt" || bad "gotrace tasks: exit $?"
in_order "gotrace tasks" '^task ' "$TMP/tasks.txt"
"$R" gotrace tasks --regions "$TMP/ann.trace" >"$TMP/reg.txt" || bad "gotrace tasks --regions: exit $?"
in_order "gotrace tasks --regions (tasks and regions together)" '^(task |  region )' "$TMP/reg.txt"
# Go's gc-stress trace has stacks whose frame is pc=0 func=0: no name, no PC
"$R" gotrace text2bin -o "$TMP/gc.trace" "$D/v2/go122-gc-stress.test" || bad "text2bin gc-stress"
"$R" gotrace pprof -t sched -f folded "$TMP/gc.trace" >"$TMP/sched.folded" || bad "pprof sched: exit $?"
if grep -q '<unknown>' "$TMP/sched.folded" && ! grep -qE '(^|;)0x0( |;)' "$TMP/sched.folded"; then
  ok "a frame without name or PC: <unknown> ($(grep -c '<unknown>' "$TMP/sched.folded") stacks)"
else bad "unknown frame: $(grep -E '0x0|unknown' "$TMP/sched.folded" | head -2)"; fi
"$R" gotrace cat -f chrome-json -o "$TMP/gc.json" "$TMP/gc.trace" || bad "cat chrome-json"
grep -q '"0x0"' "$TMP/gc.json" && bad "timeline: a frame named 0x0" || ok "timeline: no frame named 0x0"
# the legend: the "all" box is no kind of the samples
"$R" gotrace pprof -t sched -o "$TMP/s.svg" "$TMP/gc.trace" || bad "pprof svg: exit $?"
leg=$(sed -n '/<g id="legend">/,/<\/g>/p' "$TMP/s.svg" | grep -o '>[a-z -]*</text>' | tr -d '<>/' | sed 's/text$//' | paste -sd, -)
[ -n "$leg" ] && ! grep -q 'other' <<<"$leg" && grep -qw go <<<"$leg" && grep -q go-runtime <<<"$leg" \
  && ok "legend: $leg (Go's and its runtime's frames; no 'other': no thread roots drawn)" || bad "legend: '$leg'"
# the title: whose (the trace: Go writes no process name), how long, what weight
title=$(grep -o '<text id="title"[^<]*' "$TMP/s.svg" | sed 's/.*>//')
grep -Eq '^gotrace: .*/gc\.trace, [0-9.]+(ms|s|µs), weight: delay \(nanoseconds\)$' <<<"$title" \
  && ok "title: $title" || bad "title: '$title'"
if [ $fail -ne 0 ]; then echo "$fail failed"; exit 1; fi
echo "say-what: all checks passed"
