/* SPDX-License-Identifier: MIT */
/*
 * perf_record.c - 'rtdiag perf record': a sampling CPU profile of any
 * process, named by rtdiag itself, printed or written in one step.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_format.h"
#include "out.h"
#include "perf_cli.h"
#include "rtdiag/format.h"
#include "rtdiag/perf_data.h"
#include "rtdiag/perf_timeline.h"
#include "rtdiag/timeline.h"

enum {
	O_PID = 1, O_ALL, O_CGROUP, O_FREQ, O_EVENT, O_G, O_CG, O_STACK, O_DUR,
	O_KERNEL, O_NOKERNEL, O_OUT, O_FORMAT, O_TOP, O_PAGES, O_STATS,
	O_NOINLINE, O_DWARF_MAX, O_NODEBUGINFOD, O_NODOTNET, O_DEBUGDIR, O_THREADS,
	O_OFFCPU, O_STATE, O_NOREADER, O_SORT, O_VIA,
};

static const struct cli_opt record_opts[] = {
	{O_PID, "pid", 'p', CLI_ARG_PIDS, 0, "PID[,PID...]",
	 "these processes: every thread, and threads and children started later", 0, 0},
	{O_ALL, "all-cpus", 'a', CLI_ARG_NONE, 0, NULL,
	 "the whole system (default without -p, --cgroup or COMMAND)", 0, 0},
	{O_CGROUP, "cgroup", 0, CLI_ARG_STR, CLI_OPT_REPEAT, "PATH",
	 "the processes of a cgroup (relative to the cgroup v2 mount, or absolute)", 0, 0},
	{O_FREQ, "freq", 'F', CLI_ARG_INT, CLI_OPT_POSITIVE, "HZ",
	 "samples per second per thread (default 99)", 1, 100000},
	{O_EVENT, "event", 'e', CLI_ARG_STR, 0, "EVENT",
	 "what to sample on: cpu-clock (default), task-clock, or cycles where the CPU has a PMU", 0, 0},
	{O_G, NULL, 'g', CLI_ARG_NONE, 0, NULL,
	 "call stacks from frame pointers, as perf record -g (the default; --call-graph "
	 "for another way)", 0, 0},
	{O_CG, "call-graph", 0, CLI_ARG_STR, 0, "fp|dwarf[,SIZE]|none",
	 "frame pointers (default), a stack copy unwound with CFI, or the sampled address only", 0, 0},
	{O_STACK, "stack-size", 0, CLI_ARG_SIZE, 0, "SIZE",
	 "dwarf: user stack bytes copied per sample (default 8k, at most 65528)", 0, 0},
	{O_DUR, "duration", 'd', CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "stop after TIME (1.5, 200ms, 00:01:00; default: Ctrl-C or COMMAND's end)", 0, 0},
	{O_KERNEL, "kernel", 0, CLI_ARG_NONE, 0, NULL,
	 "kernel frames too (default when the kernel allows it)", 0, 0},
	{O_NOKERNEL, "no-kernel", 0, CLI_ARG_NONE, 0, NULL,
	 "user space only (--off-cpu: waits found in the kernel, stacks without its frames)", 0, 0},
	{O_OUT, "output", 'o', CLI_ARG_STR, CLI_OPT_REPEAT, "FILE",
	 "write to FILE (.folded, .pb.gz/.pprof, .svg, .speedscope.json, .txt, "
	 ".perfetto-trace/.pftrace, .data: perf.data for perf report) instead of "
	 "the top table on stdout; up to 4 "
	 "times: one recording, each FILE in the format its name says", 0, 0},
	{O_FORMAT, "format", 'f', CLI_ARG_CHOICE, 0,
	 "top|folded|pprof|svg|speedscope|perfetto|chrome-json",
	 "output format (default: from FILE's name, else top)", 0, 0},
	{O_THREADS, "per-thread", 0, CLI_ARG_NONE, 0, NULL,
	 "folded and SVG: a root frame per thread (pid/tid name)", 0, 0},
	{O_TOP, "top", 0, CLI_ARG_INT, CLI_OPT_POSITIVE, "N",
	 "rows of the top table (default 25)", 1, 1000000},
	CLI_OLD(O_TOP, NULL, 'n', CLI_ARG_INT, CLI_OPT_POSITIVE, "N",
		"--top N (-n is --name)", 1, 1000000),
	{O_SORT, "sort", 0, CLI_ARG_STR, 0, "KEYS",
	 "the top table by perf report's keys, comm,dso,sym (thread name, "
	 "module, function) and pid: the leaves' weight, as --no-children", 0, 0},
	{O_PAGES, "mmap-pages", 'm', CLI_ARG_INT, CLI_OPT_POSITIVE, "PAGES",
	 "ring data pages per CPU, a power of two (default perf's: 128 at the kernel's default mlock limit)", 1, 65536},
	{O_STATS, "stats", 0, CLI_ARG_NONE, 0, NULL,
	 "at the end, print samples, losses, processes and symbol sources on stderr", 0, 0},
	{O_NOREADER, "no-reader-thread", 0, CLI_ARG_NONE, 0, NULL,
	 "read the rings on the thread that symbolizes (by default a thread of "
	 "its own copies them out at once, up to 64 MiB, so that the kernel "
	 "does not drop samples while symbols load)", 0, 0},
	{O_NOINLINE, "no-inline", 0, CLI_ARG_NONE, 0, NULL,
	 "no inlined functions as frames of their own (no DWARF is read)", 0, 0},
	{O_DWARF_MAX, "dwarf-max", 0, CLI_ARG_SIZE, 0, "SIZE",
	 "DWARF held at once for inlined frames and file:line (default 8M: "
	 "libdw holds a file's debug sections decompressed; a file past it "
	 "is named from its symbol table, and said)", 0, 0},
	{O_NODEBUGINFOD, "no-debuginfod", 0, CLI_ARG_NONE, 0, NULL,
	 "never ask a debuginfod server (DEBUGINFOD_URLS) for symbols", 0, 0},
	{O_DEBUGDIR, "debug-dir", 0, CLI_ARG_STR, 0, "DIR[:DIR...]",
	 "folders of separate debug files (.build-id/xx/yyyy.debug; default /usr/lib/debug)", 0, 0},
	{O_NODOTNET, "no-dotnet", 0, CLI_ARG_NONE, 0, NULL,
	 "do not switch .NET perf maps on over the diagnostics IPC", 0, 0},
	{O_OFFCPU, "off-cpu", 0, CLI_ARG_NONE, 0, NULL,
	 "where threads wait off the CPU and how long (sched_switch stacks), instead of CPU samples", 0, 0},
	{O_STATE, "off-cpu-state", 0, CLI_ARG_STR, 0, "SDRT|all",
	 "--off-cpu: the waits kept, by state: S sleep, D disk, R preempted, T other (default SDT)", 0, 0},
	{O_VIA, "off-cpu-via", 0, CLI_ARG_CHOICE, 0, "auto|bpf|perf",
	 "--off-cpu: sum the waits in the kernel with BPF, or copy every switch "
	 "out through perf (default auto: BPF where allowed, else perf with the reason)", 0, 0},
	{0},
};

const struct cli_cmd perf_cmd_record = {
	"perf record", NULL,
	"A CPU profile of any process: where it spends CPU time, with names.\n"
	"Mixed-mode call stacks (kernel, native, .NET JIT, Go) named by rtdiag\n"
	"itself; prints the hottest functions (self %, total %, function,\n"
	"module), or writes folded stacks, pprof, SVG, speedscope, or a timeline\n"
	"of the samples (Perfetto, Chrome JSON).",
	record_opts, 0, 0, CLI_CMD_COMMAND, perf_record_main,
	"Samples use the cpu-clock timer at 99 Hz per thread; the call stack comes\n"
	"from frame pointers (-g, as perf), or from a copy of each sample's stack\n"
	"unwound with the binaries' .eh_frame (--call-graph dwarf: for code built without\n"
	"frame pointers; more overhead per sample). Names come from the ELF\n"
	"symbol tables, DWARF (inlined functions, on by default), separate debug\n"
	"files (/usr/lib/debug/.build-id), MiniDebugInfo, a debuginfod server\n"
	"(DEBUGINFOD_URLS), /proc/kallsyms, Go's pclntab, and perf maps\n"
	"(/tmp/perf-PID.map) for JIT code. A .NET process gets its perf map\n"
	"switched on over the diagnostics IPC for the recording and off again\n"
	"afterwards. Files are read through /proc/PID/root, so a process in a\n"
	"container is named from its own filesystem. An address no source names\n"
	"is shown as module+0xOFFSET.\n"
	"\n"
	"With -p, the recording ends when the processes exit (what was collected\n"
	"is kept). With -- COMMAND, it starts at COMMAND's exec and ends when it\n"
	"exits; rtdiag exits with COMMAND's exit code. As a user the kernel only\n"
	"lets sample user space (kernel.perf_event_paranoid=2), rtdiag does so\n"
	"and says it, as perf does.\n"
	"\n"
	"examples:\n"
	"  rtdiag perf record -p 4242 -d 10\n"
	"  rtdiag perf record -F 999 --call-graph dwarf -o cpu.folded -- ./app --bench\n"
	"  rtdiag perf record -a -d 5 -o cpu.pb.gz   # go tool pprof -top cpu.pb.gz\n"
	"  rtdiag perf record -p 4242 -d 10 -o cpu.svg -o cpu.pftrace   # ui.perfetto.dev\n"
	"  rtdiag perf record --off-cpu -p 4242 -d 10 -o waits.svg\n"
	"\n"
	"--off-cpu: each time a thread leaves the CPU, its stack (sched:sched_switch\n"
	"with a call chain) and state; when it runs again (a context-switch\n"
	"record), the time between is added to that stack: the waits of a\n"
	"thread, by where they happen (sleeps, locks, pipes, sockets, disk). The\n"
	"profile has Go's block profile types (contentions, delay) and a state\n"
	"label. Preempted time (R: runnable, waiting for a CPU) is left out\n"
	"unless --off-cpu-state has R. Where rtdiag may load BPF (root, or\n"
	"CAP_BPF and CAP_PERFMON; libbpf.so.1), a BPF program on sched_switch\n"
	"sums the waits per thread, stack and state in the kernel (as perf's\n"
	"own --off-cpu and bcc's offcputime do): nothing is copied out per\n"
	"switch. Otherwise, and for -g dwarf, --cgroup and timelines, every\n"
	"switch is sampled through perf (one line on stderr says why);\n"
	"--off-cpu-via picks one.\n",
};

/* --format's choices, in the order of its table entry */
enum fmt { FMT_TOP, FMT_FOLDED, FMT_PPROF, FMT_SVG, FMT_SPEEDSCOPE,
	   FMT_PERFETTO, FMT_CHROME_JSON, FMT_DATA, FMT_NONE = -1, FMT_REFUSED = -2 };

