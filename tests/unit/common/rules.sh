# rules.sh - sourced by the tests of grep rules over the tree
# (test_hygiene.sh, test_layers.sh). A rule RULE is a function
# scan_RULE ROOT printing its findings as FILE:LINE:TEXT. check() first
# tries it on a made-up tree (files made with mk() under $T: those it must
# find, those it must let pass), so a pattern that matches nothing cannot
# pass for a clean tree, then on the tree $S. $fail is 1 after a failure.
fail=0
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mk() { mkdir -p "$(dirname "$T/$1")"; printf '%s\n' "$2" > "$T/$1"; }
check() { # RULE "FOUND..." "PASSED..." HINT
	local out f was=$fail
	out=$(scan_$1 "$T")
	for f in $2; do grep -q "^$f:[0-9]*:" <<<"$out" || { echo "FAIL: $1: made-up $f not found: $out"; fail=1; }; done
	for f in $3; do grep -q "^$f:" <<<"$out" && { echo "FAIL: $1: made-up $f found: $out"; fail=1; }; done
	[ $fail = "$was" ] && echo "ok: $1 on a made-up tree"
	out=$(scan_$1 "$S")
	if [ -n "$out" ]; then echo "FAIL: $1 ($4):"; echo "$out"; fail=1; else echo "ok: $1 holds in src/"; fi
	rm -rf "${T:?}"/*
}
