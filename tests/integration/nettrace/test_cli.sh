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

# damage: the complete blocks are printed, then an error with the offset
head -c 200000 "$T/only_managed_samples.nettrace" >"$tmp/trunc.nettrace"
"$R" nettrace cat "$tmp/trunc.nettrace" >"$tmp/tc" 2>"$tmp/te"; rc=$?
[ $rc = 1 ] && ok "truncated: exit 1" || bad "truncated exit $rc"
grep -q "trunc.nettrace: offset [0-9]*: stream ends inside a block" "$tmp/te" && ok "truncated: message" || { bad "truncated message"; cat "$tmp/te"; }
[ "$(wc -l <"$tmp/tc")" -gt 1000 ] && ok "truncated: earlier events printed" || bad "truncated: events lost"
printf 'hello world, not a trace' >"$tmp/x"
"$R" nettrace stats "$tmp/x" >/dev/null 2>"$tmp/xe"; rc=$?
[ $rc = 1 ] && grep -q 'not a nettrace or netperf stream' "$tmp/xe" && ok "not a trace" || bad "not a trace ($rc)"
"$R" nettrace stats /nonexistent 2>/dev/null; [ $? = 1 ] && ok "missing file exit 1" || bad "missing file"
"$R" nettrace profile --bogus x 2>/dev/null; [ $? = 2 ] && ok "bad option exit 2" || bad "bad option"

[ $fail = 0 ] || { echo "$fail failed"; exit 1; }
echo "nettrace cli: all passed"
