#!/usr/bin/env bash
# The CLI's shape (#29 item 3): no function in tools/rtdiag/*.c over 100
# lines, and tools/rtdiag includes only include/rtdiag/*, its own headers
# and system headers (cli_shape.py says how each is counted). The checker is
# first tried on a small made-up tree, so a checker that finds nothing
# cannot pass for a clean CLI.
set -u
S=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$S/../../.." && pwd)
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/tools/rtdiag" "$T/include/rtdiag" "$T/src/common"
touch "$T/include/rtdiag/pub.h" "$T/src/common/priv.h" "$T/tools/rtdiag/own.h"
fn() { # NAME LINES: a function of LINES lines, declaration to brace
  printf 'static int %s(int a)\n{\n' "$1"
  for ((i = 0; i < $2 - 4; i++)); do printf '\ta += %d; /* { */\n' "$i"; done
  printf '\treturn a;\n}\n'
}
{ printf '#include <stdio.h>\n#include "own.h"\n#include "rtdiag/pub.h"\n'
  printf 'static const char *s = "}{";\n'; fn fits 100; } > "$T/tools/rtdiag/a.c"
out=$(python3 "$S/cli_shape.py" "$T"); rc=$?
[ $rc = 0 ] && ok "made-up tree: a 100-line function and public includes pass" ||
  bad "made-up clean tree refused (rc $rc): $out"
fn too_long 101 >> "$T/tools/rtdiag/a.c"
printf '#include "common/priv.h"\n' > "$T/tools/rtdiag/b.c"
printf '#include <common/priv.h>\n' > "$T/tools/rtdiag/c.h"
printf 'static void q(FILE *f, int c) { fprintf(f, "\\\\u%%04x", c); }\n' > "$T/tools/rtdiag/d.c"
out=$(python3 "$S/cli_shape.py" "$T"); rc=$?
[ $rc = 1 ] && ok "made-up tree: refused (rc 1)" || bad "made-up bad tree: rc $rc"
grep -q 'a.c:[0-9]*: too_long is 101 lines' <<<"$out" && ok "101-line function named" ||
  bad "101-line function not named: $out"
grep -q 'fits' <<<"$out" && bad "the 100-line function was refused: $out"
grep -q 'b.c:1: includes "common/priv.h"' <<<"$out" && ok "src include named" ||
  bad "b.c's include of src/ not named: $out"
grep -q 'c.h:1: includes <common/priv.h>' <<<"$out" && ok "src include in <> named" ||
  bad "c.h's include of src/ not named: $out"
grep -q 'd.c:1: escapes' <<<"$out" && ok "a string quoter of its own named" ||
  bad "d.c's own quoting not named: $out"
out=$(python3 "$S/cli_shape.py" "$ROOT"); rc=$?
echo "$out"
[ $rc = 0 ] && ok "tools/rtdiag keeps the shape" || bad "tools/rtdiag breaks the shape (rc $rc)"
echo "$fail failed"
[ $fail = 0 ]
