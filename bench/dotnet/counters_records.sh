#!/usr/bin/env bash
# bench/dotnet/counters_records.sh FILE [BUILD [ROUNDS [SPEC [SESSION]]]] - the
# counters of a nettrace FILE from the decoder's events (rtd_counters_event(),
# the agent's path today) against a nettrace source's records
# (rtd_counters_record(): filtered by rtd_counters_want()/_fields(), and
# unfiltered), CPU A/B interleaved with bench/abcpu.c (RTDIAG_THREADS=1),
# after checking the three give the same records (count and hash).
# Record a FILE with counters beside other events, e.g. tests/targets/
# dotnet-kinds steady under `rtdiag dotnet collect --providers
# System.Runtime:0xFFFFFFFF:5:EventCounterIntervalSec=1 --profile
# dotnet-sampled-thread-time,dotnet-common -d 45`.
set -euo pipefail
F=${1:?usage: counters_records.sh FILE [BUILD [ROUNDS [SPEC [SESSION]]]]}
B=$(cd "${2:-build}" && pwd)
N=${3:-21}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d /tmp/rtd-ctr.XXXXXX)
trap 'rm -rf "$W"' EXIT
cc -O2 -o "$W/abcpu" "$SRC/bench/abcpu.c"
cc -O2 -I"$SRC/include" -o "$W/cr" "$SRC/bench/dotnet/counters_records.c" "$B/librtdiag.a" \
   $(pkg-config --libs libtraceevent libtracefs zlib libelf libzstd) -liberty -ldl -lpthread -lm
export RTDIAG_THREADS=1
args=("$F" ${4:+"$4"} ${5:+"$5"})
want=$("$W/cr" events "${args[@]}")
for m in records records-all; do
  got=$("$W/cr" $m "${args[@]}")
  [ "$got" = "$want" ] || { echo "$m: $got, events: $want"; exit 1; }
done
echo "same records: $want; load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$W/abcpu" -n "$N" -- "$W/cr" events "${args[@]}" -- "$W/cr" records "${args[@]}" \
  -- "$W/cr" records-all "${args[@]}"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
