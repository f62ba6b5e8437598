#!/usr/bin/env bash
# EventPipe timelines are written in bounded memory: a real .NET 10 program
# (tests/targets/nettrace-app bench N: EventSource events as fast as it can,
# allocations that make GCs) records two traces with the runtime's own
# EventPipe file output, one about five times the other; each becomes a
# Perfetto and a Chrome JSON timeline, and peak RSS for the larger stays
# under 2x the smaller's (normal build). The smaller timeline is checked
# by protoc and tlcheck.py. The 1 GB run is in bench/pictures/run.sh.
set -u
R=${RTDIAG:?}; SRC=${RTD_SOURCE_DIR:?}; B=${RTD_BINARY_DIR:?}
command -v dotnet >/dev/null 2>&1 || { echo "SKIP: no dotnet SDK on PATH"; exit 77; }
[ -x /usr/bin/time ] || { echo "SKIP: /usr/bin/time not installed"; exit 77; }
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
src=$B/pictures-nettrace-app-src; app=$B/pictures-nettrace-app
mkdir -p "$src" "$B/dotnet-targets"
cp "$SRC"/tests/targets/nettrace-app/Program.cs "$SRC"/tests/targets/nettrace-app/nettrace-app.csproj "$src"/
# one dotnet build at a time in this build folder (as the dotnet tests do)
if ! out=$(flock -o "$B/dotnet-targets/.lock" dotnet build "$src/nettrace-app.csproj" -c Release -o "$app" 2>&1); then
  if grep -qiE 'NU1101|NU1301|unable to load the service index|network' <<<"$out"; then
    echo "SKIP: dotnet build needs packages this machine cannot fetch"; exit 77
  fi
  echo "FAIL: dotnet build"; echo "$out" | tail -20; exit 1
fi
W=$(mktemp -d /tmp/rtd-bounded-nt-XXXXXX)
trap 'rm -rf "$W"' EXIT
record() { # FILE EVENTS
  DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath=$1 \
  DOTNET_EventPipeConfig='Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:0x1:5,Rtdiag-Test:0xFFFFFFFFFFFF:5' \
    "$app/nettrace-app" bench "$2" >/dev/null && [ -s "$1" ]
}
record "$W/small.nettrace" 200000 || { echo "FAIL: recording the small trace"; exit 1; }
fails=0
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
if [ -n "${RTD_SANITIZED:-}" ]; then
  # under ASan peak RSS is the sanitizer's shadow memory
  echo "SKIP part: RSS not compared in the sanitizer build"
else
  record "$W/big.nettrace" 1000000 || { echo "FAIL: recording the big trace"; exit 1; }
  si=$(stat -c %s "$W/small.nettrace"); bi=$(stat -c %s "$W/big.nettrace")
  for fmt in perfetto chrome-json; do
    s=$(rss "$R" convert "$W/small.nettrace" -f $fmt -o "$W/out")
    b=$(rss "$R" convert "$W/big.nettrace" -f $fmt -o "$W/out")
    if [ "$bi" -ge $((4 * si)) ] && [ "$b" -lt $((2 * s)) ]; then
      echo "ok: nettrace -> $fmt: $((si / 1024)) KB trace -> peak RSS $s KB; $((bi / 1024)) KB trace -> $b KB"
    else
      echo "FAIL: nettrace -> $fmt: peak RSS $s KB for $si bytes, $b KB for $bi bytes"; fails=$((fails + 1))
    fi
  done
fi
P=${RTD_SHARED_DIR:-$SRC/../shared}/reference/perfetto
if command -v protoc >/dev/null && [ -f "$P/perfetto_trace.proto" ]; then
  "$R" convert "$W/small.nettrace" -o "$W/s.pftrace" &&
  protoc --proto_path="$P" --decode=perfetto.protos.Trace perfetto_trace.proto <"$W/s.pftrace" >"$W/s.txt" &&
  python3 "$SRC/tests/integration/pictures/tlcheck.py" perfetto "$W/s.txt" >"$W/s.sum" &&
  grep -q '"Tick": [1-9]' "$W/s.sum" && grep -q '"GC": [1-9]' "$W/s.sum" &&
    echo "ok: the .NET program's timeline: Tick events, GC slices; slices nest" ||
    { echo "FAIL: .NET timeline: $(cut -c1-300 "$W/s.sum" 2>/dev/null)"; fails=$((fails + 1)); }
fi
echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
[ $fails = 0 ]
