# bench/lib/snapshot.sh - sourced by the snapshot benches (bench/nettrace,
# bench/pictures): what they share to write one md5 line per output.
#
# snap_init BUILD_DIR OUT.md5: from the repository's top, R the build's
# rtdiag, SH the shared data (../shared, or beside the main worktree; as
# spelt: rtdiag's messages name the inputs, and their md5s count), OUTF
# the output file emptied (an absolute path), W a work folder removed at
# exit, n=0.
# snap_sums: m, the md5 of $W/o ("none" when no output was written), and
# e, the first 8 hex digits of stderr's ($W/e, the work folder named W).
snap_init() {
  cd "$(dirname "$0")/../.." || exit 1
  B=$(cd "$1" && pwd)
  R=$B/rtdiag
  SH=${RTD_SHARED_DIR:-../shared}
  [ -d "$SH" ] || SH=$(cd "$(git rev-parse --git-common-dir)/../.." && pwd)/shared
  OUTF=$(realpath "$2")
  W=$(mktemp -d "${TMPDIR:-/tmp}/rtd-snap-XXXXXX")
  trap 'rm -rf "$W"' EXIT
  : >"$OUTF"
  n=0
}

snap_sums() {
  m=$( [ -f "$W/o" ] && md5sum <"$W/o" | cut -d' ' -f1 || echo none)
  e=$(sed "s|$W|W|g" "$W/e" | md5sum | cut -c1-8)
}