/* FILE's format by the library's one extension table (cli_format_ext());
 * FMT_NONE when it has no extension, FMT_REFUSED (after a usage message)
 * for one perf record cannot write. */
static enum fmt format_of_path(const char *path)
{
	struct cli_format f;
	const struct rtd_format_ext *x = rtd_format_ext_of(path);
	if (x && x->format && !strcmp(x->format, "perf.data"))
		return FMT_DATA; /* every record, as perf record writes them */
	if (cli_format_ext("perf record", path, CLI_FMT_PROFILE | CLI_FMT_TIMELINE, &f))
		return FMT_REFUSED;
	if (f.kind == CLI_FMT_TIMELINE) {
		if (f.tl == RTD_TIMELINE_FMT_PERFETTO)
			return FMT_PERFETTO;
		/* it was speedscope here until the table was one for all */
		fprintf(stderr, "rtdiag: %s: a Chrome JSON timeline (.json); a "
				"speedscope profile is .speedscope.json\n", path);
		return FMT_CHROME_JSON;
	}
	switch (f.kind ? f.prof : RTD_PROFILE_FMT_NONE) {
	case RTD_PROFILE_FMT_TOP: return FMT_TOP;
	case RTD_PROFILE_FMT_FOLDED: return FMT_FOLDED;
	case RTD_PROFILE_FMT_PPROF: return FMT_PPROF;
	case RTD_PROFILE_FMT_SVG: return FMT_SVG;
	case RTD_PROFILE_FMT_SPEEDSCOPE: return FMT_SPEEDSCOPE;
	default: return FMT_NONE;
	}
}

