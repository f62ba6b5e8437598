#!/usr/bin/env bash
# rtdiag record --ring (issue #31): after 16 s of recording with an 8 s
# ring, a SIGUSR1 snapshot spans the last ~8 s of the program's marked
# events (Rtd-Flight-Test/Mark, one every ~50 ms) and holds the kernel's
# off-CPU slices of the thread that wrote them; the recorder goes on (a
# second SIGUSR1 gives a snapshot of later rounds); Ctrl-C writes a last
# snapshot and exits 0.
. "$(dirname "$0")/flight_lib.sh"
start_target
start_rtdiag --ring 8s
t0=$(date +%s.%N)
# the issue's 16 s: twice the ring, so its first half has been dropped
elapsed() { python3 -c "import sys,time; sys.exit(0 if time.time() - $t0 >= 16 else 1)"; }
wait_until elapsed
kill -USR1 "$RP"
wait_until has_snaps signal 1 || { bad "no snapshot after SIGUSR1"; finish; }
first=$(snaps signal | head -1)
if python3 "$HERE/flight_check.py" span "$first" Rtd-Flight-Test/Mark 8 >"$W/span"; then
  ok "the SIGUSR1 snapshot spans the last ring of marks, with their thread's kernel slices: $(cat "$W/span")"
else
  bad "the SIGUSR1 snapshot: $(cat "$W/span")"
fi
# it goes on: a later snapshot ends with later rounds
r1=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['last_round'] or 0)" "$W/span")
r0=$(rounds)
later() { [ "$(rounds)" -ge $((r0 + 20)) ]; } # (wait_until has a local n)
wait_until later
kill -USR1 "$RP"
wait_until has_snaps signal 2 || bad "no second snapshot"
second=$(snaps signal | tail -1)
python3 "$HERE/flight_check.py" span "$second" Rtd-Flight-Test/Mark 8 >"$W/span2"
r2=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['last_round'] or 0)" "$W/span2")
[ "$r2" -gt "$r1" ] && ok "recording went on: the second snapshot ends at round $r2, the first at $r1" ||
  bad "the second snapshot ends at round $r2, the first at $r1"
kill -INT "$RP"
wait "$RP"; rc=$?; RP=
[ $rc = 0 ] && ok "Ctrl-C: exit 0" || bad "Ctrl-C: exit $rc"
[ "$(nsnaps interrupt)" = 1 ] && python3 "$HERE/flight_check.py" info "$(snaps interrupt)" >"$W/info" &&
  ok "Ctrl-C wrote a last snapshot: $(cat "$W/info")" || bad "no snapshot at Ctrl-C: $(ls "$S")"
[ -z "$(ls -A "$S" | grep '^\.')" ] && ok "no temporary file left" || bad "temporary files left: $(ls -A "$S")"
finish
