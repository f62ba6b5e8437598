#!/usr/bin/env bash
# Ordered mode on a hand-made Go 1.9 trace (data/crafted_1_9.trace, written
# by data/make_crafted.py; a labelled fake, for what real runtimes rarely or
# never write): removeFutile drops a futile wakeup and keeps a real one, and
# a GoSysExit written 25 ticks late goes back behind later events. Go 1.19's
# `go tool trace -d` is the oracle; the facts are also checked without it.
. "$(dirname "$0")/lib.sh"
F=tests/integration/gotrace/data/crafted_1_9.trace
"$R" gotrace cat --ordered --format go-debug "$F" >"$TMP/me.txt" 2>"$TMP/err" ||
  bad "ordered: $(cat "$TMP/err")"
# the futile wakeup sequence (offsets 56, 63, 66, 68) is gone
for off in 56 63 66 68; do
  grep -q " off=$off\( \|$\)" "$TMP/me.txt" && bad "futile wakeup event at off=$off kept"
done
# the real wakeup of g 1 stays
grep -q '^16 GoUnblock p=0 g=2 off=82 g=1' "$TMP/me.txt" && ok "real wakeup kept" || bad "real wakeup lost"
# GoSysExit (off=109, written at tick 1041) sits at its exit time 1016: after
# the GoStart of tick 1016 (merged first), before the GoUnblock of 1017
grep -n '' "$TMP/me.txt" | grep -A1 ' off=79 ' | tail -1 | grep -q 'GoSysExit p=1000003 g=3 off=109' &&
  ok "GoSysExit moved back to its exit time" || bad "GoSysExit not at its exit time: $(grep -n off=109 "$TMP/me.txt")"
[ "$(wc -l <"$TMP/me.txt")" = 24 ] && ok "24 events (28 less the 4 futile)" || bad "$(wc -l <"$TMP/me.txt") events, want 24"
if find_go; then
  export GOCACHE="$TMP/gocache" GOTOOLCHAIN=local GOPROXY=off GOFLAGS=
  "$GO" tool trace -d "$F" >"$TMP/go.txt" 2>"$TMP/goerr" || bad "go tool trace -d: $(cat "$TMP/goerr")"
  cmp -s "$TMP/go.txt" "$TMP/me.txt" && ok "equals go tool trace -d" ||
    bad "differs from go tool trace -d: $(diff "$TMP/go.txt" "$TMP/me.txt" | head -5)"
else
  echo "note: Go 1.19 not installed: the go tool trace -d comparison is skipped"
fi
finish
