#!/usr/bin/env bash
# `rtdiag record`, issue #30's second test: during an induced blocking GC
# the managed threads' kernel tracks show them off-CPU inside the GC's
# suspension slice. tests/targets/dotnet-record in its gc mode: two threads
# (spin0, spin1) burn CPU in managed code, the main thread calls
# GC.Collect() every 100 ms. In the recorded timeline (Chrome JSON), for
# each "EE suspended" slice (GC/SuspendEEStart..GC/RestartEEStop, on the
# process's lane) both spinning threads have an off-CPU slice that overlaps
# it, for at least 90% of the suspensions; the overlaps are printed.
set -u
R=${RTDIAG:?}; SRC=${RTD_SOURCE_DIR:?}
command -v dotnet >/dev/null || { echo "SKIP: no dotnet SDK on PATH"; exit 77; }
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ] ||
  { echo "SKIP: off-CPU waits need sched_switch samples: root or perf_event_paranoid <= 1"; exit 77; }
D=$(bash "$SRC/tests/integration/dotnet/build.sh" dotnet-record tests/targets) || exit 1
W=$(mktemp -d /tmp/rtd-record-gc-XXXXXX)
TP=
cleanup() {
  [ -n "$TP" ] && { kill -9 "$TP" 2>/dev/null; wait "$TP" 2>/dev/null; rm -f /tmp/dotnet-diagnostic-"$TP"-*-socket /tmp/perf-"$TP".map; }
  rm -rf "$W"
}
trap cleanup EXIT
"$D/dotnet-record" "$W/ready" gc >"$W/out" 2>&1 &
TP=$!
for _ in $(seq 600); do [ -s "$W/ready" ] && break; kill -0 "$TP" 2>/dev/null || break; sleep 0.1; done
[ -s "$W/ready" ] || { echo "FAIL: dotnet-record did not start: $(head -5 "$W/out")"; exit 1; }
"$R" record -p "$TP" -d 4 -o "$W/t.json" 2>"$W/err"
rc=$?
if [ $rc != 0 ] && grep -q "perf_event\|Permission\|not permitted" "$W/err"; then
  echo "SKIP: perf_event is unavailable here: $(head -2 "$W/err")"; exit 77
fi
[ $rc = 0 ] || { echo "FAIL: rtdiag record exited $rc: $(cat "$W/err")"; exit 1; }
python3 - "$W/t.json" <<'PY'
import json, sys
from collections import defaultdict
evs = sorted((e for e in json.load(open(sys.argv[1]))["traceEvents"]), key=lambda e: e.get("ts", 0))
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs if e.get("name") == "thread_name"}
opened, susp, off = defaultdict(list), [], defaultdict(list)
for e in evs:
    k = (e.get("pid"), e.get("tid"))
    if e.get("ph") == "B":
        opened[k].append(e)
    elif e.get("ph") == "E":
        b = opened[k].pop()
        if b.get("name") == "EE suspended":
            susp.append((b["ts"], e["ts"]))
        elif b.get("cat") == "off-cpu":
            off[k].append((b["ts"], e["ts"]))
    elif e.get("ph") == "X" and e.get("cat") == "off-cpu":
        off[k].append((e["ts"], e["ts"] + e["dur"]))  # a wait, written whole at its end
workers = [k for k, n in names.items() if n.startswith("spin")]
ok = 0
for s, e in susp:
    if all(any(ws < e and we > s for ws, we in off[w]) for w in workers):
        ok += 1
# control: how many of the spinning threads' waits lie outside every suspension
outside = sum(1 for w in workers for ws, we in off[w] if not any(ws < e and we > s for s, e in susp))
inside = sum(len(off[w]) for w in workers) - outside
print(json.dumps({"suspensions": len(susp), "workers": [names[w] for w in workers],
                  "worker_waits_inside": inside, "worker_waits_outside": outside,
                  "all_workers_off_cpu_inside": ok,
                  "suspension_us": sorted(round(e - s, 1) for s, e in susp)[len(susp) // 2] if susp else None}))
sys.exit(0 if len(workers) == 2 and len(susp) >= 10 and ok >= 0.9 * len(susp) else 1)
PY
[ $? = 0 ] && { echo "ok: both spinning threads off the CPU inside the GC's suspensions"; exit 0; }
echo "FAIL: the spinning threads were not off the CPU inside the suspensions"; exit 1
