#!/usr/bin/env bash
# Filtered grep -o on golang/exp's new-format test traces (Go 1.22-1.25,
# Go's text form converted to binary): the kept events read back raw with
# every string and stack they need, a file without the state-neutral
# events reads back ordered with the other events, each thread's in the
# same order, and (go 1.22/1.23 files, when Debian's golang-1.23-go is
# installed) go tool trace -d=2 reads the filtered files. See lib.sh.
. "$(dirname "$0")/lib.sh"
[ -d "$V2" ] || { echo "skip: no test vectors in $V2"; exit 77; }
GO123=/usr/lib/go-1.23/bin/go
[ -x "$GO123" ] || { GO123=""; echo "note: Go 1.23 not installed: go tool trace -d=2 not run on the filtered files"; }
export GOTOOLCHAIN=local GOFLAGS= GOCACHE="$TMP/gocache"
n=0
for f in "$V2"/*.test; do
  b=$(basename "$f" .test)
  grep -qx SUCCESS <(awk '/^-- expect --/{getline; print; exit}' "$f") || continue
  "$R" gotrace text2bin "$f" -o "$TMP/$b.bin" 2>"$TMP/err" || { bad "text2bin $b: $(cat "$TMP/err")"; continue; }
  GO=""; case "$b" in go122-*|go123-*) GO=$GO123 ;; esac
  check_grep_o "$TMP/$b.bin" "$b"
  n=$((n+1))
done
[ "$n" -gt 0 ] && ok "$n SUCCESS vectors filtered" || bad "no SUCCESS vectors in $V2"

# A filter that keeps nothing still gives a valid trace of the version.
a="$TMP/go122-annotations.bin"
if [ -s "$a" ]; then
  "$R" gotrace grep -e '^NoSuchEvent$' -o "$TMP/none" "$a" && "$R" gotrace stats "$TMP/none" >"$TMP/st" &&
    grep -qx 'version: *go 1.22 (new format)' "$TMP/st" && ok "empty selection: a valid go 1.22 trace ($(wc -c <"$TMP/none") bytes)" || bad "empty selection"
  # stdin works for the raw filters; --ordered -o needs a FILE.
  "$R" gotrace grep -e '^UserLog$' -o "$TMP/s1" - <"$a" && "$R" gotrace grep -e '^UserLog$' -o "$TMP/s2" "$a" && cmp -s "$TMP/s1" "$TMP/s2" &&
    ok "grep -e -o from stdin = from the file" || bad "stdin -o differs"
  "$R" gotrace grep --ordered -G 1 -o "$TMP/s3" - <"$a" 2>"$TMP/err"; [ $? = 2 ] && grep -q "needs a FILE" "$TMP/err" &&
    ok "--ordered -o from stdin: usage error" || bad "--ordered -o from stdin: $(cat "$TMP/err")"
fi
finish
