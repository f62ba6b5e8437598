#!/usr/bin/env bash
# The Firefox Profiler's Gecko profile of a nettrace (#32 item 4: "for
# profiles and perf timelines"; perf.data's is test_firefox.sh): `rtdiag
# convert X.nettrace -f firefox` through the nettrace record source and
# its runtime slices, checked against the profiler's documented format
# (perf/gecko_check.py), and its samples against the profile rtdiag's
# nettrace profiler makes of the same file: the same stacks, each stack's
# share of the samples as its share of the profile's time.
set -u
R=${RTDIAG:?RTDIAG not set}
SRC=${RTD_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
NT=${RTD_SHARED_DIR:-$SRC/../shared}/testdata/nettrace/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace
[ -f "$NT" ] || { echo "skip: no $NT (the shared nettrace vectors)"; exit 77; }
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
"$R" convert "$NT" -f firefox -o "$TMP/nt.json" || { echo "FAIL: rtdiag convert -f firefox of a nettrace"; exit 1; }
python3 "$SRC/tests/integration/perf/gecko_check.py" "$TMP/nt.json" || { echo "FAIL: not the documented Gecko format"; exit 1; }
"$R" convert "$NT" -o "$TMP/nt.folded" || { echo "FAIL: rtdiag convert -o folded"; exit 1; }
python3 - "$TMP/nt.json" "$TMP/nt.folded" <<'PY' || { echo "FAIL: the Gecko profile's samples are not the profile's"; exit 1; }
import collections, json, re, sys
d = json.load(open(sys.argv[1]))
g = collections.Counter()
for t in d["threads"]:
    st, fr, s = t["stackTable"]["data"], t["frameTable"]["data"], t["stringTable"]
    for row in t["samples"]["data"]:
        k, names = row[0], []
        while k is not None:
            names.append(re.sub(r" \(in .*\)$", "", s[fr[st[k][1]][0]]))
            k = st[k][0]
        g[";".join(reversed(names))] += 1
f = collections.Counter()
for line in open(sys.argv[2]):
    stack, v = line.rsplit(" ", 1)
    f[stack] += int(v)
ng, nf = sum(g.values()), sum(f.values())
print("Gecko: %d samples, %d stacks; profile: %d stacks" % (ng, len(g), len(f)))
assert ng > 100 and set(g) == set(f), sorted(set(g) ^ set(f))[:5]
for k in sorted(g):
    a, b = 100.0 * g[k] / ng, 100.0 * f[k] / nf
    print("  %6.2f%% %6.2f%%  %s" % (a, b, k[-70:]))
    assert abs(a - b) < 1.0, k
PY
echo "ok: a nettrace's Gecko profile: the documented format, the profile's stacks and shares"
