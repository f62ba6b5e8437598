#!/usr/bin/env bash
# test-half.sh LABEL BUILD-DIR [CTEST-ARGS...] - one half of `make test`:
# runs ctest in BUILD-DIR, its output both on the terminal and in
# BUILD-DIR/test-half.log, and writes BUILD-DIR/test-half.summary: one line
# "LABEL (BUILD-DIR): <ctest's 'NN% tests passed...' line>, N skipped, T s",
# then ctest's own closing lines (the skipped and failed tests by name).
# Exits with ctest's status. `make test` prints the summaries of both
# halves at the end, and their sum as one "tests: N passed, N failed, N
# skipped" line, so CI's last lines say what happened.
# (No set -e: ctest's status is the result to keep.)
set -u
label=$1 dir=$2
shift 2
log="$dir/test-half.log" sum="$dir/test-half.summary"
rm -f "$sum"
t0=$(date +%s)
(cd "$dir" && ctest "$@") 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
t=$(( $(date +%s) - t0 ))
line=$(grep -E '^[0-9]+% tests passed' "$log" | tail -1)
[ -n "$line" ] || line="ctest gave no summary (exit $rc)"
nskip=$(grep -cE '\*\*\*Skipped|Not Run' "$log")
{
  echo "$label ($dir): $line, $nskip skipped, ${t} s"
  # ctest's own closing lines: the skipped and failed tests by name
  sed -n '/^The following tests did not run:/,$p; /^The following tests FAILED:/,$p' "$log" |
    grep -vE '^(Errors while running CTest|Output from these tests are in:|Use "--rerun-failed)' |
    awk '!seen[$0]++'
} >"$sum"
exit "$rc"
