# perf record of a program whose work runs below 20 nested calls of one
# function (cpu_shares depth=20): in fp mode (-g) and in dwarf mode
# (--call-graph dwarf, the program built without frame pointers) every
# sample's chain goes from main through all 20 rec frames to the leaf, as
# Debian's perf script shows for the same program recorded by perf itself.
# A recursive frame repeats its return address; only a repeated (address,
# stack pointer) pair means the unwinder made no progress.
. "$(dirname "$0")/lib.sh"
FP=$RTD_BINARY_DIR/tests/targets/cpu_shares_fp
NOFP=$RTD_BINARY_DIR/tests/targets/cpu_shares_nofp
[ -x "$FP" ] && [ -x "$NOFP" ] || fail "cpu_shares not built"
DEPTH=20
ROUNDS=400

# chains FORMAT FILE -> "share-from-main share-full-depth" and, in
# FILE.chains, the chains from main to the user leaf carrying 2% or more
# FORMAT: folded (rtdiag, root first) or script (perf script -F ip,sym)
chains() {
  python3 - "$1" "$2" "$DEPTH" <<'PY'
import sys, collections
fmt, path, depth = sys.argv[1], sys.argv[2], int(sys.argv[3])
leaves = ("alpha", "beta", "gamma_fn")
c = collections.Counter()
def add(frames, v):  # frames root first, any kernel part after the leaf
    keep = []
    for f in frames:
        keep.append(f)
        if f in leaves:
            break
    if "main" in keep:
        keep = keep[keep.index("main"):]
    else:
        keep = ["(no main)"] + keep
    c[";".join(keep)] += v
if fmt == "folded":
    for line in open(path):
        s, v = line.rsplit(" ", 1)
        add(s.split(";"), int(v))
else:
    cur = []
    def flush():
        if cur:
            add([s for s in reversed(cur) if not s.startswith("[")], 1)
        cur.clear()
    for line in open(path):
        line = line.strip()
        if not line:
            flush(); continue
        p = line.split(None, 1)
        if len(p) == 2:
            cur.append(p[1].split("+")[0])
    flush()
tot = sum(c.values()) or 1
main = sum(v for k, v in c.items() if k.startswith("main;"))
full = sum(v for k, v in c.items() if k.count(";rec") == depth and k.startswith("main;worker;"))
with open(path + ".chains", "w") as out:
    for k, v in sorted(c.items()):
        if v * 50 >= tot and k.endswith(leaves):
            out.write(k + "\n")
print("%.1f %.1f %d" % (100.0 * main / tot, 100.0 * full / tot, tot))
PY
}

run_mode() { # label rtdiag-g perf-g program
  label=$1 rg=$2 pg=$3 prog=$4
  "$R" perf record -F 999 -g "$rg" -o "$TMP/$label.folded" -- "$prog" depth=$DEPTH rounds=$ROUNDS \
    || fail "$label: rtdiag perf record"
  read -r rmain rfull rn <<< "$(chains folded "$TMP/$label.folded")"
  echo "$label: rtdiag (weight $rn ns), $rmain% reach main, $rfull% through all $DEPTH rec frames"
  awk -v f="$rfull" 'BEGIN { exit !(f >= 90) }' || {
    sort -t' ' -k2 -n "$TMP/$label.folded" | tail -3
    fail "$label: fewer than 90% of rtdiag's samples unwound through $DEPTH rec frames to main"; }
  if ! command -v perf >/dev/null; then
    echo "SKIP part: perf (linux-perf) not installed: no comparison"; return
  fi
  perf record -q -F 999 --call-graph "$pg" -o "$TMP/$label.data" -- "$prog" depth=$DEPTH rounds=$ROUNDS \
    >/dev/null 2>&1 || fail "$label: perf record"
  perf script -i "$TMP/$label.data" -F ip,sym 2>/dev/null > "$TMP/$label.script"
  read -r pmain pfull pn <<< "$(chains script "$TMP/$label.script")"
  echo "$label: perf $pn samples, $pmain% reach main, $pfull% through all $DEPTH rec frames"
  [ -s "$TMP/$label.folded.chains" ] || fail "$label: no chain of 2% or more"
  diff "$TMP/$label.script.chains" "$TMP/$label.folded.chains" \
    || fail "$label: perf script and rtdiag name different call chains"
  awk -v a="$rfull" -v b="$pfull" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 5) }' \
    || fail "$label: rtdiag's full-depth share $rfull% is not within 5 points of perf's $pfull%"
  ok "$label: the same chains as perf script, main;worker;rec x$DEPTH;...;leaf"
}

run_mode fp fp fp "$FP"
run_mode dwarf dwarf dwarf "$NOFP"
echo "PASS"
