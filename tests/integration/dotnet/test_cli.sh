#!/usr/bin/env bash
# rtdiag dotnet ... against real .NET 10 processes, checking effects:
# ps/info name the process, setenv is seen inside the program, perfmap
# writes /tmp/perf-PID.map, dump writes an ELF core, collect writes a
# nettrace stream holding the program's own EventSource, a suspended
# start through DOTNET_DiagnosticPorts runs once resumed, a startup hook
# runs, and the clear errors (no process, diagnostics disabled).
. "$(dirname "$0")/lib.sh"
TARGET_DIR=$(build_dotnet dotnet-target tests/targets) || { echo "FAIL: build"; exit 1; }
HOOK_DIR=$(build_dotnet dotnet-hook tests/targets) || { echo "FAIL: build"; exit 1; }

start_target "$WORK/a"
wait_file "$WORK/a/ready" || { bad "target did not start"; cat "$WORK/a/stderr"; exit 1; }
P=$TPID

out=$("$R" dotnet ps 2>&1)
grep -qE "^ *$P +dotnet-target +10\." <<<"$out" && ok "ps lists pid $P with its version" || bad "ps: $out"

out=$("$R" dotnet info -p "$P" 2>&1)
grep -q "^pid: *$P$" <<<"$out" && grep -q "assembly: *dotnet-target" <<<"$out" \
  && grep -q "clr version: *10\." <<<"$out" && grep -q "answered by: *ProcessInfo3" <<<"$out" \
  && ok "info" || bad "info: $out"

"$R" dotnet setenv -p "$P" RTDIAG_TEST_VAR "from rtdiag" || bad "setenv exit"
"$R" dotnet env -p "$P" | grep -qx "RTDIAG_TEST_VAR=from rtdiag" && ok "env shows the variable" || bad "env"
wait_file "$WORK/a/env" 10 && [ "$(cat "$WORK/a/env")" = "from rtdiag" ] \
  && ok "the program sees the variable" || bad "variable not seen inside"

rm -f "/tmp/perf-$P.map"
"$R" dotnet perfmap enable -p "$P" || bad "perfmap enable exit"
wait_file "/tmp/perf-$P.map" 10 && ok "perf map file appeared" || bad "no /tmp/perf-$P.map"
"$R" dotnet perfmap disable -p "$P" && ok "perfmap disable" || bad "perfmap disable"
rm -f "/tmp/perf-$P.map" "/tmp/perfinfo-$P.map"

if "$R" dotnet dump -p "$P" -o "$WORK/core" --type mini 2>"$WORK/dump.err"; then
  # e_ident ELF, e_type (offset 16) 4 = ET_CORE
  magic=$(od -An -c -N4 "$WORK/core" | tr -d ' ')
  etype=$(od -An -tu2 -j16 -N2 "$WORK/core" | tr -d ' ')
  [ "$magic" = '177ELF' ] && [ "$etype" = 4 ] && ok "dump is an ELF core" || bad "dump: magic $magic type $etype"
else
  bad "dump: $(cat "$WORK/dump.err")"
fi

# collect: the program's own EventSource and a complete stream
"$R" dotnet collect -p "$P" --providers Rtdiag-Test:0:Verbose --duration 1 -o "$WORK/t.nettrace" 2>"$WORK/c.err" \
  && ok "collect exit 0" || bad "collect: $(cat "$WORK/c.err")"
head -c 8 "$WORK/t.nettrace" | grep -q Nettrace && ok "stream starts Nettrace" || bad "not a nettrace"
# the provider name appears (UTF-16) in the event metadata
LC_ALL=C grep -qa "R.t.d.i.a.g.-.T.e.s.t" "$WORK/t.nettrace" && ok "own EventSource in the stream" || bad "no Rtdiag-Test metadata"
# a complete stream ends with the end-of-stream tag (NullReference, 1)
[ "$(tail -c1 "$WORK/t.nettrace" | od -An -tu1 | tr -d ' ')" = 1 ] && ok "stream ends with its end tag" || bad "stream not finished"

