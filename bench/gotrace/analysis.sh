#!/usr/bin/env bash
# bench/gotrace/analysis.sh - rtdiag's trace analyses against Go 1.23's
# 'go tool trace -pprof=TYPE', side by side in one run.
#
# Usage: bench/gotrace/analysis.sh [BUILD_DIR] [ANCHOR_MB] [BIG_MB]
#
# Makes two Go 1.23 traces with bench/gotrace/gen (built with Go 1.23,
# several generations): ANCHOR_MB (default 100; Go needs about 100 times
# a trace's size in memory, so this is about the largest it completes on
# a 24 GB machine) and BIG_MB (default 1024). On the anchor it times
# (wall, user+sys CPU, peak RSS, each the best of REPS=3 runs for rtdiag,
# one run for Go) every -pprof type for both tools, and rtdiag's
# goroutines, gc and tasks, and prints the ratios; on the big trace it
# runs every rtdiag analysis (peak RSS: bounded, not growing with the
# trace) and Go's -pprof=sync under a memory limit (GO_MEM_GB, default
# 10, so it cannot take the machine down), reporting its time and its
# failure or result (SKIP_BIG=1: not). Each -pprof type is also timed with
# --threads 1 and 2 against the same Go run. Run it under the bench lock:
#   flock /work/locks/bench.lock bench/gotrace/analysis.sh build
set -u
B=${1:-build}
AMB=${2:-100}
BMB=${3:-1024}
REPS=${REPS:-3}
GO_MEM_GB=${GO_MEM_GB:-10}
R=$B/rtdiag
GO=/usr/lib/go-1.23/bin/go
[ -x "$R" ] || { echo "no $R: build first"; exit 1; }
[ -x "$GO" ] || { echo "Go 1.23 ($GO) is not installed: nothing to compare with"; exit 1; }
W=${BENCH_DIR:-$B/bench-gotrace}
mkdir -p "$W"
export GOCACHE="$W/gocache" GOPATH="$W/gopath" GOTOOLCHAIN=local GOPROXY=off GOFLAGS=
here=$(cd "$(dirname "$0")" && pwd)
mk() { # FILE MB
  if [ ! -s "$1" ] || [ "$(stat -L -c %s "$1")" -lt $(($2 << 20)) ]; then
    [ -x "$W/gen123" ] || (cd "$here/gen" && "$GO" build -o "$W/gen123" main.go) || exit 1
    echo "making a $2 MB Go 1.23 trace ($1)..."
    "$W/gen123" "$1" "$2" || exit 1
  fi
}
A=$W/anchor123.trace
BIG=$W/big1g123.trace
mk "$A" "$AMB"
[ "${SKIP_BIG:-0}" = 1 ] || mk "$BIG" "$BMB"

