#!/usr/bin/env bash
# decode -> encode -> decode changes nothing (grep -o without a filter
# rewrites the trace; Go's own tool reads the rewrite); filtered -o keeps
# exactly the matching events; -c and -v agree with each other.
. "$(dirname "$0")/lib.sh"
[ -d "$V1" ] || { echo "skip: no test vectors in $V1"; exit 77; }
for f in "$V1"/*; do
  b=$(basename "$f")
  if ! "$R" gotrace grep -o "$TMP/rw" "$f" 2>"$TMP/err"; then bad "rewrite $b: $(cat "$TMP/err")"; continue; fi
  "$R" gotrace cat "$f" | sed 's/ off=[0-9]*//' >"$TMP/a"
  "$R" gotrace cat "$TMP/rw" | sed 's/ off=[0-9]*//' >"$TMP/b"
  if cmp -s "$TMP/a" "$TMP/b"; then
    if cmp -s "$f" "$TMP/rw"; then ok "round trip $b (byte-identical)"; else ok "round trip $b (same events)"; fi
  else bad "round trip $b changed events"; diff "$TMP/a" "$TMP/b" | head -5; fi
done

# Go reads the rewrite of a 1.19 trace and prints the same events.
if find_go; then
  export GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GOTOOLCHAIN=local GOPROXY=off GOFLAGS=
  for b in http_1_19_good user_task_region_1_11_good; do
    "$R" gotrace grep -o "$TMP/rw" "$V1/$b"
    if "$GO" tool trace -d "$TMP/rw" 2>/dev/null | sed 's/ off=[0-9]*//' | sort >"$TMP/go_rw" &&
       "$GO" tool trace -d "$V1/$b" 2>/dev/null | sed 's/ off=[0-9]*//' | sort >"$TMP/go_orig" &&
       [ -s "$TMP/go_orig" ] && cmp -s "$TMP/go_rw" "$TMP/go_orig"; then
      ok "go tool trace -d reads the rewrite of $b"
    else bad "go tool trace -d on the rewrite of $b"; fi
  done
else
  echo "note: Go 1.19 not installed: skipping the check that Go reads rewrites"
fi

# Filtered output: exactly the matching events, with their G, P and strings.
u="$V1/user_task_region_1_19_good"
"$R" gotrace grep -e '^User' "$u" | sed 's/ off=[0-9]*//' >"$TMP/want"
"$R" gotrace grep -e '^User' -o "$TMP/u.trace" "$u" || bad "grep -o user events"
"$R" gotrace grep -e '^User' "$TMP/u.trace" | sed 's/ off=[0-9]*//' >"$TMP/got"
if [ -s "$TMP/want" ] && cmp -s "$TMP/want" "$TMP/got"; then ok "filtered -o keeps the $(wc -l <"$TMP/want") user events intact"
else bad "filtered -o differs"; diff "$TMP/want" "$TMP/got" | head; fi
grep -q 'message="0123456789abcdef"' "$TMP/got" || bad "log message lost"
s="$V1/stress_1_19_good"
"$R" gotrace grep -G 5 "$s" | sed 's/ off=[0-9]*//' >"$TMP/want"
"$R" gotrace grep -G 5 -o "$TMP/g.trace" "$s"
"$R" gotrace grep -G 5 "$TMP/g.trace" | sed 's/ off=[0-9]*//' >"$TMP/got"
if [ -s "$TMP/want" ] && cmp -s "$TMP/want" "$TMP/got"; then ok "-g 5 -o keeps goroutine 5's $(wc -l <"$TMP/want") events"
else bad "-g 5 -o differs"; diff "$TMP/want" "$TMP/got" | head; fi

# -c, -v
all=$("$R" gotrace grep -c "$s"); g=$("$R" gotrace grep -c -G 5 "$s"); vg=$("$R" gotrace grep -c -v -G 5 "$s")
meta=$("$R" gotrace grep -c -e '^(Batch|Frequency|String|Stack|TimerGoroutine)$' "$s")
lines=$("$R" gotrace grep -G 5 "$s" | wc -l)
[ "$g" = "$lines" ] && ok "-c counts what grep prints ($g)" || bad "-c $g vs $lines lines"
[ $((g + vg + meta)) = "$all" ] && ok "-v is the complement ($g + $vg + $meta = $all)" || bad "-v: $g + $vg + $meta != $all"
[ "$("$R" gotrace grep -c -e GoCreate "$s")" = 34 ] && ok "-e GoCreate" || bad "-e GoCreate count"
n=$("$R" gotrace grep -c --stack 'TestTraceStress' "$s"); [ "$n" -gt 0 ] && ok "--stack matches $n events" || bad "--stack matched nothing"
n=$("$R" gotrace grep -c --string '^task0$' "$u"); [ "$n" = 1 ] && ok "--string" || bad "--string matched $n"
"$R" gotrace grep -e '(' "$s" >/dev/null 2>&1; [ $? = 2 ] && ok "bad regexp is a usage error" || bad "bad regexp exit"
finish
