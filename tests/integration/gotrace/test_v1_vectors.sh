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
