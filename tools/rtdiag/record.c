/* SPDX-License-Identifier: MIT */
/*
 * record.c - 'rtdiag record': one timeline of a process, its runtime and
 * the kernel, on one clock (issue #30). Wiring only: perf profilers (CPU
 * samples, off-CPU waits) and, for a .NET target, an EventPipe session
 * run side by side; at the end their record sources (rtdiag/source.h)
 * are merged by CLOCK_MONOTONIC time into the timeline's record consumer
 * (rtdiag/timeline_records.h), one per -o.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
#include "rtdiag/ipc.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/perf_source.h"
#include "rtdiag/timeline_records.h"

enum { O_PID = 1, O_NAME, O_DUR, O_OUT, O_PROVIDERS, O_FREQ, O_NODOTNET };

#define REC_MAX_OUTS 4

static const struct cli_opt record_opts[] = {
	{O_PID, "pid", 'p', CLI_ARG_PIDS, 0, "PID", "the process to record", 0, 0},
	{O_NAME, "name", 'n', CLI_ARG_STR, 0, "NAME",
	 "the process of that name (its comm or executable; exactly one)", 0, 0},
	{O_DUR, "duration", 'd', CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "stop after TIME (1.5, 200ms, 00:01:00; default: Ctrl-C or the target's end)", 0, 0},
	{O_OUT, "output", 'o', CLI_ARG_STR, CLI_OPT_REPEAT, "FILE",
	 "the timeline, Perfetto (.pftrace, .perfetto-trace) or Chrome JSON (.json), "
	 "or the CPU samples' profile (.folded, .pb.gz, .svg, .speedscope.json); "
	 "up to 4 times, one recording", 0, 0},
	{O_PROVIDERS, "providers", 0, CLI_ARG_STR, 0, "SPEC",
	 ".NET: EventPipe providers added to the default ones (dotnet-trace's syntax)", 0, 0},
	{O_FREQ, "freq", 'F', CLI_ARG_INT, CLI_OPT_POSITIVE, "HZ",
	 "CPU samples per second per thread (default 99)", 1, 100000},
	{O_NODOTNET, "no-dotnet", 0, CLI_ARG_NONE, 0, NULL,
	 "no EventPipe session even when the target is .NET: the kernel's side only", 0, 0},
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
	"generation sizes counters. Every thread has one track, keyed by its OS\n"
	"pid/tid.",
	record_opts, 0, 0, CLI_CMD_COMMAND, record_main,
	"All times are CLOCK_MONOTONIC: perf opens its events with use_clockid, and\n"
	"on Linux EventPipe's timestamps are that clock in nanoseconds.\n"
	"The sources are recorded side by side (perf's samples and waits in\n"
	"temporary files, the EventPipe stream in an unlinked temporary file) and\n"
	"merged by time into the timeline when the recording ends. What rtdiag\n"
	"switches on in the target (the EventPipe session, the perf map) is\n"
	"switched off at the end, after --duration, the target's end or Ctrl-C.\n"
	"Exit 3: the target ended before --duration; what came is written.\n"
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
	const char *providers;
	unsigned freq;
	bool no_dotnet;
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
		case O_FREQ: a->freq = (unsigned)v.i; break;
		case O_NODOTNET: a->no_dotnet = true; break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	a->cmd = ps.rest;
	if ((a->pid > 0) + (a->name != NULL) + (a->cmd != NULL) != 1)
		return cli_cmd_usage(&record_cmd, "give one target: -p PID, -n NAME or -- COMMAND");
	if (!a->nouts)
		return cli_cmd_usage(&record_cmd, "give the timeline's file: -o FILE");
	/* .json is Chrome JSON here (a timeline first), .speedscope.json a profile */
	for (size_t i = 0; i < a->nouts; i++) {
		size_t n = strlen(a->outs[i]);
		bool speedscope = n >= 16 && !strcmp(a->outs[i] + n - 16, ".speedscope.json");
		if (cli_format_pick("record", NULL, a->outs[i],
				    speedscope ? CLI_FMT_PROFILE : CLI_FMT_TIMELINE, NULL,
				    &a->fmts[i]) < 0 &&
		    cli_format_pick("record", NULL, a->outs[i], CLI_FMT_PROFILE, NULL,
				    &a->fmts[i]) < 0)
			return cli_cmd_usage(&record_cmd,
					     "-o %s: a timeline (.pftrace, .perfetto-trace, .json) "
					     "or a profile (.folded, .pb.gz, .svg, .speedscope.json)",
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
static volatile int g_stop_int; /* the pump's stop flag */

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
	g_stop_int = 1;
}

/* A perf profiler running on its own thread. */
struct perf_run {
	struct rtd_perf_profiler *p;
	pthread_t th;
	bool started;
	volatile bool done;
	int rc;
};

static void *perf_thread(void *arg)
{
	struct perf_run *r = arg;
	r->rc = rtd_perf_profiler_run(r->p);
	__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* The EventPipe session, streamed into an unlinked temporary file. */
struct ep_run {
	rtd_ipc_client *c;
	rtd_ipc_session *s;
	int fd;
	char path[64]; /* /proc/self/fd/N: the file has no name */
	int werr;
	pthread_t th;
	bool started;
	volatile bool done;
	int rc;
	struct rtd_ipc_pump_result res;
};

static int ep_sink(const void *data, size_t len, void *ctx)
{
	struct ep_run *e = ctx;
	const char *p = data;
	while (len) {
		ssize_t n = write(e->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e->werr = errno ? errno : EIO;
			return -e->werr;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void *ep_thread(void *arg)
{
	struct ep_run *e = arg;
	RTD_OPTS(rtd_ipc_pump_opts, po, .sink = ep_sink, .ctx = e, .stop = &g_stop_int);
	e->rc = rtd_ipc_session_pump(e->s, &po, &e->res);
	__atomic_store_n(&e->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* The default providers: what explains time (issue #30), then --providers. */
static int ep_providers(const char *spec, struct rtd_ipc_providers *prov)
{
	uint64_t kw = 0;
	char err[256] = "";
	int r = rtd_ipc_clrevents_parse("gc+jit+loader+contention+exception+threading", &kw,
					err, sizeof(err));
	char def[160];
	snprintf(def, sizeof(def), "Microsoft-Windows-DotNETRuntime:0x%llx:4",
		 (unsigned long long)kw);
	if (!r)
		r = rtd_ipc_providers_parse(def, prov, err, sizeof(err));
	if (!r && spec)
		r = rtd_ipc_providers_parse(spec, prov, err, sizeof(err));
	if (r)
		return cli_fail("--providers: %s", err[0] ? err : rtd_strerror(r));
	return CLI_OK;
}

static int ep_start(struct ep_run *e, pid_t pid, const char *spec)
{
	struct rtd_ipc_providers prov = {0};
	if (ep_providers(spec, &prov))
		return CLI_FAIL; /* checked before: out of memory */
	int err = 0;
	e->c = rtd_ipc_client_new(pid, NULL, &err);
	if (!e->c) {
		rtd_ipc_providers_clear(&prov);
		return cli_fail("pid %d: its diagnostics socket: %s", (int)pid,
				rtd_ipc_errmsg_last());
	}
	char tmpl[] = "/tmp/rtd-record-XXXXXX";
	e->fd = mkstemp(tmpl);
	if (e->fd < 0) {
		rtd_ipc_providers_clear(&prov);
		return cli_fail("a temporary file: %s", strerror(errno));
	}
	unlink(tmpl);
	snprintf(e->path, sizeof(e->path), "/proc/self/fd/%d", e->fd);
	RTD_OPTS(rtd_ipc_session_opts, so, .providers = prov.v, .n_providers = prov.n,
		 .no_rundown = true, .no_stackwalk = true);
	e->s = rtd_ipc_session_start(e->c, &so, &err);
	rtd_ipc_providers_clear(&prov);
	if (!e->s)
		return cli_fail("pid %d: starting the EventPipe session: %s", (int)pid,
				rtd_ipc_client_errmsg(e->c));
	return CLI_OK;
}

static void ep_free(struct ep_run *e)
{
	rtd_ipc_session_free(e->s);
	rtd_ipc_client_free(e->c);
	if (e->fd >= 0)
		close(e->fd);
}

static int perf_new(struct perf_run *r, pid_t *pids, unsigned flags, unsigned freq)
{
	struct rtd_perf_sampler_opts so = {.sz = sizeof(so), .freq = freq};
	struct rtd_perf_profiler_opts po = {.sz = sizeof(po), .pids = pids, .npids = 1,
					    .flags = flags | RTD_PERF_PROF_KEEP_SAMPLES,
					    .sampler = &so};
	int rc = rtd_perf_profiler_new(&po, &r->p);
	if (rc && (flags & RTD_PERF_PROF_OFF_CPU)) {
		/* the rest is still worth recording: say what is missing */
		fprintf(stderr, "rtdiag: no off-CPU waits: %s (they need sched_switch samples: "
				"root, CAP_PERFMON or kernel.perf_event_paranoid <= 1)\n",
			rtd_perf_profiler_errmsg(NULL));
		r->p = NULL;
		return CLI_OK;
	}
	if (rc)
		return cli_fail("CPU samples: %s", rtd_perf_profiler_errmsg(NULL));
	return CLI_OK;
}

static bool alive(pid_t pid, bool child)
{
	if (child) {
		int st;
		return waitpid(pid, &st, WNOHANG) == 0;
	}
	return kill(pid, 0) == 0 || errno != ESRCH;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The sources merged into each -o's timeline. */
static int write_all(struct rec_args *a, rtd_source **srcs, size_t n, uint64_t runtime)
{
	struct cli_timeline t[REC_MAX_OUTS];
	rtd_timeline_records *c[REC_MAX_OUTS] = {0};
	size_t opened = 0;
	int rc = 0;
	for (size_t i = 0; i < a->nouts; i++) {
		if (a->fmts[i].kind != CLI_FMT_TIMELINE)
			continue;
		if (cli_timeline_open(&t[opened], &a->fmts[i], a->outs[i])) {
			rc = -EIO;
			break;
		}
		RTD_OPTS(rtd_timeline_records_opts, ro, .runtime_sources = runtime);
		c[opened] = rtd_timeline_records_new(t[opened].tl, &ro, &rc);
		opened++;
		if (!c[opened - 1])
			break;
	}
	if (!opened)
		return CLI_OK;
	rtd_source *m = rc == 0 ? rtd_source_merge(srcs, n, NULL) : NULL;
	if (!m && rc == 0)
		rc = -ENOMEM;
	const struct rtd_record *r;
	int got = 0;
	while (m && (got = rtd_source_next(m, &r)) == 1)
		for (size_t i = 0; i < opened && rc == 0; i++)
			rc = rtd_timeline_records_add(c[i], r);
	if (got < 0)
		cli_fail("%s source: %s (what came before is written)",
			 rtd_source_name(srcs[r->source]), r->message && r->message[0] ? r->message
									: rtd_strerror(r->code));
	if (rc < 0)
		cli_fail("writing the timeline: %s", rtd_strerror(rc));
	for (size_t i = 0; i < n; i++) {
		struct rtd_source_stats st;
		rtd_source_stats(srcs[i], &st);
		fprintf(stderr, "rtdiag: %s: %llu samples, %llu slices, %llu instants\n",
			rtd_source_name(srcs[i]),
			(unsigned long long)st.records[RTD_REC_SAMPLE],
			(unsigned long long)st.records[RTD_REC_SLICE_BEGIN],
			(unsigned long long)st.records[RTD_REC_INSTANT]);
	}
	int out = rc < 0 ? CLI_FAIL : got < 0 ? CLI_PARTIAL : CLI_OK;
	for (size_t i = 0; i < opened; i++) {
		rtd_timeline_records_free(c[i]);
		if (cli_timeline_close(&t[i], rc == 0) && out == CLI_OK)
			out = CLI_FAIL;
	}
	rtd_source_free(m);
	return out;
}

/* The CPU samples' profile, for each -o of a profile format. */
static int write_profiles(struct rec_args *a, struct rtd_perf_profiler *p)
{
	rtd_profile *prof = NULL;
	int rc = CLI_OK;
	for (size_t i = 0; i < a->nouts && rc == CLI_OK; i++) {
		if (a->fmts[i].kind != CLI_FMT_PROFILE)
			continue;
		int r = prof ? 0 : rtd_perf_profiler_profile(p, &prof);
		rc = r ? cli_fail("building the profile: %s", rtd_strerror(r))
		       : cli_write_profile(prof, &a->fmts[i], a->outs[i], NULL);
	}
	rtd_profile_free(prof);
	return rc;
}

static int record_main(int argc, char **argv)
{
	struct rec_args a = {0};
	int rc = parse(&a, argc, argv);
	if (rc >= 0)
		return rc;
	for (size_t i = 0; i < a.nouts; i++)
		if (cli_out_check(a.outs[i]))
			return CLI_FAIL;
	if (a.name && find_name(a.name, &a.pid))
		return CLI_FAIL;
	struct rtd_ipc_providers check = {0};
	rc = ep_providers(a.providers, &check); /* a bad --providers fails first */
	rtd_ipc_providers_clear(&check);
	if (rc)
		return CLI_USAGE;
	pid_t pids[CLI_MAX_PIDS] = {a.pid};
	size_t npids = a.pid ? 1 : 0;
	struct perf_child child = {0};
	unsigned flags = 0;
	if (a.cmd) {
		/* a .NET COMMAND writes its JIT frames' names for perf (its
		 * runtime is not up yet to be asked over the diagnostics IPC) */
		if (!a.no_dotnet)
			setenv("DOTNET_PerfMapEnabled", "3", 0);
		if (perf_cli_start(&child, a.cmd, pids, &npids))
			return CLI_FAIL;
		a.pid = pids[0];
		flags = RTD_PERF_PROF_ENABLE_ON_EXEC | RTD_PERF_PROF_NO_DOTNET;
	}
	struct perf_run cpu = {0}, off = {0};
	struct ep_run ep = {.fd = -1};
	rc = perf_new(&cpu, pids, flags, a.freq);
	if (!rc)
		rc = perf_new(&off, pids, flags | RTD_PERF_PROF_OFF_CPU | RTD_PERF_PROF_NO_DOTNET, 0);
	char sock[256];
	bool dotnet = !a.no_dotnet && !a.cmd &&
		      rtd_ipc_socket_find(a.pid, sock, sizeof(sock), NULL, 0) == 0;
	if (!rc && dotnet && ep_start(&ep, a.pid, a.providers)) {
		/* the kernel's side is still worth recording (the message said why) */
		fprintf(stderr, "rtdiag: recording without EventPipe\n");
		ep_free(&ep);
		ep = (struct ep_run){.fd = -1};
		dotnet = false;
	}
	if (rc) {
		if (a.cmd)
			perf_child_abort(&child);
		goto out;
	}
	if (rtd_perf_monitor_user_only(rtd_perf_profiler_monitor(cpu.p)))
		fprintf(stderr, "rtdiag: user space only: kernel.perf_event_paranoid allows "
				"this user no kernel samples (root or CAP_PERFMON give them)\n");
	struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	cpu.started = pthread_create(&cpu.th, NULL, perf_thread, &cpu) == 0;
	off.done = !off.p;
	off.started = off.p && pthread_create(&off.th, NULL, perf_thread, &off) == 0;
	ep.started = dotnet && pthread_create(&ep.th, NULL, ep_thread, &ep) == 0;
	if (a.cmd) {
		int e = perf_child_go(&child);
		if (e) {
			cli_fail("%s: cannot run: %s", a.cmd[0], strerror(e));
			g_stop = 1;
		}
	}
	fprintf(stderr, "rtdiag: recording pid %d: CPU samples%s%s; %s\n", (int)a.pid,
		off.p ? ", off-CPU waits" : "", ep.started ? ", EventPipe" : "",
		a.duration > 0 ? "until --duration, the target's end or Ctrl-C"
			       : "until the target's end or Ctrl-C");
	double t0 = now_s();
	bool ended = false, ep_tried = false;
	/* until Ctrl-C, --duration, or the target's end (perf's runs return
	 * when the process is gone; the EventPipe stream closes) */
	while (!g_stop) {
		if (a.duration > 0 && now_s() - t0 >= a.duration)
			break;
		if (!alive(a.pid, a.cmd != NULL) ||
		    (__atomic_load_n(&cpu.done, __ATOMIC_ACQUIRE) &&
		     __atomic_load_n(&off.done, __ATOMIC_ACQUIRE))) {
			ended = true;
			break;
		}
		/* a .NET COMMAND: its session once its runtime listens */
		if (a.cmd && !a.no_dotnet && !ep.started && !ep_tried &&
		    rtd_ipc_socket_find(a.pid, sock, sizeof(sock), NULL, 0) == 0) {
			ep_tried = true;
			if (ep_start(&ep, a.pid, a.providers) == CLI_OK)
				ep.started = pthread_create(&ep.th, NULL, ep_thread, &ep) == 0;
			else
				fprintf(stderr, "rtdiag: recording without EventPipe\n");
			if (ep.started)
				fprintf(stderr, "rtdiag: pid %d is .NET: EventPipe from now on\n",
					(int)a.pid);
		}
		poll(NULL, 0, 50);
	}
	g_stop_int = 1; /* the pump: StopTracing, then the stream's end */
	rtd_perf_monitor_stop(rtd_perf_profiler_monitor(cpu.p), false);
	if (off.p)
		rtd_perf_monitor_stop(rtd_perf_profiler_monitor(off.p), false);
	if (cpu.started)
		pthread_join(cpu.th, NULL);
	if (off.started)
		pthread_join(off.th, NULL);
	if (ep.started)
		pthread_join(ep.th, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (cpu.rc || off.rc)
		fprintf(stderr, "rtdiag: perf: %s (keeping what came)\n",
			rtd_perf_profiler_errmsg(cpu.rc ? cpu.p : off.p));
	if (ep.started && ep.rc)
		fprintf(stderr, "rtdiag: EventPipe: %s (keeping what came)\n",
			ep.werr ? strerror(ep.werr) : rtd_strerror(ep.rc));
	else if (ep.started && !ep.res.ended)
		fprintf(stderr, "rtdiag: EventPipe: the runtime did not close the session's "
				"stream after StopTracing\n");
	if (a.cmd && !ended && alive(a.pid, true)) {
		kill(a.pid, SIGTERM);
		waitpid(a.pid, NULL, 0);
	}

	rtd_source *srcs[3], *nt = NULL;
	size_t n = 0;
	int err = 0;
	uint64_t runtime = 0;
	if (ep.started) {
		/* the runtime's start/stop pairs (GC, suspension, contention)
		 * as slices too */
		nt = rtd_nettrace_source_open(ep.path, NULL, &err);
		if (nt && (srcs[n] = rtd_nettrace_source_clr(nt, &err)))
			runtime |= 1ull << n++;
		else
			cli_fail("reading the EventPipe stream: %s", rtd_strerror(err));
	}
	if ((srcs[n] = rtd_perf_source_profiler(cpu.p, NULL, &err)))
		n++;
	if (off.p && (srcs[n] = rtd_perf_source_waits(off.p, NULL, &err)))
		n++;
	rc = write_all(&a, srcs, n, runtime);
	for (size_t i = 0; i < n; i++)
		rtd_source_free(srcs[i]);
	rtd_source_free(nt);
	if (rc != CLI_FAIL) {
		int prc = write_profiles(&a, cpu.p);
		rc = prc != CLI_OK ? prc : rc;
	}
	if (a.cmd && !a.no_dotnet && !alive(a.pid, true)) {
		/* the perf map our COMMAND wrote (named now): not left in /tmp */
		char map[64];
		snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)a.pid);
		unlink(map);
	}
	if (rc == CLI_OK && ended && a.duration > 0) {
		fprintf(stderr, "rtdiag: the target ended before --duration; what came is written\n");
		rc = CLI_PARTIAL;
	}
out:
	rtd_perf_profiler_free(cpu.p);
	rtd_perf_profiler_free(off.p);
	ep_free(&ep);
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

const struct cli_group cli_group_record = {
	.name = "record",
	.summary = "one timeline of a process, its runtime and the kernel, on one clock",
	.run = record_run,
	.help = record_help,
};