struct warn_ctx {
	unsigned n;
};

static void on_warn(const char *msg, void *ctx)
{
	struct warn_ctx *w = ctx;
	if (++w->n <= 20)
		fprintf(stderr, "rtdiag: %s\n", msg);
	else if (w->n == 21)
		fprintf(stderr, "rtdiag: (more symbol warnings not shown)\n");
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');
	return b && b[1] ? b + 1 : p;
}

static int write_top(struct rtd_perf_profiler *pr, const rtd_profile *prof,
		     FILE *f, size_t rows, uint64_t samples, bool offcpu)
{
	struct rtd_profile_entry *e = calloc(rows, sizeof(*e));
	if (!e)
		return -ENOMEM;
	int n = rtd_profile_top(prof, e, rows);
	double total = (double)rtd_profile_total(prof);
	if (offcpu)
		fprintf(f, "# %llu waits, %.3f s off the CPU\n",
			(unsigned long long)samples, total / 1e9);
	else
		fprintf(f, "# %llu samples, %.3f s of CPU\n",
			(unsigned long long)samples, total / 1e9);
	/* the module before the function, as perf report's Shared Object
	 * before Symbol: a C++ name of 200 characters pushes nothing out of
	 * its column */
	int mw = 6;
	for (int i = 0; i < n; i++) {
		const char *mod = rtd_perf_profiler_frame_module(pr, e[i].name);
		int l = mod ? (int)strlen(base_name(mod)) : 0;
		if (l > mw)
			mw = l < 40 ? l : 40;
	}
	fprintf(f, "%7s %7s  %-*s  %s\n", "self%", "total%", mw, "module",
		"function");
	for (int i = 0; i < n; i++) {
		const char *mod = rtd_perf_profiler_frame_module(pr, e[i].name);
		fprintf(f, "%6.2f%% %6.2f%%  %-*s  %s\n",
			total > 0 ? 100.0 * (double)e[i].self / total : 0.0,
			total > 0 ? 100.0 * (double)e[i].total / total : 0.0,
			mw, mod ? base_name(mod) : "", e[i].name);
	}
	free(e);
	return n < 0 ? n : 0;
}

/* The top table as perf report --sort KEYS --no-children prints it:
 * Overhead, then a column per key. */
