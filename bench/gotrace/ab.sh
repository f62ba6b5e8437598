#!/usr/bin/env bash
# bench/gotrace/ab.sh - rtdiag builds against each other on Go traces:
# 'gotrace stats' and 'gotrace cat --ordered' (text), A/B interleaved
# (bench/abcpu.c: every round runs each build once, in turn), medians and
# ranges of CPU (user+sys) and wall time, the load before and after.
#
# Usage: [RUNS=5] [MB=100] [BENCH_DIR=DIR] [CMDS='stats|cat --ordered']
#        [SMALL=0] bench/gotrace/ab.sh RTDIAG...
# (the first build is the reference of the ratios; e.g. the baseline,
# main and this branch). Inputs: a Go 1.19 (old format) and a Go 1.23
# (new format) trace of MB megabytes made by bench/gotrace/gen (put
# BENCH_DIR on tmpfs, e.g. /dev/shm/x), and the largest shared real
# recordings of ../shared/testdata/gotrace (old format; the new format's
# are small golang/exp vectors, made binary). cat's text goes to
# /dev/null: what is timed is decoding, ordering and formatting. CMDS: the
# commands, '|' between them; SMALL=0 leaves out the shared recordings.
# An ordered Go 1.5-1.21 trace is decoded on a second thread when a core
# is free (since 2de4938; the baseline d955b02 always did): the script
# says which the load chose; RTDIAG_THREADS=1|2 in the environment fixes
# it for every build.
set -u
[ $# -ge 1 ] || { echo "usage: bench/gotrace/ab.sh RTDIAG..."; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
RUNS=${RUNS:-5}
MB=${MB:-100}
W=${BENCH_DIR:-/tmp/rtdiag-bench-gotrace}
mkdir -p "$W"
cc -O2 -o "$W/abcpu" "$here/../abcpu.c" || exit 1
export GOCACHE="$W/gocache" GOPATH="$W/gopath" GOTOOLCHAIN=local GOPROXY=off GOFLAGS=
traces=()
for v in 1.19 1.23; do
  go=/usr/lib/go-$v/bin/go
  t=$W/big${v/./}.trace
  if [ ! -s "$t" ] || [ "$(stat -L -c %s "$t")" -lt $((MB << 20)) ]; then
    if [ ! -x "$go" ]; then echo "Go $v ($go) is not installed: no synthetic Go $v trace"; continue; fi
    (cd "$here/gen" && "$go" build -o "$W/gen$v" main.go) || exit 1
    echo "making a $MB MB Go $v trace..."
    "$W/gen$v" "$t" "$MB" || exit 1
  fi
  traces+=("$t")
done
D=${RTD_SHARED_DIR:-$here/../../../shared}/testdata/gotrace
[ "${SMALL:-1}" = 0 ] && D=/nonexistent
for f in "$D"/v1/stress_1_19_good "$D"/v1/http_1_19_good "$D"/v1/stress_1_11_good; do
  [ -e "$f" ] && traces+=("$f")
done
if [ -e "$D/v2/go122-gc-stress.test" ] &&
   "$1" gotrace text2bin "$D/v2/go122-gc-stress.test" -o "$W/go122-gc-stress.bin" >/dev/null 2>&1; then
  traces+=("$W/go122-gc-stress.bin")
fi
echo "builds: $*"
echo "load before: $(uptime)"
read -r l1 _ </proc/loadavg
echo "second thread for an ordered old-format trace: RTDIAG_THREADS=${RTDIAG_THREADS:-unset}," \
  "1-minute load $l1 on $(nproc) CPUs ($(awk -v l="$l1" -v n="$(nproc)" 'BEGIN{print (l + 1 <= n) ? "a core is free: two threads" : "no core free: one thread"}'))"
IFS='|' read -r -a cmds <<<"${CMDS:-stats|cat --ordered}"
for t in "${traces[@]}"; do
  echo "== $(basename "$t"): $(stat -L -c %s "$t") bytes"
  for cmd in "${cmds[@]}"; do
    args=()
    # shellcheck disable=SC2086 # cmd is words
    for r in "$@"; do args+=(-- "$r" gotrace $cmd "$t"); done
    echo "-- gotrace $cmd"
    "$W/abcpu" -n "$RUNS" "${args[@]}" || exit 1
  done
done
echo "load after: $(uptime)"
