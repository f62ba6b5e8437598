#!/usr/bin/env bash
# bench/nettrace: rtdiag nettrace cat (JSON and text) and stats against
# TraceEvent 4.0.0 in one run, on an all-keywords trace of about 87 MB
# recorded here (tests/targets/nettrace-app all: every runtime keyword, the
# private and rundown providers, SampleProfiler, TraceLogging, TPL).
#
#   rtdiag nettrace stats FILE           vs  te-dump --count FILE (TraceEvent's parse)
#   rtdiag nettrace cat --json FILE      vs  te-dump --json FILE (TraceEvent + System.Text.Json)
#   rtdiag nettrace cat FILE (text)      vs  te-dump --json FILE
#
# te-dump is tests/traceevent (the same program the comparison test uses).
# Each tool runs REPS times (default 5); the best wall and CPU time (perf's
# task-clock, else user+sys) and the peak RSS are kept. Prints events/s on
# CPU time and the ratios. Output goes to /dev/null for every tool.
#
# Then the same on a real recording (NT_REAL=FILE, else one is made: the C#
# compiler of `dotnet build` of tests/targets/dotnet-target, ReadyToRun
# off so the compiler's methods are JIT-compiled, recorded with EventPipe's
# output path and the rundown provider; its largest trace, ~12 MB, 47 k
# events, a third of them rundown MethodDCStopVerbose). On both traces
# the tools then run A/B interleaved (ab_trace below: medians, ranges and
# the load; with OLD=RTDIAG the old binary too), and MB/s of JSON written.
# Usage: bench/nettrace/run.sh [BUILD_DIR]   (env NT_BENCH_ROUNDS, REPS,
#        NT_REAL, OLD, AB_RUNS)
set -u
B=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
out=$src/bench/out/nettrace
mkdir -p "$out"
R=$B/rtdiag
[ -x "$R" ] || { echo "no $R: build first"; exit 1; }
command -v dotnet >/dev/null || { echo "SKIP: no dotnet"; exit 0; }
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
REPS=${REPS:-5}
ROUNDS=${NT_BENCH_ROUNDS:-450}
T=$out/all-keywords.nettrace
build() { # src-dir csproj out-dir
  mkdir -p "$3.src"; cp "$1"/*.cs "$1/$2" "$3.src/"
  dotnet build "$3.src/$2" -c Release -o "$3" >"$3.log" 2>&1 || { echo "could not build $2:"; tail -5 "$3.log"; return 1; }
}
if [ ! -s "$T" ]; then
  echo "building the test program and recording an all-keywords trace ($ROUNDS rounds)..."
  build "$src/tests/targets/nettrace-app" nettrace-app.csproj "$out/app" || exit 1
  DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath=$T \
  DOTNET_EventPipeConfig='Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:0x7FFFFFFFBFFFFFFF:5,Microsoft-Windows-DotNETRuntimePrivate:0xFFFFFFFF:5,Microsoft-Windows-DotNETRuntimeRundown:0xFFFFFFFF:5,Rtdiag-Test:0xFFFFFFFFFFFF:5,Rtdiag-TL:0xFFFFFFFFFFFF:5,Rtdiag-Floats:0xFFFFFFFFFFFF:5,System.Threading.Tasks.TplEventSource:0xFFFFFFFFFFFF:5' \
    "$out/app/nettrace-app" all "$ROUNDS" >/dev/null || exit 1
fi
[ -x "$out/te/te-dump" ] || build "$src/tests/traceevent" te-dump.csproj "$out/te" || exit 1
have_perf=0
perf stat -x, -e task-clock true >/dev/null 2>&1 && have_perf=1
bench_trace() { # TRACE
T=$1
size=$(stat -c %s "$T")
events=$("$R" nettrace stats "$T" | awk -F': ' '/^events:/ {print $2}')
echo "trace: $T ($(awk -v s="$size" 'BEGIN{printf "%.1f", s/1e6}') MB, $events events)"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

cat "$T" >/dev/null # warm the page cache
measure() { # tool...  -> bw bc rss
  bw=999999; bc=999999; rss=0
  for _ in $(seq "$REPS"); do
    /usr/bin/time -f "%e %M %U %S" -o "$out/time" "$@" >/dev/null 2>"$out/stderr" || { echo "failed: $*"; cat "$out/stderr"; exit 1; }
    read -r w r u s <"$out/time"
    c=$(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}')
    if [ $have_perf = 1 ]; then
      perf stat -x, -e task-clock -o "$out/perf" "$@" >/dev/null 2>&1
      c=$(awk -F, '/task-clock/ {print $1/1000}' "$out/perf")
    fi
    bw=$(awk -v a="$w" -v b="$bw" 'BEGIN{print (a<b)?a:b}')
    bc=$(awk -v a="$c" -v b="$bc" 'BEGIN{print (a<b)?a:b}')
    [ "$r" -gt "$rss" ] && rss=$r
  done
}
printf "%-34s %8s %8s %14s %10s\n" tool wall-s cpu-s "events/s(cpu)" "peak RSS"
row() { # name
  printf "%-34s %8.3f %8.3f %14.0f %8.1f MB\n" "$1" "$bw" "$bc" \
    "$(awk -v e="$events" -v t="$bc" 'BEGIN{print e/(t>0?t:1e-9)}')" "$(awk -v k="$rss" 'BEGIN{print k/1024}')"
}
declare -A C W
run() { # key name tool...
  local k=$1 n=$2; shift 2
  measure "$@"; C[$k]=$bc; W[$k]=$bw; row "$n"
}
run stats "rtdiag nettrace stats" "$R" nettrace stats "$T"
run json "rtdiag nettrace cat --json" "$R" nettrace cat --json "$T"
run jsons "rtdiag nettrace cat --json --stream" "$R" nettrace cat --json --stream "$T"
run text "rtdiag nettrace cat (text)" "$R" nettrace cat "$T"
run tec "TraceEvent parse (te-dump --count)" "$out/te/te-dump" --count "$T"
run tej "TraceEvent + JSON (te-dump --json)" "$out/te/te-dump" --json "$T"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1fx", a/(b>0?b:1e-9)}'; }
echo
echo "cat --json: $(ratio "${C[tej]}" "${C[json]}") TraceEvent+JSON's events/s on CPU time ($(ratio "${W[tej]}" "${W[json]}") wall), $(ratio "${C[tec]}" "${C[json]}") TraceEvent's bare parse"
echo "cat (text): $(ratio "${C[tej]}" "${C[text]}") TraceEvent+JSON on CPU time ($(ratio "${W[tej]}" "${W[text]}") wall)"
echo "stats:      $(ratio "${C[tec]}" "${C[stats]}") TraceEvent's parse on CPU time ($(ratio "${W[tec]}" "${W[stats]}") wall)"
awk -v e="$events" -v t="${C[json]}" 'BEGIN{printf "cat --json: %.2f M events/s on CPU time (goal >= 5)\n", e/t/1e6}'
awk -v e="$events" -v t="${C[text]}" 'BEGIN{printf "cat (text): %.2f M events/s on CPU time (goal >= 5)\n", e/t/1e6}'
}

# A/B interleaved on one trace (bench/abcpu.c: each round runs every
# command once, in turn; medians and ranges of user+sys CPU): cat(1) of
# the file, rtdiag's stats and cat --json (OLD's too with OLD=RTDIAG), and
# TraceEvent's parse and TraceEvent + System.Text.Json; then the ratios
# on the medians and MB/s of JSON written, with the load before and after.
ab_trace() { # TRACE
  local T=$1 json n=0 cmds=() keys=()
  cc -O2 -o "$out/abcpu" "$here/../abcpu.c" || exit 1
  json=$("$R" nettrace cat --json "$T" | wc -c)
  add() { keys+=("$1"); shift; cmds+=(-- "$@"); }
  add cat cat "$T"
  [ -n "${OLD:-}" ] && add ostats "$OLD" nettrace stats "$T"
  add stats "$R" nettrace stats "$T"
  [ -n "${OLD:-}" ] && add ojson "$OLD" nettrace cat --json "$T"
  add json "$R" nettrace cat --json "$T"
  add tec "$out/te/te-dump" --count "$T"
  add tej "$out/te/te-dump" --json "$T"
  echo
  echo "A/B interleaved on $(basename "$T") (${AB_RUNS:-11} rounds, CPU = user+sys; load $(cut -d' ' -f1-3 /proc/loadavg)):"
  "$out/abcpu" -n "${AB_RUNS:-11}" "${cmds[@]}" | tee "$out/ab.txt" || exit 1
  declare -A M
  for k in "${keys[@]}"; do
    n=$((n + 1))
    M[$k]=$(awk -v c="cmd$n" '$1 == c { sub(/ms/, "", $2); print $2 }' "$out/ab.txt")
  done
  r() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1fx", a/(b>0?b:1e-9)}'; }
  echo "cat --json: $(awk -v j="$json" -v t="${M[json]}" 'BEGIN{printf "%.0f MB/s of JSON (%d bytes)", j/(t/1000)/1e6, j}') on median CPU (goal >= 1000), $(r "${M[tej]}" "${M[json]}") TraceEvent + JSON (goal >= 30x)"
  [ -n "${OLD:-}" ] && echo "            old: $(awk -v j="$json" -v t="${M[ojson]}" 'BEGIN{printf "%.0f MB/s", j/(t/1000)/1e6}'), $(r "${M[tej]}" "${M[ojson]}") TraceEvent + JSON; new/old CPU $(r "${M[json]}" "${M[ojson]}")"
  echo "stats:      $(r "${M[stats]}" "${M[cat]}") cat's CPU (goal <= 2x), $(r "${M[tec]}" "${M[stats]}") TraceEvent's parse (goal >= 30x)"
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
}

bench_trace "$T"
ab_trace "$T"

# ---- a real recording --------------------------------------------------------
RT=${NT_REAL:-$out/real-csc.nettrace}
if [ ! -s "$RT" ]; then
  echo
  echo "recording a real trace: the C# compiler building tests/targets/dotnet-target..."
  rm -rf "$out/real" && mkdir -p "$out/real/proj"
  cp "$src"/tests/targets/dotnet-target/*.cs "$src"/tests/targets/dotnet-target/*.csproj "$out/real/proj/"
  export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_USE_MSBUILD_SERVER=0 DOTNET_CLI_DO_NOT_USE_MSBUILD_SERVER=1 UseSharedCompilation=false
  (cd "$out/real/proj" && dotnet restore >/dev/null 2>&1 &&
   DOTNET_ReadyToRun=0 DOTNET_TieredCompilation=0 DOTNET_EnableEventPipe=1 \
   DOTNET_EventPipeOutputPath="$out/real/trace-{pid}.nettrace" \
   DOTNET_EventPipeConfig='Microsoft-Windows-DotNETRuntime:0x4c14fccbd:4,Microsoft-Windows-DotNETRuntimeRundown:0xFFFFFFFF:5' \
   dotnet build --no-restore -c Release -o out >/dev/null 2>&1) || { echo "could not build the project"; exit 1; }
  big=$(ls -S "$out"/real/trace-*.nettrace 2>/dev/null | head -1)
  [ -s "$big" ] || { echo "no trace was written"; exit 1; }
  mv "$big" "$RT"
fi
echo
echo "== real recording"
bench_trace "$RT"
ab_trace "$RT"