# one OUT CMD...: "wall user+sys peakKB rc" of one run
one() {
  local out=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$W/time" "$@" >"$out" 2>"$W/stderr"
  local rc=$?
  read -r e u s m < <(tail -1 "$W/time") # after "Command exited with..."
  echo "$e $(echo "$u + $s" | bc) $m $rc"
}
# best OUT CMD...: the best wall of REPS runs, with that run's CPU and RSS
best() {
  local out=$1 b="" x; shift
  for _ in $(seq "$REPS"); do
    x=$(one "$out" "$@")
    if [ -z "$b" ] || [ "$(echo "${x%% *} < ${b%% *}" | bc)" = 1 ]; then b=$x; fi
  done
  echo "$b"
}
info() { "$R" gotrace stats "$1" | awk '/^size:/{s=$2} /^events:/{e=$2} /^generations:/{g=$2} END{printf "%.1f MB, %d events, %d generations", s/1048576, e, g}'; }
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the start (other work may share it)"
echo "rtdiag: best of $REPS runs; Go: one run. Times: wall s / CPU (user+sys) s; RSS: peak MB"
echo
echo "== anchor: $(basename "$A"): $(info "$A")"
printf "  %-34s %18s %18s %10s %10s %8s %8s\n" "" "rtdiag wall/CPU" "go 1.23 wall/CPU" "rtdiag MB" "go MB" "wall x" "CPU x"
for t in net sync syscall sched; do
  read -r rw rc rm rrc < <(best "$W/r_$t.pb.gz" "$R" gotrace pprof -t "$t" -o "$W/r_$t.pb.gz" "$A")
  read -r gw gc gm grc < <(one "$W/g_$t.pb" "$GO" tool trace -pprof="$t" "$A")
  if [ "$grc" != 0 ]; then
    printf "  pprof %-28s %8s/%-9s %18s %10s\n" "$t" "$rw" "$rc" "go failed (rc $grc)" "$((rm / 1024))"
    continue
  fi
  printf "  pprof %-28s %8s/%-9s %8s/%-9s %10s %10s %7.1fx %7.1fx\n" "$t" "$rw" "$rc" "$gw" "$gc" \
    "$((rm / 1024))" "$((gm / 1024))" "$(echo "$gw / $rw" | bc -l)" "$(echo "$gc / $rc" | bc -l)"
  # the default takes a second thread only when the load average leaves
  # a core idle (it may not, right after Go's run): both, against the
  # same Go run
  for th in 1 2; do
    read -r tw tc tm _ < <(best /dev/null "$R" gotrace pprof -t "$t" -f raw --threads "$th" "$A")
    printf "  pprof %-28s %8s/%-9s %18s %10s %10s %7.1fx %7.1fx\n" "$t --threads $th" "$tw" "$tc" "(the same Go run)" \
      "$((tm / 1024))" "" "$(echo "$gw / $tw" | bc -l)" "$(echo "$gc / $tc" | bc -l)"
  done
  # the same profile (go tool pprof -raw, function stacks and delay)
  if [ -x "$here/../../tests/integration/goanalysis/pprof_cmp.py" ] || [ -f "$here/../../tests/integration/goanalysis/pprof_cmp.py" ]; then
    "$GO" tool pprof -raw "$W/g_$t.pb" >"$W/g_$t.raw" 2>/dev/null
    "$R" gotrace pprof -t "$t" -f raw "$A" >"$W/r_$t.raw"
    echo "      same as Go's: $(python3 "$here/../../tests/integration/goanalysis/pprof_cmp.py" "$W/g_$t.raw" "$W/r_$t.raw" | tail -1)"
  fi
done
for c in "goroutines --json" "gc --summary" "tasks --json"; do
  read -r rw rc rm rrc < <(best /dev/null "$R" gotrace $c "$A")
  printf "  %-40s %8s/%-9s %29s\n" "$c" "$rw" "$rc" "$((rm / 1024))"
done
for c in "pprof -t sync -f raw" "goroutines --json"; do
  read -r tw tc tm _ < <(best /dev/null "$R" gotrace $c --threads 1 "$A")
  printf "  %-40s %8s/%-9s %29s\n" "$c --threads 1" "$tw" "$tc" "$((tm / 1024))"
done
read -r cw cc cm _ < <(best /dev/null "$R" gotrace cat --ordered "$A")
read -r sw sc sm _ < <(best /dev/null "$R" gotrace stats "$A")
echo "  (rtdiag's ordered decoding alone, cat --ordered > /dev/null: ${cw}/${cc} s; raw decoding, stats: ${sw}/${sc} s)"
echo
if [ "${SKIP_BIG:-0}" = 1 ]; then echo "(SKIP_BIG=1: the big trace not run)"; exit 0; fi
echo "== big: $(basename "$BIG"): $(info "$BIG")"
for c in "pprof -t sync -f raw" "pprof -t sched -f raw" "goroutines --json" "gc --summary" "tasks --json"; do
  read -r rw rc rm rrc < <(one /dev/null "$R" gotrace $c "$BIG")
  printf "  rtdiag %-36s %8s s wall %8s s CPU  RSS %5s MB  rc %s\n" "$c" "$rw" "$rc" "$((rm / 1024))" "$rrc"
done
echo "  go tool trace -pprof=sync (Go 1.23), address space limited to $GO_MEM_GB GB:"
read -r gw gc gm grc < <(one "$W/g_big.pb" bash -c "ulimit -v $((GO_MEM_GB << 20)); exec $GO tool trace -pprof=sync $BIG")
if [ "$grc" = 0 ]; then
  echo "    completed: ${gw} s wall, ${gc} s CPU, RSS $((gm / 1024)) MB"
else
  echo "    failed after ${gw} s wall (${gc} s CPU, RSS $((gm / 1024)) MB): $(grep -m1 -E 'fatal|out of memory|error' "$W/stderr" | cut -c1-120)"
fi
echo "machine load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
