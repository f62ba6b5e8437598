#!/usr/bin/env bash
# The public headers' contract (docs/api.md): each include/rtdiag/*.h
# compiles alone as C11 and C++, no function is declared in two of them,
# rtdiag.h reaches them all, and docs/api.md's map is what they say.
set -u
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
exec python3 "$(dirname "$0")/check_headers.py" "${RTD_SOURCE_DIR:-.}"
