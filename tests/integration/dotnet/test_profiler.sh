#!/usr/bin/env bash
# CLR profilers loaded for real by a .NET 10 runtime, through rtdiag:
# tests/targets/dotnet-profiler/profiler.c (built here with cc) writes a
# line "ENTRY pid PID data CLIENTDATA" to $RTDIAG_PROFILER_OUT from
# Initialize, InitializeForAttach and ProfilerAttachComplete.
# (a) attach-profiler: InitializeForAttach runs in that pid with our client
#     data; a wrong CLSID and a second attach get the runtime's HRESULT, named;
#     StartupProfiler to a running (not suspended) runtime is refused.
# (b) listen --startup-profiler: a runtime started suspended through
#     DOTNET_DiagnosticPorts loads the profiler at startup (Initialize).
# (c) startup-profiler -p: the same on a runtime suspended on its default port.
. "$(dirname "$0")/lib.sh"
TARGET_DIR=$(build_dotnet dotnet-target tests/targets) || { echo "FAIL: build"; exit 1; }
CCX=$(command -v cc || command -v gcc || command -v clang) || skip "no C compiler to build the test profiler"
LIB="$WORK/librtdiag-testprof.so"
# no sanitizers: the library is loaded into the (uninstrumented) runtime
"$CCX" -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden \
  -o "$LIB" "$SRC/tests/targets/dotnet-profiler/profiler.c" || { echo "FAIL: profiler build"; exit 1; }
CLSID=8A1B5C0E-2D3F-4E6A-9B7C-1D2E3F4A5B6C

# wait_line FILE REGEX [SECONDS]: until FILE has a line matching REGEX
# (SECONDS: what it takes on a quiet machine; the bound is wait_until's)
wait_line() { wait_until grep -qE "$2" "$1"; }

# ---- (a) attach to a running runtime
M="$WORK/attach.marker"
start_target "$WORK/a" "RTDIAG_PROFILER_OUT=$M"
wait_file "$WORK/a/ready" || { bad "target did not start"; cat "$WORK/a/stderr"; exit 1; }
P=$TPID

