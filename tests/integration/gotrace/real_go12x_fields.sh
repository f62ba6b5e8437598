# real_go12x_fields.sh - sourced by real_go12x.sh (GOV, GO, T, TMP set; the
# 3-generation trace in $TMP/long.trace): what a user finds comparing
# rtdiag with `go tool trace` field by field (issue 19, items 2, 8, 9, 12).

# Stacks have names in every mode and format: Go writes a generation's
# strings after its stacks, so raw mode reads them ahead.
"$R" gotrace cat "$T" >"$TMP/rawf" 2>"$TMP/err" || bad "raw cat: $(cat "$TMP/err")"
# (A frame the runtime could not symbolize has no strings: func=0 file=0.)
nz=$("$R" gotrace bin2text "$T" | grep -cP '^\tpc=[0-9]+ func=0 file=0 ')
nf=$(grep -cP '^\t0x[0-9a-f]+ ' "$TMP/rawf"); nn=$(grep -cP '^\t0x[0-9a-f]+  :' "$TMP/rawf")
[ "$nf" -gt 0 ] && [ "$nn" = "$nz" ] && ok "raw cat: the $nf frames of the Stack events have a function and file ($nz the runtime left without)" ||
  bad "raw cat: $nn of $nf frames without function and file ($nz the runtime left without)"
"$R" gotrace cat --format json "$T" | grep '"type":"Stack"' >"$TMP/rawj"
nj=$(grep -o '"fn":""' "$TMP/rawj" | wc -l); nzf=$("$R" gotrace bin2text "$T" | grep -cP '^\tpc=[0-9]+ func=0 ')
[ -s "$TMP/rawj" ] && [ "$nj" = "$nzf" ] && ok "raw JSON: every frame has a function name (but the $nzf without)" ||
  bad "raw JSON: $nj frames without a function name ($nzf the runtime left without)"

# Each field once on a line, thread ids signed.
dupkeys() { # FILE -> lines with a key twice
  awk '!/^\t/ { delete k; for (i = 2; i <= NF; i++) if (split($i, a, "=") >= 2 && a[1] ~ /^[A-Za-z_]+$/) { if (a[1] in k) { print; break } k[a[1]] = 1 } }' "$1"
}
"$R" gotrace cat --ordered "$T" >"$TMP/ordf"
for f in rawf ordf; do
  d=$(dupkeys "$TMP/$f" | head -2)
  [ -z "$d" ] && ok "$f: no line has a key twice" || bad "$f: a key twice: $d"
done
"$R" gotrace cat --ordered --format json "$T" >"$TMP/ordj"; "$R" gotrace cat --format json "$T" >"$TMP/rawja"
if grep -q 18446744073709551615 "$TMP/rawf" "$TMP/ordf" "$TMP/ordj" "$TMP/rawja"; then bad "a thread, proc or goroutine of none printed unsigned: $(grep -h -m1 18446744073709551615 "$TMP/rawf" "$TMP/ordf")"
else ok "no thread, proc or goroutine id printed unsigned (none is -1 everywhere)"; fi
grep -qE '^[0-9]+ EventBatch off=[0-9]+ gen=[0-9]+ m=-?[0-9]+ time=[0-9]+ size=[0-9]+$' "$TMP/rawf" && ok "raw EventBatch: gen m time size once each" ||
  bad "raw EventBatch line: $(grep -m1 EventBatch "$TMP/rawf")"
! grep -qE '^[0-9]+ [A-Za-z]+ p=-1 g=0 ' "$TMP/rawf" && ok "raw mode prints no P or G it does not know" ||
  bad "raw mode prints unknown P/G: $(grep -m1 -E ' p=-1 g=0 ' "$TMP/rawf")"

# --stacks: the frames of each stack an event names, the set Go's -d=1
# prints (Stack= and TransitionStack=), per event time.
gostacks() {
  awk 'function flush() { if (blk != "") print t "|" blk; blk = "" }
    /^M=/ { flush(); match($0, /Time=[0-9]+/); t = substr($0, RSTART + 5, RLENGTH - 5); inb = 0; next }
    /^(Stack|TransitionStack)=$/ { flush(); inb = 1; next }
    /^$/ { flush(); inb = 0; next }
    inb && /^\t[^\t]/ { sub(/^\t/, ""); n = split($0, a, " @ "); fn = a[1]; pc = a[n]; next }
    inb && /^\t\t/ { sub(/^\t\t/, ""); blk = blk pc " " fn " " $0 ";"; next }
    END { flush() }' "$1" | sort -u
}
mystacks() {
  awk 'function flush() { if (blk != "") print t "|" blk; blk = "" }
    /^[0-9]/ { flush(); t = $1; next }
    /^\t[a-z_]+=[0-9]+:/ { flush(); next }
    /^\t\t/ { sub(/^\t\t/, ""); blk = blk $0 ";"; next }
    END { flush() }' "$1" | sort -u
}
"$GO" tool trace -d=1 "$T" >"$TMP/go1f" 2>/dev/null
"$R" gotrace cat --ordered --stacks "$T" >"$TMP/ordst"
gostacks "$TMP/go1f" >"$TMP/gost"; mystacks "$TMP/ordst" >"$TMP/myst"
[ -s "$TMP/gost" ] && cmp -s "$TMP/gost" "$TMP/myst" &&
  ok "cat --ordered --stacks: the $(wc -l <"$TMP/gost") (time, stack) pairs go tool trace -d=1 prints, frame for frame" ||
  { bad "cat --ordered --stacks differs from -d=1's stacks (< Go, > rtdiag)"; diff "$TMP/gost" "$TMP/myst" | head -4; }
