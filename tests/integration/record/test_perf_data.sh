#!/usr/bin/env bash
# `rtdiag record -o x.data` (#32): the recording's CPU samples also as a
# perf.data file, written as perf record writes it, from the same
# recording as its other outputs. Debian's perf reads it: perf script has,
# sample for sample, the stacks of the recording's own profile (-o
# .folded of the same run, its values 1001001 ns a sample at 999 Hz), with
# perf's own symbol names (their versions cut off: perf names a sample in
# _IO_file_overflow "_IO_file_overflow@@GLIBC_2.2.5", rtdiag's profile
# "_IO_file_overflow": one sample of 457 in a CI run); perf report reads
# it without complaint. Also:
# a second .data is refused as usage, and a recording that fails leaves an
# existing x.data as it was. A second program (fault_entry) faults on a
# function's first instruction: that frame is named as perf names it.
set -u
R=${RTDIAG:?}; BIN=${RTD_BINARY_DIR:?}; SRC=${RTD_SOURCE_DIR:?}
FP=$BIN/tests/targets/cpu_shares_fp
[ -x "$FP" ] || { echo "FAIL: $FP not built"; exit 1; }
command -v perf >/dev/null || { echo "SKIP: perf (linux-perf) not installed: nothing reads the file to compare"; exit 77; }
W=$(mktemp -d /tmp/rtd-record-data-XXXXXX)
trap 'rm -rf "$W"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$R" record -o "$W/a.data" -o "$W/b.data" -- true 2>/dev/null
[ $? = 2 ] && echo "ok: two .data outputs refused as usage" || bad "two .data outputs not refused as usage"

"$R" record -F 999 -o "$W/x.data" -o "$W/x.folded" -- "$FP" rounds=300 >/dev/null 2>"$W/err"
rc=$?
cat "$W/err"
if [ $rc != 0 ] && grep -q "perf_event\|Permission\|not permitted" "$W/err"; then
  echo "SKIP: perf_event is unavailable here: $(head -2 "$W/err")"; exit 77
fi
[ $rc = 0 ] || { echo "FAIL: rtdiag record -o x.data exited $rc"; exit 1; }
n=$(sed -n 's/^rtdiag: perf: \([0-9]*\) samples.*/\1/p' "$W/err")
perf script -i "$W/x.data" -F tid,event,ip,sym,symoff --no-inline > "$W/x.script" 2> "$W/script.err"
prc=$?
[ $prc = 0 ] || { cat "$W/script.err"; bad "perf script exited $prc on rtdiag's perf.data"; }
python3 "$SRC/tests/integration/perf/perf_script_stacks.py" "$W/x.script" "$W/x.folded" --divide 1001001 --skip-zero --no-versions \
  && echo "ok: perf script reads the recording's $n samples with the stacks of its own profile" \
  || bad "perf script's stacks of x.data differ from the recording's profile"
# the first user frame under kernel ones is where the thread was
# interrupted, no return address: fault_entry's samples in the page fault
# on entry_fn's first instruction name entry_fn (one byte back named the
# function before it, frame_dummy, as CI met once at _IO_cleanup's entry)
FE=$BIN/tests/targets/fault_entry
[ -x "$FE" ] || bad "$FE not built"
"$R" record -F 999 -o "$W/f.data" -o "$W/f.folded" -- "$FE" >/dev/null 2>"$W/ferr"
rc=$?
[ $rc = 0 ] || { cat "$W/ferr"; bad "rtdiag record of fault_entry exited $rc"; }
perf script -i "$W/f.data" -F tid,event,ip,sym,symoff --no-inline > "$W/f.script" 2> "$W/script.err" \
  || { cat "$W/script.err"; bad "perf script failed on fault_entry's perf.data"; }
nf=$(grep -c ';entry_fn;asm_exc_page_fault' "$W/f.folded")
[ "$nf" -gt 0 ] && echo "ok: $nf stacks of faults on entry_fn's first byte name entry_fn" \
  || { sort -t' ' -k2 -rn "$W/f.folded" | head -5; bad "no stack of fault_entry names entry_fn under the page fault"; }
python3 "$SRC/tests/integration/perf/perf_script_stacks.py" "$W/f.script" "$W/f.folded" --divide 1001001 --skip-zero --no-versions \
  && echo "ok: perf script and the recording's profile name fault_entry's stacks alike" \
  || bad "perf script's stacks of fault_entry differ from the recording's profile"

perf report -i "$W/x.data" --stdio --no-children --sort sym > "$W/x.report" 2> "$W/report.err"
prc=$?
[ $prc = 0 ] && grep -Eq '%.*(alpha|beta|gamma_fn)' "$W/x.report" \
  && echo "ok: perf report reads it: $(grep -E '%.*gamma_fn' "$W/x.report" | head -1 | tr -s ' ')" \
  || { cat "$W/report.err"; head -20 "$W/x.report"; bad "perf report of x.data (exit $prc)"; }

# a failed recording (no such program) leaves an existing file as it was
echo keep > "$W/old.data"
"$R" record -o "$W/old.data" -- "$W/no-such-program" >/dev/null 2>"$W/err2"
rc=$?
[ $rc != 0 ] && [ "$(cat "$W/old.data")" = keep ] \
  && echo "ok: a failed recording (exit $rc) left the old x.data as it was" \
  || bad "a failed recording (exit $rc) replaced x.data: $(head -c 80 "$W/old.data" | od -c | head -2)"
[ $fails = 0 ] && echo PASS