# SIGINT stops the session and the rundown is still read
"$R" dotnet collect -p "$P" -o "$WORK/int.nettrace" 2>"$WORK/int.err" &
cp=$!
sleep 1.5; kill -INT $cp; wait $cp; rc=$?
[ $rc = 0 ] && [ "$(tail -c1 "$WORK/int.nettrace" | od -An -tu1 | tr -d ' ')" = 1 ] \
  && ok "SIGINT: clean stop, rundown read" || bad "SIGINT stop: rc $rc $(cat "$WORK/int.err")"
LC_ALL=C grep -qa "M.e.t.h.o.d.D.C.E.n.d.V.e.r.b.o.s.e\|D.C.E.n.d" "$WORK/int.nettrace" || true

# errors a person sees
out=$("$R" dotnet info -p 999999 2>&1); rc=$?
[ $rc = 1 ] && grep -q "pid 999999: no such process" <<<"$out" && ok "no such process" || bad "no process: $rc $out"
out=$("$R" dotnet collect -p "$P" --providers 'Foo:zz' -o "$WORK/x" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "keywords 'zz'" <<<"$out" && ok "bad provider string is a usage error" || bad "bad provider: $rc $out"
start_target "$WORK/nodiag" DOTNET_EnableDiagnostics=0
wait_file "$WORK/nodiag/ready" || bad "nodiag target"
out=$("$R" dotnet info -p "$TPID" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "pid $TPID: no diagnostic socket in /proc/$TPID/root/tmp (.*DOTNET_EnableDiagnostics=0" <<<"$out" \
  && ok "DOTNET_EnableDiagnostics=0: clear error" || bad "nodiag: $rc $out"

# suspended start through DOTNET_DiagnosticPorts; listen resumes it
SOCK="$WORK/port.sock"
"$R" dotnet listen "$SOCK" --count 1 --timeout 30 >"$WORK/listen.out" 2>"$WORK/listen.err" &
lp=$!
for i in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
start_target "$WORK/susp" "DOTNET_DiagnosticPorts=$SOCK"
sleep 1
[ -e "$WORK/susp/ready" ] && [ ! -s "$WORK/listen.out" ] && bad "target ran before resume"
wait $lp; rc=$?
grep -q "^pid .* cookie .* version 10\..*dotnet-target" "$WORK/listen.out" && ok "listen: advertise + ProcessInfo on the reverse connection" || bad "listen: $(cat "$WORK/listen.out" "$WORK/listen.err")"
wait_file "$WORK/susp/ready" 20 && ok "suspended program runs after resume" || bad "suspended program never ran"

# startup hook: runtime suspended on its default port, hook applied, resumed
start_target "$WORK/hook" DOTNET_DefaultDiagnosticPortSuspend=1 "RTDIAG_HOOK_OUT=$WORK/hook/ran"
HP=$TPID
for i in $(seq 100); do ls /tmp/dotnet-diagnostic-$HP-* >/dev/null 2>&1 && break; sleep 0.1; done
sleep 0.2
[ -e "$WORK/hook/ready" ] && bad "suspended target ran Main early"
"$R" dotnet startup-hook -p "$HP" "$HOOK_DIR/dotnet-hook.dll" 2>"$WORK/hook.err" && ok "startup-hook accepted" || bad "startup-hook: $(cat "$WORK/hook.err")"
"$R" dotnet resume -p "$HP" || bad "resume"
wait_file "$WORK/hook/ran" 20 && grep -q "hook ran in $HP" "$WORK/hook/ran" && ok "startup hook code ran" || bad "hook did not run: $(cat "$WORK/hook/stderr")"
wait_file "$WORK/hook/ready" 20 && ok "hooked program runs" || bad "hooked program"

for d in a susp hook; do touch "$WORK/$d/stop"; done
[ $fail = 0 ] || { echo "$fail failed"; exit 1; }
echo "dotnet cli: all passed"
