# Every PLT stub named as perf script names it: .plt's header (".plt"),
# each entry of .plt or .plt.sec by the GOT slot it jumps through
# ("realloc@plt"), an IRELATIVE's by its IFUNC or "offset_0x...@plt", and
# .plt.got's stubs by .rela.dyn. libc lists its IRELATIVE relocations
# after the others in .rela.plt, so table order named its stubs wrongly
# (a sample in __tunable_get_val@plt was "?"). No run can be made to
# sample every stub: the perf.data here is crafted (plt_data.py), one
# sample at each stub objdump labels, each in a process of its own, read
# by perf script and by rtdiag; both must name each sample alike.
. "$(dirname "$0")/lib.sh"
command -v perf >/dev/null || skip "perf (linux-perf) not installed: nothing to compare with"
command -v objdump >/dev/null || skip "objdump (binutils) not installed"
printf '%s\n' '#include <stdio.h>' '#include <stdlib.h>' '#include <string.h>' \
  'int main(int c, char **v) { char *p = malloc(64); snprintf(p, 64, "%s", v[0]);' \
  '  printf("%zu %d\n", strlen(p), abs(c)); free(p); return 0; }' > "$TMP/pl.c"
gcc -O1 "$TMP/pl.c" -o "$TMP/lazy" || fail "cannot build lazy"
# IBT's second PLT (.plt.sec) and an eagerly bound one
gcc -O1 -fcf-protection=full -Wl,-z,ibtplt,-z,now "$TMP/pl.c" -o "$TMP/ibt" || fail "cannot build ibt"
LIBC=$(ldd "$TMP/lazy" | awk '/libc\.so/ {print $3}')
LDSO=$(readlink -f "$(ldd "$TMP/lazy" | awk '/ld-linux/ {print $1}')")
[ -f "$LIBC" ] && [ -f "$LDSO" ] || fail "libc or ld.so not found: '$LIBC' '$LDSO'"
objdump -h -w "$TMP/ibt" | grep -q ' \.plt\.sec ' || echo "note: this linker made no .plt.sec"
# one process per stub: mapped whole at 0x7f0000000000, a sample at the
# stub's file offset (objdump's labels in .plt, .plt.sec and .plt.got)
python3 - "$LIBC" "$LDSO" "$TMP/lazy" "$TMP/ibt" > "$TMP/in" <<'PY' || fail "finding the stubs"
import os, re, subprocess, sys
pid = 1000
for f in sys.argv[1:]:
    secs = {}
    for l in subprocess.run(["objdump", "-h", "-w", f], capture_output=True, text=True, check=True).stdout.splitlines():
        w = l.split()
        if len(w) > 5 and w[1].startswith(".plt"):
            secs[w[1]] = (int(w[3], 16), int(w[5], 16))
    out = subprocess.run(["objdump", "-d", "-w", "-j", ".plt", "-j", ".plt.sec", "-j", ".plt.got", f],
                         capture_output=True, text=True).stdout
    sec, n = None, 0
    for l in out.splitlines():
        m = re.match(r"Disassembly of section (\S+):", l)
        if m:
            sec = m.group(1)
            continue
        m = re.match(r"([0-9a-f]+) <.*>:$", l)
        if m and sec in secs:
            pid += 1
            n += 1
            vma, off = secs[sec]
            print("mmap %d 0x7f0000000000 %d 0 %s" % (pid, os.stat(f).st_size, f))
            print("sample %d %#x" % (pid, 0x7f0000000000 + int(m.group(1), 16) - vma + off))
    if not n:
        sys.exit("%s: objdump labels no PLT stub" % f)
    print("%s: %d stubs" % (f, n), file=sys.stderr)
PY
python3 "$(dirname "$0")/plt_data.py" "$TMP/plt.data" < "$TMP/in" || fail "plt_data.py"
perf script -i "$TMP/plt.data" -F tid,ip,sym --no-inline > "$TMP/plt.script" 2> "$TMP/plt.err" || { cat "$TMP/plt.err"; fail "perf script"; }
"$R" convert "$TMP/plt.data" --no-inline --thread-roots --type samples -f folded -o "$TMP/plt.folded" || fail "rtdiag convert"
python3 - "$TMP/plt.script" "$TMP/plt.folded" <<'PY' || fail "perf script and rtdiag name PLT stubs differently"
import re, sys
perf, tid = {}, None
for line in open(sys.argv[1]):
    if line.startswith("\t"):
        perf[tid] = line.split(None, 1)[1].split(" (")[0].strip()
    elif line.strip():
        tid = int(line.split()[0])
mine = {}
for line in open(sys.argv[2]):
    stack, n = line.rstrip("\n").rsplit(" ", 1)
    root, leaf = stack.split(";", 1)
    mine[int(re.search(r"\(tid (\d+)\)", root).group(1))] = leaf
bad = [(t, perf[t], mine.get(t)) for t in sorted(perf) if perf[t] != mine.get(t)]
kinds = sorted({re.sub(r"^offset_0x[0-9a-f]+", "offset_*", n) for n in perf.values() if not n.startswith("[")})
print("%d stubs: perf script and rtdiag name %d alike; %d names, e.g. %s" %
      (len(perf), len(perf) - len(bad), len(kinds), ", ".join(kinds[:6])))
for t, p, m in bad[:20]:
    print("  pid %d: perf %s, rtdiag %s" % (t, p, m))
sys.exit(1 if bad or len(mine) != len(perf) or not perf else 0)
PY
ok "every PLT stub of libc, ld.so and two programs named as perf script names it"
