#!/usr/bin/env bash
# A full disk is the output's error, not the input's (issue #27 item 5):
# on a real 1 MB tmpfs filled to the last block, convert to Perfetto, SVG,
# pprof and folded, and gotrace text2bin, each exit 1 saying "No space left
# on device" with the OUTPUT's name, leave no partial or temporary file,
# and an existing output (written before the disk filled) reads as before.
# Needs root for mount; skipped with the reason when mount fails.
set -u
R=${RTDIAG:?RTDIAG not set}
SRC=${RTD_SOURCE_DIR:?}
SH=${RTD_SHARED_DIR:-$SRC/../shared}
T=$SH/testdata
[ -d "$T/nettrace" ] && [ -d "$T/gotrace/v2" ] || { echo "SKIP: $T missing (../shared/testdata)"; exit 77; }
W=$(mktemp -d /tmp/rtd-fulldisk-XXXXXX)
FULL=$W/full
mkdir "$FULL"
cleanup() {
  mountpoint -q "$FULL" && umount "$FULL"
  rm -rf "$W"
}
trap cleanup EXIT
if ! mount -t tmpfs -o size=1m tmpfs "$FULL" 2>"$W/merr"; then
  echo "SKIP: cannot mount a tmpfs to fill: $(cat "$W/merr") (needs root)"
  exit 77
fi
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
NT=$T/nettrace/only_managed_samples.nettrace
GT=$T/gotrace/v2/go122-gc-stress.test
# a profile whose folded and pprof forms are larger than stdio's buffer,
# so the writers themselves meet the full disk (not only the final flush)
awk 'BEGIN { for (i = 0; i < 4000; i++) printf "main;worker_%d;step_%d;leaf_%x %d\n", i % 97, i, i * 2654435761 % 4294967296, i + 1 }' >"$W/big.folded"
# outputs that exist before the disk fills: they must survive
echo OLD >"$FULL/old.svg"
echo OLD >"$FULL/old.perfetto-trace"
# fill it: dd stops at ENOSPC
dd if=/dev/zero of="$FULL/filler" bs=4k 2>/dev/null
avail=$(df --output=avail "$FULL" | tail -1 | tr -d ' ')
[ "$avail" = 0 ] || { echo "SKIP: the tmpfs still has ${avail} KB free after filling"; exit 77; }
before=$(cd "$FULL" && ls -A | sort | tr '\n' ' ')

# full NAME OUT -- COMMAND...
full() {
  local name=$1 out=$2
  shift 3
  "$@" >/dev/null 2>"$W/err"
  local rc=$?
  local now
  now=$(cd "$FULL" && ls -A | sort | tr '\n' ' ')
  if [ $rc = 0 ]; then
    bad "$name: exit 0 on a full disk"
  elif ! grep -qF "$out: " "$W/err" || ! grep -q "No space left on device" "$W/err"; then
    bad "$name: exit $rc, '$(cat "$W/err")' (want the output's name and No space left on device)"
  elif grep -q "Input/output error" "$W/err"; then
    bad "$name: still says EIO: $(cat "$W/err")"
  elif [ "$now" != "$before" ]; then
    bad "$name: files now '$now', before '$before'"
  elif [ "$(cat "$FULL/old.svg")" != OLD ] || [ "$(cat "$FULL/old.perfetto-trace")" != OLD ]; then
    bad "$name: an existing output changed"
  else
    ok "$name: exit $rc, '$(head -1 "$W/err")'"
  fi
}

full "convert -o x.perfetto-trace" "$FULL/x.perfetto-trace" -- "$R" convert "$NT" -o "$FULL/x.perfetto-trace"
full "convert -o old.perfetto-trace (existing)" "$FULL/old.perfetto-trace" -- "$R" convert "$NT" -o "$FULL/old.perfetto-trace"
full "convert -o x.svg" "$FULL/x.svg" -- "$R" convert "$NT" -o "$FULL/x.svg"
full "convert -o old.svg (existing)" "$FULL/old.svg" -- "$R" convert "$NT" -o "$FULL/old.svg"
full "convert -o x.pb.gz" "$FULL/x.pb.gz" -- "$R" convert "$NT" -o "$FULL/x.pb.gz"
full "convert -o x.folded" "$FULL/x.folded" -- "$R" convert "$NT" -o "$FULL/x.folded"
full "convert 4000 stacks -o y.pb.gz" "$FULL/y.pb.gz" -- "$R" convert "$W/big.folded" -o "$FULL/y.pb.gz"
full "convert 4000 stacks -o y.folded" "$FULL/y.folded" -- "$R" convert "$W/big.folded" -o "$FULL/y.folded"
full "convert 4000 stacks -o y.svg" "$FULL/y.svg" -- "$R" convert "$W/big.folded" -o "$FULL/y.svg"
full "convert -o x.json (Chrome JSON)" "$FULL/x.json" -- "$R" convert "$NT" -o "$FULL/x.json"
full "gotrace text2bin -o g.bin" "$FULL/g.bin" -- "$R" gotrace text2bin "$GT" -o "$FULL/g.bin"

echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
[ $fails = 0 ]
