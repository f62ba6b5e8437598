# perf record's top table with long C++ names (#32 item 5): a real C++
# program whose hot function's demangled name runs past 100 characters;
# the module column stays in its place (module before the function, as
# perf report's Shared Object before Symbol), so every row has its module.
. "$(dirname "$0")/lib.sh"
command -v g++ >/dev/null || skip "no g++ to build the C++ program"
cat > "$TMP/long.cc" <<'CC'
#include <cstdlib>
namespace rtdiag_test { namespace very_long_namespace_name_for_the_test {
template <typename Key, typename Value> struct Table {
  __attribute__((noinline)) static double accumulate_everything_slowly(long n) {
    double s = 0; for (long i = 0; i < n; i++) s += (double)(i % 7) * 1.0000001; return s;
  }
};
}}
int main(int argc, char **argv) {
  long rounds = argc > 1 ? atol(argv[1]) : 200; double s = 0;
  for (long r = 0; r < rounds; r++)
    s += rtdiag_test::very_long_namespace_name_for_the_test::Table<unsigned long, const char *>::accumulate_everything_slowly(2000000);
  return s < 0;
}
CC
g++ -O1 -fno-omit-frame-pointer -g -o "$TMP/cxxlong" "$TMP/long.cc" || fail "g++"
"$R" perf record -F 499 -o "$TMP/top.txt" -- "$TMP/cxxlong" 300 2> "$TMP/err" || { cat "$TMP/err"; fail "record"; }
row=$(grep 'accumulate_everything_slowly' "$TMP/top.txt" | head -1)
[ -n "$row" ] || { cat "$TMP/top.txt"; fail "no row of the long C++ function"; }
name=$(sed -E 's/^ *[0-9.]+% +[0-9.]+% +[^ ]+ +//' <<<"$row")
[ ${#name} -ge 100 ] || fail "the name is only ${#name} characters: $name"
mod=$(awk '{print $3}' <<<"$row")
[ "$mod" = cxxlong ] || { cat "$TMP/top.txt"; fail "module column of the long row: '$mod', want cxxlong"; }
hdr=$(grep -E '^ *self% +total% ' "$TMP/top.txt")
[ "$(awk '{print $3}' <<<"$hdr")" = module ] || fail "header: $hdr"
# every row's third column is a module (a file name), never a piece of a name
bad=$(grep -E '^ *[0-9.]+% ' "$TMP/top.txt" | awk '$3 !~ /^(\[[a-z.]+\]|[A-Za-z0-9_.+-]+)$/' | head -3)
[ -z "$bad" ] || fail "rows whose module column is not a module: $bad"
ok "long C++ name (${#name} chars) keeps its module column (cxxlong): $row"
