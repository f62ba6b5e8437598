#!/usr/bin/env bash
# bench/gotrace/run.sh - rtdiag's Go trace decoder against Go 1.19's own
# parser ('go tool trace -d'), side by side in one run.
#
# Usage: [REPS=3] [BENCH_DIR=DIR] bench/gotrace/run.sh [BUILD_DIR] [MEGABYTES]
# (a BENCH_DIR on tmpfs, e.g. /dev/shm/x, keeps the outputs - 1.7 GB of
# text each for a 100 MB trace - off the disk)
# Makes a Go 1.19 trace of MEGABYTES (default 100) with bench/gotrace/gen
# (goroutines, channels, mutex, syscalls, tasks, regions, logs), then
# times and measures peak RSS of:
#   rtdiag gotrace stats            (raw mode, no output formatting)
#   rtdiag gotrace cat              (raw mode, text out)
#   rtdiag gotrace cat --ordered --format go-debug
#                                   (decoding on a second thread, and again
#                                   on one thread: RTDIAG_THREADS=1)
#   go tool trace -d                (Go 1.19: parse + validate + print; its
#                                   collector runs on the second core)
# on that trace and on the largest test vectors, checks the go-debug output
# equals Go's, and prints MB/s, events/s and the ratios.
set -u
B=${1:-build}
MB=${2:-100}
R=$B/rtdiag
GO=/usr/lib/go-1.19/bin/go
[ -x "$R" ] || { echo "no $R: build first"; exit 1; }
[ -x "$GO" ] || { echo "Go 1.19 ($GO) is not installed: nothing to compare with"; exit 1; }
W=${BENCH_DIR:-$B/bench-gotrace}
mkdir -p "$W"
export GOCACHE="$W/gocache" GOPATH="$W/gopath" GOTOOLCHAIN=local GOPROXY=off GOFLAGS=
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -s "$W/big.trace" ] || [ "$(stat -L -c %s "$W/big.trace")" -lt $((MB << 20)) ]; then
  (cd "$here/gen" && "$GO" build -o "$W/gen" main.go) || exit 1
  echo "making a ${MB} MB Go 1.19 trace..."
  "$W/gen" "$W/big.trace" "$MB" || exit 1
fi
# This VM's speed varies from run to run (the same command took 0.85 to
# 1.6 s back to back), so every command runs REPS times (default 3) and the
# best CPU and wall times count, for rtdiag and Go alike.
REPS=${REPS:-3}
# run OUTFILE CMD... -> "seconds(user+sys) peakKB rc wallseconds"
# A small file takes a few ms: it runs LOOPS times in a row (timed as one)
# and the times are divided by LOOPS.
LOOPS=1
loop() { # N OUT CMD...
  local n=$1 out=$2 i
  shift 2
  for ((i = 0; i < n; i++)); do "$@" >"$out" || return $?; done
}
export -f loop
run() {
  local out=$1; shift
  local best="" bestw="" maxm=0 rc=0 i
  for ((i = 0; i < REPS; i++)); do
    /usr/bin/time -f "%U %S %M %e" -o "$W/time" bash -c 'loop "$@"' _ "$LOOPS" "$out" "$@" 2>"$W/stderr"
    rc=$?
    read -r u s m e <"$W/time"
    local t
    t=$(echo "scale=4; ($u + $s) / $LOOPS" | bc)
    e=$(echo "scale=4; $e / $LOOPS" | bc)
    [ "$(echo "$t < 0.001" | bc)" = 1 ] && t=0.001 # below the clock's resolution
    [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ] && best=$t
    [ -z "$bestw" ] || [ "$(echo "$e < $bestw" | bc)" = 1 ] && bestw=$e
    [ "$m" -gt "$maxm" ] && maxm=$m
  done
  echo "$best $maxm $rc $bestw"
}
report() { # file
  local f=$1 size events
  size=$(stat -L -c %s "$f")
  events=$("$R" gotrace stats "$f" | awk '/^events:/{print $2}')
  LOOPS=1
  [ "$size" -lt $((5 << 20)) ] && LOOPS=20
  echo "== $(basename "$f"): $(echo "scale=1; $size/1048576" | bc) MB, $events events$([ "$LOOPS" -gt 1 ] && echo " (each command run $LOOPS times in a row, times per run)")"
  read -r ts tm trc < <(run /dev/null "$R" gotrace stats "$f")
  read -r tc cm crc < <(run /dev/null "$R" gotrace cat "$f")
  read -r to om orc wo < <(run "$W/me.txt" "$R" gotrace cat --ordered --format go-debug "$f")
  read -r t1 m1 rc1 w1 < <(run "$W/me1.txt" env RTDIAG_THREADS=1 "$R" gotrace cat --ordered --format go-debug "$f")
  # from a pipe the ordered decoder keeps its input (no source to read again)
  read -r tp pm prc < <(run /dev/null sh -c "cat '$f' | '$R' gotrace cat --ordered --format go-debug -")
  read -r tg gm grc wg < <(run "$W/go.txt" "$GO" tool trace -d "$f")
  printf "  %-44s %8s s  %8s MB/s  %10s ev/s  RSS %7s MB\n" "rtdiag stats (raw decode)" "$ts" \
    "$(echo "scale=1; $size/1048576/$ts" | bc)" "$(echo "$events/$ts" | bc)" "$((tm / 1024))"
  printf "  %-44s %8s s  %8s MB/s  %10s ev/s  RSS %7s MB\n" "rtdiag cat (raw, text out)" "$tc" \
    "$(echo "scale=1; $size/1048576/$tc" | bc)" "$(echo "$events/$tc" | bc)" "$((cm / 1024))"
  printf "  %-44s %8s s  %8s MB/s  %10s ev/s  RSS %7s MB  wall %s s\n" "rtdiag cat --ordered --format go-debug" "$to" \
    "$(echo "scale=1; $size/1048576/$wo" | bc)" "$(echo "$events/$wo" | bc)" "$((om / 1024))" "$wo"
  printf "  %-44s %8s s  %8s MB/s  %10s ev/s  RSS %7s MB  wall %s s\n" "  the same on one thread (RTDIAG_THREADS=1)" "$t1" \
    "$(echo "scale=1; $size/1048576/$w1" | bc)" "$(echo "$events/$w1" | bc)" "$((m1 / 1024))" "$w1"
  printf "  %-44s %8s s  %8s MB/s  %10s ev/s  RSS %7s MB\n" "  the same from a pipe (input kept)" "$tp" \
    "$(echo "scale=1; $size/1048576/$tp" | bc)" "$(echo "$events/$tp" | bc)" "$((pm / 1024))"
  printf "  %-44s %8s s  %8s MB/s  %10s ev/s  RSS %7s MB  wall %s s\n" "go tool trace -d (Go 1.19)" "$tg" \
    "$(echo "scale=1; $size/1048576/$wg" | bc)" "$(echo "$events/$wg" | bc)" "$((gm / 1024))" "$wg"
  echo "  speed vs Go (wall clock): ordered go-debug $(echo "scale=1; $wg/$wo" | bc)x (one thread: $(echo "scale=1; $wg/$w1" | bc)x)"
  echo "  speed vs Go (CPU time): ordered go-debug $(echo "scale=1; $tg/$to" | bc)x (one thread: $(echo "scale=1; $tg/$t1" | bc)x), raw decode $(echo "scale=1; $tg/$ts" | bc)x"
  echo "  peak RSS / input: ordered $(echo "scale=2; $om*1024/$size" | bc)x (from a pipe $(echo "scale=2; $pm*1024/$size" | bc)x), raw $(echo "scale=2; $tm*1024/$size" | bc)x, Go $(echo "scale=1; $gm*1024/$size" | bc)x"
  if [ "$grc" = 0 ] && [ "$orc" = 0 ]; then
    cmp -s "$W/me.txt" "$W/me1.txt" || echo "  ONE AND TWO THREADS DIFFER"
    if cmp -s "$W/go.txt" "$W/me.txt"; then echo "  go-debug output equals Go's, line for line"
    else echo "  go-debug output differs from Go's in $(diff "$W/go.txt" "$W/me.txt" | grep -c '^<') lines (ties of equal timestamps are ordered by Go's map walk)"; fi
  else echo "  exit codes: rtdiag $orc, go $grc"; fi
}
echo "(times are user+sys CPU seconds and wall seconds, each the best of $REPS runs; MB/s and ev/s by wall time for ordered cat and Go, by CPU time for the one-thread rest; peak RSS the largest)"
V1=${RTD_SHARED_DIR:-$here/../../../shared}/testdata/gotrace/v1
for f in "$V1/stress_1_7_good" "$V1/stress_1_11_good" "$V1/stress_1_19_good"; do
  [ -e "$f" ] && report "$f"
done
report "$W/big.trace"
