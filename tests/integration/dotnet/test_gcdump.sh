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
