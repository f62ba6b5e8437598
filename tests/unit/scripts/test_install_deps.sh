#!/usr/bin/env bash
# scripts/install-deps.sh adds bookworm-backports from the archive the
# machine already uses: read from apt sources in both formats (fixtures
# here), never a fixed host written in the script.
set -u
S=${RTD_SOURCE_DIR:-.}/scripts/install-deps.sh
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
# the function alone, without running the installer
sed -n '/^APT_ETC=/,/^}/p' "$S" >"$T/fn.sh"
grep -q '^debian_source()' "$T/fn.sh" || { echo "FAIL: no debian_source() in $S"; exit 1; }
src() { (RTD_APT_ETC=$1; source "$T/fn.sh"; debian_source); }

mkdir -p "$T/a/sources.list.d"   # deb822, as Debian 12 installs it
cat >"$T/a/sources.list.d/debian.sources" <<'X'
Types: deb
URIs: http://security.mirror.test/debian-security
Suites: bookworm-security
Components: main

Types: deb deb-src
URIs: http://mirror.test/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
X
got=$(src "$T/a"); [ "$got" = "http://mirror.test/debian|/usr/share/keyrings/debian-archive-keyring.gpg" ] && ok "deb822 source: $got" || bad "deb822 source: got '$got'"

mkdir -p "$T/b/sources.list.d"   # one-line format with options
echo 'deb [arch=amd64 signed-by=/k.gpg] http://proxy.test:3142/debian bookworm main' >"$T/b/sources.list"
got=$(src "$T/b"); [ "$got" = "http://proxy.test:3142/debian|/k.gpg" ] && ok "one-line source: $got" || bad "one-line source: got '$got'"

mkdir -p "$T/c/sources.list.d"   # no bookworm source at all
echo 'deb http://x.test/debian trixie main' >"$T/c/sources.list"
src "$T/c" >/dev/null && bad "no bookworm source: found one" || ok "no bookworm source: refused"

# no package-archive host written into the set-up files
if grep -nE 'https?://[^ "]*(debian|ubuntu)' "$S" | grep -v '^\s*#'; then bad "install-deps.sh names an archive host"; else ok "no archive host in install-deps.sh"; fi
[ $fail -eq 0 ] && echo "all passed" || { echo "$fail failed"; exit 1; }
