/* SPDX-License-Identifier: MIT */
/*
 * record.c - 'rtdiag record': one timeline of a process, its runtime and
 * the kernel, on one clock (issue #30). Wiring only: the recorder
 * (rtdiag/recorder.h) gives the merged live record stream of the perf
 * profilers and, for a .NET target, an EventPipe session; each record goes
 * as it comes into the timeline's record consumer
 * (rtdiag/timeline_records.h), one per -o.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>

#include "cli.h"
#include "cli_format.h"
#include "flight_cli.h"
#include "opt.h"
#include "out.h"
#include "perf_cli.h"
#include "rtdiag/format.h"
#include "rtdiag/gotrace_source.h"
#include "rtdiag/ipc.h"
#include "rtdiag/perf_data.h"
#include "rtdiag/perf_source.h"
#include "rtdiag/recorder.h"
#include "rtdiag/timeline_records.h"

enum { O_PID = 1, O_NAME, O_DUR, O_OUT, O_PROVIDERS, O_FREQ, O_NODOTNET, O_SYSCALLS, O_G, O_CG, O_STACK, O_CLREVENTS, O_GOTRACE, O_GOPIECE };

#define REC_MAX_OUTS 4

static const struct cli_opt record_opts[] = {
	{O_PID, "pid", 'p', CLI_ARG_PIDS, 0, "PID", "the process to record", 0, 0},
	{O_NAME, "name", 'n', CLI_ARG_STR, 0, "NAME",
	 "the process of that name (its comm or executable; exactly one)", 0, 0},
	{O_DUR, "duration", 'd', CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "stop after TIME (1.5, 200ms, 00:01:00; default: Ctrl-C or the target's end)", 0, 0},
	{O_OUT, "output", 'o', CLI_ARG_STR, CLI_OPT_REPEAT, "FILE",
	 "the timeline, Perfetto (.pftrace, .perfetto-trace) or Chrome JSON (.json), "
	 "or the CPU samples' profile (.folded, .pb.gz, .svg, .speedscope.json), "
	 "or perf.data (.data: the CPU samples as perf record writes them, for "
	 "perf script and perf report); up to 4 times, one recording", 0, 0},
	{O_PROVIDERS, "providers", 0, CLI_ARG_STR, 0, "SPEC",
	 ".NET: EventPipe providers added to the default ones (dotnet-trace's syntax)", 0, 0},
	{O_CLREVENTS, "clrevents", 0, CLI_ARG_STR, 0, "NAMES",
	 ".NET: the runtime's keywords by dotnet-trace's names joined by + (default "
	 "gc+jit+loader+contention+exception+threading)", 0, 0},
	{O_GOTRACE, "go-trace", 0, CLI_ARG_STR, 0, "URL",
	 "Go: the program's runtime side from its net/http/pprof /debug/pprof/trace "
	 "(http://HOST:PORT; as rtdiag gotrace capture), asked for in pieces back to back", 0, 0},
	{O_GOPIECE, "go-piece", 0, CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "Go: the length of each piece of --go-trace (default 3s): the program is not "
	 "traced between two (a 'Go trace gap' slice says how long)", 0, 0},
	{O_FREQ, "freq", 'F', CLI_ARG_INT, CLI_OPT_POSITIVE, "HZ",
	 "CPU samples per second per thread (default 99)", 1, 100000},
	{O_NODOTNET, "no-dotnet", 0, CLI_ARG_NONE, 0, NULL,
	 "no EventPipe session even when the target is .NET: the kernel's side only", 0, 0},
	{O_G, NULL, 'g', CLI_ARG_NONE, 0, NULL,
	 "call stacks from frame pointers, as perf record -g (the default; --call-graph "
	 "for another way)", 0, 0},
	{O_CG, "call-graph", 0, CLI_ARG_STR, 0, "fp|dwarf[,SIZE]|none",
	 "samples' and waits' stacks: frame pointers (default), a stack copy unwound "
	 "with CFI, or the address only (as rtdiag perf record)", 0, 0},
	{O_STACK, "stack-size", 0, CLI_ARG_SIZE, 0, "SIZE",
	 "dwarf: user stack bytes copied per sample (default 8k, at most 65528)", 0, 0},
	{O_SYSCALLS, "syscalls", 0, CLI_ARG_NONE, 0, NULL,
	 "each system call a slice on its thread, named by the call, with its result "
	 "(ret, errno)", 0, 0},
	{0},
};

static int record_main(int argc, char **argv);

static const struct cli_cmd record_cmd = {
	"record", NULL,
	"One timeline of a process - its runtime and the kernel - on one clock.\n"
	"Any process: CPU samples with their stacks and off-CPU waits (a slice of\n"
	"category off-cpu named by the state it waited in) from perf_event. A .NET\n"
	"process (found by its diagnostics socket) also gets an EventPipe session:\n"
	"GC, JIT, loader, lock contention, exceptions and the thread pool, plus\n"
	"--providers; its events are instants named Provider/Event on the thread\n"
	"that wrote them; GCs and the runtime's suspensions are slices on lanes of\n"
	"the process, lock contention a slice on the waiting thread, the heap's\n"
	"generation sizes counters; other providers' Start/Stop pairs are slices\n"
	"Provider/Task on their thread. --syscalls adds each system call as a\n"
	"slice, --go-trace a Go program's runtime trace (goroutines on their M's\n"
	"thread). Every thread has one track, keyed by its OS pid/tid.",
	record_opts, 0, 0, CLI_CMD_COMMAND, record_main,
	"All times are CLOCK_MONOTONIC: perf opens its events with use_clockid, and\n"
	"on Linux EventPipe's timestamps are that clock in nanoseconds.\n"
	"The sources are merged by time while the target runs and written as\n"
	"they come (about 100 ms behind perf, up to 2 s behind EventPipe), in\n"
	"bounded memory for any duration. What rtdiag switches on in the target\n"
	"(the EventPipe session, the perf map) is switched off at the end, after\n"
	"--duration, the target's end, Ctrl-C or SIGTERM.\n"
	"Exit 3: the target ended before --duration, or --go-trace gave no trace;\n"
	"what came is written. A Go trace comes a generation (about a second) at\n"
	"a time: its records are written up to 5 s behind (a Go 1.21 or older\n"
	"program's a piece at a time: up to --go-piece + 2 s behind).\n"
	"\n"
	"examples:\n"
	"  rtdiag record -p 4242 -d 10 -o t.pftrace          # ui.perfetto.dev\n"
	"  rtdiag record -n MyService -d 5 -o t.json --providers MyEventSource\n"
	"  rtdiag record -F 999 -o t.pftrace -o cpu.folded -o cpu.pb.gz -- ./app\n"
	"  rtdiag record -p 4242 --ring 30s     # the flight recorder: --ring --help\n",
};

struct rec_args {
	pid_t pid;
	const char *name;
	char **cmd;
	double duration;
	const char *outs[REC_MAX_OUTS];
	struct cli_format fmts[REC_MAX_OUTS];
	size_t nouts;
	int data_out; /* the index of the -o x.data, -1: none */
	const char *providers;
	const char *clrevents;
	const char *gotrace;
	double gopiece;
	unsigned freq;
	bool no_dotnet;
	bool syscalls;
	enum rtd_perf_callgraph cg;
	unsigned stack_bytes;
};

