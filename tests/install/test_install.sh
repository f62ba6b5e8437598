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
leaked=$(nm -D --defined-only "$P/lib/librtdiag.so" | awk '$2 ~ /[TDBR]/ {print $3}' | grep -v '^rtd_' || true)
[ -z "$leaked" ] || fail "shared library exports non-rtd_ symbols: $(echo $leaked | head -c 300)"
echo "ok: librtdiag.so exports only rtd_* ($(nm -D --defined-only "$P/lib/librtdiag.so" | grep -c ' T rtd_') functions)"
