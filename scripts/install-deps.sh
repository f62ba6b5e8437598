#!/usr/bin/env bash
# Install the Debian packages rtdiag needs, only those missing.
# Runs as root on a fresh Debian 12 machine (CI and developers alike).
set -euo pipefail
PKGS=(
  build-essential cmake pkg-config            # build
  libtraceevent-dev libtracefs-dev            # perf: tracepoint formats, dynamic probes
  libelf-dev libdw-dev zlib1g-dev             # symbols (uprobes), pprof gzip
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
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#PKGS[@]} Debian packages present"
else
  echo "deps: installing ${missing[*]}"
  if [ "$(id -u)" != 0 ]; then echo "deps: need root to apt-get install" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  # golang-1.22/1.23 exist only in bookworm-backports: add it when no
  # source lists it (backports' default pin 100 upgrades nothing else).
  if ! grep -rqsE '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" >/etc/apt/sources.list.d/backports.list
    echo "deps: added bookworm-backports to /etc/apt/sources.list.d/backports.list"
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "deps: installed"
fi
if ! command -v dotnet >/dev/null; then
  echo "deps: warning: no 'dotnet' on PATH; .NET integration tests will be skipped" >&2
fi
