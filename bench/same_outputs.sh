#!/usr/bin/env bash
# bench/same_outputs.sh - a speed-up keeps every output byte-identical:
# runs the decoding commands of two rtdiag binaries over every recording
# in ../shared/testdata (and the extra files given) and compares stdout,
# stderr and the exit code.
# The Go traces also through the analyses (pprof, goroutines, gc, tasks),
# grep and bin2text: with bench/pictures and bench/nettrace's snapshots
# (timelines, profiles) every command over the shared data (issue #29).
# Usage: bench/same_outputs.sh OLD_RTDIAG NEW_RTDIAG [FILE...]
set -u
OLD=$1 NEW=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
D=${RTD_SHARED_DIR:-$here/../../shared}/testdata
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
n=0 diff=0
cmp_one() { # CMD...
  "$OLD" "$@" >"$T/o.out" 2>"$T/o.err"; local a=$?
  "$NEW" "$@" >"$T/n.out" 2>"$T/n.err"; local b=$?
  n=$((n + 1))
  if [ $a != $b ] || ! cmp -s "$T/o.out" "$T/n.out" || ! cmp -s "$T/o.err" "$T/n.err"; then
    diff=$((diff + 1)); echo "DIFFERS: rtdiag $* (rc $a vs $b)"
  fi
}
for f in "$D"/nettrace/*.nettrace "$D"/nettrace/*.netperf $(printf '%s\n' "$@" | grep -E 'net(trace|perf)$'); do
  cmp_one nettrace stats "$f"
  cmp_one nettrace cat "$f"
  cmp_one nettrace cat --json "$f"
  cmp_one nettrace cat --json --stream "$f"
done
go_all() { # FILE: the commands every Go trace goes through
  cmp_one gotrace stats "$1"
  cmp_one gotrace cat "$1"
  cmp_one gotrace cat --ordered "$1"
  cmp_one gotrace grep -c -e 'Go(Block|Unblock)' "$1"
  cmp_one gotrace bin2text "$1"
  for c in "pprof -t sync" "pprof -t cpu -f raw" "pprof -t sched" "goroutines" \
	   "goroutines --group-by region --json" "gc" "tasks"; do
    RTDIAG_THREADS=1 cmp_one gotrace $c "$1"
  done
}
for f in "$D"/gotrace/v1/* "$D"/gotrace/v2/fuzz-corpus/* $(printf '%s\n' "$@" | grep -vE 'net(trace|perf)$'); do
  go_all "$f"
  cmp_one gotrace cat --ordered --format go-debug "$f"
done
for f in "$D"/gotrace/v2/*.test; do
  "$NEW" gotrace text2bin "$f" -o "$T/v2.bin" >/dev/null 2>&1 || continue
  go_all "$T/v2.bin"
done
echo "$n commands compared, $diff differ"
[ $diff = 0 ]
