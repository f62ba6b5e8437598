#!/usr/bin/env bash
# What a new user hits with 'rtdiag dotnet' (issue #19), against real .NET 10
# processes: output files never lost, errors that name the real cause,
# options that mean what dotnet-trace's mean.
. "$(dirname "$0")/lib.sh"
TARGET_DIR=$(build_dotnet dotnet-target tests/targets) || { echo "FAIL: build"; exit 1; }

start_target "$WORK/a"
wait_file "$WORK/a/ready" || { bad "target did not start"; cat "$WORK/a/stderr"; exit 1; }
P=$TPID

# stop --session with an id the target cannot have: the runtime answers OK
# to any id, so rtdiag checks that it is an address of the target
out=$("$R" dotnet stop -p "$P" --session 12345 2>&1); rc=$?
[ $rc = 1 ] && grep -q "pid $P has no session 12345" <<<"$out" \
  && ok "stop --session 12345: no such session, exit 1" || bad "stop unknown id: $rc $out"

# provider strings: a level above Verbose, an argument without '='
out=$("$R" dotnet collect -p "$P" --providers Foo:0x1:9 -o "$WORK/x.nettrace" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "level '9' is above Verbose (5)" <<<"$out" && [ ! -e "$WORK/x.nettrace" ] \
  && ok "level 9 refused with the reason" || bad "level 9: $rc $out"
out=$("$R" dotnet collect -p "$P" --providers Foo:0x1:5:noequals -o "$WORK/x.nettrace" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "argument 'noequals' is not KEY=VALUE" <<<"$out" \
  && ok "argument without '=' refused" || bad "noequals: $rc $out"

# a target that dies mid-profile: its end rundown never comes, yet frames
# are named (a rundown taken at the start, MethodLoadVerbose during)
start_target "$WORK/die" -- burn
wait_file "$WORK/die/ready" || bad "burn target"
DP=$TPID
"$R" dotnet profile -p "$DP" --duration 20 -o "$WORK/die.folded" 2>"$WORK/die.err" &
pp=$!
sleep 2.5; kill -9 "$DP"; wait $pp; rc=$?
rm -f /tmp/dotnet-diagnostic-"$DP"-*-socket
share() { awk -v re="$2" '{ w = $NF; all += w; if ($0 ~ re) s += w }
                          END { printf "%d", (all > 0 ? 100 * s / all : -1) }' "$1"; }
q=$(share "$WORK/die.folded" '[?]![?]'); sp=$(share "$WORK/die.folded" 'RtdiagBurn[.]Spin')
[ -s "$WORK/die.folded" ] && [ "$q" -le 2 ] && [ "$sp" -ge 50 ] \
  && ok "target killed mid-profile: frames named ($sp% under RtdiagBurn.Spin, $q% unnamed)" \
  || bad "killed mid-profile: rc $rc, $q% unnamed, $sp% Spin: $(cat "$WORK/die.err"; ls -la "$WORK")"

touch "$WORK/a/stop"
[ $fail = 0 ] || { echo "$fail failed"; exit 1; }
echo "dotnet user: all passed"
