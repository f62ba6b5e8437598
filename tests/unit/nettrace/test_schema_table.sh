#!/usr/bin/env bash
# The built-in schemas are what their sources give:
#  - schema_table.c is exactly what gen_schema.py makes of clr_events.txt;
#  - clr_events.txt is exactly what gen_schema.py makes of the runtime's
#    manifest (ClrEtwAll.man) plus clr_events_extra.txt and
#    traceevent_names.tsv, when a manifest is at hand (RTD_CLR_MANIFEST=
#    path to a ClrEtwAll.man). The manifest is not kept in this repository,
#    so without one that half says so and checks nothing.
set -u
S=${RTD_SOURCE_DIR:?}
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
G=$S/src/nettrace/gen_schema.py
python3 "$G" --check >/dev/null || { echo "FAIL: schema_table.c is not what clr_events.txt gives (run gen_schema.py)"; exit 1; }
echo "ok: schema_table.c, clr_ids.h == gen_schema.py(clr_events.txt)"
# the runtime's events are named by clr_ids.h: no event id compared with,
# or switched on as, a bare number anywhere in src/ (issue #29)
python3 - "$S/src" <<'PY' || exit 1
import os, re, sys
bad = []
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        if not f.endswith('.c'):
            continue
        path = os.path.join(root, f)
        text = open(path, encoding='utf-8').read()
        for m in re.finditer(r'event_id\s*[!=]=\s*\d+|\d+\s*[!=]=\s*\w*event_id\b', text):
            bad.append('%s:%d: %s' % (path, text.count('\n', 0, m.start()) + 1, m.group(0)))
        for m in re.finditer(r'switch\s*\(([^)]*event_id[^)]*)\)\s*\{', text):
            depth, i = 1, m.end()
            while depth and i < len(text):
                depth += {'{': 1, '}': -1}.get(text[i], 0)
                i += 1
            for c in re.finditer(r'\bcase\s+\d+\s*:', text[m.end():i]):
                at = m.end() + c.start()
                bad.append('%s:%d: %s' % (path, text.count('\n', 0, at) + 1, c.group(0)))
if bad:
    print('FAIL: runtime event ids as bare numbers (name them from nettrace/clr_ids.h):')
    print('\n'.join(bad))
    sys.exit(1)
print('ok: no runtime event id in src/ is a bare number')
PY
M=${RTD_CLR_MANIFEST:-}
if [ -z "$M" ] || [ ! -s "$M" ]; then
  echo "note: no ClrEtwAll.man here (set RTD_CLR_MANIFEST): clr_events.txt not regenerated"
  exit 0
fi
python3 "$G" --manifest "$M" --check || { echo "FAIL: clr_events.txt is not what the manifest gives"; exit 1; }
echo "ok: clr_events.txt == gen_schema.py(manifest, clr_events_extra.txt, traceevent_names.tsv)"
