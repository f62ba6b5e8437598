# real_go12x.sh - sourced by test_real_go122.sh and test_real_go123.sh with
# GOV=1.22 or 1.23. Builds tests/targets/gotrace-workload with Debian's
# golang-$GOV-go (bookworm-backports), runs it to record a new-format
# (Go 1.22+) runtime/trace file, and checks rtdiag against the program's
# manifest and against `go tool trace -d=1/-d=2` of the same Go version.
. "$(dirname "$0")/lib.sh"
GO=/usr/lib/go-$GOV/bin/go
[ -x "$GO" ] || { echo "skip: Go $GOV is not installed ($GO; Debian package golang-$GOV-go from bookworm-backports, see scripts/install-deps.sh)"; exit 77; }
"$GO" version | grep -q "go$GOV" || { echo "skip: $GO is not Go $GOV: $("$GO" version)"; exit 77; }
B=${RTD_BINARY_DIR:-$TMP}/gotrace-targets/go$GOV
mkdir -p "$B"
export GOCACHE="$B/gocache" GOPATH="$B/gopath" GOTOOLCHAIN=local GOPROXY=off GOFLAGS=
SRC=${RTD_SOURCE_DIR:-.}/tests/targets/gotrace-workload
if ! (cd "$SRC" && timeout 120 "$GO" build -o "$B/gotrace-workload" main.go) 2>"$TMP/builderr"; then
  cat "$TMP/builderr"; bad "go$GOV build gotrace-workload"; finish
fi
T=$TMP/w.trace
"$B/gotrace-workload" "$T" >"$TMP/manifest" || { bad "workload run"; finish; }
sort "$TMP/manifest" >"$TMP/want"
[ "$(wc -l <"$TMP/want")" -ge 10 ] || bad "manifest too short"
echo "note: Go $GOV trace: $(wc -c <"$T") bytes"

# stats: version and the whole file read.
if "$R" gotrace stats "$T" >"$TMP/stats" 2>"$TMP/err"; then
  grep -qx "version: *go $GOV (new format)" "$TMP/stats" && ok "stats: go $GOV (new format)" ||
    bad "stats version: $(grep '^version' "$TMP/stats")"
  nev=$(awk '/^events:/{print $2}' "$TMP/stats"); echo "note: stats: $nev events, $(awk '/^generations:/{print $2}' "$TMP/stats") generation(s)"
else bad "stats: $(cat "$TMP/err")"; fi

# Raw and ordered decode to the end.
"$R" gotrace cat "$T" >"$TMP/raw" 2>"$TMP/err" && ok "raw decode: $(wc -l <"$TMP/raw") events" || bad "raw decode: $(cat "$TMP/err")"
"$R" gotrace cat --ordered "$T" >"$TMP/ord" 2>"$TMP/err" && ok "ordered decode: $(wc -l <"$TMP/ord") events" || bad "ordered decode: $(cat "$TMP/err")"

# Ordered mode resolves every string: exactly the program's tasks, regions, logs.
sed -nE -e 's/.* UserTaskBegin .* name_string=(".*")$/task \1/p' \
        -e 's/.* UserRegionBegin .* name_string=(".*")$/region \1/p' \
        -e 's/.* UserLog .* key_string=(".*") value_string=(".*")$/log \1 \2/p' "$TMP/ord" | sort >"$TMP/got"