"$R" gotrace cat --ordered --stacks --format json "$T" >"$TMP/ordsj"
nsj=$(grep -c '"stacks":{"' "$TMP/ordsj"); nst=$(grep -c '^[0-9]' "$TMP/ordst" | head -1)
nsu=$(grep -cP '^\t[a-z_]+=[0-9]+:$' "$TMP/ordst")
mystacks <(sed -nE 's/^\{.*"ts":([0-9]+).*"stacks":\{(.*)\}\}$/\1 \2/p' "$TMP/ordsj" |
  awk '{ t = $1; $1 = ""; n = split($0, s, /\],"/); print t; for (i = 1; i <= n; i++) { print "\tx=1:"; m = split(s[i], f, /\},\{/);
    for (j = 1; j <= m; j++) { pc = f[j]; sub(/.*"pc":/, "", pc); sub(/,.*/, "", pc); fn = f[j]; sub(/.*"fn":"/, "", fn); sub(/".*/, "", fn)
      fl = f[j]; sub(/.*"file":"/, "", fl); sub(/".*/, "", fl); ln = f[j]; sub(/.*"line":/, "", ln); sub(/[^0-9].*/, "", ln)
      printf "\t\t0x%x %s %s:%s\n", pc, fn, fl, ln } } }') >"$TMP/mysj"
[ "$nsj" -gt 0 ] && cmp -s "$TMP/mysj" "$TMP/myst" && ok "JSON --stacks: $nsj events, the same frames as the text (${nst} events)" ||
  { bad "JSON --stacks: $nsj events, frames differ from the text's"; diff "$TMP/myst" "$TMP/mysj" | head -3; }
"$R" gotrace cat --stacks "$T" | mystacks /dev/stdin >"$TMP/rawst"
rawst=$(cut -d'|' -f2 "$TMP/rawst" | sort -u | wc -l); ordst=$(cut -d'|' -f2 "$TMP/myst" | sort -u | wc -l)
[ "$rawst" = "$ordst" ] && [ "$rawst" -gt 0 ] && ok "raw --stacks: the same $rawst distinct stacks as ordered" || bad "raw --stacks: $rawst distinct stacks, ordered $ordst"

