#!/usr/bin/env bash
# rtdiag record --ring --action gcdump (issue #31, dotnet-monitor's gcdump
# action): each of two SIGUSR1 snapshots of tests/targets/dotnet-kinds
# (heap K: a tree of exactly K HeapTreeNode objects kept alive) writes
# beside the timeline STEM.gcdump, the runtime's heap walk as the file
# dotnet-gcdump reads. The real dotnet-gcdump 10.0.750501 (NuGet) reports
# each with exit 0 and lists HeapTreeNode with count K (the second too:
# its walk ran beside the recorder's session); rtdiag's own reading of the
# same heap (dotnet gcdump --format json, a third walk) gives the same
# count, and its -o x.gcdump reads the same in dotnet-gcdump; dotnet-gcdump's own graph code walks the first file's edges
# from its root; the snapshots' lines name the action; the recorder
# exits 0 at Ctrl-C.
. "$(dirname "$0")/flight_lib.sh"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
DG=$(bash "$SRC/tests/integration/dotnet/gcdump_tool.sh") || { echo "SKIP: $DG"; exit 77; }
HD=$(bash "$SRC/tests/integration/dotnet/build.sh" dotnet-kinds tests/targets) || exit 1
GG=$(bash "$SRC/tests/integration/dotnet/build.sh" gcdump-graph tests/targets) || exit 1
K=1000
mkdir -p "$W/h"
"$HD/dotnet-kinds" "$W/h" heap $K >"$W/h/stdout" 2>&1 &
TP=$!
wait_until test -s "$W/h/ready" || { echo "FAIL: dotnet-kinds heap did not start: $(head -5 "$W/h/stdout")"; exit 1; }
out=$("$R" record -p "$TP" --ring 4s --action stacks,heapdump 2>&1); rc=$?
[ $rc = 2 ] && grep -q "\-\-action 'heapdump': want folded, pprof, dump, stacks or gcdump" <<<"$out" &&
  ok "an unknown action is refused (exit 2): $(head -1 <<<"$out")" || bad "--action heapdump: exit $rc: $out"
start_rtdiag --ring 4s --action gcdump
# two snapshots: the second heap walk runs beside the recorder's own
# EventPipe session and the first walk's (a runtime names its types once
# until its table of logged types is flushed: without the flush the
# library does first, every type of a second walk was nameless)
said() { [ "$(grep -c '^rtdiag: snapshot .*-signal\(-[0-9]*\)\?\.json' "$W/err")" -ge "$1" ]; }
for i in 1 2; do
  kill -USR1 "$RP"
  wait_until said $i || { bad "no snapshot $i after SIGUSR1"; finish; }
done
n_report=
for i in 1 2; do
  line=$(grep '^rtdiag: snapshot .*-signal\(-[0-9]*\)\?\.json' "$W/err" | sed -n ${i}p)
  snap=$(sed 's/^rtdiag: snapshot \([^:]*\.json\): .*/\1/' <<<"$line")
  g=${snap%.json}.gcdump
  if [ -s "$snap" ] && [ -s "$g" ]; then
    ok "snapshot $i: a .gcdump beside it, $(basename "$g"), $(stat -c %s "$g") bytes"
  else
    bad "snapshot $i: no .gcdump beside it: $(ls "$S") ($line)"
  fi
  grep -q '; actions gcdump$' <<<"$line" && ok "snapshot $i: its line names the action: ${line##*;}" ||
    bad "snapshot $i: its line: $line"
  # the real reader
  "$DG" report "$g" >"$W/report$i" 2>&1; rc=$?
  n=$(awk '$NF == "HeapTreeNode" { gsub(",", "", $2); print $2 }' "$W/report$i")
  [ $rc = 0 ] && [ "$n" = $K ] &&
    ok "snapshot $i: dotnet-gcdump report reads it (exit 0): $(grep -m2 'GC Heap' "$W/report$i" | tr -s ' ' | tr '\n' ';') HeapTreeNode x $n" ||
    bad "snapshot $i: dotnet-gcdump report: exit $rc, HeapTreeNode '$n': $(head -12 "$W/report$i")"
  n_report=${n_report:-$n}
done

# the edges and roots, which report does not read: dotnet-gcdump's own
# graph code (its dotnet-gcdump.dll, through tests/targets/gcdump-graph)
# walks the first file from its root node: every HeapTreeNode reachable,
# holding the tree's K - 1 references and the K to their byte[]
g=$(grep '^rtdiag: snapshot .*-signal\(-[0-9]*\)\?\.json' "$W/err" | head -1 |
  sed 's/^rtdiag: snapshot \([^:]*\)\.json: .*/\1.gcdump/')
dll=$(find "$(dirname "$DG")/.store" -name dotnet-gcdump.dll | head -1)
"$GG/gcdump-graph" "$dll" "$g" HeapTreeNode HeapTreeRoot >"$W/graph" 2>&1; rc=$?
[ $rc = 0 ] && grep -q ' root \[.NET Roots\]$' "$W/graph" &&
  grep -qx "HeapTreeNode count $K children $((2 * K - 1))" "$W/graph" &&
  grep -qx "HeapTreeRoot count 1 children 1" "$W/graph" &&
  ok "dotnet-gcdump's graph reader walks it from its root: $(tr '\n' ';' <"$W/graph")" ||
  bad "dotnet-gcdump's graph reader: exit $rc: $(cat "$W/graph")"

# rtdiag's own reading of the same heap
"$R" dotnet gcdump -p "$TP" -o "$W/h.json" 2>"$W/gc.err"; rc=$?
n_rtdiag=$(python3 -c '
import json, sys
t = {x["type"]: x["count"] for x in json.load(open(sys.argv[1]))["types"]}
print(t.get("HeapTreeNode", 0))' "$W/h.json" 2>/dev/null)
[ $rc = 0 ] && [ "$n_rtdiag" = "$n_report" ] &&
  ok "rtdiag dotnet gcdump agrees: HeapTreeNode x $n_rtdiag" ||
  bad "rtdiag dotnet gcdump: exit $rc, HeapTreeNode '$n_rtdiag' against the report's '$n_report': $(cat "$W/gc.err")"

# the CLI's own .gcdump (-o FILE.gcdump), read by the same reader
"$R" dotnet gcdump -p "$TP" -o "$W/cli.gcdump" 2>"$W/gc2.err"; rc=$?
"$DG" report "$W/cli.gcdump" >"$W/report3" 2>&1; rc2=$?
n=$(awk '$NF == "HeapTreeNode" { gsub(",", "", $2); print $2 }' "$W/report3")
[ $rc = 0 ] && [ $rc2 = 0 ] && [ "$n" = $K ] &&
  ok "rtdiag dotnet gcdump -o x.gcdump: dotnet-gcdump report exit 0, HeapTreeNode x $n" ||
  bad "rtdiag dotnet gcdump -o x.gcdump: exit $rc, report exit $rc2, HeapTreeNode '$n': $(cat "$W/gc2.err") $(head -5 "$W/report3")"

kill -INT "$RP"
wait "$RP"; rc=$?; RP=
[ $rc = 0 ] && ok "Ctrl-C: exit 0" || bad "Ctrl-C: exit $rc"
[ -z "$(ls -A "$S" | grep '^\.')" ] && ok "no temporary file left" || bad "temporary files left: $(ls -A "$S")"
finish
