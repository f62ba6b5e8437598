# perf record -a --sort comm,dso,sym (#32 item 5): the whole system's top
# table by process (thread name), module and function, as perf report
# --sort comm,dso,sym --no-children prints it; a real C program with a
# name of its own burns CPU through the recording and has its row.
. "$(dirname "$0")/lib.sh"
NAME=srt$$ # a comm of its own: other tests run beside this one
cat > "$TMP/burn.c" <<'C'
#include <stdlib.h>
#include <unistd.h>
/* volatile: no compiler folds the loop away (clang -O1 did) */
__attribute__((noinline)) double sort_test_spin(long n) {
  volatile double s = 0; for (long i = 0; i < n; i++) s += (double)(i % 7) * 1.0000001; return s;
}
#include <stdio.h>
int main(int argc, char **argv) { /* says it runs in argv[2]; until argv[1] exists */
  double s = sort_test_spin(200000); FILE *f = fopen(argv[2], "w"); if (f) fclose(f);
  while (access(argv[1], F_OK) != 0) s += sort_test_spin(2000000); return s < 0;
}
C
${RTD_CC:-cc} -O1 -fno-omit-frame-pointer -o "$TMP/$NAME" "$TMP/burn.c" || fail "cc"
"$TMP/$NAME" "$TMP/stop" "$TMP/running" & BP=$!
trap 'touch "$TMP/stop"; wait $BP 2>/dev/null; rm -rf "$TMP"' EXIT
# spinning before the recording starts (a fresh binary on a busy box can
# take a while to get a CPU): a generous bound, not a wait
within 120 test -e "$TMP/running" || fail "$NAME did not start spinning"
"$R" perf record -a -F 499 -d 2 --sort comm,dso,sym --top 100000 -o "$TMP/s.txt" 2> "$TMP/err" || { cat "$TMP/err"; fail "record -a --sort comm,dso,sym"; }
head -2 "$TMP/s.txt" | tail -1 | grep -Eq '^ *overhead +comm +dso +sym$' || fail "header: $(head -2 "$TMP/s.txt")"
row=$(awk -v n="$NAME" '$2 == n && $3 == n && $4 == "sort_test_spin"' "$TMP/s.txt" | head -1)
[ -n "$row" ] || { head -20 "$TMP/s.txt"; grep "$NAME" "$TMP/s.txt"; fail "no row '$NAME $NAME sort_test_spin'"; }
# every row is one (comm, dso, sym): no two alike, and together 100%
dups=$(awk 'NR > 2 { k = $0; sub(/^ *[0-9.]+% +/, "", k); if (seen[k]++) print k }' "$TMP/s.txt" | head -3)
[ -z "$dups" ] || fail "rows repeated: $dups"
# (each row's share is printed to 0.01%, so off by up to 0.005 points:
# at load, hundreds of one-sample rows of 0.047% printed 0.05% summed to
# 101.0%; the bound is that rounding, not a margin)
sum=$(awk 'NR > 2 { sub(/%/, "", $1); s += $1; n++ } END { d = s - 100; if (d < 0) d = -d; printf "%s %.3f", (d <= 0.005 * n + 0.001) ? "ok" : "bad", s }' "$TMP/s.txt")
[ "${sum%% *}" = ok ] || fail "the rows sum to ${sum#* }% (more than their rounding from 100%)"
ok "--sort comm,dso,sym: $(grep -c . "$TMP/s.txt") lines, 100% in all; $row"
"$R" perf record -a -F 499 -d 1 --sort comm --top 100000 -o "$TMP/c.txt" 2> "$TMP/err" || { cat "$TMP/err"; fail "record --sort comm"; }
grep -Eq "^ *[0-9.]+% +$NAME$" "$TMP/c.txt" || { head "$TMP/c.txt"; fail "--sort comm: no row of $NAME"; }
ok "--sort comm: $(grep -E " $NAME$" "$TMP/c.txt")"
out=$("$R" perf record -a --sort comm,size 2>&1); [ $? = 2 ] && grep -q "'size' is not comm, pid, dso or sym" <<<"$out" \
  && ok "--sort size: refused before recording" || fail "--sort size: $out"