if cmp -s "$TMP/want" "$TMP/got"; then ok "ordered: exactly the $(wc -l <"$TMP/want") tasks, regions and logs the program made"
else bad "ordered: tasks/regions/logs differ (< program, > rtdiag)"; diff "$TMP/want" "$TMP/got"; fi
# Every region ends with its name; every task ends; workers' parent is main-task.
sed -nE 's/.* UserRegionEnd .* name_string=(".*")$/region \1/p' "$TMP/ord" | sort >"$TMP/rend"
grep '^region' "$TMP/want" | cmp -s - "$TMP/rend" && ok "every region ends ($(wc -l <"$TMP/rend"))" || bad "region ends differ"
tb=$(sed -nE 's/.* UserTaskBegin .* task=([0-9]+) .*/\1/p' "$TMP/ord" | sort); te=$(sed -nE 's/.* UserTaskEnd .* task=([0-9]+) .*/\1/p' "$TMP/ord" | sort)
[ -n "$tb" ] && [ "$tb" = "$te" ] && ok "every task ends" || bad "task begin ids [$tb] != end ids [$te]"
mt=$(sed -nE 's/.* UserTaskBegin .* task=([0-9]+) parent_task=0 .*name_string="main-task"$/\1/p' "$TMP/ord")
np=$(grep -cE " UserTaskBegin .* parent_task=${mt:-x} .*name_string=\"worker-" "$TMP/ord")
[ "$np" = 3 ] && ok "the 3 worker tasks have main-task ($mt) as parent" || bad "$np worker tasks with parent main-task ($mt), want 3"
# Raw mode: the string table comes later in the generation, so compare the
# string ids of the same events with the ordered ones.
ids() { sed -nE 's/^[0-9]+ (UserTaskBegin|UserRegionBegin|UserRegionEnd|UserLog) .* (task=[0-9]+ .*) stack=.*/\1 \2/p' | sed -E 's/ parent_task=[0-9]+//' | sort; }
ids <"$TMP/raw" >"$TMP/rawids"; ids <"$TMP/ord" >"$TMP/ordids"
[ -s "$TMP/rawids" ] && cmp -s "$TMP/rawids" "$TMP/ordids" && ok "raw: the same $(wc -l <"$TMP/rawids") task/region/log events with the same string ids" ||
  { bad "raw and ordered user events differ"; diff "$TMP/rawids" "$TMP/ordids" | head; }

# Round trips keep the events: unfiltered grep -o, and bin2text -> text2bin.
"$R" gotrace bin2text "$T" >"$TMP/t1" 2>"$TMP/err" || bad "bin2text: $(cat "$TMP/err")"
if "$R" gotrace grep -o "$TMP/rw.trace" "$T" 2>"$TMP/err"; then
  "$R" gotrace bin2text "$TMP/rw.trace" >"$TMP/t2" && cmp -s "$TMP/t1" "$TMP/t2" &&
    ok "grep -o rewrite keeps all $(wc -l <"$TMP/t1") text lines ($(wc -c <"$T") -> $(wc -c <"$TMP/rw.trace") bytes)" || bad "grep -o rewrite changes the events"
  cmp -s "$T" "$TMP/rw.trace" && echo "note: rewrite byte-identical" ||
    echo "note: rewrite not byte-identical (the runtime pads batch-size varints to 10 bytes; rtdiag writes them minimal)"
else bad "grep -o: $(cat "$TMP/err")"; fi
if "$R" gotrace text2bin "$TMP/t1" -o "$TMP/tb.trace" 2>"$TMP/err"; then
  "$R" gotrace bin2text "$TMP/tb.trace" | cmp -s "$TMP/t1" - && ok "bin2text -> text2bin -> bin2text unchanged" || bad "text round trip differs"
  "$R" gotrace cat --ordered "$TMP/tb.trace" 2>&1 | sed -E 's/ off=[0-9]+//' >"$TMP/ord2"
  sed -E 's/ off=[0-9]+//' "$TMP/ord" | cmp -s - "$TMP/ord2" && ok "text2bin output decodes (ordered) to the same events" || bad "text2bin output decodes differently"
else bad "text2bin: $(cat "$TMP/err")"; fi

# Go's own reader on rtdiag's rewrite. -d=2: raw events, Go's text form.
if "$GO" tool trace -d=2 "$TMP/rw.trace" >"$TMP/go2" 2>"$TMP/err"; then
  tail -n +2 "$TMP/t1" >"$TMP/me2"
  # Go 1.22's table names CPUSample's args "p g m" but its parser reads them
  # as m p g (fixed in 1.23's table); rtdiag names them as parsed.
  [ "$GOV" = 1.22 ] && sed -i -E 's/^CPUSample time=([0-9]+) p=([0-9]+) g=([0-9]+) m=([0-9]+)/CPUSample time=\1 m=\2 p=\3 g=\4/' "$TMP/go2"
  cmp -s "$TMP/go2" "$TMP/me2" && ok "go tool trace -d=2 of the rewrite equals rtdiag bin2text ($(wc -l <"$TMP/go2") lines)" ||
    { bad "go tool trace -d=2 differs from bin2text"; diff "$TMP/go2" "$TMP/me2" | head; }
