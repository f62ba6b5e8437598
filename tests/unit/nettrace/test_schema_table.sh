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
M=${RTD_CLR_MANIFEST:-}
if [ -z "$M" ] || [ ! -s "$M" ]; then
  echo "note: no ClrEtwAll.man here (set RTD_CLR_MANIFEST): clr_events.txt not regenerated"
  exit 0
fi
python3 "$G" --manifest "$M" --check || { echo "FAIL: clr_events.txt is not what the manifest gives"; exit 1; }
echo "ok: clr_events.txt == gen_schema.py(manifest, clr_events_extra.txt, traceevent_names.tsv)"
