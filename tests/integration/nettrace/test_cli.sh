#!/usr/bin/env bash
# rtdiag nettrace cat/stats/profile on the shared vectors: exact dotnetdiag
# profiles, stats lines, JSON output, stdin, and clear errors on damage.
set -u
R=${RTDIAG:?RTDIAG not set}
T=${RTD_SHARED_DIR:?}/testdata/nettrace
if [ ! -d "$T" ]; then echo "SKIP: $T missing"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }

G=$T/dotnet-5.0-SampleProfiler-single-thread
# profile: exactly dotnetdiag's lines (any order)
"$R" nettrace profile "$G.golden.nettrace" | sort >"$tmp/p1" || bad "profile exit"
sort "$G.txt" | cmp -s - "$tmp/p1" && ok "profile == dotnetdiag" || { bad "profile differs"; diff <(sort "$G.txt") "$tmp/p1"; }
"$R" nettrace profile --managed-only - <"$G.golden.nettrace" | sort >"$tmp/p2" || bad "profile stdin exit"
sort "$G-managed-only.txt" | cmp -s - "$tmp/p2" && ok "profile --managed-only == dotnetdiag (stdin)" || bad "managed-only differs"
"$R" nettrace profile --format top "$G.golden.nettrace" | grep -q 'Example.Program.Work(int32)' && ok "top names the hot method" || bad "top"

# stats: header, then Provider/Event<TAB>count lines
"$R" nettrace stats "$T/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace" >"$tmp/s" || bad "stats exit"
grep -qx $'Microsoft-DotNETCore-SampleProfiler/Thread/Sample\t35161' "$tmp/s" && ok "stats sample count" || bad "stats sample count"
grep -qx $'Microsoft-Windows-DotNETRuntime/GC/AllocationTick\t35458' "$tmp/s" && ok "stats AllocationTick" || bad "stats AllocationTick"
grep -q '^format: NetTrace V4' "$tmp/s" && ok "stats header" || bad "stats header"

# cat: text and JSON lines
"$R" nettrace cat "$T/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace" >"$tmp/c" || bad "cat exit"
[ "$(wc -l <"$tmp/c")" = 3 ] && ok "cat: 3 events" || bad "cat count"
grep -q 'ExecutionCheckpointDCEnd ClrInstanceID=9 Name="RuntimeInit" Timestamp=11111925598665' "$tmp/c" && ok "cat fields" || { bad "cat fields"; cat "$tmp/c"; }
"$R" nettrace cat --json "$T/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace" --provider TestEventSource0 >"$tmp/j" || bad "cat --json exit"
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/j" && ok "JSON lines parse" || bad "JSON invalid"
fi
grep -q '"arg0":\[2032854139,1608221689' "$tmp/j" && ok "JSON array field" || bad "JSON array field"

# damage (issue 27 item 4): everything complete before the cut is
# delivered, the cut block's complete events too, then where and why it
# stopped; exit 3 (incomplete, kept) as collect's
head -c 200000 "$T/only_managed_samples.nettrace" >"$tmp/trunc.nettrace"
"$R" nettrace cat "$tmp/trunc.nettrace" >"$tmp/tc" 2>"$tmp/te"; rc=$?
[ $rc = 3 ] && ok "truncated: exit 3" || bad "truncated exit $rc"
grep -q "trunc.nettrace: truncated at byte 200000: the stream ends inside the EventBlock at offset [0-9]* .*complete events in it delivered" "$tmp/te" \
  && ok "truncated: message '$(cat "$tmp/te")'" || { bad "truncated message"; cat "$tmp/te"; }
"$R" nettrace cat --stream "$T/only_managed_samples.nettrace" | head -n "$(wc -l <"$tmp/tc")" >"$tmp/tw"
"$R" nettrace cat --stream "$tmp/trunc.nettrace" 2>/dev/null | cmp -s - "$tmp/tw" \
  && [ "$(wc -l <"$tmp/tc")" -gt 1000 ] && ok "truncated: the events before the cut, as in the whole file ($(wc -l <"$tmp/tc"))" || bad "truncated: events lost"
