#!/usr/bin/env bash
# A Go 1.19 program (tests/targets/gotrace-workload) records its own trace
# while it runs goroutines, channels, a mutex, syscalls, GC, CPU profiling,
# tasks, regions and logs, and prints what tasks, regions and logs it made.
# rtdiag must find exactly those, in raw and ordered mode; its go-debug
# output must equal go tool trace -d; the rewrite must be byte-identical.
. "$(dirname "$0")/lib.sh"
find_go || { echo "skip: Go 1.19 is not installed (/usr/lib/go-1.19/bin/go; Debian package golang-1.19-go)"; exit 77; }
export GOTOOLCHAIN=local GOPROXY=off GOFLAGS=
W=$(bash "${RTD_SOURCE_DIR:-.}/tests/targets/go_build.sh" "$GO" tests/targets/gotrace-workload 2>"$TMP/builderr") ||
  { cat "$TMP/builderr"; bad "go build gotrace-workload"; finish; }
"$W" "$TMP/w.trace" >"$TMP/manifest" || { bad "workload run"; finish; }
sort "$TMP/manifest" >"$TMP/want"
[ -s "$TMP/want" ] || bad "empty manifest"

extract() { # text output of cat -> the manifest format
  sed -nE -e 's/.* UserTaskCreate .* name=(".*")$/task \1/p' \
          -e 's/.* UserRegion .* mode=0 .* name=(".*")$/region \1/p' \
          -e 's/.* UserLog .* category=(".*") message=(".*")$/log \1 \2/p' | sort
}
# Ordered mode: every name resolved (the string table is complete).
if "$R" gotrace cat --ordered "$TMP/w.trace" >"$TMP/cat" 2>"$TMP/err"; then
  extract <"$TMP/cat" >"$TMP/got"
  if cmp -s "$TMP/want" "$TMP/got"; then ok "ordered: exactly the $(wc -l <"$TMP/want") tasks, regions and logs the program made"
  else bad "ordered: tasks/regions/logs differ (< program, > rtdiag)"; diff "$TMP/want" "$TMP/got"; fi
else bad "ordered decode: $(cat "$TMP/err")"; fi
# Raw mode streams in file order, where a P's buffer can use a string id
# that another P's later-flushed buffer defines: compare kinds and the
# inline log messages, which never depend on the table.
if "$R" gotrace cat "$TMP/w.trace" >"$TMP/cat" 2>"$TMP/err"; then
  extract <"$TMP/cat" | sed -E 's/^(task|region) .*/\1/; s/^log "[^"]*" /log /' | sort >"$TMP/got"
  sed -E 's/^(task|region) .*/\1/; s/^log "[^"]*" /log /' "$TMP/want" | sort >"$TMP/want_raw"
  if cmp -s "$TMP/want_raw" "$TMP/got"; then ok "raw: the same tasks, regions and log messages"
  else bad "raw: differs"; diff "$TMP/want_raw" "$TMP/got"; fi
else bad "raw decode: $(cat "$TMP/err")"; fi
for t in GoCreate GoBlockRecv GoSysCall GCStart GoBlockSync UserTaskEnd; do
  n=$("$R" gotrace grep -c -e "^$t\$" "$TMP/w.trace")
  [ "$n" -gt 0 ] && ok "$n $t events" || bad "no $t events in the workload trace"
done
n=$("$R" gotrace grep -c -e '^CPUSample$' "$TMP/w.trace")
echo "note: $n CPUSample events (depends on the profiler's timing)"

"$R" gotrace cat --ordered --format go-debug "$TMP/w.trace" >"$TMP/me.txt" || bad "go-debug"
same=""
for try in 1 2 3 4 5 6; do
  "$GO" tool trace -d "$TMP/w.trace" >"$TMP/go.txt" 2>/dev/null || break
  cmp -s "$TMP/go.txt" "$TMP/me.txt" && { same=$try; break; }
done
if [ -n "$same" ]; then ok "go-debug equals go tool trace -d ($(wc -l <"$TMP/me.txt") lines)"
elif cmp -s <(sort -t' ' -k1,1n -k2 "$TMP/go.txt") <(sort -t' ' -k1,1n -k2 "$TMP/me.txt"); then
  ok "go-debug equals go tool trace -d up to the order of equal-timestamp events"
else bad "go-debug differs from go tool trace -d"; diff "$TMP/go.txt" "$TMP/me.txt" | head; fi

# Ordered cat decodes on a second thread when a core is free (RTDIAG_THREADS=2
# whatever the load); RTDIAG_THREADS=1 keeps it on one.
# Both must print the same, long log message (a whole-event record larger
# than a hand-over chunk) and Go 1.19's go-debug lines included.
for fmt in text json go-debug; do
  RTDIAG_THREADS=2 "$R" gotrace cat --ordered --format $fmt "$TMP/w.trace" >"$TMP/two" 2>&1
  RTDIAG_THREADS=1 "$R" gotrace cat --ordered --format $fmt "$TMP/w.trace" >"$TMP/one" 2>&1
  if [ -s "$TMP/one" ] && cmp -s "$TMP/one" "$TMP/two"; then ok "$fmt: two threads print what one does"
  else bad "$fmt: two threads differ from one"; diff "$TMP/one" "$TMP/two" | head -5; fi
done
"$R" gotrace grep -o "$TMP/rw.trace" "$TMP/w.trace" && cmp -s "$TMP/w.trace" "$TMP/rw.trace" &&
  ok "rewrite is byte-identical" || bad "rewrite differs"
"$R" gotrace grep --string '^worker-1' -o "$TMP/w1.trace" "$TMP/w.trace" || bad "grep --string -o"
n=$("$R" gotrace grep -c --string '^worker-1' "$TMP/w1.trace")
[ "$n" = 2 ] && ok "--string -o keeps worker-1's task and its log" || bad "--string -o kept $n events, want 2"
finish
