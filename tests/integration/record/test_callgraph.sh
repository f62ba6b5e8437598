#!/usr/bin/env bash
# `rtdiag record --call-graph dwarf`, as `rtdiag perf record --call-graph dwarf`:
# tests/targets/perf-cpu built without frame pointers (cpu_shares_nofp)
# burns CPU in alpha/beta/gamma_fn under main -> worker -> run_round.
# With --call-graph dwarf the recording's samples, in the timeline (Chrome JSON) and
# in the profile of the same recording (-o .folded), are unwound from
# their stack copies through the C library to main; --stack-size is
# checked as perf record's is.
set -u
R=${RTDIAG:?}; BIN=${RTD_BINARY_DIR:?}
NOFP=$BIN/tests/targets/cpu_shares_nofp
[ -x "$NOFP" ] || { echo "FAIL: $NOFP not built"; exit 1; }
W=$(mktemp -d /tmp/rtd-record-cg-XXXXXX)
trap 'rm -rf "$W"' EXIT
fails=0
"$R" record --stack-size 4 -o "$W/x.json" -- true 2>/dev/null
[ $? = 2 ] || { echo "FAIL: --stack-size 4 not refused as usage"; fails=1; }
"$R" record -F 999 --call-graph dwarf -o "$W/t.json" -o "$W/c.folded" -- "$NOFP" rounds=300 >/dev/null 2>"$W/err"
rc=$?
cat "$W/err"
if [ $rc != 0 ] && grep -q "perf_event\|Permission\|not permitted" "$W/err"; then
  echo "SKIP: perf_event is unavailable here: $(head -2 "$W/err")"; exit 77
fi
[ $rc = 0 ] || { echo "FAIL: rtdiag record --call-graph dwarf exited $rc"; exit 1; }
python3 - "$W/t.json" <<'PY' || fails=1
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
st = [e["args"]["stack"] for e in evs if e.get("cat") == "sample" and e["args"].get("stack")]
hot = [s for s in st if s[0] in ("alpha", "beta", "gamma_fn")]
full = [s for s in hot if "run_round" in s and "main" in s]
print("%d samples, %d in the burning functions, %d of them unwound to main" % (len(st), len(hot), len(full)))
if len(hot) < 20 or len(full) < 0.9 * len(hot):
    print("FAIL: the timeline's samples are not unwound to main"); sys.exit(1)
print("ok: timeline samples unwound through libc to main, e.g.", ";".join(reversed(full[0])))
PY
grep -Eq ';main;worker;(run_round;)?(alpha|beta|gamma_fn) [0-9]' "$W/c.folded" &&
  echo "ok: the profile of the same recording unwound to main" ||
  { echo "FAIL: c.folded not unwound: $(head -3 "$W/c.folded")"; fails=1; }
[ $fails = 0 ]