# grep --stack resolves each event's stack with its own generation's
# tables: the count of events whose stack (Go's Stack=) has a frame of
# main. equals Go's, on the 3-generation trace, raw and ordered.
L=$TMP/long.trace
"$GO" tool trace -d=1 "$L" >"$TMP/go1l" 2>/dev/null
want=$(awk '/^M=/ { if (f) n++; f = 0; inb = 0; next } /^Stack=$/ { inb = 1; next } /^(TransitionStack=|)$/ { inb = 0; next }
  inb && /^\t[^\t]/ && /\tmain\./ { f = 1 } END { if (f) n++; print n + 0 }' "$TMP/go1l")
g1=$("$R" gotrace grep --stack '^main\.' -c "$L"); g2=$("$R" gotrace grep --ordered --stack '^main\.' -c "$L")
ng=$("$R" gotrace stats "$L" | awk '/^generations:/{print $2}')
[ "$want" -gt 0 ] && [ "$g1" = "$want" ] && [ "$g2" = "$want" ] &&
  ok "grep --stack on $ng generations: $g1 events (raw) and $g2 (ordered), Go's -d=1 count $want" ||
  bad "grep --stack on $ng generations: raw $g1, ordered $g2, Go's -d=1 $want"

# grep --string in raw mode: the strings of a generation come after its
# events; read ahead, raw mode finds what ordered mode finds.
s1=$("$R" gotrace grep -e '^(UserLog|UserRegionBegin|UserTaskBegin)$' --string 'worker|main' -c "$L")
s2=$("$R" gotrace grep --ordered -e '^(UserLog|UserRegionBegin|UserTaskBegin)$' --string 'worker|main' -c "$L")
[ "$s1" -gt 0 ] && [ "$s1" = "$s2" ] && ok "grep --string raw finds the $s1 events ordered mode finds" || bad "grep --string: raw $s1, ordered $s2"

# text2bin reads Go's own -d=2 text (no header line; Go 1.22 names the
# CPUSample arguments its own way), with or without a header added.
"$GO" tool trace -d=2 "$L" >"$TMP/god2" 2>/dev/null
ns=$(grep -c '^CPUSample ' "$TMP/god2")
[ "$ns" -gt 0 ] || bad "no CPU samples in the long trace (the workload profiles the CPU)"
"$R" gotrace bin2text "$L" >"$TMP/mine2"
if "$R" gotrace text2bin --go "$GOV" "$TMP/god2" -o "$TMP/god2.bin" 2>"$TMP/err"; then
  "$R" gotrace bin2text "$TMP/god2.bin" | cmp -s - "$TMP/mine2" && ok "text2bin --go $GOV of go tool trace -d=2's own text ($ns CPU samples): the trace's events" || bad "text2bin of Go's -d=2: other events"
else bad "text2bin --go $GOV of Go's -d=2 text: $(cat "$TMP/err")"; fi
{ echo "Trace Go$GOV"; cat "$TMP/god2"; } >"$TMP/god2h"
"$R" gotrace text2bin "$TMP/god2h" -o "$TMP/god2h.bin" 2>"$TMP/err" && cmp -s "$TMP/god2.bin" "$TMP/god2h.bin" &&
  ok "text2bin of Go's -d=2 text with a 'Trace Go$GOV' line added" || bad "text2bin of Go's -d=2 with a header: $(cat "$TMP/err")"

# Filters that cannot match in raw mode say so; repeated filters are OR.
"$R" gotrace grep -G 1 "$T" >/dev/null 2>"$TMP/err"
grep -q "warning: .*goroutine and P of a Go 1.22+ event are not known" "$TMP/err" && ok "grep -g in raw mode on go $GOV warns: $(head -c 80 "$TMP/err")..." ||
  bad "grep -g in raw mode: no warning ($(cat "$TMP/err"))"
read -r g1 g2 < <(sed -nE 's/^[0-9]+ [A-Za-z]+ M=[-0-9]+ P=[-0-9]+ G=([1-9][0-9]*) .*/\1/p' "$TMP/ordf" | sort | uniq -c | sort -rn | awk 'NR <= 2 { printf "%s ", $2 }')
ga=$("$R" gotrace grep --ordered -G "$g1" -c "$T"); gb=$("$R" gotrace grep --ordered -G "$g2" -c "$T")
gab=$("$R" gotrace grep --ordered -G "$g1" -G "$g2" -c "$T")
[ "$gab" = $((ga + gb)) ] && [ "$ga" -gt 0 ] && [ "$gb" -gt 0 ] && ok "grep -g $g1 -g $g2: $gab = $ga + $gb events" || bad "grep -g $g1 -g $g2: $gab, not $ga + $gb"
e2=$("$R" gotrace grep -e '^GoStart$' -e '^GoBlock$' -c "$T"); e1=$("$R" gotrace grep -e '^(GoStart|GoBlock)$' -c "$T")
[ "$e2" = "$e1" ] && [ "$e1" -gt 0 ] && ok "grep -e A -e B: $e2 events, as -e 'A|B'" || bad "grep -e twice: $e2, -e 'A|B' $e1"

# --since/--until with a duration from the trace's start: ordered (ns)
# and raw (ticks, with the trace's frequency); the events counted here
# from cat's own times (a bound in ticks as rtdiag makes it: ns times
# ticks per ns, so that 1.2 * 15625000 does not round down to ...999).
fr=$("$R" gotrace stats "$L" | sed -nE 's/^duration: .* at ([0-9]+) ticks\/s\)$/\1/p')
o1=$("$R" gotrace grep --ordered --since 0.5s --until 1200ms -c "$L")
o2=$("$R" gotrace cat --ordered "$L" | awk '$2 != "Sync" { if (s == "") s = $1; if ($1 >= s + 500000000 && $1 <= s + 1200000000) n++ } END { print n + 0 }')
[ "$o1" -gt 0 ] && [ "$o1" = "$o2" ] && ok "grep --ordered --since 0.5s --until 1200ms: $o1 events, counted from cat: $o2" || bad "ordered --since/--until: $o1, counted $o2"
r1=$("$R" gotrace grep --since 0.5s --until 1200ms -c "$L")
r2=$("$R" gotrace cat "$L" | awk -v fr="$fr" -v re="$V2_DICT" '$1 ~ /^[0-9]+$/ && $2 !~ re { t[NR] = $1; if (s == "" || $1 < s) s = $1 }
  END { for (i in t) if (t[i] >= s + int(500000000 * (fr / 1e9)) && t[i] <= s + int(1200000000 * (fr / 1e9))) n++; print n + 0 }')
[ "$r1" -gt 0 ] && [ "$r1" = "$r2" ] && ok "grep --since 0.5s --until 1200ms (raw, ticks at $fr/s): $r1 events, counted from cat: $r2" || bad "raw --since/--until: $r1, counted $r2"