"$R" nettrace stats "$tmp/trunc.nettrace" >"$tmp/ts" 2>"$tmp/tse"; rc=$?
[ $rc = 3 ] && grep -q "^events: $(wc -l <"$tmp/tc")$" "$tmp/ts" && grep -q "truncated at byte 200000" "$tmp/tse" \
  && ok "truncated: stats counts them, exit 3" || { bad "truncated stats ($rc)"; cat "$tmp/ts" "$tmp/tse"; }
for how in "nettrace profile" convert; do
  "$R" $how "$tmp/trunc.nettrace" >"$tmp/tp" 2>"$tmp/tpe"; rc=$?
  [ $rc = 3 ] && [ -s "$tmp/tp" ] && grep -q "truncated at byte 200000" "$tmp/tpe" \
    && ok "truncated: $how prints the stacks of the samples before the cut, exit 3" || { bad "truncated $how ($rc)"; cat "$tmp/tpe"; }
done
"$R" nettrace profile -o "$tmp/tp.svg" "$tmp/trunc.nettrace" 2>/dev/null; rc=$?
[ $rc = 3 ] && grep -q '<svg' "$tmp/tp.svg" && ok "truncated: profile -o keeps the flame graph, exit 3" || bad "truncated profile -o ($rc)"
# a bad byte (not the end): the events before it, its offset and what is
# wrong, exit 3 (the second EventBlock's type name length made 255)
python3 - "$T/only_managed_samples.nettrace" "$tmp/flip.nettrace" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
i = b.index(b'EventBlock', b.index(b'EventBlock') + 1)
b[i - 4] = 255
open(sys.argv[2], 'wb').write(b)
PY
"$R" nettrace cat --stream "$tmp/flip.nettrace" >"$tmp/fc" 2>"$tmp/fe"; rc=$?
[ $rc = 3 ] && [ -s "$tmp/fc" ] && grep -q "flip.nettrace: offset [0-9]*: object type name of 255 bytes" "$tmp/fe" \
  && ok "bad byte: the events before it, then '$(cut -d: -f3- "$tmp/fe")', exit 3" || { bad "bad byte ($rc)"; cat "$tmp/fe"; }
printf 'hello world, not a trace' >"$tmp/x"
"$R" nettrace stats "$tmp/x" >/dev/null 2>"$tmp/xe"; rc=$?
[ $rc = 1 ] && grep -q 'not a nettrace or netperf stream' "$tmp/xe" && ok "not a trace" || bad "not a trace ($rc)"
"$R" nettrace stats /nonexistent 2>/dev/null; [ $? = 1 ] && ok "missing file exit 1" || bad "missing file"
"$R" nettrace profile --bogus x 2>/dev/null; [ $? = 2 ] && ok "bad option exit 2" || bad "bad option"

# issue 19 item 8: the first real cause, once, naming what and where
if [ -w /dev/full ]; then
  "$R" nettrace cat "$T/only_managed_samples.nettrace" >/dev/full 2>"$tmp/fe"; rc=$?
  [ $rc = 1 ] && grep -q '^rtdiag: stdout: No space left on device' "$tmp/fe" && ! grep -q 'only_managed' "$tmp/fe" \
    && ok "cat > /dev/full blames stdout" || { bad "cat > /dev/full ($rc)"; cat "$tmp/fe"; }
fi
"$R" nettrace stats "$tmp/x" >"$tmp/xo" 2>/dev/null
[ ! -s "$tmp/xo" ] && ok "stats on garbage prints no zeroed summary" || { bad "stats garbage printed:"; head -3 "$tmp/xo"; }
"$R" nettrace profile "$tmp/x" >/dev/null 2>"$tmp/pe"; rc=$?
[ $rc = 1 ] && ! grep -q 'provider enabled' "$tmp/pe" && [ "$(wc -l <"$tmp/pe")" = 1 ] \
  && ok "profile on garbage: one message, no guess" || { bad "profile garbage ($rc)"; cat "$tmp/pe"; }
