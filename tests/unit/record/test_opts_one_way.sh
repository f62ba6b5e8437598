#!/usr/bin/env bash
# Structs of libbpf's shape (`size_t sz` first) are checked one way
# (issue #29: by hand in 17 files, four ways, one of them refusing exactly
# the older callers sz exists for): rtd_opts_check()/rtd_opts_copy(), or
# rtd_opts_at_size() (src/common/opts.h) on a hot path. No file of src/
# compares a caller's sz itself, but:
#  - src/record/record.c, where the check lives;
#  - src/record/source.c: struct rtd_source_ops is borrowed (kept, not
#    copied), so after RTD_OPTS_VALID() each callback is read only when
#    the caller's sz reaches it;
#  - `sz < sizeof(size_t)` on a stats struct the library fills (the
#    precondition of rtd_stats_copy(), src/common/stats.h).
# The check is first tried on a made-up tree, so a pattern that matches
# nothing cannot pass for a clean one.
set -u
S=${RTD_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
scan() { # ROOT: the breaches, "file:line: text"
	(cd "$1" && grep -rnE --include='*.c' --include='*.h' \
		'(->|\.)[[:space:]]*sz[[:space:]]*(<|>|<=|>=|!=|==)|(<|>|<=|>=|!=|==)[[:space:]]*[A-Za-z_][A-Za-z_0-9]*(->|\.)sz\b' src 2>/dev/null |
		grep -vE '^src/record/(record|source)\.c:' |
		grep -vE '(->|\.)sz < sizeof\(size_t\)')
}
fail=0
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/src/record" "$T/src/x"
printf 'if (o->sz < 8)\n' > "$T/src/record/record.c"
printf 'if (!st || st->sz < sizeof(size_t))\n' > "$T/src/x/stats.c"
printf 'if (!t || t->sz < sizeof(*t))\n' > "$T/src/x/track.c"
printf 'bool b = s.sz >= offsetof(struct x, y);\n' > "$T/src/x/dot.c"
printf 'if (sizeof(*m) != m->sz)\n' > "$T/src/x/rev.c"
out=$(scan "$T")
if grep -q '^src/x/track.c:1:' <<<"$out" && grep -q '^src/x/dot.c:1:' <<<"$out" &&
	grep -q '^src/x/rev.c:1:' <<<"$out" && ! grep -qE 'record.c|stats.c' <<<"$out"; then
	echo "ok: a made-up tree's hand checks are found, the allowed ones are not"
else
	echo "FAIL: the check on a made-up tree found: $out"; fail=1
fi
out=$(scan "$S")
if [ -n "$out" ]; then
	echo "FAIL: sz compared by hand (use rtd_opts_copy(), or rtd_opts_at_size() on a hot path):"
	echo "$out"; fail=1
else
	echo "ok: no struct's sz is compared by hand in src/"
fi
exit $fail