static int parse(struct rec_args *a, int argc, char **argv)
{
	struct cli_parser ps;
	struct cli_val v;
	int id;
	cli_opt_init(&ps, &record_cmd, argc, argv);
	while ((id = cli_opt_next(&ps, &v)) > 0) {
		switch (id) {
		case O_PID:
			if (v.npids != 1)
				return cli_cmd_usage(&record_cmd, "-p: one process");
			a->pid = v.pids[0];
			break;
		case O_NAME: a->name = v.str; break;
		case O_DUR: a->duration = v.d; break;
		case O_OUT:
			if (a->nouts == REC_MAX_OUTS)
				return cli_cmd_usage(&record_cmd, "at most %d -o", REC_MAX_OUTS);
			a->outs[a->nouts++] = v.str;
			break;
		case O_PROVIDERS: a->providers = v.str; break;
		case O_CLREVENTS: a->clrevents = v.str; break;
		case O_GOTRACE: a->gotrace = v.str; break;
		case O_GOPIECE: a->gopiece = v.d; break;
		case O_FREQ: a->freq = (unsigned)v.i; break;
		case O_NODOTNET: a->no_dotnet = true; break;
		case O_SYSCALLS: a->syscalls = true; break;
		case O_G: {
			/* perf's -g is a flag; "-g dwarf" was rtdiag's */
			int k = cli_opt_old_word(&ps, "fp|dwarf|none", "-g", "--call-graph");
			a->cg = k < 0 ? RTD_PERF_CG_FP : (enum rtd_perf_callgraph)k;
			break;
		}
		case O_CG: {
			int m;
			if (cli_callgraph(v.str, &m, &a->stack_bytes))
				return cli_cmd_usage(&record_cmd, "--call-graph: '%s' is not fp, dwarf, "
						     "dwarf,SIZE (8 to 65528 bytes) or none",
						     v.str);
			a->cg = (enum rtd_perf_callgraph)m;
			break;
		}
		case O_STACK:
			if (v.u < 8 || v.u > 65528)
				return cli_cmd_usage(&record_cmd,
						     "--stack-size %s: want 8 to 65528 bytes", v.str);
			a->stack_bytes = (unsigned)v.u;
			break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	a->cmd = ps.rest;
	if ((a->pid > 0) + (a->name != NULL) + (a->cmd != NULL) != 1)
		return cli_cmd_usage(&record_cmd, "give one target: -p PID, -n NAME or -- COMMAND");
	if (!a->nouts)
		return cli_cmd_usage(&record_cmd, "give the timeline's file: -o FILE");
	if (a->gopiece > 0 && !a->gotrace)
		return cli_cmd_usage(&record_cmd, "--go-piece is the length of --go-trace's pieces: "
						  "give --go-trace URL");
	/* .json is Chrome JSON (rtd_format_ext_of()'s table), a profile's
	 * extension a profile: one pick each, so no refusal is printed for
	 * the kind a file is not */
	a->data_out = -1;
	for (size_t i = 0; i < a->nouts; i++) {
		const struct rtd_format_ext *x = rtd_format_ext_of(a->outs[i]);
		if (x && x->format && !strcmp(x->format, "perf.data")) {
			if (a->data_out >= 0)
				return cli_cmd_usage(&record_cmd, "-o %s: one perf.data file "
							       "a recording", a->outs[i]);
			a->data_out = (int)i;
			a->fmts[i].kind = 0; /* neither a timeline nor a profile */
			continue;
		}
		bool profile = x && !(x->kind & RTD_FORMAT_TIMELINE);
		if (cli_format_pick("record", NULL, a->outs[i],
				    profile ? CLI_FMT_PROFILE : CLI_FMT_TIMELINE, NULL,
				    &a->fmts[i]) < 0)
			return cli_cmd_usage(&record_cmd,
					     "-o %s: a timeline (.pftrace, .perfetto-trace, .json), "
					     "a profile (.folded, .pb.gz, .svg, .speedscope.json) "
					     "or perf.data (.data)",
					     a->outs[i]);
	}
	return -1;
}

/* The one process whose comm or executable is @name. */
static int find_name(const char *name, pid_t *out)
{
	DIR *d = opendir("/proc");
	if (!d)
		return cli_fail("/proc: %s", strerror(errno));
	pid_t found = 0;
	bool many = false;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long p = strtol(de->d_name, &end, 10);
		if (*end || p <= 0 || p == getpid() || !rtd_ipc_proc_matches((pid_t)p, name))
			continue;
		many |= found != 0;
		found = (pid_t)p;
	}
	closedir(d);
	if (!found)
		return cli_fail("-n %s: no such process", name);
	if (many)
		return cli_fail("-n %s: more than one process has that name: give -p", name);
	*out = found;
	return CLI_OK;
}

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static bool child_alive(pid_t pid)
{
	int st;
	return waitpid(pid, &st, WNOHANG) == 0;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One timeline consumer per -o of a timeline format. */
struct outs {
	struct cli_timeline t[REC_MAX_OUTS];
	rtd_timeline_records *c[REC_MAX_OUTS];
	size_t n;
};

static int outs_open(struct outs *o, const struct rec_args *a, uint64_t runtime)
{
	for (size_t i = 0; i < a->nouts; i++) {
		if (a->fmts[i].kind != CLI_FMT_TIMELINE)
			continue;
		if (cli_timeline_open(&o->t[o->n], &a->fmts[i], a->outs[i]))
			return -EIO;
		int rc = 0;
		RTD_OPTS(rtd_timeline_records_opts, ro, .runtime_sources = runtime);
		o->c[o->n] = rtd_timeline_records_new(o->t[o->n].tl, &ro, &rc);
		o->n++;
		if (!o->c[o->n - 1])
			return cli_fail("the timeline: %s", rtd_strerror(rc ? rc : -ENOMEM)), rc;
	}
	return 0;
}

static int outs_close(struct outs *o, bool ok)
{
	int out = CLI_OK;
	for (size_t i = 0; i < o->n; i++) {
		rtd_timeline_records_free(o->c[i]);
		if (cli_timeline_close(&o->t[i], ok) && out == CLI_OK)
			out = CLI_FAIL;
	}
	return out;
}

/* The CPU samples' profile, for each -o of a profile format. */
static int write_profiles(struct rec_args *a, rtd_recorder *r)
{
	rtd_profile *prof = NULL;
	int rc = CLI_OK;
	for (size_t i = 0; i < a->nouts && rc == CLI_OK; i++) {
		if (a->fmts[i].kind != CLI_FMT_PROFILE)
			continue;
		int e = prof ? 0 : rtd_recorder_profile(r, &prof);
		rc = e ? cli_fail("building the profile: %s", rtd_strerror(e))
		       : cli_write_profile(prof, &a->fmts[i], a->outs[i], NULL);
	}
	rtd_profile_free(prof);
	return rc;
}

/* Each line of @text, as rtdiag says things. */
static void say_lines(const char *text)
{
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		fprintf(stderr, "rtdiag: %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

/* How long the runtime may take to close its stream after StopTracing,
 * and the perf sources to end their window, before rtdiag gives up on
 * them (a hung runtime must not hang rtdiag). */
#define REC_STOP_GRACE_S 30.0

/* One recording: what its steps share. */
struct rec_run {
	struct rec_args a;
	struct perf_child child;
	struct cli_out dout; /* -o x.data */
	rtd_perf_data_writer *dw;
	rtd_recorder *r;
	rtd_gotrace_recorder *gor;
	struct outs o;
	struct sigaction old_int, old_term;
	size_t warned; /* of rtd_recorder_warnings(), the bytes said */
	/* the pump's end */
	uint64_t counts[RTD_RECORDER_MAX_STREAMS][RTD_REC_KINDS];
	const struct rtd_record *rec;
	int got, wrc;
	bool stopping;
};

/* What fails before anything starts: each -o, -n NAME, --providers and
 * --clrevents; -1 when they hold, else the exit code. */
static int rec_check(struct rec_args *a)
{
	for (size_t i = 0; i < a->nouts; i++)
		if (cli_out_check(a->outs[i]))
			return CLI_FAIL;
	if (a->name && find_name(a->name, &a->pid))
		return CLI_FAIL;
	struct rtd_ipc_providers check = {0};
	char perr[256] = "";
	int rc = rtd_recorder_providers_clr(a->providers, a->clrevents, &check, perr, sizeof(perr));
	rtd_ipc_providers_clear(&check);
	if (rc) /* a bad --providers or --clrevents fails before anything starts */
		return cli_cmd_usage(&record_cmd, "%s: %s", rc == -RTD_E_INVAL ? "--clrevents" : "--providers",
				     perr[0] ? perr : rtd_strerror(rc));
	return -1;
}

/* -o x.data: the CPU profiler's records as they come, from the start;
 * the file is kept when the recording is (written after it ends). -1 when
 * open (or none asked), else the exit code (the child killed). */
static int rec_open_data(struct rec_run *rr, int argc, char **argv)
{
	struct rec_args *a = &rr->a;
	if (a->data_out < 0)
		return -1;
	char *cmdline = cli_cmdline("rtdiag record", argc, argv);
	RTD_OPTS(rtd_perf_data_writer_opts, wo, .cmdline = cmdline ? cmdline : "rtdiag record");
	int e = cli_out_open(&rr->dout, a->outs[a->data_out]) ? -EIO : 0;
	if (!e && (e = rtd_perf_data_writer_new(rr->dout.f, &wo, &rr->dw)) != 0)
		cli_out_abort(&rr->dout);
	free(cmdline);
	if (e) {
		if (a->cmd)
			perf_child_abort(&rr->child);
		return e == -EIO ? CLI_FAIL : cli_fail("%s: %s", a->outs[a->data_out], rtd_strerror(e));
	}
	return -1;
}

/* The recorder over the target; -1 when made, else the exit code (the
 * child killed, -o x.data dropped). */
/* The recorder's flags. The timelines' writers copy what they keep
 * (track names, interned stacks and strings): the perf sources hold their
 * names and stacks in generations, not for the recording's life; the
 * profile is built only when an output asks for one. */
static unsigned rec_flags(const struct rec_args *a)
{
	unsigned flags = (a->no_dotnet ? RTD_RECORDER_NO_DOTNET : 0) |
			 (a->syscalls ? RTD_RECORDER_SYSCALLS : 0) | RTD_RECORDER_NO_PROFILE |
			 RTD_RECORDER_COPIED;
	for (size_t i = 0; i < a->nouts; i++)
		if (a->fmts[i].kind == CLI_FMT_PROFILE)
			flags &= ~(unsigned)RTD_RECORDER_NO_PROFILE; /* built at the end */
	return flags;
}

static int rec_new(struct rec_run *rr, unsigned flags)
{
	struct rec_args *a = &rr->a;
	RTD_OPTS(rtd_recorder_opts, ro, .pid = a->pid, .flags = flags, .freq = a->freq,
		 .providers = a->providers, .clrevents = a->clrevents, .callgraph = a->cg,
		 .stack_bytes = a->stack_bytes, .perf_data = rr->dw, .go_trace_url = a->gotrace,
		 .go_trace_piece = a->gopiece, .go_trace_seconds = a->duration);
	if (rtd_recorder_new(&ro, &rr->r) < 0) {
		if (a->cmd)
			perf_child_abort(&rr->child);
		if (rr->dw) {
			rtd_perf_data_writer_finish(rr->dw);
			cli_out_abort(&rr->dout);
		}
		return cli_fail("%s", rtd_recorder_errmsg(NULL));
	}
	return -1;
}

/* Start the sources, open the files, let the child go; -1 when recording,
 * else the exit code (rec_end() cleans up). */
static int rec_start(struct rec_run *rr)
{
	struct rec_args *a = &rr->a;
	/* --go-trace: the recorder's rolling capture, a source of its own
	 * (pieces of --go-piece back to back; the last one ends at --duration,
	 * given 10 s; Ctrl-C cuts the one under way) */
	if (rtd_recorder_start(rr->r) < 0) {
		cli_fail("%s", rtd_recorder_errmsg(rr->r));
		if (a->cmd)
			perf_child_abort(&rr->child);
		return CLI_FAIL;
	}
	rr->gor = rtd_recorder_gotrace(rr->r);
	/* the files are written as records come: open them now */
	if (outs_open(&rr->o, a, rtd_recorder_runtime_sources(rr->r)) < 0) {
		if (a->cmd)
			perf_child_abort(&rr->child);
		return CLI_FAIL;
	}
	if (a->cmd) {
		int e = perf_child_go(&rr->child);
		if (e) { /* nothing to record: no file is written */
			cli_fail("%s: cannot run: %s", a->cmd[0], strerror(e));
			waitpid(a->pid, NULL, 0);
			return CLI_FAIL;
		}
	}
	return -1;
}

/* What the recording goes without (the perf side's now, the EventPipe
 * side's when its thread finds out: printed at the end), and what it
 * records. */
static void rec_announce(struct rec_run *rr)
{
	struct rec_args *a = &rr->a;
	rtd_recorder *r = rr->r;
	const char *w = rtd_recorder_warnings(r);
	rr->warned = strlen(w);
	say_lines(w);
	bool off = false, ep = false, sysc = false;
	for (uint32_t i = 0; rtd_recorder_source_name(r, i); i++) {
		off |= !strcmp(rtd_recorder_source_name(r, i), "perf-offcpu");
		ep |= !strcmp(rtd_recorder_source_name(r, i), "eventpipe");
		sysc |= !strcmp(rtd_recorder_source_name(r, i), "perf-syscalls");
	}
	fprintf(stderr, "rtdiag: recording pid %d: CPU samples%s%s%s%s; %s\n", (int)a->pid,
		off ? ", off-CPU waits" : "", sysc ? ", system calls" : "", rr->gor ? ", Go trace" : "",
		ep ? (a->cmd ? ", EventPipe once its runtime listens" : ", EventPipe") : "",
		a->duration > 0 ? "until --duration, the target's end or Ctrl-C"
				: "until the target's end or Ctrl-C");
}

/* The merged stream, into every -o as it comes, until the sources end:
 * at the target's end by themselves, or after the stop asked at
 * --duration, Ctrl-C or SIGTERM. */
static void rec_pump(struct rec_run *rr)
{
	struct rec_args *a = &rr->a;
	rtd_source *s = rtd_recorder_source(rr->r);
	double t0 = now_s(), stopped_at = 0;
	for (;;) {
		rr->got = rtd_source_next(s, &rr->rec);
		if (rr->got == 1) {
			const struct rtd_record *rec = rr->rec;
			if (rec->source < RTD_RECORDER_MAX_STREAMS)
				rr->counts[rec->source][rec->kind]++;
			for (size_t i = 0; i < rr->o.n && rr->wrc == 0; i++)
				rr->wrc = rtd_timeline_records_add(rr->o.c[i], rec);
			if (rr->wrc < 0)
				break;
		} else if (rr->got != RTD_SOURCE_IDLE) {
			break;
		}
		if (!rr->stopping && (g_stop || (a->duration > 0 && now_s() - t0 >= a->duration) ||
				      (a->cmd && !child_alive(a->pid)))) {
			rr->stopping = true;
			stopped_at = now_s();
			rtd_recorder_stop(rr->r);
		}
		if (rr->stopping && now_s() - stopped_at > REC_STOP_GRACE_S) {
			fprintf(stderr, "rtdiag: the sources did not end %.0f s after the stop; "
					"keeping what came\n", REC_STOP_GRACE_S);
			break;
		}
		if (rr->got == RTD_SOURCE_IDLE)
			rtd_source_wait(s, 50);
	}
}

/* How the sources ended and what each gave. */
static void rec_report(struct rec_run *rr)
{
	rtd_recorder *r = rr->r;
	const struct rtd_record *rec = rr->rec;
	if (rr->got < 0)
		cli_fail("%s source: %s (what came before is written)",
			 rtd_recorder_source_name(r, rec->source)
				 ? rtd_recorder_source_name(r, rec->source) : "a",
			 rec->message && rec->message[0] ? rec->message : rtd_strerror(rec->code));
	if (rr->wrc < 0)
		cli_fail("writing the timeline: %s", rtd_strerror(rr->wrc));
	say_lines(rtd_recorder_warnings(r) + rr->warned);
	struct rtd_recorder_stats st = {.sz = sizeof(st)};
	rtd_recorder_stats(r, &st);
	for (uint32_t i = 0; rtd_recorder_source_name(r, i); i++)
		fprintf(stderr, "rtdiag: %s: %llu samples, %llu slices, %llu instants\n",
			rtd_recorder_source_name(r, i),
			(unsigned long long)rr->counts[i][RTD_REC_SAMPLE],
			(unsigned long long)(rr->counts[i][RTD_REC_SLICE_BEGIN] +
					     rr->counts[i][RTD_REC_SLICE]),
			(unsigned long long)rr->counts[i][RTD_REC_INSTANT]);
	if (st.lost)
		fprintf(stderr, "rtdiag: perf: %llu records lost (the rings were full)\n",
			(unsigned long long)st.lost);
	if (st.late)
		fprintf(stderr, "rtdiag: %llu records came later than their source's watermark "
				"(moved to it)\n", (unsigned long long)st.late);
	if (st.eventpipe && !st.eventpipe_closed && rr->got >= 0)
		fprintf(stderr, "rtdiag: EventPipe: the runtime did not close the session's "
				"stream after StopTracing\n");
}

/* --go-trace: the capture's end said; true when the recording has no Go
 * record at all (the capture said why). */
static bool rec_report_go(struct rec_run *rr)
{
	rtd_gotrace_recorder *gor = rr->gor;
	/* the capture's thread (its live source ended with the stream) */
	if (gor && rtd_gotrace_recorder_stop(gor, 0) && rtd_gotrace_recorder_errmsg(gor)[0])
		fprintf(stderr, "rtdiag: --go-trace: %s (keeping what came)\n",
			rtd_gotrace_recorder_errmsg(gor));
	else if (gor && rtd_gotrace_recorder_errmsg(gor)[0])
		fprintf(stderr, "rtdiag: --go-trace: %s\n", rtd_gotrace_recorder_errmsg(gor));
	if (gor) {
		struct rtd_gotrace_roll_stats gs = {.sz = sizeof(gs)};
		rtd_gotrace_recorder_roll_stats(gor, &gs);
		fprintf(stderr, "rtdiag: Go trace: %llu piece%s, %llu gaps between them "
				"(%.2f ms in all, the longest %.2f ms)\n",
			(unsigned long long)gs.pieces, gs.pieces == 1 ? "" : "s",
			(unsigned long long)gs.gaps,
			(double)gs.gap_total_ns / 1e6, (double)gs.gap_max_ns / 1e6);
	}
	bool go_missing = false;
	for (uint32_t i = 0; gor && rtd_recorder_source_name(rr->r, i); i++) {
		if (strcmp(rtd_recorder_source_name(rr->r, i), "gotrace"))
			continue;
		uint64_t n = 0;
		for (int k = 0; k < RTD_REC_KINDS; k++)
			n += rr->counts[i][k];
		go_missing = n == 0;
	}
	return go_missing;
}

/* After the pump: the reports, the files closed, the profiles written;
 * the exit code. */
static int rec_finish(struct rec_run *rr)
{
	struct rec_args *a = &rr->a;
	/* stopped by us, or the target ended first */
	bool ended = !rr->stopping ||
		     (a->cmd ? !child_alive(a->pid) : rtd_recorder_target_ended(rr->r));
	sigaction(SIGINT, &rr->old_int, NULL);
	sigaction(SIGTERM, &rr->old_term, NULL);
	rec_report(rr);
	if (a->cmd && !ended && child_alive(a->pid)) {
		kill(a->pid, SIGTERM);
		waitpid(a->pid, NULL, 0);
	}
	int rc = rr->wrc < 0 ? CLI_FAIL : rr->got < 0 ? CLI_PARTIAL : CLI_OK;
	bool go_missing = rec_report_go(rr);
	bool go_incomplete = rr->gor && rtd_gotrace_recorder_incomplete(rr->gor);
	int crc = outs_close(&rr->o, rr->wrc == 0);
	if (crc != CLI_OK)
		rc = crc;
	rr->o.n = 0;
	if (rc != CLI_FAIL) {
		int prc = write_profiles(a, rr->r);
		rc = prc != CLI_OK ? prc : rc;
	}
	if (rc == CLI_OK && go_missing) {
		fprintf(stderr, "rtdiag: the recording has no Go trace; the rest is written\n");
		rc = CLI_PARTIAL;
	} else if (rc == CLI_OK && go_incomplete) {
		fprintf(stderr, "rtdiag: the Go trace broke off; what came of it and the rest "
				"are written\n");
		rc = CLI_PARTIAL;
	}
	if (rc == CLI_OK && ended && a->duration > 0) {
		fprintf(stderr, "rtdiag: the target ended before --duration; what came is written\n");
		rc = CLI_PARTIAL;
	}
	return rc;
}

/* Everything let go, whatever step the recording reached; -o x.data kept
 * unless @rc is CLI_FAIL. Returns the exit code. */
static int rec_end(struct rec_run *rr, int rc)
{
	outs_close(&rr->o, false);
	sigaction(SIGINT, &rr->old_int, NULL);
	sigaction(SIGTERM, &rr->old_term, NULL);
	rtd_recorder_free(rr->r); /* the session stopped, the perf map off */
	if (rr->dw) { /* every record is in: the sources are gone */
		int e = rtd_perf_data_writer_finish(rr->dw);
		if (e || rc == CLI_FAIL) {
			if (e)
				cli_fail("%s: %s", rr->a.outs[rr->a.data_out], rtd_strerror(e));
			cli_out_abort(&rr->dout);
			rc = CLI_FAIL;
		} else if (cli_out_commit(&rr->dout)) {
			rc = CLI_FAIL;
		}
	}
	return rc;
}

static int record_main(int argc, char **argv)
{
	struct rec_run *rr = calloc(1, sizeof(*rr));
	if (!rr)
		return cli_fail("out of memory");
	struct rec_args *a = &rr->a;
	int rc = parse(a, argc, argv);
	if (rc >= 0 || (rc = rec_check(a)) >= 0)
		goto done;
	pid_t pids[CLI_MAX_PIDS] = {a->pid};
	size_t npids = a->pid ? 1 : 0;
	unsigned flags = rec_flags(a);
	if (a->cmd) {
		/* a .NET COMMAND writes its JIT frames' names for perf (its
		 * runtime is not up yet to be asked over the diagnostics IPC) */
		if (!a->no_dotnet)
			setenv("DOTNET_PerfMapEnabled", "3", 0);
		if (perf_cli_start(&rr->child, a->cmd, pids, &npids)) {
			rc = CLI_FAIL;
			goto done;
		}
		a->pid = pids[0];
		flags |= RTD_RECORDER_CHILD;
	}
	if ((rc = rec_open_data(rr, argc, argv)) >= 0 || (rc = rec_new(rr, flags)) >= 0)
		goto done;
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, &rr->old_int);
	sigaction(SIGTERM, &sa, &rr->old_term);
	if ((rc = rec_start(rr)) < 0) {
		rec_announce(rr);
		rec_pump(rr);
		rc = rec_finish(rr);
	}
	rc = rec_end(rr, rc);
done:
	free(rr);
	return rc;
}

static int record_run(int argc, char **argv)
{
	if (flight_wanted(argc, argv)) /* the flight recorder: flight.c */
		return flight_main(argc, argv);
	return record_main(argc, argv);
}

static bool record_help(FILE *f, const char *sub)
{
	if (sub)
		return false;
	cli_cmd_help(f, &record_cmd);
	flight_help(f);
	return true;
}

static const struct cli_cmd *const *record_cmds(void)
{
	static const struct cli_cmd *const list[] = {&record_cmd, NULL};
	return list;
}

const struct cli_group cli_group_record = {
	.name = "record",
	.summary = "one timeline of a process, its runtime and the kernel, on one clock",
	.run = record_run,
	.help = record_help,
	.cmds = record_cmds,
};
