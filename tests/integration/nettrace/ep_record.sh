# ep_record.sh - sourced: ep_record OUT CONFIG CMD [ARGS...] runs a .NET
# program with the runtime's own EventPipe file session (DOTNET_EnableEventPipe,
# DOTNET_EventPipeOutputPath=OUT, DOTNET_EventPipeConfig=CONFIG).
#
# With every runtime keyword and the private provider on, the runtime
# itself can hang: seen twice in trains here (15:36 and 20:30), the trace
# stopping at a GC/SuspendEEStart (SuspendOther) with no SuspendEEStop
# while LoaderHeap/AllocRequest events were being written, and the program
# never exiting (a test ran into ctest's 900 s limit). That is the traced
# runtime's, not the decoder's: such a run is stopped after EP_TIMEOUT
# seconds (60), said so with the last events the trace holds, and tried
# again, up to 3 times. Returns the program's exit code, or 124 when every
# try hung.
ep_record() {
  local out=$1 config=$2 try rc=124
  shift 2
  for try in 1 2 3; do
    rm -f "$out"
    DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath=$out DOTNET_EventPipeConfig=$config \
      timeout -k 5 "${EP_TIMEOUT:-60}" "$@" >/dev/null
    rc=$?
    [ $rc = 124 ] || [ $rc = 137 ] || return $rc
    echo "note: $(basename "$1") with EventPipe on hung (try $try, stopped after ${EP_TIMEOUT:-60} s); the trace's last events:" \
      "$("${R:?}" nettrace cat "$out" 2>/dev/null | tail -2 | cut -c1-140 | tr '\n' '|')"
    rc=124
  done
  return $rc
}
