#!/usr/bin/env bash
# rtdiag's main job on a built-in example. Grows as modules land.
set -euo pipefail
B=${1:-build}
R="$B/rtdiag"
echo "== rtdiag $("$R" --version | cut -d' ' -f2): built-in example"
"$R" --help
