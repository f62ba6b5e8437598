#!/usr/bin/env bash
# bench/startup.sh - start-up CPU of rtdiag against /bin/true (#34), and
# against an older rtdiag when one is given, interleaved A/B/C.
#
# Usage: [RUNS=41] bench/startup.sh [BUILD_DIR] [OLD_RTDIAG]
# CPU time is user+sys of each run from wait4() (bench/abcpu.c), not wall
# time: the machine is shared and loaded. Prints medians, ranges, each
# command's median ratio to /bin/true, and the load. Also the shared
# objects each binary maps.
set -u
B=$(cd "${1:-build}" && pwd)
OLD=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
W=$B/bench-startup
mkdir -p "$W"
cc -O2 -o "$W/abcpu" "$here/abcpu.c" || exit 1
R=$B/rtdiag
[ -x "$R" ] || { echo "no $R: build first"; exit 1; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
echo "shared objects mapped: rtdiag $(ldd "$R" | wc -l)${OLD:+, old $(ldd "$OLD" | wc -l)}"
args=(-n "${RUNS:-41}" -- /bin/true -- "$R" --version)
[ -n "$OLD" ] && args+=(-- "$OLD" --version)
"$W/abcpu" "${args[@]}"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
