#!/usr/bin/env bash
# bench/perf/dwarf_rss.sh - peak RSS of --call-graph dwarf (#33 item 5):
# rtdiag perf record --call-graph dwarf (recording and naming, in one process)
# against Debian's perf record --call-graph dwarf plus perf report (the
# naming), and optionally another rtdiag (R0: before/after), the same
# workload (tests/targets/cpu_shares_nofp, no frame pointers: every stack
# needs the copied stack and CFI) attached with -p for D seconds at F Hz,
# the tools interleaved round by round. Prints each tool's peak RSS
# (median, range) and what rtdiag's --stats says of the DWARF it held.
#
# Usage: bench/perf/dwarf_rss.sh BUILD_DIR [R0]   Env: ROUNDS (5) D (5) F (999)
set -u
B=$(cd "${1:?build dir}" && pwd); R0=${2:-}
R=$B/rtdiag W=$B/tests/targets/cpu_shares_nofp
ROUNDS=${ROUNDS:-5} D=${D:-5} F=${F:-999}
[ "$(id -u)" = 0 ] || { echo "needs root"; exit 1; }
command -v perf >/dev/null || { echo "no perf (linux-perf)"; exit 1; }
[ -x "$R" ] && [ -x "$W" ] || { echo "build first"; exit 1; }
T=$(mktemp -d); WP=
trap '[ -n "$WP" ] && kill "$WP" 2>/dev/null; rm -rf "$T"' EXIT
"$W" rounds=1000000 2 >/dev/null & WP=$!
sleep 0.5
tools="rtdiag perf"; [ -n "$R0" ] && tools="rtdiag0 $tools"
echo "dwarf RSS: $F Hz, $D s attached, $ROUNDS rounds; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  for t in $tools; do
    case $t in
      rtdiag) /usr/bin/time -f %M -o "$T/m" "$R" perf record -p "$WP" -F "$F" --call-graph dwarf -d "$D" --stats -o "$T/o.folded" 2>"$T/rt.err" ;;
      rtdiag0) /usr/bin/time -f %M -o "$T/m" "$R0" perf record -p "$WP" -F "$F" --call-graph dwarf -d "$D" -o "$T/o.folded" 2>/dev/null ;;
      perf) /usr/bin/time -f %M -o "$T/m1" perf record -q --call-graph dwarf -F "$F" -p "$WP" -o "$T/p.data" -- sleep "$D" >/dev/null 2>&1
            /usr/bin/time -f %M -o "$T/m2" perf report -i "$T/p.data" --no-children --stdio >/dev/null 2>&1
            awk '{ if ($1 > m) m = $1 } END { print m }' "$T/m1" "$T/m2" > "$T/m"
            echo "$(cat "$T/m1") $(cat "$T/m2")" >> "$T/perf.parts" ;;
    esac
    cat "$T/m" >> "$T/rss.$t"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -o "DWARF held.*" "$T/rt.err" | head -1 | sed 's/^/rtdiag --stats: /'
grep "DWARF" "$T/rt.err" | grep -v "held" | head -2 | cut -c1-160
med() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for t in $tools; do
  printf '%-8s peak RSS median %6.1f MB (range %s MB)\n' "$t" \
    "$(med < "$T/rss.$t" | awk '{print $1/1024}')" \
    "$(sort -n "$T/rss.$t" | awk 'NR==1{lo=$1} {hi=$1} END{printf "%.1f-%.1f", lo/1024, hi/1024}')"
done
awk '{ r += $1; p += $2; n++ } END { printf "(perf: record %.1f MB, report %.1f MB, means; its figure is the larger of the two)\n", r/n/1024, p/n/1024 }' "$T/perf.parts"
