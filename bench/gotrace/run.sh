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
# Timing is hyperfine's (Debian's package): RUNS runs of each command
# (after WARMUP runs), no shell in between, its output written to a file
# on the bench directory (truncated at each run, as Go's is). Reported:
# the mean wall time with its standard deviation, the mean CPU time
# (user+sys), and the ratios of the means. This VM's speed varies from
# run to run (the same command took 0.85 to 1.6 s back to back), so few
# runs are not enough: small files run 30 times, the large trace REPS
# times (default 3). Peak RSS is measured in one more run with
# /usr/bin/time.
REPS=${REPS:-3}
command -v hyperfine >/dev/null || { echo "hyperfine is not installed (apt-get install hyperfine)"; exit 1; }
RUNS=$REPS WARMUP=0
# run OUTFILE CMD... -> "cpu_mean peakKB rc wall_mean wall_sd" (seconds)
run() {
  local out=$1; shift
  local rc=0 m
  /usr/bin/time -f "%M" -o "$W/time" "$@" >"$out" 2>"$W/stderr" || rc=$?
  m=$(tail -1 "$W/time")
  local q=()
  local a
  for a in "$@"; do q+=("$(printf '%q' "$a")"); done
  hyperfine -N --runs "$RUNS" --warmup "$WARMUP" --output="$out" -i \
    --export-json "$W/hf.json" "${q[*]}" >/dev/null 2>&1 || rc=1
  python3 - "$W/hf.json" "$m" "$rc" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print("%.4f %s %s %.4f %.4f" % (r["user"] + r["system"], sys.argv[2], sys.argv[3], r["mean"], r["stddev"]))
PY
}
report() { # file
  local f=$1 size events
  size=$(stat -L -c %s "$f")
  events=$("$R" gotrace stats "$f" | awk '/^events:/{print $2}')
  RUNS=$REPS WARMUP=0
  [ "$size" -lt $((5 << 20)) ] && RUNS=30 WARMUP=3
  echo "== $(basename "$f"): $(echo "scale=1; $size/1048576" | bc) MB, $events events (each command: mean of $RUNS runs)"
  read -r ts tm trc < <(run /dev/null "$R" gotrace stats "$f")
  read -r tc cm crc < <(run /dev/null "$R" gotrace cat "$f")
  read -r to om orc wo so < <(run "$W/me.txt" "$R" gotrace cat --ordered --format go-debug "$f")
  read -r t1 m1 rc1 w1 s1 < <(run "$W/me1.txt" env RTDIAG_THREADS=1 "$R" gotrace cat --ordered --format go-debug "$f")
  # from a pipe the ordered decoder keeps its input (no source to read again)
  read -r tp pm prc < <(run /dev/null sh -c "cat '$f' | '$R' gotrace cat --ordered --format go-debug -")
  read -r tg gm grc wg sg < <(run "$W/go.txt" "$GO" tool trace -d "$f")
  printf "  %-44s %8s s  %8s MB/s  %10s ev/s  RSS %7s MB\n" "rtdiag stats (raw decode)" "$ts" \
    "$(echo "scale=1; $size/1048576/$ts" | bc)" "$(echo "$events/$ts" | bc)" "$((tm / 1024))"
  printf "  %-44s %8s s  %8s MB/s  %10s ev/s  RSS %7s MB\n" "rtdiag cat (raw, text out)" "$tc" \
    "$(echo "scale=1; $size/1048576/$tc" | bc)" "$(echo "$events/$tc" | bc)" "$((cm / 1024))"
  printf "  %-44s %8s s  %8s MB/s  %10s ev/s  RSS %7s MB  wall %s s\n" "rtdiag cat --ordered --format go-debug" "$to" \
    "$(echo "scale=1; $size/1048576/$wo" | bc)" "$(echo "$events/$wo" | bc)" "$((om / 1024))" "$wo +- $so"
  printf "  %-44s %8s s  %8s MB/s  %10s ev/s  RSS %7s MB  wall %s s\n" "  the same on one thread (RTDIAG_THREADS=1)" "$t1" \
    "$(echo "scale=1; $size/1048576/$w1" | bc)" "$(echo "$events/$w1" | bc)" "$((m1 / 1024))" "$w1 +- $s1"
  printf "  %-44s %8s s  %8s MB/s  %10s ev/s  RSS %7s MB\n" "  the same from a pipe (input kept)" "$tp" \
    "$(echo "scale=1; $size/1048576/$tp" | bc)" "$(echo "$events/$tp" | bc)" "$((pm / 1024))"
  printf "  %-44s %8s s  %8s MB/s  %10s ev/s  RSS %7s MB  wall %s s\n" "go tool trace -d (Go 1.19)" "$tg" \
    "$(echo "scale=1; $size/1048576/$wg" | bc)" "$(echo "$events/$wg" | bc)" "$((gm / 1024))" "$wg +- $sg"
  echo "  speed vs Go (wall clock): ordered go-debug $(echo "scale=1; $wg/$wo" | bc)x (one thread: $(echo "scale=1; $wg/$w1" | bc)x)"
  echo "  speed vs Go (CPU time): ordered go-debug $(echo "scale=1; $tg/$to" | bc)x (one thread: $(echo "scale=1; $tg/$t1" | bc)x), raw decode $(echo "scale=1; $tg/$ts" | bc)x"
  echo "  peak RSS / input: ordered $(echo "scale=2; $om*1024/$size" | bc)x (above rtdiag's baseline $(echo "scale=2; ($om-$base)*1024/$size" | bc)x) (from a pipe $(echo "scale=2; $pm*1024/$size" | bc)x), raw $(echo "scale=2; $tm*1024/$size" | bc)x, Go $(echo "scale=1; $gm*1024/$size" | bc)x"
  if [ "$grc" = 0 ] && [ "$orc" = 0 ]; then
    cmp -s "$W/me.txt" "$W/me1.txt" || echo "  ONE AND TWO THREADS DIFFER"
    if cmp -s "$W/go.txt" "$W/me.txt"; then echo "  go-debug output equals Go's, line for line"
    else echo "  go-debug output differs from Go's in $(diff "$W/go.txt" "$W/me.txt" | grep -c '^<') lines (ties of equal timestamps are ordered by Go's map walk)"; fi
  else echo "  exit codes: rtdiag $orc, go $grc"; fi
}
base=$(/usr/bin/time -f %M "$R" --version 2>&1 >/dev/null | tail -1)
echo "(times: mean CPU seconds (user+sys) and mean wall seconds +- standard deviation, by hyperfine; MB/s and ev/s by wall time for ordered cat and Go, by CPU time for the rest; peak RSS of one run; rtdiag's baseline RSS ('rtdiag --version') is $(echo "scale=1; $base/1024" | bc) MB)"
V1=${RTD_SHARED_DIR:-$here/../../../shared}/testdata/gotrace/v1
for f in "$V1/stress_1_7_good" "$V1/stress_1_11_good" "$V1/stress_1_19_good"; do
  [ -e "$f" ] && report "$f"
done
report "$W/big.trace"