static int write_sorted(const rtd_profile *prof, FILE *f, size_t rows,
			const char *keys, uint64_t samples)
{
	struct rtd_profile_sort_entry *e = calloc(rows, sizeof(*e));
	if (!e)
		return -ENOMEM;
	int n = rtd_profile_top_sorted(prof, rtd_profile_default_type(prof),
				       keys, e, rows);
	double total = (double)rtd_profile_total(prof);
	fprintf(f, "# %llu samples, %.3f s; by %s\n",
		(unsigned long long)samples, total / 1e9, keys);
	fprintf(f, "%8s", "overhead");
	for (const char *k = keys; *k;) {
		size_t l = strcspn(k, ",");
		fprintf(f, "  %-*.*s", k[l] ? 16 : 0,
			(int)l, k);
		k += l + (k[l] == ',');
	}
	fputc('\n', f);
	for (int i = 0; i < n; i++) {
		fprintf(f, "%7.2f%%", total > 0 ? 100.0 * (double)e[i].self / total : 0.0);
		for (const char *k = keys; *k;) {
			size_t l = strcspn(k, ",");
			int w = k[l] ? 16 : 0;
			if (!strncmp(k, "comm", 4))
				fprintf(f, "  %-*s", w, *e[i].comm ? e[i].comm : "?");
			else if (!strncmp(k, "pid", 3))
				fprintf(f, "  %-*lld", w, (long long)e[i].pid);
			else if (!strncmp(k, "dso", 3))
				fprintf(f, "  %-*s", w, *e[i].dso ? e[i].dso : "[unknown]");
			else
				fprintf(f, "  %-*s", w, e[i].sym);
			k += l + (k[l] == ',');
		}
		fputc('\n', f);
	}
	free(e);
	return n < 0 ? n : 0;
}

/* As many descriptors as allowed: each file symbolized is kept open
 * from its first sample until its names are read. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

struct record_args {
	pid_t pids[CLI_MAX_PIDS];
	size_t npids;
	const char *cgroups[16];
	size_t ncgroups;
	bool all, stats, kernel_set, no_kernel, per_thread, offcpu, no_reader;
	unsigned states, via;
	const char *outs[4];
	const char *sort; /* perf report's --sort keys, or NULL */
	int format, formats[4];
	size_t nouts;
	long long rows;
	struct rtd_perf_sampler_opts so;
	struct rtd_sym_opts sym;
	unsigned pages, flags;
	double duration;
	char **cmd;
};

/* --sort's keys, each comm, pid, dso or sym; 0, or -1 once refused. */
static int check_sort(const char *keys)
{
	for (const char *k = keys; *k;) {
		size_t l = strcspn(k, ",");
		if (!((l == 4 && !strncmp(k, "comm", 4)) ||
		      (l == 3 && (!strncmp(k, "pid", 3) ||
				  !strncmp(k, "dso", 3) ||
				  !strncmp(k, "sym", 3)))))
			return cli_cmd_usage(&perf_cmd_record,
				"--sort: '%.*s' is not comm, pid, dso or sym",
				(int)l, k), -1;
		k += l + (k[l] == ',');
	}
	return 0;
}

/* --off-cpu-state's letters of SDRT, or all, into *states; 0, or -1 once
 * refused. */
static int parse_states(const char *arg, unsigned *states)
{
	*states = 0;
	for (const char *c = arg; *c; c++) {
		const char *l = strchr("SDRT", *c);
		if (!strcmp(arg, "all")) {
			*states = RTD_PERF_OFFCPU_ALL;
			break;
		}
		if (!l || !*c)
			return cli_cmd_usage(&perf_cmd_record,
					     "--off-cpu-state %s: want letters of SDRT, or all",
					     arg), -1;
		*states |= 1u << (l - "SDRT");
	}
	if (!*states)
		return cli_cmd_usage(&perf_cmd_record,
				     "--off-cpu-state: want letters of SDRT, or all"), -1;
	return 0;
}

/* The options that go together or exclude each other, then each -o's
 * format; -1 when they hold, else the exit code. */
static int check_args(struct record_args *a)
{
	if (a->states && !a->offcpu)
		return cli_cmd_usage(&perf_cmd_record, "--off-cpu-state needs --off-cpu");
	if (a->via && !a->offcpu)
		return cli_cmd_usage(&perf_cmd_record, "--off-cpu-via needs --off-cpu");
	if (a->offcpu && (a->so.freq || a->so.event))
		return cli_cmd_usage(&perf_cmd_record,
				     "--off-cpu takes every context switch: no -F or -e");
	if (a->kernel_set && a->no_kernel)
		return cli_cmd_usage(&perf_cmd_record, "--kernel and --no-kernel exclude each other");
	if ((a->npids > 0) + (a->ncgroups > 0) + a->all + (a->cmd != NULL) > 1)
		return cli_cmd_usage(&perf_cmd_record,
				     "-p, --cgroup, -a and -- COMMAND exclude each other");
	if (a->format != FMT_NONE && a->nouts > 1)
		return cli_cmd_usage(&perf_cmd_record, "--format with several -o: "
				     "each FILE's name says its format");
	if (!a->nouts)
		a->outs[a->nouts++] = "-";
	for (size_t i = 0; i < a->nouts; i++) {
		a->formats[i] = a->format;
		if (a->formats[i] != FMT_NONE)
			continue;
		a->formats[i] = FMT_TOP;
		if (!cli_out_is_stdout(a->outs[i])) {
			a->formats[i] = format_of_path(a->outs[i]);
			if (a->formats[i] == FMT_REFUSED)
				return CLI_USAGE;
			if (a->formats[i] == FMT_NONE)
				return cli_cmd_usage(&perf_cmd_record,
						     "-o %s: cannot tell the format from the name "
						     "(.folded, .pb.gz, .pprof, .svg, .speedscope.json, "
						     ".perfetto-trace, .pftrace, .json, .txt): give "
						     "--format",
						     a->outs[i]);
		}
	}
	return -1;
}


