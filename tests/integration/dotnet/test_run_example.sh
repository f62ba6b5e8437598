#!/usr/bin/env bash
# make run (scripts/run-example.sh), #28 item 7: "samples" is the number
# of samples everywhere, and what it prints under a recording's banner is
# that recording's: `dotnet profile --top`'s first line and its table say
# the same count; perf record's table and the SVG under the same banner
# are one recording (same samples, same total).
. "$(dirname "$0")/lib.sh"
out=$(bash "$SRC/scripts/run-example.sh" "$BIN" 2>&1); rc=$?
[ $rc = 0 ] || { bad "make run: rc $rc $out"; exit 1; }
# dotnet profile: "N samples, X s of thread time ..." then "wall: Ys in N samples"
sec=$(sed -n '/^== rtdiag dotnet profile/,/^== folded/p' <<<"$out")
n1=$(sed -nE 's/^([0-9]+) samples, .*/\1/p' <<<"$sec" | head -1)
n2=$(sed -nE 's/^[a-z]+: .* in ([0-9]+) samples$/\1/p' <<<"$sec" | head -1)
[ -n "$n1" ] && [ "$n1" = "$n2" ] && [ "$n1" -gt 0 ] \
  && ok "dotnet profile: $n1 samples in its first line and its table" \
  || bad "dotnet profile: '$n1' vs '$n2' samples: $sec"
sec=$(sed -n '/^== rtdiag perf record/,$p' <<<"$out")
if grep -q "^== perf record could not run here" <<<"$sec"; then
  echo "perf part not run: $(grep '^== perf record could not' <<<"$sec")"
else
  svg="$BIN/dotnet-demo.svg"
  tables=$(grep -c '^# [0-9]* samples, ' <<<"$sec")
  read -r tn tsec < <(sed -nE 's/^# ([0-9]+) samples, ([0-9.]+) s of CPU$/\1 \2/p' <<<"$sec")
  sn=$(sed -nE 's/.*id="subtitle"[^>]*>[a-z]+: .* in ([0-9]+) samples<.*/\1/p' "$svg")
  stot=$(sed -nE 's/.*data-total="([0-9]+)".*/\1/p' "$svg" | head -1)
  stsec=$(awk -v t="$stot" 'BEGIN { printf "%.3f", t / 1e9 }')
  [ "$tables" = 1 ] && [ -n "$tn" ] && [ "$tn" = "$sn" ] && [ "$tsec" = "$stsec" ] \
    && ok "perf record: one table, $tn samples / $tsec s, as its SVG says" \
    || bad "perf record: $tables tables, table $tn samples $tsec s, SVG $sn samples $stsec s: $sec"
fi
[ $fail = 0 ] || { echo "$fail failed"; exit 1; }
echo "make run: all passed"
