#!/usr/bin/env bash
# warm_up.sh go|dotnet - the CMake test fixtures go_targets and
# dotnet_targets: build every Go / .NET program the integration tests run,
# before those tests start, so that no test's own time bound includes a
# cold compile (a fresh machine's Go standard library, a first NuGet
# restore: minutes on a loaded 2-core box). The tests still call
# go_build.sh / build.sh, which then find the program built. A build that
# fails here is only noted: the test that needs the program builds it
# again and reports the failure as its own.
set -u
SRC=${RTD_SOURCE_DIR:?}
kind=$1
t0=$(date +%s)
failed=0
note() { echo "note: $*"; }
case $kind in
go)
  for v in 1.19 1.22 1.23; do
    [ -x /usr/lib/go-$v/bin/go ] || { note "Go $v not installed: its programs are not built"; continue; }
    for d in tests/targets/go-analysis tests/targets/gotrace-workload tests/targets/perf-go tests/targets/go-record; do
      bash "$SRC/tests/targets/go_build.sh" "$v" "$d" >/dev/null || { note "go$v: $d did not build"; failed=1; }
    done
    bash "$SRC/tests/targets/go_build.sh" "$v" tests/targets/perf-go perf-go-s -ldflags=-s >/dev/null ||
      { note "go$v: perf-go -ldflags=-s did not build"; failed=1; }
  done
  if [ -x /usr/lib/go-1.23/bin/go ]; then
    bash "$SRC/tests/targets/go_build.sh" 1.23 tests/integration/pictures/gen >/dev/null ||
      { note "go1.23: pictures/gen did not build"; failed=1; }
    bash "$SRC/tests/targets/go_build.sh" 1.23 tests/targets/go-pprof-server >/dev/null ||
      { note "go1.23: go-pprof-server did not build"; failed=1; }
    bash "$SRC/tests/targets/go_build.sh" 1.23 tests/targets/go-record >/dev/null ||
      { note "go1.23: go-record did not build"; failed=1; }
  fi
  ;;
dotnet)
  command -v dotnet >/dev/null 2>&1 || { note "no dotnet SDK on PATH: nothing to build"; exit 0; }
  b() { bash "$SRC/tests/integration/dotnet/build.sh" "$@" >/dev/null || { note "dotnet build of $1 ($*) failed"; failed=1; }; }
  for n in dotnet-target dotnet-kinds dotnet-hook dotnet-wait perf-dotnet clrmd-heap dotnet-exit dotnet-record dotnet-activity dotnet-flight gcdump-graph; do
    b "$n" tests/targets
  done
  b nettrace-app tests/targets
  b traceevent tests te-dump # NuGet Microsoft.Diagnostics.Tracing.TraceEvent
  # needs a .NET 8 runtime pack from NuGet: the test skips that part when it cannot be had
  b dotnet-wait tests/targets dotnet-wait-net8 -r linux-x64 --self-contained -p:WaitTfm=net8.0
  ;;
*) echo "usage: warm_up.sh go|dotnet" >&2; exit 2 ;;
esac
note "$kind programs ready in $(( $(date +%s) - t0 )) s$([ $failed = 0 ] || echo ' (some builds failed: see above; their tests report it)')"
exit 0
