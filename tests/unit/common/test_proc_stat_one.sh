#!/usr/bin/env bash
# /proc/PID/stat has one reader, in src/common (rtd_pstat_read() and
# rtd_pstat_parse(), issue #29: it was parsed in five places, each with its
# own idea of where the command's parentheses end). No file of src/ or
# tools/ outside src/common names a process's or thread's stat file.
# The check is first tried on a made-up tree, so a pattern that matches
# nothing cannot pass for a clean one.
set -u
S=${RTD_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
fail=0
# a string literal ending in "/stat" after a pid ("/proc/%d/stat",
# "%s/%d/stat", ".../task/%d/stat"); /proc/stat (the system's) is not a
# process's and not matched
scan() { # ROOT: the breaches, "file:line: text"
	(cd "$1" && grep -rnE --include='*.c' --include='*.h' \
		'"[^"]*(%[a-z]*d|%[a-z]*u|PRI[dui][0-9]*)[^"]*/stat"' src tools 2>/dev/null |
		grep -v '^src/common/')
}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/src/common" "$T/src/x" "$T/tools/y"
printf 'snprintf(p, n, "%%s/%%d/stat", dir, pid);\n' > "$T/src/common/proc.c"
printf 'snprintf(p, n, "%%s/stat", dir); /* btime */\n' > "$T/src/x/boot.c"
printf 'snprintf(p, n, "/proc/%%d/stat", pid);\n' > "$T/src/x/own.c"
printf 'snprintf(p, n, "/proc/%%d/task/%%llu/stat", pid, t);\n' > "$T/tools/y/cli.c"
out=$(scan "$T")
if grep -q '^src/x/own.c:1:' <<<"$out" && grep -q '^tools/y/cli.c:1:' <<<"$out" &&
	! grep -qE '^src/common/|boot.c' <<<"$out"; then
	echo "ok: a made-up tree's own stat readers are found, src/common's and /proc/stat are not"
else
	echo "FAIL: the check on a made-up tree found: $out"; fail=1
fi
out=$(scan "$S")
if [ -n "$out" ]; then
	echo "FAIL: /proc/PID/stat read outside src/common (use rtd_pstat_read()):"
	echo "$out"; fail=1
else
	echo "ok: /proc/PID/stat is read only in src/common"
fi
exit $fail
