#!/usr/bin/env bash
# Install the Debian packages rtdiag needs, only those missing.
# Runs as root on a fresh Debian 12 machine (CI and developers alike).
set -euo pipefail
PKGS=(
  build-essential cmake pkg-config            # build
  libtraceevent-dev libtracefs-dev            # perf: tracepoint formats, dynamic probes
  libelf-dev libdw-dev zlib1g-dev             # symbols (uprobes), pprof gzip
  libzstd-dev                                 # perf.data: perf record -z records
  liblzma-dev libdebuginfod-dev libiberty-dev # symbols: MiniDebugInfo, debuginfod, demangling
  debuginfod elfutils                         # perf tests: a local debuginfod server, eu-strip
  libseccomp-dev                              # perf trace: syscall names
  libcmocka-dev                               # unit tests
  clang libclang-rt-14-dev                    # sanitizer build, libFuzzer
  golang-1.19-go golang-1.19-src              # real Go traces, go tool trace -d
  golang-1.22-go golang-1.23-go               # real new-format Go traces (bookworm-backports)
  linux-perf                                  # perf stat/record as the benchmark anchor
  hyperfine                                   # bench/: repeated timed runs
  python3                                     # small test helpers
  gdb                                         # agent test: holds a perf source's start (test_start_held)
  libmicrohttpd-dev libcurl4-openssl-dev      # agent: pull endpoints, push
  libgnutls28-dev openssl                     # agent: TLS credentials; test certificates
  libyaml-dev                                 # agent: config file
  prometheus                                  # agent test: a real scraper (+promtool)
  protobuf-compiler libxml2-utils             # pictures: protoc decodes Perfetto traces, xmllint reads SVG
  chromium                                    # pictures: real viewers (speedscope, SVG) in headless Chromium (node/npm: the machine's)
)
# From bookworm-backports even where bookworm has an older one (-t):
# libbpf 1.4 and bpftool 7.5 build the BPF programs (CO-RE, vmlinux.h from
# the kernel's BTF); clang (above) compiles them.
BPO_PKGS=(
  libbpf-dev bpftool                          # perf: off-CPU and syscall strings through BPF
)
# debian_source: "URI|SIGNED-BY" of the apt source that serves the suite
# bookworm, from deb822 .sources files or one-line .list files.
APT_ETC=${RTD_APT_ETC:-/etc/apt}   # tests point this at a fixture
debian_source() {
  local f
  for f in "$APT_ETC"/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    awk 'function flush() { if (deb && uri != "" && suites ~ /(^| )bookworm( |$)/) { print uri "|" key; found = 1; exit } deb = 0; uri = ""; suites = ""; key = "" }
         /^[ \t]*$/ { flush(); next }
         /^#/ { next }
         tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
         tolower($1) == "uris:" { uri = $2 }
         tolower($1) == "suites:" { $1 = ""; suites = $0; sub(/^ +/, "", suites) }
         tolower($1) == "signed-by:" { key = $2 }
         END { if (!found) flush() }' "$f" | grep -m1 . && return 0
  done
  for f in "$APT_ETC"/sources.list "$APT_ETC"/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    awk '$1 == "deb" { i = 2; key = ""; if ($2 ~ /^\[/) { for (; i <= NF; i++) { if ($i ~ /signed-by=/) { key = $i; sub(/.*signed-by=/, "", key); sub(/\]$/, "", key) } if ($i ~ /\]$/) { i++; break } } }
         if ($(i + 1) == "bookworm") { print $i "|" key; exit } }' "$f" | grep -m1 . && return 0
  done
  return 1
}
missing=() bpo_missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# libbpf-dev 1.1 (bookworm's) is not enough: ask for the backport's version
for p in "${BPO_PKGS[@]}"; do
  v=$(dpkg-query -W -f='${Status} ${Version}' "$p" 2>/dev/null || true)
  case $v in "install ok installed "*bpo*) ;; *) bpo_missing+=("$p") ;; esac
done
if [ ${#missing[@]} -eq 0 ] && [ ${#bpo_missing[@]} -eq 0 ]; then
  echo "deps: all $(( ${#PKGS[@]} + ${#BPO_PKGS[@]} )) Debian packages present"
else
  echo "deps: installing ${missing[*]} ${bpo_missing[*]}"
  if [ "$(id -u)" != 0 ]; then echo "deps: need root to apt-get install" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  # golang-1.22/1.23 exist only in bookworm-backports: add it when no
  # source lists it (backports' default pin 100 upgrades nothing else).
  # Take the archive this machine already uses for bookworm (whatever
  # mirror or proxy that is), never a fixed host.
  if ! grep -rqsE '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    src=$(debian_source) || { echo "deps: no apt source for bookworm found to add bookworm-backports beside" >&2; exit 1; }
    uri=${src%%|*}; key=${src#*|}
    { echo "Types: deb"; echo "URIs: $uri"; echo "Suites: bookworm-backports"; echo "Components: main"
      [ -n "$key" ] && echo "Signed-By: $key"; } >/etc/apt/sources.list.d/rtdiag-backports.sources
    echo "deps: added bookworm-backports from $uri to /etc/apt/sources.list.d/rtdiag-backports.sources"
  fi
  apt-get update -qq
  [ ${#missing[@]} -eq 0 ] || apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [ ${#bpo_missing[@]} -eq 0 ] || apt-get install -y -qq --no-install-recommends -t bookworm-backports "${bpo_missing[@]}" >/dev/null
  echo "deps: installed"
fi
if ! command -v dotnet >/dev/null; then
  echo "deps: warning: no 'dotnet' on PATH; .NET integration tests will be skipped" >&2
fi
