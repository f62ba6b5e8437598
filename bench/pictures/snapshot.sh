#!/usr/bin/env bash
# bench/pictures/snapshot.sh - md5 of every Go timeline rtdiag writes from
# a set of Go traces, to show a speed change left the output as it was.
#
#   bench/pictures/snapshot.sh BUILD_DIR OUT.md5 [EXTRA_TRACE...]
#   diff before.md5 after.md5        (no output: byte-identical)
#
# Inputs: every Go trace of ../shared/testdata/gotrace (old and new format,
# the upstream .test vectors and fuzz corpus included: a failing input's
# exit code and partial output count too), this repository's gotrace fuzz
# and goanalysis corpora, and the traces named on the command line (e.g. the bench's).
# For each: `convert -o x.pftrace`, `convert -f chrome-json`, and
# `gotrace cat --format perfetto` (the command's own pump); its CPU
# samples as a profile in every format (`convert -f folded|pprof|top|svg|
# speedscope`); and the trace from a pipe (`convert -`, a timeline and a
# profile: read once, not again by offset).
set -u
. "$(dirname "$0")/../lib/snapshot.sh"
snap_init "$1" "$2"
shift 2
for t in $(find "$SH/testdata/gotrace" fuzz/corpus/gotrace fuzz/corpus/goanalysis -type f ! -name '*.md' | sort) "$@"; do
  name=${t#"$SH"/}
  case "$t" in # golang/exp's vectors are text: their binary form
  *.test) "$R" gotrace text2bin "$t" -o "$W/t.bin" 2>/dev/null || continue; t=$W/t.bin ;;
  esac
  for f in perfetto chrome-json folded pprof top svg speedscope pipe:perfetto pipe:folded; do
    rm -f "$W/o"
    case $f in
    pipe:*) cat "$t" | "$R" convert - -f ${f#pipe:} -o "$W/o" >/dev/null 2>"$W/e" ;;
    *) "$R" convert "$t" -f $f -o "$W/o" >/dev/null 2>"$W/e" ;;
    esac
    rc=$?
    snap_sums
    echo "$m rc=$rc err=$e convert $f $name" >>"$OUTF"
  done
  rm -f "$W/o"
  "$R" gotrace cat --format perfetto "$t" -o "$W/o" >/dev/null 2>"$W/e"
  rc=$?
  snap_sums
  echo "$m rc=$rc err=$e cat perfetto $name" >>"$OUTF"
  n=$((n + 1))
done
echo "$n inputs, $(wc -l <"$OUTF") outputs -> $OUTF"
