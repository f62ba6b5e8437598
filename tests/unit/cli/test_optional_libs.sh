#!/usr/bin/env bash
# rtdiag and librtdiag map no network stack, no DWARF reader at start-up
# (#34): libcurl, libmicrohttpd, GnuTLS, libyaml, libdebuginfod, libdw,
# liblzma and libseccomp are opened with dlopen by the commands that need
# them (src/common/optlib.h). Checked three ways: the ELF files' NEEDED
# entries, the libraries the dynamic loader really opens for commands that
# need none (LD_DEBUG=files), and the pkg-config file's link lines.
set -u
R=${RTDIAG:-build/rtdiag}
B=${RTD_BINARY_DIR:-build}
D=${RTD_SHARED_DIR:-../shared}/testdata
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
command -v readelf >/dev/null || { echo "SKIP: no readelf (binutils)"; exit 77; }
if [ -n "${RTD_SAN_FLAGS:-}" ]; then # set by tests/CMakeLists.txt in a sanitized build
  # CMakeLists.txt: clang 14's LeakSanitizer crashes on a dlopen'd
  # library's dynamic TLS, so the sanitized build links them all
  echo "SKIP: the sanitized build links the optional libraries (LeakSanitizer and dlopen'd TLS); the normal build checks this"
  exit 77
fi
opt='libcurl|libmicrohttpd|libgnutls|libyaml|libdebuginfod|libdw\.|liblzma|libseccomp|libssl|libkrb5|libldap|libnghttp2|libssh'
for f in "$R" "$B/librtdiag.so"; do
  [ -e "$f" ] || { bad "$f: not built"; continue; }
  n=$(readelf -d "$f" | grep NEEDED | grep -E "$opt")
  [ -z "$n" ] && ok "$(basename "$f"): no optional library in NEEDED" || bad "$(basename "$f") needs: $n"
done
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
loaded() { # what the loader opens for: CMD...
  LD_DEBUG=files "$@" 2>&1 >/dev/null | sed -n 's/.*file=\([^ ]*\).*\[0\].*needed by.*/\1/p; s/.*file=\([^ ]*\) .*dynamically loaded by.*/\1/p' | sort -u
}
check() { # name CMD...
  local name=$1; shift
  local l; l=$(loaded "$@")
  [ -n "$l" ] || { bad "$name: LD_DEBUG showed no library at all (loader changed?)"; return; }
  local o; o=$(echo "$l" | grep -E "$opt")
  [ -z "$o" ] && ok "$name loads only: $(echo $l)" || bad "$name loads $(echo $o)"
}
check "rtdiag --version" "$R" --version
nt=$D/nettrace/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace
if [ -s "$nt" ]; then
  check "rtdiag nettrace stats" "$R" nettrace stats "$nt"
  check "rtdiag nettrace cat --json" "$R" nettrace cat --json "$nt"
else
  echo "skip: $nt not present (../shared/testdata)"
fi
gt=$D/gotrace/v1/stress_1_19_good
[ -s "$gt" ] && check "rtdiag gotrace stats" "$R" gotrace stats "$gt"
# the loader itself must say so when a command does open one: the agent's
# config reader (libyaml), so the check above is not blind to dlopen
printf '# nothing but defaults\n' >"$T/agent.yaml"
l=$(loaded "$R" agent --config "$T/agent.yaml" --target pid=$$ --check-config)
echo "$l" | grep -q libyaml && ok "agent --check-config opens libyaml to read its config" ||
  bad "agent --config --check-config did not open libyaml ($(echo $l))"
pc=$B/rtdiag.pc
if [ -s "$pc" ] && command -v pkg-config >/dev/null; then
  libs=$(PKG_CONFIG_PATH=$B pkg-config --static --libs rtdiag 2>&1)
  o=$(echo "$libs" | tr ' ' '\n' | grep -E -- "-l(curl|microhttpd|gnutls|yaml|debuginfod|dw|lzma|seccomp)$")
  [ -z "$o" ] && ok "rtdiag.pc --static --libs: $libs" || bad "rtdiag.pc links $(echo $o)"
else
  echo "skip: no $pc or pkg-config"
fi
echo "$fail failed"
[ "$fail" = 0 ]
