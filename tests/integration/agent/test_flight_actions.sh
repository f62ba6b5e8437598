#!/usr/bin/env bash
# The agent's flight recorder, the .NET actions (issue #31): with
# `actions: [dump, stacks]` in the target's flight: section, POST
# /targets/PID/snapshot writes beside the timeline the .NET runtime's core
# dump (with its heap, dotnet-monitor's default type), made by its
# createdump through the diagnostics IPC (GenerateCoreDump), under a
# temporary name renamed into place: an ELF core file, listed in the
# answer's actions and counted in its size; and the managed threads'
# stacks as 'rtdiag dotnet stack' prints them (a SampleProfiler session
# of its own): the program's main thread in its loop; and its GC heap as a
# .gcdump (the runtime's heap walk in a session of its own) that the real
# dotnet-gcdump 10.0.750501 reports with exit 0, listing the program's own
# EventSource type Marks once, as rtdiag's reading of the same heap does.
RING=2
SRC=${RTD_SOURCE_DIR:?}
. "$SRC/tests/integration/agent/flight_agent.sh"
start_flight_agent "actions: [dump, stacks, gcdump]"
st=$(post "${auth[@]}")
answer
d=${a_file%.json}.dmp
if [ "$st" = 200 ] && [ -s "$d" ]; then
  magic=$(head -c4 "$d" | tail -c3); etype=$(od -An -tu2 -j16 -N2 "$d" | tr -d ' ')
  [ "$magic" = ELF ] && [ "$etype" = 4 ] && ok "an ELF core beside the snapshot, $(stat -c %s "$d") bytes" ||
    bad "the dump: magic $magic type $etype"
  [ "$a_actions" = dump,stacks,gcdump ] && [ "$a_size" -gt "$(stat -c %s "$d")" ] &&
    ok "the answer lists it and counts it: $(cat "$W/body")" || bad "the answer: $(cat "$W/body")"
else
  bad "the dump action: $st $(cat "$W/body")"
fi
k=${a_file%.json}.stacks.txt
grep -q '^Thread (0x' "$k" && grep -q 'Program.Main' "$k" &&
  ok "the thread stacks beside it: $(grep -c '^Thread' "$k") threads, $(grep -m1 -B1 'Program.Main' "$k" | head -1 | tr -s ' ')" ||
  bad "the thread stacks: $(head -20 "$k" 2>&1)"
g=${a_file%.json}.gcdump
if DG=$(bash "$SRC/tests/integration/dotnet/gcdump_tool.sh"); then
  "$DG" report "$g" >"$W/report" 2>&1; rc=$?
  n=$(awk '$NF == "Marks" { gsub(",", "", $2); print $2 }' "$W/report")
  "$R" dotnet gcdump -p "$TP" -o "$W/h.json" 2>"$W/gc.err"
  m=$(python3 -c '
import json, sys
print({x["type"]: x["count"] for x in json.load(open(sys.argv[1]))["types"]}.get("Marks", 0))' "$W/h.json" 2>/dev/null)
  [ $rc = 0 ] && [ "$n" = 1 ] && [ "$m" = 1 ] &&
    ok "the .gcdump beside it: dotnet-gcdump report exit 0, $(grep -m1 'GC Heap objects' "$W/report" | tr -s ' '), Marks x $n (rtdiag's reading: x $m)" ||
    bad "the .gcdump: dotnet-gcdump report exit $rc, Marks '$n', rtdiag's '$m': $(head -8 "$W/report") $(cat "$W/gc.err")"
else
  echo "skip (the .gcdump's reader): $DG"
fi
[ -z "$(ls -A "$S" | grep '^\.')" ] && ok "no temporary file left" || bad "temporary files left: $(ls -A "$S")"
finish