else bad "go tool trace -d=2 cannot read rtdiag's rewrite: $(head -3 "$TMP/err")"; fi
# -d=1: Go's validated, ordered events (one header line each, stacks below).
# compare_go1 TRACE ORDERED_TEXT LABEL
compare_go1() {
  if ! "$GO" tool trace -d=1 "$1" >"$TMP/go1" 2>"$TMP/err"; then
    bad "$3: go tool trace -d=1 cannot read it: $(head -3 "$TMP/err")"; return; fi
  grep '^M=' "$TMP/go1" | grep -v ' Sync ' |
    sed -E 's/^M=([-0-9]+) P=([-0-9]+) G=([-0-9]+) [A-Za-z]+ Time=([0-9]+).*/\4 \1 \2 \3/' >"$TMP/gotup"
  local nsync; nsync=$(grep -c '^M=.* Sync ' "$TMP/go1")
  # rtdiag: g=0 is Go's NoGoroutine (-1); Go adds one Sync per generation.
  sed -E 's/^([0-9]+) [A-Za-z]+ p=([-0-9]+) g=([-0-9]+) m=([-0-9]+) .*/\1 \4 \2 \3/' "$2" |
    awk '{if ($4 == 0) $4 = -1; print}' >"$TMP/mytup"
  local a b; a=$(wc -l <"$TMP/gotup"); b=$(wc -l <"$TMP/mytup")
  [ "$a" = "$b" ] && [ "$a" -gt 0 ] && ok "$3: go tool trace -d=1: $a events + $nsync Sync, rtdiag ordered: $b" || bad "$3: event counts: Go $a (+$nsync Sync), rtdiag $b"
  cut -d' ' -f1 "$TMP/gotup" | cmp -s - <(cut -d' ' -f1 "$TMP/mytup") && ok "$3: the same timestamps (ns) in the same order" ||
    { bad "$3: timestamps differ from Go's"; diff <(cut -d' ' -f1 "$TMP/gotup") <(cut -d' ' -f1 "$TMP/mytup") | head -6; }
  # Per M the order is fixed; across Ms rtdiag breaks equal-timestamp ties
  # by first appearance, not Go's heap (documented), so compare each M.
  sort -s -k2,2n "$TMP/gotup" | cut -d' ' -f2- >"$TMP/gom"; sort -s -k2,2n "$TMP/mytup" | cut -d' ' -f2- >"$TMP/mym"
  cmp -s "$TMP/gom" "$TMP/mym" && ok "$3: each M's events have the same P and G as Go's" || { bad "$3: per-M P/G differ from Go's"; diff "$TMP/gom" "$TMP/mym" | head; }
  cmp -s "$TMP/gotup" "$TMP/mytup" && ok "$3: exact global order equals Go's" ||
    echo "note: $3: global order differs from Go's only in equal-timestamp ties ($(diff "$TMP/gotup" "$TMP/mytup" | grep -c '^<') lines)"
}
compare_go1 "$TMP/rw.trace" "$TMP/ord" "rewrite"

# A longer run (SCALE 40, over 1 s) crosses a generation boundary, where Go
# emits a synthetic Sync at lastTs+1 that shifts tied timestamps after it.
"$B/gotrace-workload" "$TMP/long.trace" 40 >/dev/null || bad "long workload run"
ng=$("$R" gotrace stats "$TMP/long.trace" | awk '/^generations:/{print $2}')
if "$R" gotrace cat --ordered "$TMP/long.trace" >"$TMP/lord" 2>"$TMP/err"; then
  if [ "${ng:-0}" -ge 2 ]; then compare_go1 "$TMP/long.trace" "$TMP/lord" "$ng generations"
  else echo "note: the long run made only ${ng:-0} generation(s) (fast machine?); cross-generation comparison not made"; fi
else bad "long trace ordered decode: $(cat "$TMP/err")"; fi
finish
