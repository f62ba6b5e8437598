#!/usr/bin/env bash
# perf trace as a timeline, from the running kernel: sched_switch records
# of a real command (`sh -c` running `sleep` five times) written as Perfetto
# and Chrome JSON; protoc decodes the Perfetto file against Perfetto's
# proto, tlcheck.py finds CPU tracks and the command's thread with
# "running" slices that nest, in both formats (at least one per sleep the
# shell waits for: its switch-ins come from its own switch records).
set -u
R=${RTDIAG:?}; SRC=${RTD_SOURCE_DIR:?}
SH=${RTD_SHARED_DIR:-$SRC/../shared}; P=$SH/reference/perfetto
W=$(mktemp -d /tmp/rtd-perftl-XXXXXX)
trap 'rm -rf "$W"' EXIT
[ -r /sys/kernel/tracing/events/sched/sched_switch/format ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
if ! "$R" perf trace -e sched:sched_switch --format perfetto -o "$W/t.pftrace" -- sh -c 'for i in 1 2 3 4 5; do sleep 0.02; done' 2>"$W/err"; then
  echo "SKIP: perf trace cannot run here: $(head -2 "$W/err")"; exit 77
fi
fails=0
sh_slices() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["slices"].get("sh", 0))' "$1"; }
if command -v protoc >/dev/null && [ -f "$P/perfetto_trace.proto" ]; then
  protoc --proto_path="$P" --decode=perfetto.protos.Trace perfetto_trace.proto <"$W/t.pftrace" >"$W/t.txt" &&
  python3 "$SRC/tests/integration/pictures/tlcheck.py" perfetto "$W/t.txt" >"$W/t.sum" || { echo "FAIL: protoc/tlcheck"; fails=1; }
  # the shell waits for each of its five sleeps: at least five running
  # slices on its thread, from its own switch records (a traced thread's
  # sched_switch fires only as it leaves the CPU)
  grep -q '"CPU [0-9]*": [1-9]' "$W/t.sum" && [ "$(sh_slices "$W/t.sum")" -ge 5 ] &&
    echo "ok: perf trace --format perfetto: CPU tracks and the command's threads with running slices that nest" ||
    { echo "FAIL: perfetto timeline: $(cut -c1-300 "$W/t.sum")"; fails=1; }
else
  echo "SKIP part: protoc or the Perfetto proto missing"
fi
"$R" perf trace -e sched:sched_switch -o "$W/t.json" -- sh -c 'for i in 1 2 3 4 5; do sleep 0.01; done' 2>/dev/null &&
  python3 "$SRC/tests/integration/pictures/tlcheck.py" json "$W/t.json" >"$W/j.sum" &&
  grep -q '"running"' "$W/j.sum" && [ "$(sh_slices "$W/j.sum")" -ge 5 ] &&
  echo "ok: perf trace -o x.json: Chrome JSON with the shell's running slices ($(sh_slices "$W/j.sum"))" ||
  { echo "FAIL: Chrome JSON timeline: $(cut -c1-300 "$W/j.sum" 2>/dev/null)"; fails=1; }
echo "$((1 - fails)) passed, $fails failed"
[ $fails = 0 ]