static int parse(struct record_args *a, int argc, char **argv)
{
	struct cli_parser ps;
	struct cli_val v;
	int id;
	cli_opt_init(&ps, &perf_cmd_record, argc, argv);
	while ((id = cli_opt_next(&ps, &v)) > 0) {
		switch (id) {
		case O_PID:
			for (size_t i = 0; i < v.npids && a->npids < CLI_MAX_PIDS; i++)
				a->pids[a->npids++] = v.pids[i];
			break;
		case O_ALL: a->all = true; break;
		case O_CGROUP:
			if (a->ncgroups == 16)
				return cli_cmd_usage(&perf_cmd_record, "at most 16 cgroups");
			a->cgroups[a->ncgroups++] = v.str;
			break;
		case O_FREQ: a->so.freq = (unsigned)v.i; break;
		case O_EVENT: a->so.event = v.str; break;
		case O_G: {
			/* perf's -g is a flag; "-g dwarf" was rtdiag's */
			int k = cli_opt_old_word(&ps, "fp|dwarf|none", "-g", "--call-graph");
			a->so.callgraph = k < 0 ? RTD_PERF_CG_FP : (enum rtd_perf_callgraph)k;
			break;
		}
		case O_CG: {
			int m;
			if (cli_callgraph(v.str, &m, &a->so.stack_bytes))
				return cli_cmd_usage(&perf_cmd_record, "--call-graph: '%s' is not fp, dwarf, "
						     "dwarf,SIZE (8 to 65528 bytes) or none",
						     v.str);
			a->so.callgraph = (enum rtd_perf_callgraph)m;
			break;
		}
		case O_STACK:
			if (v.u < 8 || v.u > 65528)
				return cli_cmd_usage(&perf_cmd_record,
						     "--stack-size %s: want 8 to 65528 bytes", v.str);
			a->so.stack_bytes = (unsigned)v.u;
			break;
		case O_DUR: a->duration = v.d; break;
		case O_KERNEL: a->kernel_set = true; break;
		case O_NOKERNEL: a->no_kernel = true; break;
		case O_OUT:
			if (a->nouts == 4)
				return cli_cmd_usage(&perf_cmd_record, "at most 4 -o");
			a->outs[a->nouts++] = v.str;
			break;
		case O_FORMAT: a->format = (int)v.i; break;
		case O_TOP: a->rows = v.i; break;
		case O_SORT:
			a->sort = v.str;
			if (check_sort(v.str))
				return CLI_USAGE;
			break;
		case O_PAGES:
			if (v.i & (v.i - 1))
				return cli_cmd_usage(&perf_cmd_record,
						     "-m %s: want a power of two", v.str);
			a->pages = (unsigned)v.i;
			break;
		case O_STATS: a->stats = true; break;
		case O_NOREADER: a->no_reader = true; break;
		case O_NOINLINE: a->sym.flags |= RTD_SYM_NO_DWARF; break;
		case O_DWARF_MAX: a->sym.dwarf_max = v.u ? v.u : 1; break;
		case O_NODEBUGINFOD: a->sym.flags |= RTD_SYM_NO_DEBUGINFOD; break;
		case O_NODOTNET: a->flags |= RTD_PERF_PROF_NO_DOTNET; break;
		case O_DEBUGDIR: a->sym.debug_dirs = v.str; break;
		case O_THREADS: a->per_thread = true; break;
		case O_OFFCPU: a->offcpu = true; break;
		case O_VIA: a->via = (unsigned)v.i; break; /* enum rtd_perf_offcpu_via's order */
		case O_STATE:
			if (parse_states(v.str, &a->states))
				return CLI_USAGE;
			break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	a->cmd = ps.rest;
	return check_args(a);
}

/* The kept samples as a timeline (rtd_tl_perf_profiler). */
static int write_timeline(const char *path, int format,
			  struct rtd_perf_profiler *pr)
{
	struct cli_format f = {.kind = CLI_FMT_TIMELINE};
	f.tl = format == FMT_PERFETTO ? RTD_TIMELINE_FMT_PERFETTO
				      : RTD_TIMELINE_FMT_CHROME_JSON;
	struct cli_timeline t;
	if (cli_timeline_open(&t, &f, path))
		return CLI_FAIL;
	int r = rtd_tl_perf_profiler(t.tl, pr, NULL);
	if (r) {
		cli_timeline_close(&t, false);
		return cli_fail("%s: %s", path, rtd_strerror(r));
	}
	return cli_timeline_close(&t, true);
}

static int write_profile(struct record_args *a, const char *path, int format,
			 struct rtd_perf_profiler *pr, const rtd_profile *prof,
			 uint64_t samples)
{
	if (format == FMT_PERFETTO || format == FMT_CHROME_JSON)
		return write_timeline(path, format, pr);
	struct cli_out o;
	if (cli_out_open(&o, path))
		return CLI_FAIL;
	int r;
	static const enum rtd_profile_format fmts[] = {
		RTD_PROFILE_FMT_TOP, RTD_PROFILE_FMT_FOLDED, RTD_PROFILE_FMT_PPROF,
		RTD_PROFILE_FMT_SVG, RTD_PROFILE_FMT_SPEEDSCOPE};
	if (format == FMT_TOP && a->sort) {
		r = write_sorted(prof, o.f, (size_t)a->rows, a->sort, samples);
	} else if (format == FMT_TOP) {
		r = write_top(pr, prof, o.f, (size_t)a->rows, samples, a->offcpu);
	} else {
		struct rtd_profile_write_opts wo = {.sz = sizeof(wo)};
		wo.thread_roots = a->per_thread;
		r = rtd_profile_write(prof, fmts[format], o.f, &wo);
	}
	if (r) {
		cli_out_abort(&o);
		return cli_fail("%s: %s", cli_out_is_stdout(path) ? "stdout" : path,
				rtd_strerror(r));
	}
	return cli_out_commit(&o) ? CLI_FAIL : CLI_OK;
}

static void print_stats(struct rtd_perf_profiler *pr)
{
	struct rtd_perf_profiler_stats st = {.sz = sizeof(st)};
	struct rtd_sym_stats ss = {.sz = sizeof(ss)};
	rtd_perf_profiler_stats(pr, &st);
	rtd_sym_stats(rtd_perf_profiler_symbolizer(pr), &ss);
	fprintf(stderr,
		"rtdiag: %llu samples (%llu in the kernel), %llu lost; %llu stack "
		"nodes, %llu stacks cut; records: %llu mmap, %llu comm, %llu fork, "
		"%llu exit\n"
		"rtdiag: symbols: %llu objects (%llu loaded, %llu symbols), %llu "
		"locations, %llu unnamed; %llu debug files, %llu MiniDebugInfo, "
		"%llu from debuginfod; %u .NET perf maps switched on; DWARF "
		"held %.1f MB, %llu files skipped (--dwarf-max)\n",
		(unsigned long long)st.samples, (unsigned long long)st.kernel_samples,
		(unsigned long long)st.lost, (unsigned long long)st.nodes,
		(unsigned long long)st.truncated, (unsigned long long)st.mmaps,
		(unsigned long long)st.comms, (unsigned long long)st.forks,
		(unsigned long long)st.exits, (unsigned long long)ss.objects,
		(unsigned long long)ss.objects_loaded, (unsigned long long)ss.symbols,
		(unsigned long long)ss.locations, (unsigned long long)ss.unnamed,
		(unsigned long long)ss.debug_files, (unsigned long long)ss.debugdata,
		(unsigned long long)ss.debuginfod, st.dotnet_perfmaps,
		(double)ss.dwarf_bytes / 1048576,
		(unsigned long long)ss.dwarf_skipped);
	if (st.offcpu_waits || st.offcpu_unpaired)
		fprintf(stderr, "rtdiag: off-CPU: %llu waits paired, %llu "
				"unpaired; S %.3f s, D %.3f s, R (preempted) "
				"%.3f s, T %.3f s (all states, kept or not; "
				"through %s)\n",
			(unsigned long long)st.offcpu_waits,
			(unsigned long long)st.offcpu_unpaired,
			(double)st.offcpu_ns[0] / 1e9, (double)st.offcpu_ns[1] / 1e9,
			(double)st.offcpu_ns[2] / 1e9, (double)st.offcpu_ns[3] / 1e9,
			rtd_perf_profiler_offcpu_via(pr, NULL) ==
					RTD_PERF_OFFCPU_VIA_BPF ? "BPF" : "perf");
	if (st.unwind_failed)
		fprintf(stderr, "rtdiag: %llu stacks could not be unwound past "
				"their leaf\n", (unsigned long long)st.unwind_failed);
}

/* One perf record run: what its steps share. */
struct record_run {
	struct record_args a;
	struct perf_child child;
	bool have_child; /* started, not let go yet */
	struct rtd_perf_profiler *pr;
	struct warn_ctx wc;
	struct cli_out dout; /* -o x.data */
	rtd_perf_data_writer *dw;
	size_t dout_i;
};

/* The profiler over the targets, with its symbolizer's warnings said;
 * -1 when it runs, else the exit code (the child killed). */
static int open_profiler(struct record_run *rr)
{
	struct record_args *a = &rr->a;
	struct rtd_perf_profiler_opts po = {.sz = sizeof(po)};
	po.pids = a->pids;
	po.npids = a->npids;
	po.cgroups = a->cgroups;
	po.ncgroups = a->ncgroups;
	po.flags = a->flags;
	if (!a->no_reader)
		po.flags |= RTD_PERF_PROF_READER_THREAD;
	po.sampler = &a->so;
	po.ring_pages = a->pages;
	po.sym = &a->sym;
	if (a->offcpu) {
		po.flags |= RTD_PERF_PROF_OFF_CPU;
		po.offcpu_states = a->states;
		po.offcpu_via = a->via;
	}
	int r = rtd_perf_profiler_new(&po, &rr->pr);
	if (r) {
		if (rr->have_child)
			perf_child_abort(&rr->child);
		return cli_fail("%s", rtd_perf_profiler_errmsg(NULL));
	}
	const char *why = NULL;
	if (rtd_perf_profiler_offcpu_via(rr->pr, &why) == RTD_PERF_OFFCPU_VIA_PERF &&
	    why[0])
		fprintf(stderr, "rtdiag: off-CPU through perf, every switch copied "
				"out: %s\n", why);
	rtd_sym_set_warn(rtd_perf_profiler_symbolizer(rr->pr), on_warn, &rr->wc);
	struct rtd_perf_monitor *m = rtd_perf_profiler_monitor(rr->pr);
	if (rtd_perf_monitor_user_only(m) && !a->no_kernel) {
		if (a->kernel_set) {
			if (rr->have_child)
				perf_child_abort(&rr->child);
			rtd_perf_profiler_free(rr->pr);
			return cli_fail("--kernel: the kernel allows this user to "
					"sample user space only (kernel.perf_event_paranoid "
					"is 2 or more): run as root or with CAP_PERFMON, or "
					"sysctl kernel.perf_event_paranoid=1");
		}
		fprintf(stderr, "rtdiag: sampling user space only: "
				"kernel.perf_event_paranoid allows this user no kernel "
				"samples (as perf does; root, CAP_PERFMON or "
				"kernel.perf_event_paranoid=1 give kernel frames)\n");
	}
	return -1;
}

/* -o x.data: every record into a perf.data file, from the start; -1 when
 * open (or none asked), else the exit code (child and profiler gone). */
static int open_data(struct record_run *rr, int argc, char **argv)
{
	struct record_args *a = &rr->a;
	for (size_t i = 0; i < a->nouts && !rr->dw; i++) {
		if (a->formats[i] != FMT_DATA)
			continue;
		rr->dout_i = i;
		int e = cli_out_open(&rr->dout, a->outs[i]) ? -EIO : 0;
		char *cmdline = cli_cmdline("rtdiag perf record", argc, argv);
		RTD_OPTS(rtd_perf_data_writer_opts, wo, .cmdline = cmdline ? cmdline : "rtdiag perf record");
		if (!e && (e = rtd_perf_data_writer_new(rr->dout.f, &wo, &rr->dw)) == 0)
			e = rtd_perf_profiler_write_data(rr->pr, rr->dw);
		free(cmdline);
		if (e) {
			if (e != -EIO)
				cli_out_abort(&rr->dout);
			rtd_perf_data_writer_finish(rr->dw);
			if (rr->have_child)
				perf_child_abort(&rr->child);
			rtd_perf_profiler_free(rr->pr);
			return cli_fail("%s: %s", a->outs[i], rtd_strerror(e));
		}
	}
	return -1;
}

/* Let the child go, sample until the end, close -o x.data; -1 when the
 * samples are there to write (*child_rc: the child's exit code, or -1),
 * else the exit code (the profiler freed). */
static int run_profiler(struct record_run *rr, int *child_rc)
{
	struct record_args *a = &rr->a;
	perf_cli_signals(rtd_perf_profiler_monitor(rr->pr), a->duration);
	if (rr->have_child) {
		int e = perf_child_go(&rr->child);
		rr->have_child = false;
		if (e) {
			waitpid(rr->child.pid, NULL, 0);
			perf_cli_signals(NULL, 0);
			rtd_perf_profiler_free(rr->pr);
			return cli_fail("%s: cannot run: %s", a->cmd[0], strerror(e));
		}
	}
	int r = rtd_perf_profiler_run(rr->pr);
	perf_cli_signals(NULL, 0);
	if (rr->dw) {
		int e = rtd_perf_data_writer_finish(rr->dw);
		if (e) {
			cli_out_abort(&rr->dout);
			rtd_perf_profiler_free(rr->pr);
			return cli_fail("%s: %s", a->outs[rr->dout_i], rtd_strerror(e));
		}
		if (cli_out_commit(&rr->dout)) {
			rtd_perf_profiler_free(rr->pr);
			return CLI_FAIL;
		}
	}
	if (r)
		fprintf(stderr, "rtdiag: %s (keeping the samples taken so far)\n",
			rtd_perf_profiler_errmsg(rr->pr));
	*child_rc = -1;
	if (a->cmd) {
		int status = 0;
		/* a --duration shorter than COMMAND leaves it running; else the
		 * rings hung up as it exited: wait for its status */
		if (waitpid(a->pids[0], &status, a->duration > 0 ? WNOHANG : 0) ==
		    a->pids[0])
			*child_rc = perf_child_code(status);
	}
	return -1;
}

/* Why a profile is empty, and what was lost. */
static void say_missing(const struct record_args *a,
			const struct rtd_perf_profiler_stats *st,
			const rtd_profile *prof)
{
	/* off-CPU: the waits, not the switch-out samples */
	uint64_t nsamples = a->offcpu ? (uint64_t)rtd_profile_total_of(prof, 0)
				      : st->samples;
	if (!st->samples && a->offcpu)
		fprintf(stderr, "rtdiag: no waits were recorded (no scoped "
				"thread left the CPU while recording)\n");
	else if (!nsamples && a->offcpu)
		fprintf(stderr, "rtdiag: no waits in the states kept: %llu "
				"switches off the CPU, none in %s (see "
				"--off-cpu-state)\n",
			(unsigned long long)st->samples,
			a->states ? "the states asked for" : "S, D or T");
	else if (!st->samples)
		fprintf(stderr, "rtdiag: no samples were taken (did the process "
				"use any CPU?%s)\n",
			st->user_only ? " A program this user may run but not "
					"read, or a setuid one, cannot be observed "
					"by this user"
				      : "");
	if (st->lost)
		fprintf(stderr, "rtdiag: %llu samples lost (the ring was full: "
				"raise -m)\n", (unsigned long long)st->lost);
}

/* The profile into every -o but x.data, then --stats; the exit code. */
static int write_outputs(struct record_run *rr)
{
	struct record_args *a = &rr->a;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct rtd_perf_profiler_stats st = {.sz = sizeof(st)};
	rtd_perf_profiler_stats(rr->pr, &st);
	rtd_profile *prof = NULL;
	int r = rtd_perf_profiler_profile(rr->pr, &prof);
	if (r)
		return cli_fail("building the profile: %s", rtd_strerror(r));
	say_missing(a, &st, prof);
	int rc = CLI_OK;
	/* the samples the profile holds, as its SVG and table say them
	 * (off-CPU: the waits, not the switch-out samples) */
	int64_t held = rtd_profile_samples(prof);
	uint64_t nsamples = held > 0 ? (uint64_t)held : 0;
	for (size_t i = 0; i < a->nouts && rc == CLI_OK; i++)
		if (a->formats[i] != FMT_DATA) /* written as it was recorded */
			rc = write_profile(a, a->outs[i], a->formats[i], rr->pr, prof, nsamples);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (a->stats) {
		print_stats(rr->pr);
		fprintf(stderr, "rtdiag: from the end of sampling to the written "
				"output (names and format): %.1f ms\n",
			(double)(t1.tv_sec - t0.tv_sec) * 1e3 +
				(double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	}
	rtd_profile_free(prof);
	return rc;
}

int perf_record_main(int argc, char **argv)
{
	struct record_run rr;
	memset(&rr, 0, sizeof(rr));
	struct record_args *a = &rr.a;
	a->format = FMT_NONE;
	a->rows = 25;
	a->so.sz = sizeof(a->so);
	a->sym.sz = sizeof(a->sym);
	int rc = parse(a, argc, argv);
	if (rc >= 0)
		return rc;
	for (size_t i = 0; i < a->nouts; i++) {
		if (cli_out_check(a->outs[i]))
			return CLI_FAIL;
		if (a->formats[i] == FMT_PERFETTO || a->formats[i] == FMT_CHROME_JSON)
			a->flags |= RTD_PERF_PROF_KEEP_SAMPLES;
		if (a->formats[i] == FMT_DATA)
			a->flags |= RTD_PERF_PROF_EACH_RECORD;
	}
	a->so.exclude_kernel = a->no_kernel;
	raise_nofile();

	if (a->cmd) {
		if (perf_cli_start(&rr.child, a->cmd, a->pids, &a->npids))
			return CLI_FAIL;
		rr.have_child = true;
		a->flags |= RTD_PERF_PROF_ENABLE_ON_EXEC | RTD_PERF_PROF_NO_DOTNET;
	}
	int child_rc = -1;
	if ((rc = open_profiler(&rr)) >= 0 || (rc = open_data(&rr, argc, argv)) >= 0 ||
	    (rc = run_profiler(&rr, &child_rc)) >= 0)
		return rc;
	rc = write_outputs(&rr);
	rtd_perf_profiler_free(rr.pr);
	if (rc == CLI_OK && child_rc >= 0)
		rc = child_rc;
	return rc;
}
