#!/usr/bin/env bash
# `rtdiag nettrace cat --json` equals TraceEvent 4.0.0, field by field.
#
# tests/traceevent/te-dump (C#, NuGet Microsoft.Diagnostics.Tracing.TraceEvent
# 4.0.0: EventPipeEventSource with the Clr, ClrPrivate, ClrRundown,
# SampleProfiler, GCDynamic and Dynamic parsers) dumps every event of:
#   - two traces recorded here from tests/targets/nettrace-app (.NET 10):
#     the runtime keywords of test_dotnet.sh, and every runtime keyword
#     with the private provider, TraceLogging events, NaN and infinities,
#     TPL, contention, waits (nettrace-app all);
#   - the shared vectors (.NET Core 2.1 to 6, Windows and Linux).
# tests/traceevent/compare.py pairs every event 1:1 in time order (cat's
# default for a file) and compares names, ids, versions, opcodes, threads,
# processors, activity ids and every field TraceEvent shows. The places
# where TraceEvent is wrong or computes fields are listed there, each with
# its reason; anything else that differs fails the test.
set -u
R=${RTDIAG:?RTDIAG not set}
B=${RTD_BINARY_DIR:?}
S=${RTD_SOURCE_DIR:?}
V=${RTD_SHARED_DIR:-}/testdata/nettrace
if ! command -v dotnet >/dev/null 2>&1; then echo "SKIP: no dotnet SDK on PATH"; exit 77; fi
if ! command -v python3 >/dev/null 2>&1; then echo "SKIP: no python3"; exit 77; fi
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
# built once per build tree (dotnet/build.sh; the fixture dotnet_targets
# builds them before the tests run: a NuGet restore and two builds took
# minutes of this test's time on a loaded machine)
build_dotnet() { # NAME FROM [AS]: prints the output folder
  bash "$S/tests/integration/dotnet/build.sh" "$@" 2>/dev/null && return 0
  local log="$B/dotnet-targets/${3:-$1}.log"
  if grep -qiE 'NU1101|NU1102|NU1301|unable to load the service index|network' "$log"; then
    echo "SKIP: dotnet build needs packages this machine cannot fetch" >&2; tail -5 "$log" >&2; exit 77
  fi
  echo "FAIL: dotnet build of $1" >&2; tail -20 "$log" >&2; exit 1
}
TE=$(build_dotnet traceevent tests te-dump) || exit $?
NA=$(build_dotnet nettrace-app tests/targets) || exit $?

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$S/tests/integration/nettrace/ep_record.sh"
record() { # out config mode
  ep_record "$1" "$2" "$NA/nettrace-app" "$3" || { echo "FAIL: nettrace-app $3"; exit 1; }
}
record "$tmp/check.nettrace" 'Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:0x8019:5,Rtdiag-Test:0xFFFFFFFFFFFF:5' check
record "$tmp/all.nettrace" 'Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:0x7FFFFFFFBFFFFFFF:5,Microsoft-Windows-DotNETRuntimePrivate:0xFFFFFFFF:5,Rtdiag-Test:0xFFFFFFFFFFFF:5,Rtdiag-TL:0xFFFFFFFFFFFF:5,Rtdiag-Floats:0xFFFFFFFFFFFF:5,System.Threading.Tasks.TplEventSource:0xFFFFFFFFFFFF:5' all

traces=("$tmp/check.nettrace" "$tmp/all.nettrace")
if [ -d "$V" ]; then
  for f in "$V"/*.nettrace "$V"/*.netperf; do traces+=("$f"); done
else
  echo "note: $V missing: only the traces recorded here are compared"
fi
fail=0
for t in "${traces[@]}"; do
  b=$(basename "$t")
  "$TE/te-dump" --json "$t" >"$tmp/$b.te" || { echo "FAIL: te-dump $b"; fail=$((fail+1)); continue; }
  "$R" nettrace cat --json "$t" >"$tmp/$b.rt" || { echo "FAIL: rtdiag cat $b"; fail=$((fail+1)); continue; }
  np=; case $b in *.netperf) np=--netperf;; esac
  if python3 "$S/tests/traceevent/compare.py" --order $np "$tmp/$b.te" "$tmp/$b.rt" >"$tmp/$b.cmp"; then
    echo "ok: $b: $(head -1 "$tmp/$b.cmp")"
  else
    echo "FAIL: $b"; cat "$tmp/$b.cmp"; fail=$((fail+1))
  fi
done
# the recorded traces hold what the comparison is for
grep -q '"event":"YieldProcessorMeasurement"' "$tmp/all.nettrace.rt" || { echo "FAIL: no YieldProcessorMeasurement in the all-keywords trace"; fail=$((fail+1)); }
grep -q '"provider":"Rtdiag-TL"' "$tmp/all.nettrace.rt" || { echo "FAIL: no TraceLogging events"; fail=$((fail+1)); }
grep -q '"nan":"NaN","pinf":"Infinity","ninf":"-Infinity"' "$tmp/all.nettrace.rt" || { echo "FAIL: NaN/Infinity not as .NET's JSON"; fail=$((fail+1)); }
grep -q '"event":"GC/CommittedUsage"' "$tmp/all.nettrace.rt" || { echo "FAIL: GC dynamic event not decoded"; fail=$((fail+1)); }
if grep -q '"unparsed"\|"error"' "$tmp/all.nettrace.rt"; then
  echo "FAIL: bytes a schema does not describe:"; grep -m3 '"unparsed"\|"error"' "$tmp/all.nettrace.rt" | cut -c1-300; fail=$((fail+1))
fi
[ $fail = 0 ] || { echo "$fail failed"; exit 1; }
echo "nettrace vs TraceEvent: all passed"
