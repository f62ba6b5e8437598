#!/usr/bin/env bash
# Run every module's benchmark (bench/<module>/run.sh), each of which runs
# rtdiag side by side with the tool it must beat and prints ratios.
# Usage: bench/run.sh [BUILD_DIR] [MODULE...]
set -u
B=$(cd "${1:-build}" && pwd); shift || true
here=$(cd "$(dirname "$0")" && pwd)
mods=("$@")
[ ${#mods[@]} -gt 0 ] || mods=($(cd "$here" && ls -d */ 2>/dev/null | tr -d /))
rc=0
for m in "${mods[@]}"; do
  [ -x "$here/$m/run.sh" ] || [ -f "$here/$m/run.sh" ] || continue
  echo "=== bench: $m"
  bash "$here/$m/run.sh" "$B" || { echo "bench $m failed"; rc=1; }
done
exit $rc
