# ep_record.sh - sourced: ep_record OUT CONFIG CMD [ARGS...] runs a .NET
# program with the runtime's own EventPipe file session (DOTNET_EnableEventPipe,
# DOTNET_EventPipeOutputPath=OUT, DOTNET_EventPipeConfig=CONFIG).
#
# With every runtime keyword and the private provider on, the runtime
# itself can hang: seen twice in trains here (15:36 and 20:30), the trace
# stopping at a GC/SuspendEEStart (SuspendOther) with no SuspendEEStop
# while LoaderHeap/AllocRequest events were being written, and the program
# never exiting (a test ran into ctest's 900 s limit). That is the traced
# runtime's, not the decoder's: such a run is stopped once its trace has
# not grown for EP_STALL seconds (60; a running session writes every
# second or so, however loaded the machine: a fixed 60 s for the whole run
# could kill runs that were only slow), said so with the last events the trace
# holds, and tried again, up to 3 times. Returns the program's exit code,
# or 124 when every try hung.
ep_record() {
  local out=$1 config=$2 try rc=124 pid size last still
  shift 2
  for try in 1 2 3; do
    rm -f "$out"
    DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath=$out DOTNET_EventPipeConfig=$config \
      "$@" >/dev/null &
    pid=$!
    last=-1 still=0
    while kill -0 $pid 2>/dev/null; do
      size=$(stat -c %s "$out" 2>/dev/null || echo 0)
      if [ "$size" = "$last" ]; then still=$((still + 1)); else still=0 last=$size; fi
      [ $still -ge "${EP_STALL:-60}" ] && { kill -9 $pid; break; }
      sleep 1
    done
    wait $pid
    rc=$?
    [ $still -ge "${EP_STALL:-60}" ] || return $rc
    echo "note: $(basename "$1") with EventPipe on hung (try $try: its trace did not grow for ${EP_STALL:-60} s); the trace's last events:" \
      "$("${R:?}" nettrace cat "$out" 2>/dev/null | tail -2 | cut -c1-140 | tr '\n' '|')"
    rc=124
  done
  return $rc
}
