#!/bin/bash
# Every Go 1.7-1.19 vector Go 1.19 analyses (1.5/1.6 traces need the
# program's binary): rtdiag's blocking profiles, goroutine table, region
# types, tasks and MMU curve equal what `go tool trace` of Debian's Go 1.19
# serves for the same trace (gotool_cmp.py).
. "$(dirname "$0")/lib.sh"
need_go 1.19
[ -d "$V1" ] || { echo "skip: no Go trace vectors in $V1"; exit 77; }
n=0
for t in "$V1"/*_1_{7,9,10,11,19}_good; do
  [ -f "$t" ] || continue
  gotool "$t"; n=$((n+1))
done
[ $n -ge 10 ] || bad "only $n vectors found in $V1"
finish
