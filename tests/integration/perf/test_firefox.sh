# The Firefox Profiler's Gecko profile (rtdiag/firefox.h, `rtdiag convert
# x.data -f firefox`) against the one Debian's perf writes of the same
# perf.data (`perf script report gecko`, perf 6.6+): the same document
# shape (keys, table schemas), per thread the same samples with the same
# stacks (the frames perf names: its gecko.py leaves out the others) and
# times; off-CPU waits of --switch-events as OffCPU markers.
# And each profile against the profiler's documented Gecko format
# (gecko_check.py: its types and what its importer's upgraders and
# processGeckoProfile() read), perf's own as the check's control. (The
# profiler's own importer is not on npm without its web app.)
. "$(dirname "$0")/lib.sh"
command -v perf >/dev/null || skip "perf (linux-perf) not installed: nothing to compare with"
perf script -l 2>/dev/null | grep -q '^ *gecko ' || skip "this perf has no 'perf script report gecko' (perf 6.6+)"
FP=$RTD_BINARY_DIR/tests/targets/cpu_shares_fp
[ -x "$FP" ] || fail "cpu_shares not built"

cd "$TMP" || fail "no $TMP"
perf record -q -g -F 999 -o perf.data -- "$FP" rounds=200 > /dev/null 2>&1 || fail "perf record"
perf script report gecko --save-only perf.gecko.json > /dev/null 2>&1 || fail "perf script report gecko"
"$R" convert perf.data -f firefox -o rtdiag.gecko.json || fail "rtdiag convert -f firefox"
python3 - perf.gecko.json rtdiag.gecko.json <<'PY' || fail "rtdiag's Gecko profile differs from perf's"
import collections, json, re, sys
ref, mine = (json.load(open(p)) for p in sys.argv[1:3])
assert sorted(ref) == sorted(mine), (sorted(ref), sorted(mine))
assert sorted(ref["meta"]) == sorted(mine["meta"]), "meta keys"
assert mine["meta"]["version"] == ref["meta"]["version"] == 24
def stacks(t):
    """each sample as (time ms, frame names root first). perf's gecko.py
    leaves out every frame perf cannot name (a callchain entry without
    'sym': a frame-pointer walk that read a stray address, say), where
    rtdiag keeps it as module+0xOFFSET or 0xADDR: such frames are left out
    on both sides, the named ones compared in order"""
    st, fr, s = t["stackTable"]["data"], t["frameTable"]["data"], t["stringTable"]
    def name(i):
        n = re.sub(r" \(in .*\)$", "", s[fr[i][0]])
        return "?" if n.startswith("[unknown]") or re.search(r"\+0x[0-9a-f]+$", n) or n.startswith("0x") else n
    out = []
    for row in t["samples"]["data"]:
        k, names = row[0], []
        while k is not None:
            names.append(name(st[k][1])); k = st[k][0]
        out.append((row[1], tuple(n for n in reversed(names) if n != "?")))
    return out
def stacks_raw(t):
    return [(row[1], None) for row in t["samples"]["data"]]
rt = {t["tid"]: t for t in ref["threads"]}
mt = {t["tid"]: t for t in mine["threads"] if t["samples"]["data"]}
assert set(rt) == set(mt), (sorted(rt), sorted(mt))
total = 0
for tid, t in rt.items():
    m = mt[tid]
    assert sorted(t) == sorted(m), "thread keys"
    for k in ("samples", "stackTable", "frameTable", "markers"):
        assert t[k]["schema"] == m[k]["schema"], k
    a, b = stacks(t), stacks(m)
    print("thread %d: perf %d samples, rtdiag %d" % (tid, len(a), len(b)))
    ca, cb = collections.Counter(x[1] for x in a), collections.Counter(x[1] for x in b)
    for k in sorted(set(ca) | set(cb)):
        if ca[k] != cb[k]: # said, so that a rare difference can be read
            print("  differs: perf %d rtdiag %d  %s" % (ca[k], cb[k], ";".join(k)))
    assert ca == cb, "stacks"
    # perf's times are its clock's ns / 10^6 cut to 3 decimals; rtdiag's keep 6
    import math
    assert sorted(x[0] for x in a) == sorted(math.floor(x[0] * 1000 + 1e-6) / 1000 for x in stacks_raw(m)), "times"
    total += len(a)
assert total > 50
print("same stacks in %d samples" % total)
PY
ok "the Gecko profile perf writes, thread for thread and stack for stack"
CHK=$(dirname "$0")/gecko_check.py
python3 "$CHK" perf.gecko.json > chk.out || { cat chk.out; fail "perf's own Gecko profile fails the format check (the check is wrong)"; }
python3 "$CHK" rtdiag.gecko.json || fail "rtdiag's Gecko profile is not the documented format"
ok "the documented Gecko format: rtdiag's profile, and perf's"

perf record -q --switch-events -o sw.data -- sh -c 'for i in 1 2 3; do sleep 0.01; done' > /dev/null 2>&1 || fail "perf record --switch-events"
outs=$(perf script -i sw.data --show-switch-events -F tid 2>/dev/null | grep -c 'SWITCH OUT')
"$R" convert sw.data -f firefox -o sw.gecko.json 2> sw.err; rc=$?
# a sleeping shell takes no cpu-clock samples: then nothing is written
if [ $rc = 0 ]; then
  python3 - sw.gecko.json "$outs" <<'PY' || fail "off-CPU markers"
import json, sys
d = json.load(open(sys.argv[1]))
names = {s["name"] for s in d["meta"]["markerSchema"]}
assert "OffCPU" in names
m = [x for t in d["threads"] for x in t["markers"]["data"] if x[5] and x[5]["type"] == "OffCPU"]
print("OffCPU markers: %d; perf script: %s switches out" % (len(m), sys.argv[2]))
assert len(m) == int(sys.argv[2]) and all(x[2] >= x[1] and x[3] == 1 for x in m)
PY
  python3 "$CHK" sw.gecko.json || fail "the Gecko profile with markers is not the documented format"
  ok "--switch-events: an OffCPU interval marker per wait"
else
  grep -q 'no samples to write' sw.err || { cat sw.err; fail "switch events: rc $rc"; }
  echo "note: the recording had no samples: no Gecko profile to check the markers in"
fi