out=$("$R" dotnet attach-profiler -p "$P" --clsid 11111111-2222-3333-4444-555555555555 \
      --path "$LIB" --timeout "${RTD_TEST_WAIT:-300}s" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "AttachProfiler failed.*HRESULT 0x80040111 CLASS_E_CLASSNOTAVAILABLE" <<<"$out" \
  && ok "attach with a CLSID the library does not serve: runtime error named" || bad "wrong clsid: $rc $out"
sleep 0.3
[ -e "$M" ] && bad "marker written although the CLSID was refused: $(cat "$M")"

# StartupProfiler to a runtime that was never suspended: .NET 10 answers OK
# (its "paused in startup" flag is only cleared by a resume), and the
# profiler never loads (checked below: no Initialize line); a later runtime
# may refuse with DS_IPC_E_INVALIDARG instead - either is fine here.
out=$("$R" dotnet startup-profiler -p "$P" --clsid "$CLSID" --path "$LIB" 2>&1); rc=$?
{ [ $rc = 0 ] || { [ $rc = 1 ] && grep -q "DS_IPC_E_INVALIDARG" <<<"$out"; }; } \
  && ok "startup-profiler to a never-suspended runtime: $([ $rc = 0 ] && echo accepted || echo refused)" \
  || bad "startup-profiler running: $rc $out"

DATA="rtdiag client data $P"
out=$("$R" dotnet attach-profiler -p "$P" --clsid "$CLSID" --path "$LIB" --data "$DATA" --timeout "${RTD_TEST_WAIT:-300}s" 2>&1); rc=$?
[ $rc = 0 ] && ok "attach-profiler accepted" || bad "attach-profiler: $rc $out"
wait_line "$M" "^InitializeForAttach " 10
grep -qx "InitializeForAttach pid $P data $DATA" "$M" \
  && ok "runtime loaded the library and called InitializeForAttach in pid $P with the client data" \
  || bad "InitializeForAttach marker: $(cat "$M" 2>&1)"
wait_line "$M" "^ProfilerAttachComplete pid $P " 10 \
  && ok "ProfilerAttachComplete called" || bad "no ProfilerAttachComplete: $(cat "$M" 2>&1)"
grep -q "^Initialize " "$M" && bad "Initialize (startup entry) ran on attach"

out=$("$R" dotnet attach-profiler -p "$P" --clsid "$CLSID" --path "$LIB" --timeout "${RTD_TEST_WAIT:-300}s" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "0x8013136a CORPROF_E_PROFILER_ALREADY_ACTIVE" <<<"$out" \
  && ok "second attach: runtime error named" || bad "second attach: $rc $out"
n=$(grep -c "^InitializeForAttach " "$M" 2>/dev/null)
[ "$n" = 1 ] || bad "InitializeForAttach ran ${n:-0} times, want 1"
touch "$WORK/a/stop"

# ---- (b) suspended start through DOTNET_DiagnosticPorts, StartupProfiler from listen
M="$WORK/listen.marker"
SOCK="$WORK/port.sock"
"$R" dotnet listen "$SOCK" --max-runtimes 1 --timeout "${RTD_TEST_WAIT:-300}" --startup-profiler "$CLSID,$LIB" \
  >"$WORK/listen.out" 2>"$WORK/listen.err" &
lp=$!
wait_until test -S "$SOCK"
start_target "$WORK/b" "DOTNET_DiagnosticPorts=$SOCK" "RTDIAG_PROFILER_OUT=$M"
BP=$TPID
wait $lp; rc=$?
[ $rc = 0 ] && grep -q "startup profiler $LIB" "$WORK/listen.err" \
  && ok "listen: StartupProfiler accepted on the reverse connection" \
  || bad "listen: $rc $(cat "$WORK/listen.out" "$WORK/listen.err")"
wait_file "$WORK/b/ready" 20 && ok "suspended program runs after resume" || bad "program never ran: $(cat "$WORK/b/stderr")"
wait_line "$M" "^Initialize " 10
grep -qx "Initialize pid $BP data -" "$M" \
  && ok "runtime loaded the startup profiler and called Initialize in pid $BP" \
  || bad "Initialize marker: $(cat "$M" 2>&1)"
touch "$WORK/b/stop"

out=$("$R" dotnet listen "$WORK/x.sock" --startup-profiler "$LIB" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "CLSID,PATH" <<<"$out" && ok "listen --startup-profiler without CLSID: usage" || bad "usage: $rc $out"

# ---- (c) suspended on the default port (DOTNET_DefaultDiagnosticPortSuspend=1)
M="$WORK/default.marker"
start_target "$WORK/c" DOTNET_DefaultDiagnosticPortSuspend=1 "RTDIAG_PROFILER_OUT=$M"
CP=$TPID
wait_until has_socket "$CP"
sleep 0.2
"$R" dotnet startup-profiler -p "$CP" --clsid "$CLSID" --path "$LIB" 2>"$WORK/c.err" \
  && ok "startup-profiler accepted" || bad "startup-profiler: $(cat "$WORK/c.err")"
[ -e "$M" ] && bad "profiler ran before resume"
"$R" dotnet resume -p "$CP" || bad "resume"
wait_line "$M" "^Initialize " 20
grep -qx "Initialize pid $CP data -" "$M" \
  && ok "startup-profiler: Initialize ran in pid $CP" || bad "default-port marker: $(cat "$M" 2>&1) $(cat "$WORK/c/stderr")"
wait_file "$WORK/c/ready" 20 && ok "profiled program runs" || bad "profiled program did not run"
out=$("$R" dotnet startup-profiler -p "$CP" --clsid "$CLSID" --path "$LIB" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "StartupProfiler failed.*DS_IPC_E_INVALIDARG" <<<"$out" \
  && ok "startup-profiler after resume: refused, named" || bad "startup-profiler after resume: $rc $out"
touch "$WORK/c/stop"

[ $fail = 0 ] || { echo "$fail failed"; exit 1; }
echo "dotnet profiler: all passed"