# issue 19 item 1: profile -o never loses an existing file, leaves none behind
echo keep >"$tmp/prof.out"
"$R" nettrace profile -o "$tmp/prof.out" "$tmp/x" 2>/dev/null; rc=$?
[ $rc = 1 ] && [ "$(cat "$tmp/prof.out")" = keep ] && ok "profile -o on bad input keeps the old file" || bad "profile -o clobbered ($rc)"
"$R" nettrace profile -o "$tmp/new.out" "$tmp/x" 2>/dev/null
[ ! -e "$tmp/new.out" ] && ok "profile -o on bad input leaves no file" || bad "profile -o left a file"
"$R" nettrace profile -o "$tmp/prof.out" "$G.golden.nettrace" && sort "$tmp/prof.out" | cmp -s - <(sort "$G.txt") \
  && ok "profile -o writes the profile" || bad "profile -o"
"$R" nettrace profile -o "$tmp/nodir/p.out" "$G.golden.nettrace" 2>"$tmp/oe"; rc=$?
[ $rc = 1 ] && grep -q 'nodir' "$tmp/oe" && ok "profile -o into a missing folder fails first" || bad "profile -o missing dir ($rc)"
# issue 19 item 9: --event A --event B is either; item 10: --provider any case, wildcards
O4=$T/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace
n1=$("$R" nettrace cat --event GC/Start "$O4" | wc -l); n2=$("$R" nettrace cat --event GC/Stop "$O4" | wc -l)
n12=$("$R" nettrace cat --event GC/Start --event GC/Stop "$O4" | wc -l)
[ "$n1" -gt 0 ] && [ "$n2" -gt 0 ] && [ "$n12" = $((n1 + n2)) ] && ok "--event A --event B = both ($n1 + $n2)" || bad "--event OR: $n1 $n2 $n12"
n=$("$R" nettrace cat --provider 'microsoft-windows-dotnetruntime' "$O4" | wc -l)
nw=$("$R" nettrace cat --provider '*DOTNETRUNTIME' "$O4" | wc -l)
[ "$n" -gt 0 ] && [ "$n" = "$nw" ] && ok "--provider any case, * wildcard" || bad "--provider: $n $nw"
nge=$("$R" nettrace cat --event 'gc/*' "$O4" | wc -l)
[ "$nge" -gt "$n12" ] && ok "--event 'gc/*'" || bad "--event wildcard $nge"
# item 10: value names in text, numbers kept in JSON
"$R" nettrace cat --event GC/Start "$O4" | head -1 | grep -q 'Reason=[A-Za-z]' && ok "GC/Start Reason by name" || bad "Reason name"
"$R" nettrace cat --json --event GC/Start "$O4" | head -1 | grep -q '"Reason":[0-9].*"names":{[^}]*"Reason":"' && ok "JSON keeps the number, names beside" || bad "JSON names"
# item 10: --stack names frames from the trace's own method events
"$R" nettrace cat --stacks --provider Microsoft-DotNETCore-SampleProfiler "$G.golden.nettrace" >"$tmp/st"
grep -q 'stack=.*Example.Program.Work(int32)' "$tmp/st" && ok "--stack: method names" || { bad "--stack names"; head -3 "$tmp/st"; }
"$R" nettrace cat --stacks --provider Microsoft-DotNETCore-SampleProfiler - <"$G.golden.nettrace" | grep -q 'stack=.*Example.Program.Work(int32)' \
  && ok "--stack on stdin: names as the methods arrive" || bad "--stack stdin"
# issue 21 item 7: time order for a file, stream order kept
"$R" nettrace cat --json "$O4" | python3 -c 'import json,sys; t=[json.loads(l)["ts"] for l in sys.stdin]; sys.exit(0 if t==sorted(t) else 1)' \
  && ok "cat on a file: time order" || bad "cat not sorted"
"$R" nettrace cat --json --stream "$O4" | python3 -c 'import json,sys; t=[json.loads(l)["ts"] for l in sys.stdin]; sys.exit(0 if t!=sorted(t) else 1)' \
  && ok "--stream: stream order (not sorted in this trace)" || bad "--stream"
[ "$("$R" nettrace cat --sorted - <"$O4" | md5sum)" = "$("$R" nettrace cat "$O4" | md5sum)" ] && ok "--sorted on stdin = the file" || bad "--sorted stdin"

[ $fail = 0 ] || { echo "$fail failed"; exit 1; }
echo "nettrace cli: all passed"
