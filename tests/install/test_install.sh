#!/usr/bin/env bash
# `cmake --install` into a fresh prefix gives headers, both libraries, the
# CLI and a pkg-config file with which an outside program builds and runs,
# and the shared library exports only rtd_* symbols.
set -u
B=${RTD_BINARY_DIR:?}
P=$(mktemp -d /tmp/rtd-install.XXXXXX); trap 'rm -rf "$P"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cmake --install "$B" --prefix "$P" > /dev/null || fail "cmake --install"
for f in include/rtdiag/rtdiag.h lib/librtdiag.so lib/librtdiag.a lib/pkgconfig/rtdiag.pc bin/rtdiag; do
  [ -e "$P/$f" ] || fail "missing $f"
done
echo "ok: installed headers, librtdiag.so/.a, rtdiag.pc, rtdiag"
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
cat > "$P/use.c" <<'C'
#include <rtdiag/rtdiag.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
	rtd_profile *p = rtd_profile_new("cpu", "nanoseconds");
	const char *st[] = {"main", "hot"};
	if (!p || rtd_profile_add(p, st, 2, 42) || rtd_profile_total(p) != 42)
		return 1;
	rtd_profile_free(p);
	printf("%s|%s\n", rtd_version(), rtd_strerror(-RTD_E_TRUNCATED));
	return 0;
}
C
CC=${RTD_CC:-cc}; SAN=${RTD_SAN_FLAGS:-}
$CC $SAN -std=c11 -Wall -Wextra -Werror "$P/use.c" $(pkg-config --cflags --libs rtdiag) -o "$P/use" || fail "build against pkg-config rtdiag"
out=$(LD_LIBRARY_PATH="$P/lib" "$P/use") || fail "program linked to librtdiag.so failed"
[ "$out" = "$("$P/bin/rtdiag" --version | cut -d' ' -f2)|input ends before the item is complete" ] || fail "unexpected output: $out"
echo "ok: a program built with pkg-config runs against the shared library"
$CC $SAN -std=c11 "$P/use.c" $(pkg-config --cflags rtdiag) "$P/lib/librtdiag.a" $(pkg-config --libs --static rtdiag | sed 's/-lrtdiag//') -o "$P/use-static" \
  || fail "static link with pkg-config --static"
"$P/use-static" > /dev/null || fail "statically linked program failed"
echo "ok: static link"
# librtdiag.a defines only rtd_* as global (issue #29): a program of its
# own with a function of every name the library uses inside (mono_ns,
# agent_pull, tl_frame_name...) links statically without a clash
internal=$(nm -g --defined-only "$B/librtdiag_internal.a" 2>/dev/null | awk 'NF == 3 && $3 !~ /^rtd_/ { print $3 }' | sort -u)
[ -n "$internal" ] || fail "no internal names read from $B/librtdiag_internal.a"
leaked=$(nm -g --defined-only "$P/lib/librtdiag.a" | awk 'NF == 3 { print $3 }' | grep -v '^rtd_' || true)
[ -z "$leaked" ] || fail "librtdiag.a defines non-rtd_ globals: $(echo $leaked | head -c 300)"
for n in $internal; do echo "void $n(void); void $n(void) {}"; done > "$P/clash.c"
$CC $SAN -std=c11 -w "$P/use.c" "$P/clash.c" $(pkg-config --cflags rtdiag) "$P/lib/librtdiag.a" $(pkg-config --libs --static rtdiag | sed 's/-lrtdiag//') \
  -o "$P/use-clash" 2> "$P/clash.err" || fail "static link beside the library's internal names: $(grep -m3 'multiple definition' "$P/clash.err")"
"$P/use-clash" > /dev/null || fail "the program with the library's internal names failed"
echo "ok: librtdiag.a defines only rtd_* ($(nm -g --defined-only "$P/lib/librtdiag.a" | grep -c ' T rtd_') functions); a program defining its $(wc -w <<<"$internal") internal names links statically"
leaked=$(nm -D --defined-only "$P/lib/librtdiag.so" | awk '$2 ~ /[TDBR]/ {print $3}' | grep -v '^rtd_' || true)
[ -z "$leaked" ] || fail "shared library exports non-rtd_ symbols: $(echo $leaked | head -c 300)"
echo "ok: librtdiag.so exports only rtd_* ($(nm -D --defined-only "$P/lib/librtdiag.so" | grep -c ' T rtd_') functions)"
