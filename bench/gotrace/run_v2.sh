#!/usr/bin/env bash
# bench/gotrace/run_v2.sh - rtdiag on the new Go trace format (Go 1.22+)
# against Go's own reader ('go tool trace -d=1' of Debian's Go 1.23),
# side by side in one run.
#
# Usage: bench/gotrace/run_v2.sh [BUILD_DIR] [MEGABYTES]
# Makes a Go 1.23 trace of MEGABYTES (default 100) with bench/gotrace/gen
# built by Go 1.23, then times (user+sys CPU) and measures peak RSS of:
#   rtdiag gotrace stats                     (raw decode)
#   rtdiag gotrace cat --ordered             (Go's order and validation)
#   go tool trace -d=1                       (Go 1.23: the same, printed)
#   rtdiag gotrace grep -v -e ... -o         (filtered rewrite, raw)
# and checks that rtdiag's ordered events (time, M, P, G, Syncs) equal
# Go's, in the same order.
set -u
B=${1:-build}
MB=${2:-100}
R=$B/rtdiag
GO=/usr/lib/go-1.23/bin/go
[ -x "$R" ] || { echo "no $R: build first"; exit 1; }
[ -x "$GO" ] || { echo "Go 1.23 ($GO) is not installed: nothing to compare with"; exit 1; }
W=${BENCH_DIR:-$B/bench-gotrace}
mkdir -p "$W"
export GOCACHE="$W/gocache" GOPATH="$W/gopath" GOTOOLCHAIN=local GOPROXY=off GOFLAGS=
here=$(cd "$(dirname "$0")" && pwd)
T=$W/big123.trace
if [ ! -s "$T" ] || [ "$(stat -L -c %s "$T")" -lt $((MB << 20)) ]; then
  (cd "$here/gen" && "$GO" build -o "$W/gen123" main.go) || exit 1
  echo "making a ${MB} MB Go 1.23 trace..."
  "$W/gen123" "$T" "$MB" || exit 1
fi
# run OUTFILE CMD... -> "seconds(user+sys) peakKB rc"
run() {
  local out=$1; shift
  /usr/bin/time -f "%U %S %M" -o "$W/time" "$@" >"$out" 2>"$W/stderr"
  local rc=$?
  read -r u s m <"$W/time"
  echo "$(echo "$u + $s" | bc) $m $rc"
}
size=$(stat -L -c %s "$T")
events=$("$R" gotrace stats "$T" | awk '/^events:/{print $2}')
gens=$("$R" gotrace stats "$T" | awk '/^generations:/{print $2}')
echo "(times are user+sys CPU seconds; the machine may be shared)"
echo "== $(basename "$T"): $(echo "scale=1; $size/1048576" | bc) MB, $events events, $gens generations"
line() { printf "  %-40s %8s s  %8s MB/s  RSS %7s MB\n" "$1" "$2" "$(echo "scale=1; $size/1048576/$2" | bc)" "$(($3 / 1024))"; }
read -r ts tm _ < <(run /dev/null "$R" gotrace stats "$T"); line "rtdiag stats (raw decode)" "$ts" "$tm"
read -r to om orc < <(run "$W/me1.txt" "$R" gotrace cat --ordered "$T"); line "rtdiag cat --ordered" "$to" "$om"
read -r tg gm grc < <(run "$W/go1.txt" "$GO" tool trace -d=1 "$T"); line "go tool trace -d=1 (Go 1.23)" "$tg" "$gm"
read -r tf fm _ < <(run /dev/null "$R" gotrace grep -v -e '^(UserLog|HeapAlloc|HeapGoal|CPUSample)$' -o "$W/filtered.trace" "$T")
line "rtdiag grep -v -e ... -o (filtered)" "$tf" "$fm"
echo "  speed vs Go: ordered $(echo "scale=1; $tg/$to" | bc)x, raw decode $(echo "scale=1; $tg/$ts" | bc)x"
echo "  peak RSS / input: ordered $(echo "scale=2; $om*1024/$size" | bc)x, Go $(echo "scale=2; $gm*1024/$size" | bc)x"
if [ "$orc" = 0 ] && [ "$grc" = 0 ]; then
  grep '^M=' "$W/go1.txt" | sed -E -e 's/^M=([-0-9]+) P=([-0-9]+) G=([-0-9]+) Sync Time=([0-9]+).*/\4 \1 \2 \3 Sync/' \
    -e 's/^M=([-0-9]+) P=([-0-9]+) G=([-0-9]+) [A-Za-z]+ Time=([0-9]+).*/\4 \1 \2 \3 E/' >"$W/go1.tup"
  sed -E 's/^([0-9]+) ([A-Za-z]+) p=([-0-9]+) g=([-0-9]+) m=([-0-9]+) .*/\1 \5 \3 \4 \2/' "$W/me1.txt" |
    awk '{if ($4 == 0) $4 = -1; if ($5 != "Sync") $5 = "E"; print}' >"$W/me1.tup"
  if cmp -s "$W/go1.tup" "$W/me1.tup"; then echo "  ordered events equal Go's: $(wc -l <"$W/go1.tup") events (time, M, P, G, Syncs), same order"
  else echo "  ordered events differ from Go's in $(diff "$W/go1.tup" "$W/me1.tup" | grep -c '^<') lines (Go 1.23's random map walk orders some equal-time events differently; see docs/gotrace.md)"; fi
else echo "  exit codes: rtdiag $orc, go $grc"; fi
