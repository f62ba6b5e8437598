#!/usr/bin/env bash
# Issue #29's hygiene rules that a grep over src/ can hold. Each rule is
# first tried on a made-up tree (what it must find, what it must let
# pass), so a pattern that matches nothing cannot pass for a clean tree.
#
# proc_stat: /proc/PID/stat has one reader, in src/common (rtd_pstat_read(),
#   rtd_pstat_parse(); it was parsed in five places, each with its own idea
#   of where the command's parentheses end). A string literal ending in
#   "/stat" after a pid, outside src/common; /proc/stat (the system's) is
#   not a process's and not matched.
# nspid: a process's pid in its own namespace (/proc/PID/status's NSpid)
#   has one reader, rtd_proc_ns_pid() in src/common (it was two, in the
#   IPC transport and the symbolizer).
# comm: a process's or thread's command name (/proc/.../comm) has one
#   reader, rtd_proc_comm() in src/common (it was seven), and
#   rtd_proc_comm_at() under a procfs root (the agent's configured one: it
#   read it twice itself); the CLI asks rtd_ipc_thread_name().
# environ: a process's environment (/proc/PID/environ) has one reader,
#   rtd_proc_env() in src/common, with getenv()'s rule (the first entry of
#   a name), and the TMPDIR a .NET runtime names its files by one,
#   rtd_proc_tmpdir(). There were three readers with three rules: the
#   symbolizer took the last TMPDIR, the IPC transport skipped an empty
#   one, the profiler any DOTNET_/COMPlus_PerfMapEnabled entry.
# status: /proc/PID/status has one reader, in src/common:
#   rtd_proc_status_num() for a number field (the profiler's Tgid had its
#   own strstr), rtd_proc_ns_pid() for NSpid.
# exe_cmdline: a process's executable (/proc/PID/exe) and arguments
#   (/proc/PID/cmdline) have one reader each, rtd_proc_exe() and
#   rtd_proc_cmdline() in src/common, under /proc or the agent's procfs
#   root (the IPC transport and the agent each built both paths).
# maps: a process's mappings (/proc/PID/maps, /proc/self/maps) have one
#   reader, rtd_proc_maps() in src/common, a line at a time through the one
#   parser (rtd_maps_parse(), fuzzed); it was read in seven places with
#   five parsers (fgets into 512 B to 4 KB lines, a 1 MB or whole-file
#   slurp, sscanf or strstr). The CLI asks rtd_ipc_proc_loads_dotnet().
# cgroup: a process's cgroup (/proc/PID/cgroup) has one reader,
#   rtd_proc_cgroup() in src/common, and one rule for which line names it
#   (rtd_proc_cgroup_pick(): v2's "0::" wherever it is, else the first v1
#   hierarchy); it was the agent's own. /sys/fs/cgroup paths are the
#   hierarchy's, not a process's file, and not matched.
# proc_root: paths through a process's root (/proc/PID/root) and to the
#   files behind its mappings (/proc/PID/map_files) are built in one place
#   each, checking that they fit (rtd_proc_root_path(),
#   rtd_proc_open_in_root(), rtd_proc_map_file_open()); they were built in
#   eight places (the symbolizer, its unwinder, perf's uprobe lookup and
#   perf.data writer, the IPC transport, the CLI's launch clean-up), the
#   open-in-root fallback twice and the deleted-file branch twice. The CLI
#   asks rtd_ipc_socket_own_path().
# What is left of "/proc/%..." and "/proc/self..." outside src/common is
#   not a process's file read another way: /proc/self/fd/N (a descriptor
#   of ours named for another API), /proc/PID (stat'ed: is it
#   there), /proc/PID/fd, /proc/PID/net/tcp and
#   /proc/PID/ns/net (the Go capture's socket lookup, one reader each),
#   /proc/self/statm (the agent's own memory), /proc/self/mountinfo (the
#   system's mounts, perf's cgroup paths); /proc/sys files are the
#   system's (kallsyms has its own rule).
# tasks: a process's threads (/proc/PID/task) are listed in one place,
#   rtd_proc_tasks() in src/common; they were listed three ways (the
#   threads' CPU reader, perf's monitor, perf.data's writer: atoi on any
#   name that began with a digit).
# kallsyms: /proc/kallsyms (or a file of its format a user names) has one
#   reader, in src/common (rtd_kallsyms_read(), streaming in an 8 KB line
#   buffer; rtd_kallsyms_parse()); it was read three ways: the symbolizer
#   slurped it (~10 MB), the profiler's kernel ranges and perf.data's
#   kernel map each with fgets into 512 bytes and their own field rules.
# hexdigit: a hex digit's value has one function, hexval() in
#   src/common/textrd.h (with hex_field() for a number); it was written
#   out four times (the GUID parser, the providers' keywords, the Go text
#   format's string unquoting, textrd.h).
# opts_sz: structs of libbpf's shape (`size_t sz` first) are checked one
#   way (they were checked by hand in 17 files, four ways, one refusing
#   exactly the older callers sz exists for): rtd_opts_check()/_copy(), or
#   rtd_opts_at_size() (src/common/opts.h) on a hot path. No sz compared
#   by hand, but in src/record/record.c (the check itself), in
#   src/record/source.c (struct rtd_source_ops is borrowed, not copied:
#   after RTD_OPTS_VALID() a callback is read only when the caller's sz
#   reaches it), and `sz < sizeof(size_t)` on a stats struct the library
#   fills (rtd_stats_copy()'s precondition, src/common/stats.h).
# v1_in_v2: in the Go decoder `v1_` means the old format (Go 1.5-1.21); what
#   both formats use is `gtd_` (the decoder's failure, strings, stacks, its
#   hash table; it was `v1_` in v2.c, order2.c and v2state.h). A new-format
#   file (src/gotrace/v2*.c, v2*.h, order2.c) names nothing `v1_`, but the
#   old-format branch of rtd_gotrace_event_name() in v2spec.c (the public
#   name lookup of both formats), which reads the old format's v1_descs[].
set -u
S=${RTD_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
CMP='(<|>|<=|>=|!=|==)'
scan_proc_stat() { # ROOT
	(cd "$1" && grep -rnE --include='*.c' --include='*.h' \
		'"[^"]*(%[a-z]*d|%[a-z]*u|PRI[dui][0-9]*)[^"]*/stat"' src tools 2>/dev/null |
		grep -v '^src/common/')
}
scan_nspid() { # ROOT
	(cd "$1" && grep -rn --include='*.c' --include='*.h' '"[^"]*NSpid' src tools 2>/dev/null |
		grep -v '^src/common/')
}
scan_path() { # ROOT ERE: a string literal naming a /proc file, outside src/common
	(cd "$1" && grep -rnE --include='*.c' --include='*.h' "$2" src tools 2>/dev/null |
		grep -v '^src/common/')
}
scan_comm() { scan_path "$1" '"[^"]*/comm"'; }
scan_environ() { scan_path "$1" '"[^"]*/environ"'; }
scan_status() { scan_path "$1" '"[^"]*/status"'; }
scan_maps() { scan_path "$1" '"[^"]*/maps"'; }
scan_cgroup() { scan_path "$1" '"[^"]*%[a-z]*d/cgroup"'; }
scan_proc_root() { scan_path "$1" '"[^"]*%[a-z]*d/(root|map_files)\b'; }
scan_exe_cmdline() { scan_path "$1" '"[^"]*/(exe|cmdline)"'; }
scan_opts_sz() { # ROOT
	(cd "$1" && grep -rnE --include='*.c' --include='*.h' \
		"(->|\.)[[:space:]]*sz[[:space:]]*$CMP|(^|[^-])$CMP[[:space:]]*[A-Za-z_][A-Za-z_0-9]*(->|\.)sz\b" src 2>/dev/null |
		grep -vE '^src/record/(record|source)\.c:' | grep -vE '(->|\.)sz < sizeof\(size_t\)')
}
scan_v1_in_v2() { # ROOT
	(cd "$1" && grep -rnwE --include='*.c' --include='*.h' 'v1_[A-Za-z0-9_]+' src/gotrace 2>/dev/null |
		grep -E '^src/gotrace/(v2[^/]*\.[ch]|order2\.c):' |
		sed -E '/^src\/gotrace\/v2spec\.c:/s/\bv1_descs\[//g' | grep -wE 'v1_[A-Za-z0-9_]+')
}
scan_tasks() { scan_path "$1" '"[^"]*/task"'; }
scan_hexdigit() { # ROOT: a letter digit's value worked out by hand
	scan_path "$1" "'[aA]' \\+ 10"
}
scan_kallsyms() { # ROOT: a string naming the kallsyms file, outside src/common
	scan_path "$1" '"/proc/kallsyms"'
}
. "$(dirname "$0")/rules.sh"
mk src/common/proc.c 'snprintf(p, n, "%s/%d/stat", dir, pid);'
mk src/x/boot.c 'snprintf(p, n, "%s/stat", dir); /* btime */'
mk src/x/own.c 'snprintf(p, n, "/proc/%d/stat", pid);'
mk tools/y/cli.c 'snprintf(p, n, "/proc/%d/task/%llu/stat", pid, t);'
check proc_stat "src/x/own.c tools/y/cli.c" "src/common/proc.c src/x/boot.c" \
	"/proc/PID/stat read outside src/common: use rtd_pstat_read()"
mk src/common/proc.c 'l = strstr(buf, "\\nNSpid:");'
mk src/x/ipc.c 'char *l = strstr(buf, "\\nNSpid:");'
mk src/x/sym.c 'if (!memcmp(l, "NSpid:", 6))'
check nspid "src/x/ipc.c src/x/sym.c" "src/common/proc.c" \
	"NSpid read outside src/common: use rtd_proc_ns_pid()"
mk src/common/proc.c 'snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);'
mk src/x/a.c 'snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);'
mk src/x/b.c 'snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);'
mk src/agent/c.c 'snprintf(path, sizeof(path), "%s/%d/comm", proc_dir, (int)pid);'
mk tools/rtdiag/dotnet_counters.c 'snprintf(path, sizeof(path), "/proc/%d/comm", (int)a->t.pid);'
check comm "src/x/a.c src/x/b.c src/agent/c.c tools/rtdiag/dotnet_counters.c" "src/common/proc.c" \
	"/proc/.../comm read outside src/common: use rtd_proc_comm()"
mk src/record/record.c 'if (o->sz < 8)'
mk src/x/stats.c 'if (!st || st->sz < sizeof(size_t))'
mk src/x/track.c 'if (!t || t->sz < sizeof(*t))'
mk src/x/dot.c 'bool b = s.sz >= offsetof(struct x, y);'
mk src/x/rev.c 'if (sizeof(*m) != m->sz)'
mk src/x/set.c 'sp->st.sz = sizeof(sp->st);'
check opts_sz "src/x/track.c src/x/dot.c src/x/rev.c" "src/record/record.c src/x/stats.c src/x/set.c" \
	"sz compared by hand: use rtd_opts_copy(), or rtd_opts_at_size() on a hot path"
mk src/gotrace/v2.c 'return v1_fail(d, -RTD_E_CAP, off, "too many");'
mk src/gotrace/order2.c '	struct v1_tab ms, tasks;'
mk src/gotrace/v2state.h '	const struct v1_str **dstr;'
mk src/gotrace/v2spec.c 'return v1_descs[type].name;'
mk src/gotrace/v2text.c 'int x_v1_y = gtd_fail(d, 0, 0, "v1_ is old"); /* v1_ */'
mk src/gotrace/v1.c 'int v1_parse_header(const uint8_t *b);'
mk src/gotrace/dec.c 'rc = v1_order(d);'
check v1_in_v2 "src/gotrace/v2.c src/gotrace/order2.c src/gotrace/v2state.h" \
	"src/gotrace/v2spec.c src/gotrace/v2text.c src/gotrace/v1.c src/gotrace/dec.c" \
	"a v1_ name (old format) in a new-format file: what both formats use is gtd_"
mk src/common/proc.c 'snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);'
mk src/x/a.c 'snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);'
mk tools/y/b.c 'snprintf(p, n, "%s/%d/environ", dir, pid);'
mk src/x/c.c '/* reads /proc/PID/environ */'
check environ "src/x/a.c tools/y/b.c" "src/common/proc.c src/x/c.c" \
	"/proc/PID/environ read outside src/common: use rtd_proc_env() or rtd_proc_tmpdir()"
mk src/common/proc.c 'snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);'
mk src/x/a.c 'snprintf(path, sizeof(path), "/proc/%d/status", tid);'
mk src/x/b.c 'fputs("/status", f); /* not after a pid, still a status path */'
mk src/x/c.c 'int status = 0; /* "status" */'
check status "src/x/a.c src/x/b.c" "src/common/proc.c src/x/c.c" \
	"/proc/PID/status read outside src/common: use rtd_proc_status_num() or rtd_proc_ns_pid()"
mk src/common/proc.c 'snprintf(path, sizeof(path), "%s/%d/exe", root, (int)pid);'
mk src/x/a.c 'snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);'
mk src/x/b.c 'snprintf(path, sizeof(path), "%s/%d/cmdline", dir, (int)pid);'
mk src/x/c.c 'const char *tool = "dotnet.exe"; /* "cmdline" */'
check exe_cmdline "src/x/a.c src/x/b.c" "src/common/proc.c src/x/c.c" \
	"/proc/PID/exe or cmdline read outside src/common: use rtd_proc_exe(), rtd_proc_cmdline()"
mk src/common/maps.c 'snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);'
mk src/x/a.c 'snprintf(path, sizeof(path), "/proc/%d/maps", pid);'
mk src/x/b.c 'read_path("/proc/self/maps", &buf, &len, 64u << 20)'
mk tools/y/c.c 'snprintf(path, sizeof(path), "/proc/%d/maps", (int)tree[i]);'
mk src/x/d.c '/* the perf maps ("/tmp/perf-PID.map") */ int maps = 0;'
check maps "src/x/a.c src/x/b.c tools/y/c.c" "src/common/maps.c src/x/d.c" \
	"/proc/PID/maps read outside src/common: use rtd_proc_maps() (the CLI: rtd_ipc_proc_loads_dotnet())"
mk src/common/proc.c 'snprintf(path, sizeof(path), "%s/%d/cgroup", proc_dir, (int)pid);'
mk src/agent/proc.c 'snprintf(path, sizeof(path), "%s/%d/cgroup", proc_dir, (int)pid);'
mk tools/y/b.c 'snprintf(p, n, "/proc/%d/cgroup", pid);'
mk src/x/c.c 'snprintf(p, n, "/sys/fs/cgroup%s/cgroup.procs", path);'
check cgroup "src/agent/proc.c tools/y/b.c" "src/common/proc.c src/x/c.c" \
	"/proc/PID/cgroup read outside src/common: use rtd_proc_cgroup()"
mk src/common/proc.c 'int l = snprintf(out, n, "/proc/%d/root", (int)pid);'
mk src/x/a.c 'snprintf(full, sizeof(full), "/proc/%d/root%s", (int)pid, path);'
mk src/x/b.c 'snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", (int)pid, s, e);'
mk tools/y/c.c 'int n = snprintf(pre, sizeof(pre), "/proc/%d/root", (int)pid);'
mk src/x/d.c 'snprintf(p, n, "/proc/%d/roots", pid); /* "root" not a path name */'
check proc_root "src/x/a.c src/x/b.c tools/y/c.c" "src/common/proc.c src/x/d.c" \
	"/proc/PID/root or map_files path built outside src/common: use rtd_proc_root_path(), rtd_proc_open_in_root(), rtd_proc_map_file_open()"
mk src/common/kallsyms.c '#define RTD_KALLSYMS_PATH "/proc/kallsyms"'
mk src/x/a.c 'FILE *f = fopen(kallsyms ? kallsyms : "/proc/kallsyms", "re");'
mk src/x/b.c '	FILE *k = fopen("/proc/kallsyms", "r");'
mk src/x/c.c '	dso_add(w, -1, "[kernel.kallsyms]", true); /* kallsyms */'
check kallsyms "src/x/a.c src/x/b.c" "src/common/kallsyms.c src/x/c.c" \
	"kallsyms read outside src/common: use rtd_kallsyms_read()"
mk src/common/proc.c 'snprintf(path, sizeof(path), "/proc/%d/task", pid);'
mk src/x/a.c 'snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);'
mk src/x/b.c 'snprintf(path, sizeof(path), "%s/%d/task", dir, pid);'
mk src/x/c.c 'snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid); /* a task */'
check tasks "src/x/a.c src/x/b.c" "src/common/proc.c src/x/c.c" \
	"a process's threads listed outside src/common: use rtd_proc_tasks()"
mk src/common/textrd.h "		return c - 'a' + 10;"
mk src/x/a.c "			d = c - 'A' + 10;"
mk tools/y/b.c "	return ch - 'a' + 10;"
mk src/x/c.c "	int x = c - 'a' + 1; /* not a hex digit: + 10 */"
check hexdigit "src/x/a.c tools/y/b.c" "src/common/textrd.h src/x/c.c" \
	"a hex digit's value worked out outside src/common: use hexval() or hex_field() (src/common/textrd.h)"
exit $fail
