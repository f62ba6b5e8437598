#!/bin/bash
# Every Go 1.7-1.19 vector Go 1.19 analyses (1.5/1.6 traces need the
# program's binary): rtdiag's blocking profiles, goroutine table, region
# types, tasks and MMU curve equal what `go tool trace` of Debian's Go 1.19
# serves for the same trace (gotool_cmp.py). The sanitizer build
# (RTD_SANITIZED=1) compares three vectors and runs every analysis on the
# rest: the comparison's Go side does not change with the build.
. "$(dirname "$0")/lib.sh"
need_go 1.19
[ -d "$V1" ] || { echo "skip: no Go trace vectors in $V1"; exit 77; }
n=0
for t in "$V1"/*_1_{7,9,10,11,19}_good; do
  [ -f "$t" ] || continue
  case "${RTD_SANITIZED:-0}:$(basename "$t")" in
    0:*|1:stress_1_19_good|1:http_1_19_good|1:user_task_region_1_11_good) gotool "$t" ;;
    *) analyses_run "$t" ;;
  esac
  n=$((n+1))
done
[ $n -ge 10 ] || bad "only $n vectors found in $V1"
finish
