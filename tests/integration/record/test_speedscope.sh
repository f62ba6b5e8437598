#!/usr/bin/env bash
# A `rtdiag record` Chrome JSON timeline loads in speedscope's importer
# page in headless Chromium (issue #30's last test): tests/targets/
# rec-syscalls recorded with --syscalls (system-call slices with the
# off-CPU waits nested inside them, CPU samples, thread names) opens in
# speedscope's own page (its pinned npm release, served on 127.0.0.1, driven
# by playwright-core: tests/integration/pictures/viewers.js) without an
# error, and the page lists the slices' names (clock_nanosleep, openat, the
# off-CPU "sleep"). The npm packages are those of test_viewers.sh, in the
# same folder of the build tree; without chromium, npm or the registry the
# test is skipped with the reason.
set -u
R=${RTDIAG:?}; SRC=${RTD_SOURCE_DIR:?}; BIN=${RTD_BINARY_DIR:?}
PROG=$BIN/tests/targets/rec_syscalls
[ -x "$PROG" ] || { echo "FAIL: $PROG not built"; exit 1; }
[ -n "${RTD_SAN_FLAGS:-}" ] && { echo "SKIP: the browser runs no rtdiag code: not again in the sanitizer build"; exit 77; }
command -v chromium >/dev/null && command -v npm >/dev/null ||
  { echo "SKIP: chromium or npm missing: speedscope not opened"; exit 77; }
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ] ||
  { echo "SKIP: --syscalls needs root or perf_event_paranoid <= 1"; exit 77; }
W=$(mktemp -d /tmp/rtd-record-speedscope-XXXXXX)
trap 'rm -rf "$W"' EXIT
NM=$BIN/npm-pictures
PKGS="speedscope@1.25.0 playwright-core@1.65.1 ajv@8.17.1" # as test_viewers.sh
if [ "$(cat "$NM/.pkgs" 2>/dev/null)" != "$PKGS" ]; then
  mkdir -p "$NM"
  (cd "$NM" && flock "$NM" npm install --no-audit --no-fund --no-save --prefix "$NM" $PKGS >"$W/npm.log" 2>&1) ||
    { echo "SKIP: npm install $PKGS failed: $(tail -2 "$W/npm.log")"; exit 77; }
  echo "$PKGS" >"$NM/.pkgs"
fi
SHOTS=$BIN/record-shots
mkdir -p "$SHOTS"
"$R" record --syscalls -F 999 -o "$W/rec.json" -- "$PROG" 10 >/dev/null 2>"$W/err"
rc=$?
cat "$W/err"
if [ $rc != 0 ] && grep -q "perf_event\|Permission\|not permitted" "$W/err"; then
  echo "SKIP: perf_event is unavailable here: $(head -2 "$W/err")"; exit 77
fi
[ $rc = 0 ] || { echo "FAIL: rtdiag record exited $rc"; exit 1; }
node "$SRC/tests/integration/pictures/viewers.js" "$NM/node_modules" "$SHOTS" speedscope \
  "$W/rec.json" clock_nanosleep openat sleep
