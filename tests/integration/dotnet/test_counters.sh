#!/usr/bin/env bash
# rtdiag dotnet counters (#16 item 1) against tests/targets/dotnet-kinds (meters), a
# .NET 10 program reporting known values through its own Meter (counter,
# up-down counter, histogram, observable gauge, tagged counter) and its own
# EventCounters; the runtime's own counters cross-checked with /proc and
# with GC.CollectionCount read by the program.
. "$(dirname "$0")/lib.sh"
KD=$(build_dotnet dotnet-kinds tests/targets) || { echo "FAIL: build"; exit 1; }

mkdir -p "$WORK/m"
"$KD/dotnet-kinds" "$WORK/m" meters >"$WORK/m/stdout" 2>&1 &
MP=$!; PIDS+=("$MP")
wait_file "$WORK/m/ready" || { bad "dotnet-kinds meters did not start"; exit 1; }
# gen0: the program's rounds once it measured (one a second: a gen-0 GC,
# 4 EventCounter writes, Ticks +5, the count written to DIR/gen0)
gen0() { cat "$WORK/m/gen0" 2>/dev/null || echo 0; }
gen0_at_least() { [ "$(gen0)" -ge "$1" ]; }
# rounds_then_int PID ERR N: once the session of rtdiag PID is on ("session
# ID started" in ERR), N more rounds of the program, then SIGINT: sessions
# as long as the program needs, not a --duration a loaded machine may not
# fill (the measurements wait for the session's listener, then need the
# runtime's next report)
rounds_then_int() {
  wait_until grep -q "session [0-9]* started" "$2"
  wait_until test -s "$WORK/m/done"
  local g; g=$(gen0)
  wait_until gen0_at_least $((g + $3))
  kill -INT "$1"
}
C='Rtdiag.Test,Rtdiag-Counters,System.Runtime[working-set,gen-0-gc-count]'
"$R" dotnet counters collect -p "$MP" --counters "$C" -o "$WORK/c.csv" 2>"$WORK/c.err" &
cp=$!
touch "$WORK/m/go"
g0=$(gen0)
rounds_then_int $cp "$WORK/c.err" 4
wait $cp; rc=$?
g1=$(cat "$WORK/m/gen0")
rss=$(awk '/^VmRSS/{print $2/1000}' /proc/$MP/status)
f="$WORK/c.csv"
sum() { awk -F, -v n="$1" '$3 == n { s += $NF } END { print s + 0 }' "$f"; }
last() { awk -F, -v n="$1" '$3 == n { v = $NF } END { print v }' "$f"; }
all() { awk -F, -v n="$1" -v want="$2" '$3 == n { k++; if ($NF != want) bad = 1 } END { exit !(k > 0 && !bad) }' "$f"; }
all_type() { awk -F, -v n="$1" -v want="$2" '$3 == n { k++; if ($4 != want) bad = 1 } END { exit !(k > 0 && !bad) }' "$f"; }
[ $rc = 0 ] && head -1 "$f" | grep -qx "Timestamp,Provider,Counter Name,Counter Type,Mean/Increment" \
  && ok "collect: dotnet-counters' CSV header" || bad "collect: rc $rc $(cat "$WORK/c.err") $(head -3 "$f")"
# every line: the local date and time as .NET prints a DateTime in the
# invariant culture, within a minute of now
now=$(date +%s)
awk -F, -v now="$now" 'NR > 1 { if (split($1, a, /[\/ :]/) != 6) exit 1
  t = mktime(a[3] " " a[1] " " a[2] " " a[4] " " a[5] " " a[6]); if (t < now - 60 || t > now + 5) exit 1; n++ }
  END { exit !(n > 0) }' "$f" && grep -qE '^[0-9]{2}/[0-9]{2}/[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2},Rtdiag.Test,' "$f" \
  && ok "collect: Timestamp as MM/dd/yyyy HH:mm:ss, local, now" || bad "timestamps: $(sed -n 2,3p "$f")"
# a meter Counter by its increments, as dotnet-counters collect writes it
# (test_counters_vs.sh compares the two tools)
[ "$(sum 'requests ({request} / 1 sec)')" = 1000 ] && all_type 'requests ({request} / 1 sec)' Rate && ok "counter: exactly 1000 requests (increments, Rate)" || bad "requests: $(grep requests "$f")"
[ "$(last queue)" = 5 ] && ok "up-down counter: +7 -2 = 5" || bad "queue: $(last queue)"
[ "$(last 'latency (ms)[Percentile=50]')" = 51 ] && [ "$(last 'latency (ms)[Percentile=95]')" = 96 ] && [ "$(last 'latency (ms)[Percentile=99]')" = 100 ] \
  && ok "histogram of 1..100: P50 51, P95 96, P99 100" || bad "latency: $(grep latency "$f")"
