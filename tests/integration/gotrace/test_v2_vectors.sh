#!/usr/bin/env bash
# Go 1.22-1.25 traces from golang/exp's tests, in Go's text form: each
# converts to binary and back to the same text; the ordered (validating)
# decoder succeeds, or fails with a message matching the FAILURE regexp,
# exactly as the file's "-- expect --" section says; raw mode reads every
# converted file; rewriting gives the same bytes. Go's fuzz inputs give
# errors, never crashes.
. "$(dirname "$0")/lib.sh"
[ -d "$V2" ] || { echo "skip: no test vectors in $V2"; exit 77; }
n=0
for f in "$V2"/*.test; do
  b=$(basename "$f" .test); n=$((n+1))
  expect=$(awk '/^-- expect --/{getline; print; exit}' "$f")
  if ! "$R" gotrace text2bin "$f" -o "$TMP/$b.bin" 2>"$TMP/err"; then bad "text2bin $b: $(cat "$TMP/err")"; continue; fi
  # text -> binary -> text is lossless
  awk 'f{print} /^-- trace --/{f=1}' "$f" >"$TMP/want.txt"
  "$R" gotrace bin2text "$TMP/$b.bin" >"$TMP/got.txt" 2>"$TMP/b2terr"; b2t=$?
  if cmp -s "$TMP/want.txt" "$TMP/got.txt"; then ok "$b: text -> binary -> text unchanged"
  else bad "$b: bin2text differs"; diff "$TMP/want.txt" "$TMP/got.txt" | head -5; fi
  "$R" gotrace cat --ordered "$TMP/$b.bin" >"$TMP/ord" 2>"$TMP/err"; rc=$?
  case "$expect" in
    SUCCESS)
      if [ $rc = 0 ]; then ok "$b: ordered decode succeeds ($(wc -l <"$TMP/ord") events), as expected"
      else bad "$b: expected SUCCESS, got: $(cat "$TMP/err")"; fi ;;
    FAILURE*)
      re=$(sed -E 's/^FAILURE "(.*)"$/\1/' <<<"$expect")
      # exit 3 when events came before the failure (issue 27 item 4), else 1
      want=1; [ -s "$TMP/ord" ] && want=3
      if [ $rc = $want ] && grep -qE -- "$re" "$TMP/err"; then ok "$b: fails as expected (exit $rc): $(cut -c1-120 "$TMP/err")"
      else bad "$b: expected FAILURE /$re/, got rc=$rc: $(cat "$TMP/err")"; fi ;;
    *) bad "$b: unknown expectation '$expect'" ;;
  esac
  # raw mode and the byte-identical rewrite
  if [ $b2t = 0 ]; then
    "$R" gotrace cat "$TMP/$b.bin" >/dev/null 2>"$TMP/err" || bad "raw $b: $(cat "$TMP/err")"
    "$R" gotrace grep -o "$TMP/rw" "$TMP/$b.bin" && cmp -s "$TMP/rw" "$TMP/$b.bin" && ok "$b: rewrite byte-identical" || bad "$b: rewrite differs"
  else
    grep -q "trace ends inside" "$TMP/b2terr" && ok "$b: raw mode reports the truncated batch" || bad "$b: bin2text: $(cat "$TMP/b2terr")"
  fi
done
[ "$n" -gt 0 ] || bad "no .test files in $V2"

# Ordered mode names every event's G, P and M and resolves its strings.
a="$TMP/go122-annotations.bin"
if [ -s "$a" ]; then
  n=$("$R" gotrace grep --ordered -c -e '^UserLog$' --string '^key0$' "$a")
  [ "$n" -gt 0 ] && ok "ordered grep finds $n UserLog events with key0" || bad "ordered grep found no key0 logs"
  n=$("$R" gotrace grep --ordered -c -e '^UserRegionBegin$' "$a"); m=$("$R" gotrace grep -c -e '^UserRegionBegin$' "$a")
  [ "$n" = "$m" ] && [ "$n" -gt 0 ] && ok "raw and ordered agree on $n region begins" || bad "region begins: raw $m ordered $n"
  "$R" gotrace cat --ordered --format json "$a" | grep -q '"gen":1,"m":' && ok "json carries gen and m" || bad "json without gen/m"
fi

# Go's fuzz inputs (converted once from the 'go test fuzz v1' files into
# fuzz/corpus/gotrace/gofuzz-*): errors allowed, crashes and hangs not.
for f in "${RTD_SOURCE_DIR:-.}"/fuzz/corpus/gotrace/gofuzz-*; do
  [ -e "$f" ] || { bad "fuzz corpus missing"; break; }
  for mode in "" --ordered; do
    timeout 20 "$R" gotrace cat $mode "$f" >/dev/null 2>"$TMP/err"; rc=$?
    # 3: events came before the damage (issue 27 item 4)
    if [ $rc -le 1 ] || [ $rc = 3 ]; then :; else bad "$(basename "$f") $mode: exit $rc (crash or hang)"; fi
    [ $rc != 0 ] && ! grep -q . "$TMP/err" && bad "$(basename "$f") $mode: failed without a message"
  done
done
ok "Go's fuzz inputs: no crash, every failure with a message"
finish
