# What the CLI tests share: check runs a command and compares its exit,
# has looks for a pattern in what it printed; both count into $fail.
check() { # description, expected exit, command...
  local what=$1 want=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" != "$want" ]; then echo "FAIL: $what: exit $rc, want $want"; echo "$out"; fail=$((fail+1)); return 1; fi
  echo "ok: $what"
}
has() { # description, pattern (in $out)
  if ! grep -qE -- "$2" <<<"$out"; then echo "FAIL: $1: no /$2/ in:"; echo "$out"; fail=$((fail+1)); else echo "ok: $1"; fi
}