all 'temperature (Cel)' 21.5 && ok "observable gauge: 21.5 every interval" || bad "temperature: $(grep temperature "$f")"
[ "$(sum 'hits (Count / 1 sec)[route=/a]')" = 3 ] && [ "$(sum 'hits (Count / 1 sec)[route=/b]')" = 4 ] \
  && ok "tagged counter: route=/a 3, route=/b 4" || bad "hits: $(grep hits "$f")"
all 'Fixed value (B)' 42 && all 'Polled value' 7.25 && ok "EventCounter 42, PollingCounter 7.25" || bad "event counters: $(grep Rtdiag-Counters "$f")"
t=$(sum 'Ticks (Count / 1 sec)')
[ $((t % 5)) = 0 ] && [ "$t" -ge 10 ] && all_type 'Ticks (Count / 1 sec)' Rate && ok "IncrementingEventCounter: $t, in steps of 5 (Rate)" || bad "ticks: $t"
ws=$(last 'Working Set (MB)')
awk -v a="$ws" -v b="$rss" 'BEGIN { exit !(a > 0 && a / b > 0.75 && a / b < 1.33) }' \
  && ok "working-set $ws MB against VmRSS $rss MB" || bad "working set $ws vs $rss"
gs=$(sum 'Gen 0 GC Count (Count / 1 sec)')
d=$((g1 - g0))
[ "$gs" -ge $((d - 2)) ] && [ "$gs" -le $((d + 2)) ] && [ "$gs" -ge 1 ] \
  && ok "gen-0-gc-count: $gs in the session, GC.CollectionCount(0) moved $d" || bad "gen0: $gs vs $d ($g0 -> $g1)"

# JSON layout, and a provider that publishes nothing
"$R" dotnet counters collect -p "$MP" --counters 'Rtdiag.Test[temperature],No.Such.Meter' --format json \
      -o "$WORK/c.json" 2>"$WORK/cj.err" &
cp=$!
rounds_then_int $cp "$WORK/cj.err" 3
wait $cp; rc=$?
out=$(cat "$WORK/cj.err")
[ $rc = 0 ] && python3 -c 'import json,sys,re,datetime; raw=open(sys.argv[1]).read(); d=json.loads(raw); ev=d["Events"]
assert list(d) == ["TargetProcess", "StartTime", "Events"] and d["TargetProcess"] == "dotnet-kinds"
o = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}[+-]\d\d:\d\d"
assert re.fullmatch(o, d["StartTime"]) and "\n" not in raw.strip()
assert raw.startswith("{ \"TargetProcess\": \"dotnet-kinds\", \"StartTime\": ")
assert ev and all(list(e) == ["timestamp", "provider", "name", "tags", "counterType", "meterTags", "instrumentTags", "value"] for e in ev)
assert all(re.fullmatch(o, e["timestamp"]) and e["timestamp"] >= d["StartTime"] for e in ev)
assert all(e["provider"]=="Rtdiag.Test" and e["name"]=="temperature (Cel)" and e["value"]==21.5 and e["counterType"]=="Metric" for e in ev)' "$WORK/c.json" \
  && ok "collect --format json: dotnet-counters' layout, only what was asked" || bad "json: $rc $out $(cat "$WORK/c.json")"
grep -q "No.Such.Meter published no value" <<<"$out" && ok "a meter that publishes nothing: said so" || bad "silent: $out"

# monitor piped: plain lines
"$R" dotnet counters monitor -p "$MP" --counters 'Rtdiag-Counters[polled]' >"$WORK/mon.out" 2>"$WORK/mon.err" &
cp=$!
rounds_then_int $cp "$WORK/mon.err" 3
wait $cp; rc=$?
out=$(cat "$WORK/mon.out")
[ $rc = 0 ] && grep -q '^[0-9.]*,Rtdiag-Counters,Polled value,Metric,7.25$' <<<"$out" && ! grep -q $'\e' <<<"$out" \
  && ok "monitor piped: plain lines" || bad "monitor: $rc $out"

# bad input: a malformed spec; the output untouched when the target is gone
out=$("$R" dotnet counters monitor -p "$MP" --counters 'Rtdiag.Test[a,b' 2>&1); rc=$?
[ $rc = 2 ] && grep -q "'\[' without '\]'" <<<"$out" && ok "--counters 'X[a,b': refused" || bad "spec: $rc $out"
touch "$WORK/m/stop"; wait "$MP" 2>/dev/null
printf keep >"$WORK/k.csv"
out=$("$R" dotnet counters collect -p "$MP" -o "$WORK/k.csv" --duration 1 2>&1); rc=$?
[ $rc = 1 ] && [ "$(cat "$WORK/k.csv")" = keep ] && ok "collect on a gone process: exit 1, old file kept" || bad "gone: $rc $out"

[ $fail = 0 ] || { echo "$fail failed"; exit 1; }
echo "dotnet counters: all passed"
