#!/usr/bin/env bash
# `rtdiag record` as a user who may not trace (issue #30, "Privileges"):
# run as nobody on a native program of its own (tests/targets
# cpu_shares_fp), with kernel.perf_event_paranoid as the machine has it:
# - where the user may sample its own process's user space (paranoid <= 2)
#   the recording is made: exit 0, CPU samples on the program's threads,
#   naming its functions;
# - what the user may not have is said, not failed on: off-CPU waits
#   (sched_switch needs tracefs and paranoid <= 1) and, at paranoid 2,
#   kernel frames.
set -u
R=${RTDIAG:?}; BIN=${RTD_BINARY_DIR:?}
FP=$BIN/tests/targets/cpu_shares_fp
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to become nobody"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }
PAR=$(cat /proc/sys/kernel/perf_event_paranoid)
[ "$PAR" -le 2 ] || { echo "SKIP: perf_event_paranoid $PAR lets no user sample"; exit 77; }
[ -x "$FP" ] || { echo "FAIL: $FP not built"; exit 1; }
W=$(mktemp -d /tmp/rtd-record-nobody-XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 777 "$W"
fails=0
setpriv --reuid=65534 --regid=65534 --clear-groups \
  "$R" record -o "$W/t.json" -- "$FP" rounds=100 2 2>"$W/err"
rc=$?
cat "$W/err"
[ $rc = 0 ] || { echo "FAIL: exit $rc as nobody"; fails=1; }
python3 - "$W/t.json" <<'PY' || { echo "FAIL: no samples naming the program's functions"; fails=1; }
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
leaves = {e["args"]["stack"][0] for e in evs if e.get("cat") == "sample" and e["args"].get("stack")}
print(len(leaves), "leaf functions:", sorted(leaves)[:6])
sys.exit(0 if {"alpha", "beta", "gamma_fn"} & leaves else 1)
PY
if [ "$PAR" -ge 2 ]; then
  grep -q "user space only" "$W/err" || { echo "FAIL: no message about kernel frames"; fails=1; }
fi
if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -r /sys/kernel/tracing/events/sched/sched_switch/format 2>/dev/null || [ "$PAR" -ge 2 ]; then
  grep -q "no off-CPU waits" "$W/err" || { echo "FAIL: no message about off-CPU waits"; fails=1; }
fi
[ $fails = 0 ] && echo "ok: as nobody (perf_event_paranoid $PAR): CPU samples recorded, what is missing said"
[ $fails = 0 ]
