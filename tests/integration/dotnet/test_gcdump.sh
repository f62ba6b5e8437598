#!/usr/bin/env bash
# rtdiag dotnet gcdump (#16 item 3) against tests/targets/dotnet-kinds (heap), a .NET
# 10 program keeping exactly K objects of its own type alive in a tree, each
# with a byte[100]: counts exact, sizes as the program computes them, the
# retained size of the tree's root equal to the tree's total.
. "$(dirname "$0")/lib.sh"
HD=$(build_dotnet dotnet-kinds tests/targets) || { echo "FAIL: build"; exit 1; }
K=1000
mkdir -p "$WORK/h"
"$HD/dotnet-kinds" "$WORK/h" heap $K >"$WORK/h/stdout" 2>&1 &
HP=$!; PIDS+=("$HP")
wait_file "$WORK/h/ready" || { bad "dotnet-kinds heap did not start"; exit 1; }
read -r k node array root total <"$WORK/h/sizes"

out=$("$R" dotnet gcdump -p "$HP" -o "$WORK/h.json" 2>&1); rc=$?
[ $rc = 0 ] && python3 - "$WORK/h.json" "$K" "$node" "$array" "$root" "$total" <<'PY' && ok "gcdump json: $K HeapTreeNode of $node B, root retains the tree's $total B" || bad "gcdump json: $rc $out"
import json, sys
d = json.load(open(sys.argv[1]))
k, node, array, root, total = map(int, sys.argv[2:])
t = {x["type"]: x for x in d["types"]}
assert t["HeapTreeNode"]["count"] == k, t["HeapTreeNode"]
assert t["HeapTreeNode"]["size"] == k * node, t["HeapTreeNode"]
assert t["HeapTreeRoot"]["count"] == 1 and t["HeapTreeRoot"]["size"] == root, t["HeapTreeRoot"]
assert t["System.Byte[]"]["count"] >= k, t["System.Byte[]"]
assert t["HeapTreeRoot"]["retained"] == total, (t["HeapTreeRoot"], total)
assert d["objects"] >= k + k + 1 and d["roots"] > 0, d
PY
out=$("$R" dotnet gcdump -p "$HP" 2>&1); rc=$?
[ $rc = 0 ] && grep -qE "^ *$total +1 +$root +HeapTreeRoot$" <<<"$out" \
  && ok "gcdump table: HeapTreeRoot retains $total" || bad "table: $rc $out"
"$R" dotnet gcdump -p "$HP" -o "$WORK/h.pb.gz" 2>/dev/null
gzip -dc "$WORK/h.pb.gz" | grep -aq inuse_space && gzip -dc "$WORK/h.pb.gz" | grep -aq HeapTreeNode \
  && ok "gcdump pprof: inuse_objects/inuse_space by dominator path" || bad "pprof"

