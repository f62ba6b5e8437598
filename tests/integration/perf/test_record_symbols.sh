# perf record on stripped binaries: named through a build-id debug file,
# through MiniDebugInfo (.gnu_debugdata), and through a real local
# debuginfod server (Debian's debuginfod on 127.0.0.1 indexing a folder);
# without any of them, frames are module+0xOFFSET, never dropped.
. "$(dirname "$0")/lib.sh"
SRC=$RTD_SOURCE_DIR/tests/targets/perf-cpu/cpu_shares.c
CC=${RTD_CC:-cc}
command -v objcopy >/dev/null || skip "no objcopy (binutils)"
command -v xz >/dev/null || skip "no xz"
cd "$TMP"
# a plain program (no sanitizer runtime), with a build-id and DWARF
gcc -O1 -g -fno-omit-frame-pointer -Wl,--build-id=sha1 "$SRC" -o app -lpthread || fail "cannot build the app"
bid=$(readelf -n app | awk '/Build ID/{print $3}')
[ -n "$bid" ] || fail "no build-id"
objcopy --only-keep-debug app app.debug
strip -s app -o app.stripped
readelf -S app.stripped | grep -q '\.symtab' && fail "strip left a .symtab"

top() { "$R" perf record -F 499 --top 40 "$@" 2> err.txt; }

# 1. stripped, nothing to help: module+0xOFFSET
top -o none.txt -- ./app.stripped rounds=300 || { cat err.txt; fail "record of the stripped app"; }
grep -Eq 'app\.stripped\+0x[0-9a-f]+( |$)' none.txt || { cat none.txt; fail "no module+0xOFFSET frames for the stripped app"; }
grep -q gamma_fn none.txt && fail "gamma_fn named with no symbol source"
ok "stripped: module+0xOFFSET"

# 2. the build-id debug file
mkdir -p dbg/.build-id/${bid:0:2}
cp app.debug dbg/.build-id/${bid:0:2}/${bid:2}.debug
top --stats --debug-dir "$TMP/dbg" -o bid.txt -- ./app.stripped rounds=300 || { cat err.txt; fail "record with --debug-dir"; }
grep -q 'gamma_fn' bid.txt && grep -Eq ' beta( |$)' bid.txt || { cat bid.txt err.txt; fail "build-id debug file not used"; }
grep -q ' 1 debug files' err.txt || { cat err.txt; fail "--stats does not count the debug file"; }
ok "stripped + /usr/lib/debug-style build-id file"

# 3. MiniDebugInfo: an xz-compressed .symtab in .gnu_debugdata
nm -D app --format=posix --defined-only | awk '{print $1}' | sort > dynsyms
nm app --format=posix --defined-only | awk '$2 ~ /[TtW]/ {print $1}' | sort > funcsyms
comm -13 dynsyms funcsyms > keep
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=keep app.debug mini
xz -f mini
objcopy --add-section .gnu_debugdata=mini.xz app.stripped app.mdi
top --stats -o mdi.txt -- ./app.mdi rounds=300 || { cat err.txt; fail "record of the MiniDebugInfo app"; }
grep -q 'gamma_fn' mdi.txt || { cat mdi.txt; fail "gamma_fn not named from .gnu_debugdata"; }
grep -q ' 1 MiniDebugInfo' err.txt || { cat err.txt; fail "--stats does not count MiniDebugInfo"; }
ok ".gnu_debugdata (MiniDebugInfo)"

# 4. debuginfod: a real server on 127.0.0.1 indexing a folder of debug files
if command -v debuginfod >/dev/null; then
  mkdir srv && cp app.debug srv/
  port=$(( 20000 + $$ % 20000 ))
  debuginfod -F -p $port -d "$TMP/db.sqlite" -t 0 -g 0 -c 1 "$TMP/srv" > dbgd.log 2>&1 &
  dpid=$!
  trap 'kill $dpid 2>/dev/null; wait $dpid 2>/dev/null; rm -rf "$TMP"' EXIT
  indexed() { curl -sf -o /dev/null "http://127.0.0.1:$port/buildid/$bid/debuginfo"; }
  indexed_or_gone() { indexed || ! kill -0 $dpid; }
  wait_until indexed_or_gone
  kill -0 $dpid 2>/dev/null || { cat dbgd.log; fail "debuginfod exited"; }
  indexed || { cat dbgd.log; fail "debuginfod did not index the debug file"; }
  DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$TMP/cache \
    top --stats --debug-dir "$TMP/none" -o dbgd.txt -- ./app.stripped rounds=300 || { cat err.txt; fail "record with debuginfod"; }
  grep -q 'gamma_fn' dbgd.txt || { cat dbgd.txt err.txt; fail "gamma_fn not named through debuginfod"; }
  grep -q ' 1 from debuginfod' err.txt || { cat err.txt; fail "--stats does not count the debuginfod file"; }
  # --no-debuginfod asks no server
  DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$TMP/cache2 \
    top --no-debuginfod --debug-dir "$TMP/none" -o nod.txt -- ./app.stripped rounds=150 || fail "record --no-debuginfod"
  grep -q 'gamma_fn' nod.txt && fail "--no-debuginfod still named gamma_fn"
  kill $dpid; wait $dpid 2>/dev/null
  ok "debuginfod (local server)"
else
  echo "SKIP part: no debuginfod server installed"
fi

# 5. an unreadable binary and a deleted one: named as far as possible, the
# samples kept
# (the program runs until killed: started, then its file deleted once its
# exec is done, then recorded for 2 s, whatever the machine's load)
cp app app.del && chmod 755 app.del
./app.del 3600 & dp=$!
trap 'kill $dp 2>/dev/null; wait $dp 2>/dev/null; rm -rf "$TMP"' EXIT
exe_is() { [ "$(readlink "/proc/$1/exe")" = "$2" ]; }
wait_until exe_is $dp "$TMP/app.del" || fail "app.del did not start"
rm -f app.del
"$R" perf record -p $dp -d 2 -F 499 -o del.txt 2> err.txt || { cat err.txt; fail "record of a deleted binary"; }
kill $dp; wait $dp 2>/dev/null
grep -q gamma_fn del.txt || { cat del.txt; fail "deleted binary not named through /proc/PID/map_files"; }
ok "a deleted binary is read through map_files"

# 6. the vDSO: no file holds it; named from the kernel's image as perf
# names it (a program that spends its time in clock_gettime)
cat > vd.c <<'C'
#include <time.h>
int main(void)
{
	struct timespec t;
	unsigned long s = 0;
	for (long i = 0; i < 30000000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		s += (unsigned long)t.tv_nsec;
	}
	return (int)(s & 1) * 0;
}
C
gcc -O1 -g -fno-omit-frame-pointer vd.c -o vd || fail "cannot build vd"
top -o vd.txt -- ./vd || { cat err.txt; fail "record of vd"; }
grep -q '__vdso_clock_gettime' vd.txt || { cat vd.txt; fail "no vDSO frame named in a live record"; }
ok "vDSO frames named in a live record (test_perf_data compares them with perf, sample for sample)"
echo PASS
