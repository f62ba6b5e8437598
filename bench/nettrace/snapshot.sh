#!/usr/bin/env bash
# bench/nettrace/snapshot.sh - md5 of every profile and timeline rtdiag
# writes from EventPipe streams, to show a change left the output as it was.
#
#   bench/nettrace/snapshot.sh BUILD_DIR OUT.md5 [EXTRA_TRACE...]
#   diff before.md5 after.md5        (no output: byte-identical)
#
# Inputs: every .nettrace/.netperf of ../shared/testdata, the same cut at a
# third and at two thirds (a damaged input's exit code, message and partial
# output count too), this repository's nettrace and nettrace_source fuzz
# corpora, and the traces named on the command line. For each:
# `nettrace profile` in every format and --managed-only, from the file and
# from a pipe; `convert -f folded|pprof|top|svg|speedscope|perfetto|
# chrome-json`, from the file and from a pipe; `nettrace cat --format
# perfetto|chrome-json` (with an --event filter too). Each line: the
# output's md5, the exit code, the md5 of stderr.
set -u
. "$(dirname "$0")/../lib/snapshot.sh"
snap_init "$1" "$2"
shift 2
SH=$(cd "$SH" && pwd)
one() { # NAME CMD... (the output goes to $W/o)
  local name=$1; shift
  rm -f "$W/o"
  "$@" >"$W/stdout" 2>"$W/e"
  local rc=$?
  local m e so
  snap_sums
  so=$(md5sum <"$W/stdout" | cut -c1-8)
  echo "$m out=$so rc=$rc err=$e $name" >>"$OUTF"
}
inputs=$(find "$SH/testdata/nettrace" -name '*.nettrace' -o -name '*.netperf' | sort)
for t in $inputs; do # damaged: cut at a third, at two thirds
  b=$(basename "$t"); s=$(stat -c %s "$t")
  head -c $((s / 3)) "$t" >"$W/cut1-$b"
  head -c $((s * 2 / 3)) "$t" >"$W/cut2-$b"
done
fuzz=$(find "$PWD/fuzz/corpus/nettrace" "$PWD/fuzz/corpus/nettrace_source" -type f | sort)
extra=$(for x in "$@"; do realpath "$x"; done)
# the cut files by a relative name: the path is in the profiles' metadata
cd "$W"
for t in $inputs cut*-* $fuzz $extra; do
  name=${t#"$SH"/}; name=${name#"$PWD"/}
  for f in folded pprof top svg speedscope; do
    one "profile $f $name" "$R" nettrace profile "$t" -f $f -o "$W/o"
    one "profile-pipe $f $name" sh -c "cat '$t' | '$R' nettrace profile - -f $f -o '$W/o'"
  done
  one "profile stdout $name" "$R" nettrace profile "$t"
  one "profile managed-only $name" "$R" nettrace profile --managed-only "$t" -o "$W/o"
  for f in folded pprof top svg speedscope perfetto chrome-json; do
    one "convert $f $name" "$R" convert "$t" -f $f -o "$W/o"
    one "convert-pipe $f $name" sh -c "cat '$t' | '$R' convert - -f $f -o '$W/o'"
  done
  one "cat perfetto $name" "$R" nettrace cat --format perfetto "$t" -o "$W/o"
  one "cat chrome-json $name" "$R" nettrace cat --format chrome-json "$t" -o "$W/o"
  one "cat chrome-json gc $name" "$R" nettrace cat --format chrome-json --event 'GC/*' "$t" -o "$W/o"
  n=$((n + 1))
done
echo "$n inputs, $(wc -l <"$OUTF") outputs -> $OUTF"
