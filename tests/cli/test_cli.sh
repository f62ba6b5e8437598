#!/usr/bin/env bash
# The CLI's contract: help, version, usage errors exit 2 with a hint.
set -u
fail=0
. "$(dirname "$0")/lib.sh"
R=${RTDIAG:?RTDIAG not set}
check "--version" 0 "$R" --version && has "version text" '^rtdiag [0-9]+\.[0-9]+\.[0-9]+$'
check "--help" 0 "$R" --help && has "lists every group" 'dotnet.*' && has "nettrace" 'nettrace' && has "perf" 'perf ' && has "gotrace" 'gotrace'
check "no args" 2 "$R"
check "unknown command" 2 "$R" frobnicate && has "hint" "Try 'rtdiag --help'"
for g in dotnet nettrace perf gotrace; do
  check "help $g" 0 "$R" help "$g" && has "help $g usage" "rtdiag $g"
  check "$g --help" 0 "$R" "$g" --help
  check "$g without subcommand" 2 "$R" "$g" && has "$g hint" "Try 'rtdiag help $g'"
  check "$g bad subcommand" 2 "$R" "$g" no-such-sub
done
check "help unknown" 2 "$R" help nosuch && has "names it" "no command 'nosuch'" && has "lists the commands" "commands: dotnet" && has "points at --help" "Try 'rtdiag --help'"
if grep -q "help help" <<<"$out"; then echo "FAIL: help unknown: sends the user to 'help help'"; fail=$((fail+1)); fi
check "help unknown sub" 2 "$R" help nettrace nosuch && has "names it" "'nettrace' has no subcommand 'nosuch'" && has "hint" "Try 'rtdiag help nettrace'"
check "help help" 0 "$R" help help && has "says what help does" "usage: rtdiag help \\[COMMAND"
# a failed command leaves an existing output as it was (out.h): here the
# --record of a session whose process does not exist
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
echo keep >"$T/k.rec"
check "collect --record, no such process" 1 "$R" dotnet collect -p 999999 --record "$T/k.rec" -o "$T/x.nettrace" && has "says why" "pid 999999: no such process"
[ "$(cat "$T/k.rec")" = keep ] && [ "$(ls "$T")" = k.rec ] && echo "ok: --record FILE kept as it was, nothing else left" || { echo "FAIL: --record: $(ls -la "$T")"; fail=$((fail+1)); }
check "collect --record into a missing folder" 1 "$R" dotnet collect -p 999999 --record "$T/no/k.rec" && has "checked first" "$T/no/k.rec: folder"
if [ $fail -ne 0 ]; then echo "$fail failed"; exit 1; fi
echo "cli: all checks passed"