# an independent reader: ClrMD (Microsoft.Diagnostics.Runtime, from NuGet)
# reads the same live heap through the runtime's DAC right after rtdiag's
# snapshot. The program's own types must agree exactly (count and bytes)
# with both of ClrMD's views: what it finds reachable from the roots it
# enumerates, and every object on the heap. For the rest, the heap as
# ClrMD reads it right after the snapshot's full blocking GC is the live
# set plus what the target allocated since (the session's end runs
# EventSource code in the target); ClrMD's own root walk misses objects
# the runtime keeps alive by roots it does not enumerate (dynamic methods'
# scopes and signatures, kept through the loader's handles), so its
# reachable count is lower. Names of nested and generic types are written
# differently: the runtime's BulkType names (Dictionary`2[K,V], a nested
# type without its enclosing type) against ClrMD's (Dictionary<K, V>,
# Outer+Nested). These differences are shown, not compared.
CM=$(build_dotnet clrmd-heap tests/targets) || { bad "build of clrmd-heap (NuGet Microsoft.Diagnostics.Runtime 4.2.750101)"; CM=; }
if [ -n "$CM" ]; then
  "$R" dotnet gcdump -p "$HP" -o "$WORK/h2.json" 2>/dev/null; rc=$?
  "$CM/clrmd-heap" "$HP" >"$WORK/clrmd.txt" 2>&1; c1=$?
  cmp=$(python3 - "$WORK/h2.json" "$WORK/clrmd.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rt = {x["type"]: (x["count"], x["size"]) for x in d["types"]}
view = {"R": {}, "H": {}}
for line in open(sys.argv[2]):
    k, c, b, t = line.rstrip("\n").split("\t")
    view[k][t] = (int(c), int(b))
reach, heap = view["R"], view["H"]
for t in ("HeapTreeNode", "HeapTreeRoot", "System.Byte[]"):
    assert rt[t] == reach[t] == heap[t] or (t == "System.Byte[]" and rt[t] == reach[t]), (t, rt[t], reach.get(t), heap.get(t))
n = lambda h: sum(v[0] for v in h.values())
more = sorted(((heap.get(t, (0, 0))[0] - rt.get(t, (0, 0))[0], t) for t in heap), reverse=True)[:2]
print("HeapTreeNode %d / %d B, HeapTreeRoot %d B, byte[] %d equal; objects: rtdiag %d, ClrMD heap %d (%s), ClrMD reachable %d"
      % (rt["HeapTreeNode"][0], rt["HeapTreeNode"][1], rt["HeapTreeRoot"][1], rt["System.Byte[]"][0],
         d["objects"], n(heap), ", ".join("%s +%d" % (t, c) for c, t in more), n(reach)))
PY
); prc=$?
  [ $c1 = 0 ] && [ $rc = 0 ] && [ $prc = 0 ] && ok "gcdump against ClrMD: $cmp" \
    || bad "gcdump vs ClrMD: clrmd $c1 rtdiag $rc: $cmp $(tail -3 "$WORK/clrmd.txt")"
fi

# a heap too big for the cap: said, nothing written, the old file kept
printf keep >"$WORK/cap.json"
out=$("$R" dotnet gcdump -p "$HP" --max-objects 100 -o "$WORK/cap.json" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "more than 100 objects.*--max-objects" <<<"$out" && [ "$(cat "$WORK/cap.json")" = keep ] \
  && ok "heap over --max-objects: refused, old file kept" || bad "cap: $rc $out"
touch "$WORK/h/stop"

# a walk larger than the runtime's buffer: the drops are said, the partial
# snapshot is written, exit 3
mkdir -p "$WORK/big"
"$HD/dotnet-kinds" "$WORK/big" heap 200000 >/dev/null 2>&1 &
BP=$!; PIDS+=("$BP")
wait_file "$WORK/big/ready" 60 || bad "big heap target"
out=$("$R" dotnet gcdump -p "$BP" --buffer-mb 1 -o "$WORK/big.json" 2>&1); rc=$?
[ $rc = 3 ] && grep -q "the runtime dropped [0-9]* events of the heap walk (its buffer of 1 MB filled)" <<<"$out" && [ -s "$WORK/big.json" ] \
  && ok "walk over the buffer: drops said, partial snapshot kept, exit 3" || bad "drops: $rc $out"
touch "$WORK/big/stop"
mkdir -p "$WORK/nd"
DOTNET_EnableDiagnostics=0 "$HD/dotnet-kinds" "$WORK/nd" heap 10 >/dev/null 2>&1 &
NP=$!; PIDS+=("$NP")
wait_file "$WORK/nd/ready" || bad "nodiag target"
out=$("$R" dotnet gcdump -p "$NP" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "DOTNET_EnableDiagnostics=0" <<<"$out" && ok "diagnostics off: said" || bad "nodiag: $rc $out"
touch "$WORK/nd/stop"

[ $fail = 0 ] || { echo "$fail failed"; exit 1; }
echo "dotnet gcdump: all passed"
