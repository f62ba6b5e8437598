# perf trace's path arguments read at entry (BPF), as strace reads them:
# for the issue's case, /bin/cat /etc/hostname with -e openat,read, every
# openat's filename in order is strace's (a short-lived program: read
# after the fact, most were '?'). Without BPF (a root process without
# CAP_BPF and CAP_SYS_ADMIN, through setpriv) one line on stderr says the
# strings are read after the fact and why, and an unreadable one is '?'.
. "$(dirname "$0")/lib.sh"
command -v strace > /dev/null || skip "no strace to compare with"
strace -qq -e trace=openat -o "$TMP/st.txt" /bin/cat /etc/hostname > /dev/null || fail "strace"
"$R" perf trace -e openat,read -o "$TMP/rt.txt" -- /bin/cat /etc/hostname > /dev/null 2> "$TMP/rt.err" || { cat "$TMP/rt.err"; fail "perf trace"; }
if grep -q 'read after the fact' "$TMP/rt.err"; then
  grep -Eq 'built without BPF|libbpf.so.1' "$TMP/rt.err" && skip "no BPF here: $(cat "$TMP/rt.err")"
  fail "strings not read at entry: $(cat "$TMP/rt.err")"
fi
sed -nE 's/^openat\([^,]*, "([^"]*)".*/\1/p' "$TMP/st.txt" > "$TMP/st.names"
sed -nE 's/.* openat\(dfd: [^,]*, filename: "([^"]*)".*/\1/p; s/.* openat\(dfd: [^,]*, filename: \?.*/?/p' "$TMP/rt.txt" > "$TMP/rt.names"
[ "$(wc -l < "$TMP/st.names")" -ge 3 ] || fail "strace saw too few openat calls"
diff "$TMP/st.names" "$TMP/rt.names" > "$TMP/diff" || { cat "$TMP/diff"; fail "filenames differ from strace's"; }
grep -Eq ' read\(fd: [0-9]+, ' "$TMP/rt.txt" || fail "no read calls"
ok "the same $(wc -l < "$TMP/st.names") openat filenames as strace, at entry"

if command -v setpriv > /dev/null; then
  setpriv --bounding-set=-bpf,-sys_admin --inh-caps=-bpf,-sys_admin \
    "$R" perf trace -e openat -o "$TMP/nb.txt" -- /bin/cat /etc/hostname > /dev/null 2> "$TMP/nb.err" || { cat "$TMP/nb.err"; fail "perf trace without CAP_BPF"; }
  grep -Eq '^rtdiag: path arguments read after the fact \(process_vm_readv; "\?" when gone\), not at entry: .*needs root, or CAP_BPF and CAP_PERFMON' "$TMP/nb.err" || { cat "$TMP/nb.err"; fail "without CAP_BPF: no reason line"; }
  [ "$(grep -c ' openat(' "$TMP/nb.txt")" = "$(wc -l < "$TMP/st.names")" ] || fail "without CAP_BPF: other calls"
  # each filename is strace's or marked unknown, never another string
  sed -nE 's/.* openat\(dfd: [^,]*, filename: "([^"]*)".*/\1/p; s/.* openat\(dfd: [^,]*, filename: \?.*/?/p' "$TMP/nb.txt" > "$TMP/nb.names"
  paste -d'\t' "$TMP/st.names" "$TMP/nb.names" | awk -F'\t' '$2 != "?" && $1 != $2 { print; bad = 1 } END { exit bad }' || fail "without CAP_BPF: a wrong filename"
  ok "without CAP_BPF: after the fact, says why, '?' for the $(grep -c '^?$' "$TMP/nb.names") unknown"
else
  echo "SKIP part: no setpriv to drop CAP_BPF"
fi
