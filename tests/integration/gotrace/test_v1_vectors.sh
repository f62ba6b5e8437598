#!/usr/bin/env bash
# Every Go 1.5-1.19 trace from Go's own testdata decodes in raw and ordered
# mode; for Go 1.7+ `cat --ordered --format go-debug` equals what Go 1.19's
# `go tool trace -d` prints, line for line (run here, not stored).
. "$(dirname "$0")/lib.sh"
[ -d "$V1" ] || { echo "skip: no test vectors in $V1"; exit 77; }
n=0
for f in "$V1"/*; do
  b=$(basename "$f"); n=$((n+1))
  if "$R" gotrace cat "$f" >"$TMP/raw" 2>"$TMP/err" && [ -s "$TMP/raw" ]; then
    ok "raw $b ($(wc -l <"$TMP/raw") events)"
  else bad "raw $b: $(cat "$TMP/err")"; fi
  "$R" gotrace cat --format json "$f" >"$TMP/json" 2>"$TMP/err" || bad "json $b: $(cat "$TMP/err")"
  [ "$(wc -l <"$TMP/json")" = "$(grep -vc $'^\t' "$TMP/raw")" ] || bad "json $b: line count differs from text"
  if [ "$b" = stress_1_5_unordered ]; then
    # Go's own test expects this one to fail ordering (timestamps broken on purpose).
    if "$R" gotrace cat --ordered "$f" >/dev/null 2>"$TMP/err"; then bad "ordered $b should fail"
    elif grep -q "time stamps out of order" "$TMP/err"; then ok "ordered $b fails as Go does"
    else bad "ordered $b: wrong error: $(cat "$TMP/err")"; fi
    continue
  fi
  if "$R" gotrace cat --ordered "$f" >"$TMP/ord" 2>"$TMP/err"; then ok "ordered $b"
  else bad "ordered $b: $(cat "$TMP/err")"; fi
  "$R" gotrace stats "$f" >"$TMP/stats" 2>"$TMP/err" || bad "stats $b: $(cat "$TMP/err")"
done
[ "$n" -gt 0 ] || bad "no vectors found in $V1"

# A trace cut short (a process killed while tracing): raw mode prints every
# event before the cut, then the error with its offset; ordered mode cannot
# order an old-format trace without its end (the frequency is written
# last) and says what to do. Cut inside an event (200002) and at an event's
# end (200000: raw mode sees no damage).
f=$V1/stress_1_19_good
"$R" gotrace cat "$f" >"$TMP/whole"
# the whole file's stacks (at its end) name each stack=ID by its first
# frame; the cut file has none: compare the events without the frames
nostackframes() { sed -E 's/( [a-z_]*stack=[0-9]+):[^ ]*/\1/g'; }
head -c 200002 "$f" >"$TMP/cut.trace"
if "$R" gotrace cat "$TMP/cut.trace" >"$TMP/cut" 2>"$TMP/err"; then bad "cut trace: exit 0"
else
  at=$(grep -o "inside an event at offset [0-9]*" "$TMP/err" | grep -o "[0-9]*$")
  # the events that start before the damaged one, as the whole file gives them
  before=$(grep -o " off=[0-9]*" "$TMP/whole" | awk -F= -v at="${at:-0}" '$2 < at' | wc -l)
  if [ "$at" = 200000 ] && [ "$before" -gt 0 ] &&
     [ "$(grep -c " off=" "$TMP/cut")" = "$before" ] &&
     [ "$(cat "$TMP/cut")" = "$(head -n "$(wc -l <"$TMP/cut")" "$TMP/whole" | nostackframes)" ]; then
    ok "cut trace, raw: the $before events before offset $at as in the whole file, then the error"
  else bad "cut trace, raw: at=$at before=$before: $(cat "$TMP/err")"; fi
fi
head -c 200000 "$f" >"$TMP/cut0.trace"
for c in cut cut0; do
  for t in 1 2; do
    if RTDIAG_THREADS=$t "$R" gotrace cat --ordered --format go-debug "$TMP/$c.trace" >"$TMP/ord" 2>"$TMP/err"; then
      bad "$c trace, ordered: exit 0"
    elif grep -q "without --ordered, cat prints the events before the damage" "$TMP/err" &&
         grep -qE "offset 200000|no EvFrequency event" "$TMP/err" && [ ! -s "$TMP/ord" ]; then
      ok "$c trace, ordered ($t thread$([ $t = 1 ] || echo s)): $(head -1 "$TMP/err" | sed 's/.*trace: //'), and what to do"
    else bad "$c trace, ordered: $(cat "$TMP/err")"; fi
  done
done

if ! find_go; then
  echo "note: Go 1.19 not installed (/usr/lib/go-1.19/bin/go): the go tool trace -d comparison is skipped"
  finish
fi
export GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GOTOOLCHAIN=local GOPROXY=off GOFLAGS=
for f in "$V1"/*_1_7_* "$V1"/*_1_9_* "$V1"/*_1_1[0-9]_*; do
  [ -e "$f" ] || continue
  b=$(basename "$f")
  "$R" gotrace cat --ordered --format go-debug "$f" >"$TMP/me.txt" 2>"$TMP/err" || bad "go-debug $b: $(cat "$TMP/err")"
  # Go breaks timestamp ties by the order it walks a map of batches, which
  # changes from run to run: try a few runs for an exact match.
  same=""
  for try in 1 2 3 4 5 6; do
    if ! "$GO" tool trace -d "$f" >"$TMP/go.txt" 2>"$TMP/goerr"; then
      bad "go tool trace -d $b failed: $(tail -1 "$TMP/goerr")"; break
    fi
    if cmp -s "$TMP/go.txt" "$TMP/me.txt"; then same=$try; break; fi
  done
  if [ -n "$same" ]; then ok "go-debug $b equals go tool trace -d line for line ($(wc -l <"$TMP/go.txt") lines, Go run $same)"
  elif [ -s "$TMP/go.txt" ] && cmp -s <(sort -t' ' -k1,1n -k2 "$TMP/go.txt") <(sort -t' ' -k1,1n -k2 "$TMP/me.txt"); then
    ok "go-debug $b equals go tool trace -d up to the order of events with equal timestamps (Go's own order of those varies between runs)"
  else bad "go-debug $b differs from go tool trace -d:"; diff "$TMP/go.txt" "$TMP/me.txt" | head -10; fi
done
finish
