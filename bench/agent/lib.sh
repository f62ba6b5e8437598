# bench/agent/lib.sh - what run.sh and wait_cost.sh share (sourced):
#   . lib.sh NAME   a work folder W (/tmp/rtd-bench-NAME.*), removed at exit
#                   after every process in PIDS is killed (kept with
#                   BENCH_KEEP=1); TCK (clock ticks
#                   a second); cpu_ticks PID (its user + system ticks).
W=$(mktemp -d "/tmp/rtd-bench-$1.XXXXXX")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  [ -n "${BENCH_KEEP:-}" ] && echo "kept: $W" >&2 || rm -rf "$W"
}
trap cleanup EXIT
TCK=$(getconf CLK_TCK)
cpu_ticks() { awk '{ sub(/.*\) /, ""); split($0, f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }
