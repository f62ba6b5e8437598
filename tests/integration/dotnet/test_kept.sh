#!/usr/bin/env bash
# Issue 27 item 4: what collect kept of a target killed mid-session is
# delivered by every reader. A real .NET 10 program burning CPU, `rtdiag
# dotnet collect -p PID -o k.nettrace` (the default providers, the
# SampleProfiler among them), the target SIGKILLed once the stream has
# data: collect keeps the file (exit 3); `nettrace profile`, `convert`,
# `nettrace stats` and `nettrace cat` of it deliver its samples and
# events, say where and why it stopped ("truncated at byte N"), exit 3.
. "$(dirname "$0")/lib.sh"
TARGET_DIR=$(build_dotnet dotnet-target tests/targets) || { echo "FAIL: build"; exit 1; }

start_target "$WORK/t" -- burn
wait_file "$WORK/t/ready" || { bad "target did not start"; cat "$WORK/t/stderr"; exit 1; }
VP=$TPID
mkdir -p "$WORK/k"
"$R" dotnet collect -p "$VP" -o "$WORK/k/k.nettrace" 2>"$WORK/collect.err" &
cp=$!
# the stream has data once collect's file in k/ (a temporary name until
# it is kept) holds 64 KiB: a condition, not a time (bound: 120 s)
has_data() { find "$WORK/k" -type f -size +64k | grep -q .; }
i=0
until has_data || [ $i -ge 1200 ] || ! kill -0 $cp 2>/dev/null; do sleep 0.1; i=$((i+1)); done
has_data || bad "collect wrote nothing in 120 s: $(cat "$WORK/collect.err")"
kill -9 "$VP"; wait $cp; rc=$?
rm -f /tmp/dotnet-diagnostic-"$VP"-*-socket # SIGKILL leaves it
size=$(stat -c %s "$WORK/k/k.nettrace" 2>/dev/null || echo 0)
[ $rc = 3 ] && [ "$size" -gt 0 ] && grep -q "kept .*k.nettrace, incomplete" "$WORK/collect.err" \
  && ok "collect of a killed target: kept $size bytes, exit 3" || { bad "collect: rc $rc size $size"; cat "$WORK/collect.err"; }

# the profile of the samples before the end (the old code printed nothing, exit 1)
"$R" nettrace profile "$WORK/k/k.nettrace" >"$WORK/p.folded" 2>"$WORK/p.err"; rc=$?
nst=$(grep -c ' [0-9]*$' "$WORK/p.folded")
[ $rc = 3 ] && [ "$nst" -gt 0 ] && grep -q "truncated at byte $size" "$WORK/p.err" \
  && ok "nettrace profile of the kept file: $nst stacks, exit 3, '$(head -1 "$WORK/p.err")'" \
  || { bad "nettrace profile: rc $rc, $nst stacks"; cat "$WORK/p.err"; }
"$R" convert "$WORK/k/k.nettrace" -o "$WORK/c.folded" 2>"$WORK/c.err"; rc=$?
cmp -s "$WORK/c.folded" "$WORK/p.folded" && [ $rc = 3 ] \
  && ok "convert: the same stacks, exit 3" || { bad "convert: rc $rc"; cat "$WORK/c.err"; }
"$R" nettrace profile --format svg -o "$WORK/p.svg" "$WORK/k/k.nettrace" 2>/dev/null; rc=$?
[ $rc = 3 ] && grep -q '<svg' "$WORK/p.svg" && ok "profile -o p.svg: a flame graph kept, exit 3" || bad "profile -o svg: rc $rc"
# every event before the end, counted and printed
"$R" nettrace stats "$WORK/k/k.nettrace" >"$WORK/s" 2>"$WORK/s.err"; rc=$?
nev=$(sed -n 's/^events: //p' "$WORK/s")
ns=$(awk -F'\t' '$1 ~ /SampleProfiler\/Thread\/Sample$/ {print $2}' "$WORK/s")
"$R" nettrace cat "$WORK/k/k.nettrace" 2>/dev/null | wc -l >"$WORK/ncat"; crc=${PIPESTATUS[0]}
[ $rc = 3 ] && [ $crc = 3 ] && [ "${nev:-0}" -gt 0 ] && [ "$(cat "$WORK/ncat")" = "$nev" ] && [ "${ns:-0}" -gt 0 ] \
  && ok "stats and cat: the same $nev events ($ns samples), exit 3" \
  || { bad "stats/cat: rc $rc/$crc events ${nev:-?} cat $(cat "$WORK/ncat")"; cat "$WORK/s.err"; }
[ $fail = 0 ] || { echo "$fail failed"; exit 1; }
