# lib.sh - shared by the gotrace integration tests (sourced).
set -u
R=${RTDIAG:?RTDIAG not set}
V1=${RTD_SHARED_DIR:-../shared}/testdata/gotrace/v1
V2=${RTD_SHARED_DIR:-../shared}/testdata/gotrace/v2
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
# Debian's Go 1.19 (the anchor), or a go on PATH that is 1.19.
find_go() {
  GO=""
  for c in /usr/lib/go-1.19/bin/go "$(command -v go 2>/dev/null)"; do
    [ -n "$c" ] && [ -x "$c" ] || continue
    if "$c" version 2>/dev/null | grep -q 'go1\.19'; then GO=$c; return 0; fi
  done
  return 1
}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rtd-gotrace.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
finish() {
  if [ "$fail" -ne 0 ]; then echo "$fail failed"; exit 1; fi
  echo "all passed"; exit 0
}

# ---- new format (Go 1.22+): filtered grep -o ----
# v2_lines FILE: raw text of the events without off=, dt= and resolved
# strings (a filtered file has its strings at the generation's end, where
# raw mode has not seen them yet).
v2_lines() { sed -E -e 's/ off=[0-9]+//' -e 's/ dt=[0-9]+//' -e 's/ [a-z_]+=".*$//' "$1"; }
V2_DICT='^(EventBatch|Frequency|Strings|String|Stacks|Stack|CPUSamples|Sync|ClockSnapshot|EndOfGeneration)$'
# v2_refs_ok BIN2TEXT_OUTPUT: every string and stack id an event names is
# defined in its generation, and so is every string a defined stack names.
v2_refs_ok() {
  awk '
    function chk(id, kind) { if (id != 0) need[g SUBSEP kind SUBSEP id] = 1 }
    /^EventBatch / { for (i = 2; i <= NF; i++) if ($i ~ /^gen=/) g = substr($i, 5); next }
    /^String id=/ { have[g SUBSEP "s" SUBSEP substr($2, 4)] = 1; next }
    /^Stack id=/ { have[g SUBSEP "k" SUBSEP substr($2, 4)] = 1; next }
    /^\tpc=/ { for (i = 1; i <= NF; i++) { if ($i ~ /^func=/) chk(substr($i, 6), "s"); if ($i ~ /^file=/) chk(substr($i, 6), "s") }; next }
    { for (i = 2; i <= NF; i++) {
        if ($i ~ /^[a-z_]*stack=/) { split($i, a, "="); chk(a[2], "k") }
        if ($i ~ /_string=/) { split($i, a, "="); chk(a[2], "s") } } }
    END { bad = 0; for (k in need) if (!(k in have)) { split(k, p, SUBSEP); print "missing " (p[2] == "s" ? "string" : "stack") " " p[3] " in generation " p[1]; bad++ }
          exit bad > 0 }' "$1"
}
# check_grep_o TRACE LABEL: filtered -o of a new-format trace. Uses $GO
# (a Go >= 1.22 toolchain) for go tool trace -d=2 when set.
check_grep_o() {
  local t=$1 l=$2 ann='^(UserTaskBegin|UserTaskEnd|UserRegionBegin|UserRegionEnd|UserLog|GoCreate|GoStart|ProcStart)$'
  # 1. Annotations, GoCreate, GoStart, ProcStart (raw filter): exactly those events, with their
  # strings and stacks; not a valid sequence for Go's validation.
  if ! "$R" gotrace grep -e "$ann" -o "$TMP/fo1" "$t" 2>"$TMP/err"; then bad "$l: grep -e -o: $(cat "$TMP/err")"; return; fi
  "$R" gotrace grep -e "$ann" "$t" >"$TMP/fa" && v2_lines "$TMP/fa" >"$TMP/fa1"
  "$R" gotrace cat "$TMP/fo1" >"$TMP/fb" 2>"$TMP/err" || bad "$l: raw read of the filtered file: $(cat "$TMP/err")"
  awk -v re="$V2_DICT" '!/^\t/ && $1 !~ re && $2 !~ re' "$TMP/fb" >"$TMP/fb2"; v2_lines "$TMP/fb2" >"$TMP/fb1"
  cmp -s "$TMP/fa1" "$TMP/fb1" && ok "$l: -e annotations|GoCreate|GoStart|ProcStart -o: the $(wc -l <"$TMP/fa1") matching events read back (raw), same times and args" ||
    { bad "$l: -e annotations|GoCreate|GoStart|ProcStart -o: events differ (< grep, > read back)"; diff "$TMP/fa1" "$TMP/fb1" | head -4; }
  "$R" gotrace bin2text "$TMP/fo1" >"$TMP/ft" 2>"$TMP/err" || bad "$l: bin2text of the filtered file: $(cat "$TMP/err")"
  v2_refs_ok "$TMP/ft" >"$TMP/refs" && ok "$l: every string and stack the kept events (and kept stacks) name is in its generation ($(grep -c '^String ' "$TMP/ft") strings, $(grep -c '^Stack ' "$TMP/ft") stacks kept)" ||
    { bad "$l: missing definitions"; head -3 "$TMP/refs"; }
  if [ -n "${GO:-}" ]; then
    "$GO" tool trace -d=2 "$TMP/fo1" >"$TMP/go2" 2>"$TMP/err" && tail -n +2 "$TMP/ft" | cmp -s - "$TMP/go2" &&
      ok "$l: go tool trace -d=2 reads the filtered file ($(wc -l <"$TMP/go2") lines, equal to bin2text)" ||
      { bad "$l: go tool trace -d=2 on the filtered file: $(head -2 "$TMP/err")"; diff <(tail -n +2 "$TMP/ft") "$TMP/go2" | head -4; }
  fi
  # 2. Dropping events that change no state (raw filter, -v) keeps a valid
  # sequence: the ordered read-back has the same events per thread, in
  # the same order (ties between threads may move: Go's heap saw other
  # events; times may move by Go's +1 ns rule).
  local neu='^(UserLog|HeapAlloc|HeapGoal|CPUSample)$'
  if ! "$R" gotrace grep -v -e "$neu" -o "$TMP/fo2" "$t" 2>"$TMP/err"; then bad "$l: grep -v -e -o: $(cat "$TMP/err")"; return; fi
  if "$R" gotrace cat --ordered "$TMP/fo2" >"$TMP/fo2.ord" 2>"$TMP/err"; then
    "$R" gotrace cat --ordered "$t" | awk -v re="$neu" '$2 !~ re' | cut -d' ' -f2- | sed -E 's/ off=[0-9]+//' |
      sort -s -t' ' -k2,2 >"$TMP/pm1"
    cut -d' ' -f2- "$TMP/fo2.ord" | sed -E 's/ off=[0-9]+//' | sort -s -t' ' -k2,2 >"$TMP/pm2"
    cmp -s "$TMP/pm1" "$TMP/pm2" && ok "$l: -v -e state-neutral -o: ordered read-back has the other $(wc -l <"$TMP/pm2") events, each thread's in the same order ($(wc -c <"$t") -> $(wc -c <"$TMP/fo2") bytes)" ||
      { bad "$l: -v -o ordered read-back differs per thread"; diff "$TMP/pm1" "$TMP/pm2" | head -4; }
  else bad "$l: -v -o: ordered read-back fails: $(cat "$TMP/err")"; fi
}
