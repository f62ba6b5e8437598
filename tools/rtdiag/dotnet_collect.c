/* SPDX-License-Identifier: MIT */
/*
 * dotnet_collect.c - 'rtdiag dotnet collect', 'profile' and 'replay': an
 * EventPipe session from a running process (-p/-n/--socket) or from a
 * program started suspended through a reverse connection (-- COMMAND),
 * into a nettrace file or into profiles.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_format.h"
#include "dotnet_cli.h"
#include "dotnet_session.h"
#include "out.h"
#include "rtdiag/ipc.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/profile.h"

/* A started child and the reverse connection it made to us. */
struct launch {
	rtd_ipc_listener *l;
	pid_t child;
	int status; /* its wait status, once it ended (child == 0) */
	bool ended;
	char path[108];
};

/* ---- options ------------------------------------------------------------ */

#define SESSION_OPTS                                                           \
	{O_DURATION, "duration", 'd', CLI_ARG_DURATION, CLI_OPT_POSITIVE,      \
	 "TIME", "stop after TIME (1.5, 1.5s, 200ms, 2m, hh:mm:ss); a program " \
	 "rtdiag started is then ended", 0, 0},                                \
	{O_BUFFER, "buffer-mb", 0, CLI_ARG_INT, 0, "N",                        \
	 "the runtime's circular buffer (default 256)", 1, 4096},              \
	{O_BUFFER, "buffersize", 0, CLI_ARG_INT, CLI_OPT_HIDDEN, "N",          \
	 "dotnet-trace's name for --buffer-mb", 1, 4096},                      \
	{O_NO_RUNDOWN, "no-rundown", 0, CLI_ARG_NONE, 0, NULL,                 \
	 "no rundown at the end (no method names for what ran before)", 0, 0}, \
	{O_RUNDOWN_WAIT, "rundown-wait", 0, CLI_ARG_DURATION,                  \
	 CLI_OPT_POSITIVE, "TIME", "read the rundown for at most TIME after "  \
	 "the stop (30 s)", 0, 0},                                             \
	{O_RECORD, "record", 0, CLI_ARG_STR, 0, "FILE",                        \
	 "keep every byte exchanged, for 'rtdiag dotnet replay'", 0, 0},       \
	{O_DRY_RUN, "dry-run", 0, CLI_ARG_NONE, 0, NULL,                       \
	 "print what the session asks the runtime for, and stop", 0, 0}

static const struct cli_opt collect_opts[] = {
	DN_TARGET_OPTS,
	{O_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "the nettrace file (default NAME_YYYYMMDD_HHMMSS.nettrace; - for "
	 "stdout)", 0, 0},
	{O_PROVIDERS, "providers", 0, CLI_ARG_STR, CLI_OPT_REPEAT, "SPEC",
	 "Name[:Keywords[:Level[:Args]]],... (dotnet-trace's syntax)", 0, 0},
	{O_PROFILE, "profile", 0, CLI_ARG_STR, CLI_OPT_REPEAT, "NAME[,NAME]",
	 "a named set of providers (see below)", 0, 0},
	{O_CLREVENTS, "clrevents", 0, CLI_ARG_STR, 0, "K+K...",
	 "runtime keywords by name: gc+jit+loader+exception...", 0, 0},
	{O_CLREVENTLEVEL, "clreventlevel", 0, CLI_ARG_STR, 0, "LEVEL",
	 "level of --clrevents (default Informational)", 0, 0},
	{O_NO_STACKWALK, "no-stackwalk", 0, CLI_ARG_NONE, 0, NULL,
	 "events carry no stacks (the sampler's samples still do)", 0, 0},
	SESSION_OPTS,
	{0},
};

static const struct cli_opt profile_opts[] = {
	DN_TARGET_OPTS,
	{O_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "write the profile to FILE (format from --format or the name: "
	 ".pb.gz pprof, .svg, .speedscope.json, .folded; default folded)",
	 0, 0},
	{O_FORMAT, "format", 'f', CLI_ARG_CHOICE, 0,
	 "folded|pprof|top|svg|speedscope", "the output format", 0, 0},
	{O_TYPE, "type", 't', CLI_ARG_STR, CLI_OPT_REPEAT,
	 "cpu,alloc,lock,exception,wait", "what to profile, several at once "
	 "in one session (default cpu; wait: .NET 9+)", 0, 0},
	{O_CPU, "cpu", 0, CLI_ARG_NONE, 0, NULL,
	 "CPU in managed code: the samples of threads in managed code, "
	 "weighing the kernel's CPU time of their threads (default: thread "
	 "time of every thread, running or waiting)", 0, 0},
	{O_SAMPLER, "sampler", 0, CLI_ARG_CHOICE, 0, "perf|eventpipe",
	 "--cpu: sample through perf_event (default where the kernel allows "
	 "it: 99 Hz, managed, native and kernel frames, JIT frames named by "
	 "the runtime's perf map) or with EventPipe's sampler (stops every "
	 "managed thread at each tick)", 0, 0},
	{O_MANAGED_ONLY, "managed-only", 0, CLI_ARG_NONE, CLI_OPT_HIDDEN, NULL,
	 "dotnetdiag's --managed-only", 0, 0},
	{O_TOP, "top", 0, CLI_ARG_INT, CLI_OPT_POSITIVE | CLI_OPT_WAS_FLAG, "N",
	 "print the N hottest frames too when writing -o", 1, 1000000},
	SESSION_OPTS,
	{0},
};

/* Providers from --providers, --profile and --clrevents. */
static int add_clrevents(const struct cli_cmd *cmd, struct collect_args *a,
			 const char *events, const char *level)
{
	uint64_t kw = 0;
	char bad[128];
	if (rtd_ipc_clrevents_parse(events, &kw, bad, sizeof(bad)))
		return cli_cmd_usage(cmd, "--clrevents: '%s' is not a runtime "
				     "keyword (gc, gchandle, loader, jit, "
				     "exception, contention, threading, type, ... "
				     "see dotnet-trace's list)", bad);
	char spec[160], perr[256];
	snprintf(spec, sizeof(spec), "Microsoft-Windows-DotNETRuntime:0x%llx:%s",
		 (unsigned long long)kw, level ? level : "4");
	if (rtd_ipc_providers_parse(spec, &a->prov, perr, sizeof(perr)))
		return cli_cmd_usage(cmd, "--clreventlevel: %s", perr);
	return -1;
}

static int add_profiles(const struct cli_cmd *cmd, struct collect_args *a,
			const char *list)
{
	char *dup = strdup(list);
	if (!dup)
		return cli_fail("out of memory");
	int r = -1;
	for (char *save = NULL, *n = strtok_r(dup, ",", &save); n && r < 0;
	     n = strtok_r(NULL, ",", &save)) {
		if (rtd_ipc_providers_add_profile(n, &a->prov) == 0)
			continue;
		char names[256] = "";
		for (const char *const *k = rtd_ipc_profile_names(); *k; k++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names),
				 "%s%s", names[0] ? ", " : "", *k);
		r = cli_cmd_usage(cmd, "no profile '%s' (known: %s)", n, names);
	}
	free(dup);
	return r;
}

static int parse_kinds(const struct cli_cmd *cmd, const char *s, unsigned *kinds)
{
	const char *bad = NULL;
	size_t n = 0;
	unsigned k = 0;
	if (rtd_nettrace_profile_kinds(s, &k, &bad, &n))
		return cli_cmd_usage(cmd, "--type: '%.*s' is not cpu, "
				     "alloc, lock, exception or wait",
				     (int)n, bad);
	*kinds |= k;
	return -1;
}

/* The name a default output file starts with. */
static const char *default_stem(const struct collect_args *a, char *buf,
				size_t len)
{
	if (a->command) {
		/* "dotnet X.dll ..." is X; else the program's file name */
		const char *prog = a->command[0];
		const char *b = strrchr(prog, '/');
		b = b ? b + 1 : prog;
		if (!strcmp(b, "dotnet") && a->command[1] &&
		    a->command[1][0] != '-')
			prog = a->command[1];
		b = strrchr(prog, '/');
		b = b ? b + 1 : prog;
		snprintf(buf, len, "%s", b);
		char *dot = strrchr(buf, '.');
		if (dot && !strcmp(dot, ".dll"))
			*dot = 0;
		return buf;
	}
	if (a->t.pid)
		return dn_proc_name(a->t.pid, buf, len);
	return "trace";
}

/* --dry-run: what the session would ask the runtime for; the providers in
 * dotnet-trace's syntax, so the same request can be given to it. */
static int print_request(const struct collect_args *a)
{
	printf("providers: ");
	for (size_t i = 0; i < a->prov.n; i++)
		printf("%s%s:0x%llX:%u%s%s", i ? "," : "", a->prov.v[i].name,
		       (unsigned long long)a->prov.v[i].keywords,
		       a->prov.v[i].level, a->prov.v[i].args ? ":" : "",
		       a->prov.v[i].args ? a->prov.v[i].args : "");
	printf("\n");
	for (size_t i = 0; i < a->prov.n; i++) {
		const struct rtd_ipc_provider *p = &a->prov.v[i];
		if (!p->n_filter_ids)
			continue;
		printf("event filter: %s %s", p->name,
		       p->filter_enable ? "only" : "not");
		for (uint32_t k = 0; k < p->n_filter_ids; k++)
			printf("%s%u", k ? "," : " ", p->filter_ids[k]);
		printf("%s\n", a->filters_optional ? " (where the runtime "
			"knows CollectTracing5)" : "");
	}
	printf("buffer: %u MB\nstacks: %s\n", a->buffer_mb ? a->buffer_mb : 256,
	       a->no_stackwalk ? "samples only (the sampler sends its own)"
			       : "with every event");
	if (a->no_rundown)
		printf("rundown: no\n");
	else
		printf("rundown: keywords 0x%llX\n",
		       (unsigned long long)(a->rundown_keyword
						    ? a->rundown_keyword
						    : RTD_IPC_RUNDOWN_DEFAULT));
	return CLI_OK;
}

enum { MODE_COLLECT, MODE_PROFILE, MODE_STACK };

/* dotnet profile's and stack's defaults and checks (the profile's kinds,
 * what the request needs, the duration, the output's form). Returns -1,
 * or the exit code of an error said. */
static int profile_defaults(const struct cli_cmd *cmd, struct collect_args *a,
			    int mode)
{
	struct rtd_ipc_session_opts so = {.sz = sizeof(so)};
	if (!a->kinds)
		a->kinds = RTD_IPC_PROFILE_CPU;
	if (a->cpu && !(a->kinds & RTD_IPC_PROFILE_CPU))
		return cli_cmd_usage(cmd, "--cpu is for --type cpu");
	if (a->eventpipe_cpu && !a->cpu)
		return cli_cmd_usage(cmd, "--sampler is for --cpu");
	int rc = rtd_ipc_profile_request(a->kinds, &a->prov, &so);
	if (rc)
		return cli_fail("%s", rtd_strerror(rc));
	a->no_stackwalk |= so.no_stackwalk;
	a->rundown_keyword = so.rundown_keyword;
	a->filters_optional = so.filters_optional;
	if (!a->duration && !a->command)
		a->duration = mode == MODE_STACK ? 0.25 : 10;
	if (a->out && !a->format) {
		struct cli_format f;
		if (cli_format_ext(cmd->name, a->out, CLI_FMT_PROFILE, &f))
			return CLI_USAGE;
		a->format = f.kind ? f.prof : RTD_PROFILE_FMT_NONE;
	}
	if (!a->format)
		a->format = a->out ? RTD_PROFILE_FMT_FOLDED
				   : RTD_PROFILE_FMT_TOP;
	if (!a->out && !a->top)
		a->top = 10; /* a table on the terminal by default; --top N keeps N */
	return -1;
}

/* dotnet collect's defaults: dotnet-trace's providers, and a .nettrace
 * named for the target and the time. Returns -1, or the exit code of an
 * error said. */
static int collect_defaults(const struct cli_cmd *cmd, struct collect_args *a)
{
	if (!a->prov.n &&
	    (rtd_ipc_providers_add_profile("dotnet-common", &a->prov) ||
	     rtd_ipc_providers_add_profile("dotnet-sampled-thread-time",
					   &a->prov)))
		return cli_fail("out of memory");
	if (a->out && cli_format_recording(cmd->name, a->out,
					   "an EventPipe trace (.nettrace); "
					   "dotnet profile draws pictures"))
		return CLI_USAGE;
	if (!a->out && !a->dry_run) {
		char stem[128], ts[32];
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(ts, sizeof(ts), "%Y%m%d_%H%M%S", &tm);
		snprintf(a->outbuf, sizeof(a->outbuf), "%s_%s.nettrace",
			 default_stem(a, stem, sizeof(stem)), ts);
		a->out = a->outbuf;
	}
	return -1;
}

static int parse_collect(const struct cli_cmd *cmd, int argc, char **argv,
			 struct collect_args *a, int mode)
{
	bool profile = mode != MODE_COLLECT;
	struct cli_parser p;
	struct cli_val v;
	int id, r;
	const char *clrevents = NULL, *clrlevel = NULL;
	char perr[512];
	memset(a, 0, sizeof(*a));
	a->rundown_wait = 30;
	cli_opt_init(&p, cmd, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		if (dn_target_opt(id, &v, &a->t))
			continue;
		switch (id) {
		case O_OUT: a->out = v.str; break;
		case O_RECORD: a->record = v.str; break;
		case O_NO_RUNDOWN: a->no_rundown = true; break;
		case O_DRY_RUN: a->dry_run = true; break;
		case O_NO_STACKWALK: a->no_stackwalk = true; break;
		case O_TOP: a->top = v.str ? (int)v.i : 10; break;
		case O_CPU: a->cpu = true; break;
		case O_MANAGED_ONLY: a->managed_only = true; break;
		case O_SAMPLER: a->eventpipe_cpu = v.i == 1; break;
		case O_DURATION: a->duration = v.d; break;
		case O_RUNDOWN_WAIT: a->rundown_wait = v.d; break;
		case O_BUFFER: a->buffer_mb = (unsigned)v.i; break;
		case O_CLREVENTS: clrevents = v.str; break;
		case O_CLREVENTLEVEL: clrlevel = v.str; break;
		case O_FORMAT:
			a->format = rtd_profile_format_from_name(v.str);
			break;
		case O_TYPE:
			if ((r = parse_kinds(cmd, v.str, &a->kinds)) >= 0)
				return r;
			break;
		case O_PROFILE:
			if ((r = add_profiles(cmd, a, v.str)) >= 0)
				return r;
			break;
		case O_PROVIDERS:
			if (rtd_ipc_providers_parse(v.str, &a->prov, perr,
						    sizeof(perr)))
				return cli_cmd_usage(cmd, "--providers: %s", perr);
			break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	if (clrlevel && !clrevents)
		return cli_cmd_usage(cmd, "--clreventlevel goes with --clrevents");
	if (clrevents && (r = add_clrevents(cmd, a, clrevents, clrlevel)) >= 0)
		return r;
	if (p.rest)
		a->command = p.rest;
	if (a->command && (a->t.pid || a->t.name || a->t.socket))
		return cli_cmd_usage(cmd, "give -p PID, -n NAME or -- COMMAND, "
				     "not both");
	if (!a->command && !a->dry_run &&
	    (r = dn_target_resolve(cmd, &a->t, true)) >= 0)
		return r;
	r = profile ? profile_defaults(cmd, a, mode) : collect_defaults(cmd, a);
	if (r >= 0)
		return r;
	if (a->dry_run)
		return print_request(a);
	return -1;
}

/* ---- a program started suspended ----------------------------------------- */

/* Has pid, or a process it started, loaded a .NET host or runtime? */
static bool tree_has_dotnet(pid_t root)
{
	pid_t tree[256];
	size_t n = 0;
	tree[n++] = root;
	DIR *d = opendir("/proc");
	if (!d)
		return true; /* cannot tell: do not fail for it */
	/* children of the tree: a few passes over /proc's ppid links */
	for (int pass = 0; pass < 4; pass++) {
		rewinddir(d);
		struct dirent *e;
		while ((e = readdir(d)) && n < sizeof(tree) / sizeof(tree[0])) {
			pid_t pid = (pid_t)atoi(e->d_name);
			if (pid <= 0)
				continue;
			bool known = false;
			for (size_t i = 0; i < n; i++)
				known |= tree[i] == pid;
			if (known)
				continue;
			struct rtd_pstat st;
			if (rtd_pstat_read(NULL, pid, 0, &st) == 0)
				for (size_t i = 0; i < n; i++)
					if (tree[i] == st.ppid) {
						tree[n++] = pid;
						break;
					}
		}
	}
	closedir(d);
	for (size_t i = 0; i < n; i++)
		if (rtd_ipc_proc_loads_dotnet(tree[i]) == 1)
			return true;
	return false;
}

/* How long a started program may go without loading a .NET runtime (its
 * own or a child's) before it is taken for not .NET. A .NET program
 * connects to the port within milliseconds of its start. */
#define LAUNCH_NOT_DOTNET_MS 5000
#define LAUNCH_WAIT_MS 30000

/* Start COMMAND suspended with DOTNET_DiagnosticPorts pointing at a
 * listener of ours; returns a client on its reverse connection. */
static rtd_ipc_client *launch(char **command, struct launch *ln,
			      const struct rtd_ipc_client_opts *co)
{
	static unsigned seq;
	memset(ln, 0, sizeof(*ln));
	snprintf(ln->path, sizeof(ln->path), "/tmp/rtdiag-%d-%u.sock",
		 (int)getpid(), seq++);
	int err;
	ln->l = rtd_ipc_listen(ln->path, &err);
	if (!ln->l) {
		cli_fail("%s", rtd_ipc_errmsg_last());
		return NULL;
	}
	ln->child = fork();
	if (ln->child < 0) {
		cli_fail("fork: %s", strerror(errno));
		ln->child = 0;
		return NULL;
	}
	if (ln->child == 0) {
		/* suspend is the default mode of a connect port */
		setenv("DOTNET_DiagnosticPorts", ln->path, 1);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(command[0], command);
		fprintf(stderr, "rtdiag: cannot run %s: %s\n", command[0],
			strerror(errno));
		_exit(127);
	}
	struct rtd_ipc_advertise adv;
	int fd = -1, rc;
	/* Wait for the runtime, but notice a child that died first, or that
	 * runs no .NET runtime at all. */
	for (int waited = 0; waited < LAUNCH_WAIT_MS; waited += 200) {
		rc = rtd_ipc_listener_accept(ln->l, 200, &adv, &fd);
		if (rc != -RTD_E_IPC_TIMEOUT && rc != -EINTR)
			break;
		if (waitpid(ln->child, &ln->status, WNOHANG) == ln->child) {
			ln->child = 0;
			ln->ended = true;
			cli_fail("%s exited before its .NET runtime connected "
				 "(not a .NET program, or it failed to start)",
				 command[0]);
			return NULL;
		}
		if (waited >= LAUNCH_NOT_DOTNET_MS && !tree_has_dotnet(ln->child)) {
			cli_fail("%s (pid %d) has loaded no .NET runtime in %d s "
				 "(no libcoreclr or libhostfxr in it or its "
				 "children): not a .NET program?", command[0],
				 (int)ln->child, LAUNCH_NOT_DOTNET_MS / 1000);
			return NULL;
		}
		if (dn_stop_flag) {
			cli_fail("interrupted");
			return NULL;
		}
	}
	if (rc) {
		cli_fail("%s: no .NET runtime connected to %s in %d s: %s "
			 "(is DOTNET_EnableDiagnostics=0 set for it?)",
			 command[0], ln->path, LAUNCH_WAIT_MS / 1000,
			 rtd_strerror(rc));
		return NULL;
	}
	rtd_ipc_client *c = rtd_ipc_client_new_listener(ln->l, &adv, fd, co, &err);
	if (!c)
		cli_fail("%s", rtd_strerror(err));
	return c;
}

/* Reap the child: end it first when @stop (it was still running when the
 * session ended), saying so. A child whose stream ended by itself is
 * given 5 s to exit. */

static void launch_end(struct launch *ln, char **command, bool stop,
		       const char *why)
{
	if (ln->child > 0) {
		/* a runtime ended by a signal leaves its diagnostic socket in
		 * /tmp (.NET 10 does on SIGTERM too): its name now, while the
		 * process is there, to remove it once the process is gone */
		char sock[512] = "";
		if (rtd_ipc_socket_find(ln->child, sock, sizeof(sock), NULL, 0))
			sock[0] = 0;
		else
			rtd_ipc_socket_own_path(ln->child, sock);
		for (int i = 0; !stop && i < 50; i++) {
			if (waitpid(ln->child, &ln->status, WNOHANG) == ln->child) {
				ln->ended = true;
				break;
			}
			struct timespec ts = {0, 100 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		if (!ln->ended &&
		    waitpid(ln->child, &ln->status, WNOHANG) == ln->child)
			ln->ended = true;
		if (!ln->ended) {
			kill(ln->child, SIGTERM);
			fprintf(stderr, "rtdiag: %s: ended %s (pid %d), which "
				"rtdiag started (SIGTERM)\n",
				stop ? why : "its stream ended but it did not",
				command[0], (int)ln->child);
			waitpid(ln->child, &ln->status, 0);
		}
		/* reaped here, by itself or after SIGTERM: a socket left has
		 * no process (its name holds the start time: never another's) */
		if (sock[0])
			unlink(sock);
		ln->child = 0;
	}
	rtd_ipc_listener_free(ln->l);
	ln->l = NULL;
}

/* ---- the stream: into the file, through the decoder ---------------------- */

static int on_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct sink_state *st = ctx;
	if (st->counters && !st->counters_rc)
		st->counters_rc = rtd_counters_event(st->counters, st->dec, ev);
	return st->counters_rc;
}

static int on_names_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct sink_state *st = ctx;
	/* Method/DCStopVerbose of the rundown provider: one method named */
	if (ev->meta && ev->meta->event_id == 144 && ev->meta->provider &&
	    !strcmp(ev->meta->provider, "Microsoft-Windows-DotNETRuntimeRundown"))
		st->names_methods++;
	/* into the table the session's own method events go to, before
	 * them: one table, the latest definition of an address winning */
	if (!st->prof_rc)
		st->prof_rc = rtd_nettrace_methods_event(rtd_nettrace_source_methods(st->src), ev);
	return 0;
}

static int names_sink(const void *data, size_t len, void *ctx)
{
	struct sink_state *st = ctx;
	int rc = rtd_nettrace_feed(st->names, data, len);
	return rc < 0 ? rc : 0;
}

/*
 * profile: a rundown of its own at the start names the methods already
 * loaded, and MethodLoadVerbose during the session the ones compiled
 * after, so frames keep their names when the session's own rundown never
 * comes (the target died or hung). Not for a program we started: nothing
 * is loaded yet.
 */
static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int names_first(rtd_ipc_client *c, void *ctx)
{
	struct sink_state *st = ctx;
	if (st->cpu_pid > 0) {
		/* the sampling has begun: the threads' CPU time from here */
		st->cpu_t0 = mono_now();
		st->cpu0_rc = rtd_thread_cpu_read(st->cpu_pid, &st->cpu0,
						  &st->ncpu0);
	}
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = st,
				      .on_event = on_names_event};
	st->names = rtd_nettrace_new(&o);
	if (!st->names)
		return -ENOMEM;
	int rc = rtd_ipc_rundown_snapshot(c, RTD_IPC_RUNDOWN_NAMES, names_sink,
					  st, 10000);
	if (rc)
		fprintf(stderr, "rtdiag: %s: the rundown at the start failed "
			"(%s); frames are named from the end rundown only\n",
			rtd_ipc_client_target(c), rtd_ipc_client_errmsg(c));
	else
		/* from here on, frames of code loaded before the session keep
		 * their names even if the target dies */
		fprintf(stderr, "rtdiag: %s: %llu methods named by a rundown "
			"at the start\n", rtd_ipc_client_target(c),
			(unsigned long long)st->names_methods);
	rtd_nettrace_free(st->names);
	st->names = NULL;
	return 0;
}

int sink_init(struct sink_state *st, const struct collect_args *a,
		     bool profile)
{
	memset(st, 0, sizeof(*st));
	if (profile) {
		struct rtd_nettrace_profiler_opts po = {
			.sz = sizeof(po), .kinds = a->kinds,
			.running_only = a->cpu, .managed_only = a->managed_only};
		st->prof = rtd_nettrace_profiler_new(&po);
		if (!st->prof)
			return -ENOMEM;
		return 0; /* the session read as the live record source */
	}
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = st,
				      .on_event = on_event};
	st->dec = rtd_nettrace_new(&o);
	return st->dec ? 0 : -ENOMEM;
}

void sink_free(struct sink_state *st)
{
	rtd_nettrace_free(st->dec);
	rtd_source_free(st->src); /* after the profiles: it names their frames */
	rtd_nettrace_profiler_free(st->prof);
	free(st->cpu0);
}

int stream_sink(const void *data, size_t len, void *ctx)
{
	struct sink_state *st = ctx;
	st->bytes += len;
	if (st->out && fwrite(data, 1, len, st->out) != len) {
		st->werr = errno ? errno : EIO;
		return -st->werr;
	}
	if (st->dec && st->dec_rc == 0) {
		int rc = rtd_nettrace_feed(st->dec, data, len);
		if (rc < 0)
			st->dec_rc = rc;
		else if (rc == 1)
			st->dec_rc = 1; /* end marker seen */
	}
	return st->counters_rc; /* a counters output that failed ends it */
}

/* After the stream ended: true when it decoded to its end marker; else
 * why not into why. */
bool sink_complete(struct sink_state *st, char *why, size_t len)
{
	int rc = st->dec_rc < 0 ? st->dec_rc : rtd_nettrace_finish(st->dec);
	if (!rc)
		return true;
	uint64_t off = 0;
	const char *m = rtd_nettrace_error(st->dec, &off);
	if (rc == -RTD_E_TRUNCATED)
		snprintf(why, len, "it ends without its end marker, at byte %llu",
			 (unsigned long long)st->bytes);
	else
		snprintf(why, len, "it does not decode at offset %llu: %s",
			 (unsigned long long)off, m && *m ? m : rtd_strerror(rc));
	return false;
}

static void tick(uint64_t bytes, void *ctx)
{
	struct sink_state *st = ctx;
	struct rtd_nettrace_stats ns = {0};
	char b[32];
	if (st->src)
		rtd_nettrace_source_stats(st->src, &ns);
	else
		rtd_nettrace_stats(st->dec, &ns);
	cli_progress("collecting: %s, %llu events, %llu dropped",
		     cli_bytes((double)bytes, b, sizeof(b)),
		     (unsigned long long)ns.events,
		     (unsigned long long)ns.dropped);
}

/* ---- one session ----------------------------------------------------------- */

/* --type wait of a runtime that sends no wait events (before .NET 9):
 * say so now, not with an empty profile at the end. A program we start
 * is still paused, and a recording replays as recorded: neither is
 * asked. Returns CLI_OK to go on, or CLI_FAIL (said why). */
static int check_wait(rtd_ipc_client *c, const struct collect_args *a,
		      const char *target)
{
	if (a->command || a->record || !(a->kinds & RTD_IPC_PROFILE_WAIT))
		return CLI_OK;
	struct rtd_ipc_process_info pi;
	char why[256];
	if (rtd_ipc_process_info(c, 2, &pi) != 0)
		return CLI_OK;
	bool ok = rtd_ipc_profile_supported(RTD_IPC_PROFILE_WAIT, pi.clr_version,
					    why, sizeof(why));
	rtd_ipc_process_info_clear(&pi);
	if (!ok && a->kinds == RTD_IPC_PROFILE_WAIT)
		return cli_fail("%s: --type wait: %s", target, why);
	if (!ok)
		fprintf(stderr, "rtdiag: %s: no wait profile: %s\n", target, why);
	return CLI_OK;
}

/* Read the session's stream into @st to its end; CLI_OK or CLI_FAIL
 * (said why). */
static int pump_session(const struct collect_args *a, rtd_ipc_session *s,
			rtd_ipc_client *c, struct sink_state *st,
			struct session_end *end)
{
	struct rtd_ipc_pump_opts po = {
		.sz = sizeof(po),
		.sink = stream_sink,
		.ctx = st,
		.stop = &dn_stop_flag,
		.duration_ms = (uint64_t)(a->duration * 1000),
		.rundown_wait_ms = (uint64_t)(a->rundown_wait * 1000),
		.tick = cli_progress_enabled() ? tick : NULL,
		/* tick gets the sink's ctx: both are the sink_state */
	};
	int rc = rtd_ipc_session_pump(s, &po, &end->res);
	cli_progress_done();
	if (rc && st->werr)
		/* the output failed, not the session: say which */
		return cli_fail("%s: %s", st->path, strerror(st->werr));
	if (rc && st->counters_rc)
		return CLI_FAIL; /* the counters' view failed: its owner says so */
	if (rc)
		return cli_fail("%s: reading the session's stream: %s",
				rtd_ipc_client_target(c), rtd_strerror(rc));
	return CLI_OK;
}

/* profile and stack: the session's stream as the live record source, read
 * under the pump's rules (the duration, SIGINT, the rundown's wait), only
 * what the builder reads made into records; frames named at the end from
 * the source's method table. CLI_OK or CLI_FAIL (said why). */
static int source_open(const struct collect_args *a, rtd_ipc_session *s,
		       struct sink_state *st, struct session_end *end)
{
	RTD_OPTS(rtd_ipc_pump_opts, po, .ctx = st, .stop = &dn_stop_flag,
		 .duration_ms = (uint64_t)(a->duration * 1000),
		 .rundown_wait_ms = (uint64_t)(a->rundown_wait * 1000),
		 .tick = cli_progress_enabled() ? tick : NULL);
	unsigned kinds = 1u << RTD_REC_SAMPLE;
	if (a->kinds & ~(unsigned)RTD_IPC_PROFILE_CPU)
		kinds |= 1u << RTD_REC_INSTANT;
	RTD_OPTS(rtd_nettrace_source_opts, so, .kinds = kinds,
		 .address_frames = true, .stream_order = true,
		 .want = rtd_nettrace_profiler_want, .want_ctx = st->prof,
		 .fields = rtd_nettrace_profiler_fields, .fields_ctx = st->prof,
		 .field_want = rtd_nettrace_profiler_field_want);
	int err = 0;
	st->src = rtd_ipc_session_pump_source(s, &po, &end->res, &so, &err);
	return st->src ? CLI_OK : cli_fail("%s", rtd_strerror(err));
}

/* Pull the session's records into the builder to the stream's end. A
 * builder that failed, or a stream that stopped decoding, leaves the
 * session to run to its stop all the same (read and dropped). CLI_OK or
 * CLI_FAIL (said why). */
static int pull_session(rtd_ipc_session *s, rtd_ipc_client *c,
			struct sink_state *st)
{
	int rc = st->prof_rc ? 0 : rtd_nettrace_profiler_pull(st->prof, st->src);
	const struct rtd_record *er;
	if (rc < 0 && rtd_source_next(st->src, &er) < 0) {
		/* the source's end (its error record comes again) */
		st->src_rc = er->code;
		st->src_off = er->offset;
		snprintf(st->src_msg, sizeof(st->src_msg), "%s", er->message);
	} else if (rc < 0) {
		st->prof_rc = rc;
	}
	rc = rtd_ipc_session_pump_drain(s);
	cli_progress_done();
	if (rc)
		return cli_fail("%s: reading the session's stream: %s",
				rtd_ipc_client_target(c), rtd_strerror(rc));
	return CLI_OK;
}

/* After the session: true when the stream decoded to its end marker;
 * else why not into @why (as sink_complete() says it). */
static bool pulled_whole(struct sink_state *st, const struct session_end *end,
			 char *why, size_t len)
{
	if (!st->src_rc)
		return true;
	if (st->src_rc == -RTD_E_TRUNCATED) {
		snprintf(why, len, "it ends without its end marker, at byte %llu",
			 (unsigned long long)end->res.bytes);
		return false;
	}
	/* cut at @len as one snprintf() of both would cut it */
	int n = snprintf(why, len, "it does not decode at offset %llu: ",
			 (unsigned long long)st->src_off);
	const char *m = *st->src_msg ? st->src_msg : rtd_strerror(st->src_rc);
	if (n > 0 && (size_t)n < len) {
		size_t ml = strlen(m), room = len - (size_t)n - 1;
		ml = ml < room ? ml : room;
		memcpy(why + n, m, ml);
		why[(size_t)n + ml] = 0;
	}
	return false;
}

/*
 * Run one session to its end; shared by collect and profile. @started
 * (may be NULL) runs once the session is on, before its stream is read,
 * for a target we did not start; @opened (may be NULL) once the session
 * is on (collect opens its output then). Returns CLI_OK or an exit code
 * after printing the error.
 */
int run_session(struct collect_args *a, struct sink_state *st,
		       int (*started)(rtd_ipc_client *, void *),
		       int (*opened)(struct sink_state *),
		       struct session_end *end)
{
	struct launch ln = {0};
	struct cli_out rec = {0};
	bool recorded = false;
	int r = CLI_FAIL;
	rtd_ipc_client *c = NULL;
	rtd_ipc_session *s = NULL;
	memset(end, 0, sizeof(*end));
	end->launched = a->command != NULL;
	/* the recording, like every output, through a temporary file: an
	 * existing FILE is replaced only once there is a conversation in it */
	if (a->record && (cli_out_check(a->record) ||
			  cli_out_open(&rec, a->record)))
		return CLI_FAIL;
	struct rtd_ipc_client_opts co = {.sz = sizeof(co), .record = rec.f};
	dn_catch_signals();
	c = a->command ? launch(a->command, &ln, &co)
		       : dn_connect(&a->t, 0, rec.f);
	if (!c)
		goto out;
	recorded = true; /* connected: what follows is worth replaying */
	snprintf(end->target, sizeof(end->target), "%s",
		 rtd_ipc_client_target(c));
	end->pid = a->command ? ln.child : a->t.pid;
	if ((r = check_wait(c, a, end->target)) != CLI_OK)
		goto out;
	r = CLI_FAIL;
	struct rtd_ipc_session_opts so = {
		.sz = sizeof(so),
		.providers = a->prov.v,
		.n_providers = a->prov.n,
		.buffer_mb = a->buffer_mb,
		.no_rundown = a->no_rundown,
		.no_stackwalk = a->no_stackwalk,
		.rundown_keyword = a->rundown_keyword,
		.filters_optional = a->filters_optional,
	};
	int err = 0;
	s = rtd_ipc_session_start(c, &so, &err);
	if (!s) {
		r = dn_fail(c, err);
		goto out;
	}
	/* the id lets 'rtdiag dotnet stop' end it from elsewhere */
	fprintf(stderr, "rtdiag: %s: session %llu started (CollectTracing%d)\n",
		rtd_ipc_client_target(c),
		(unsigned long long)rtd_ipc_session_id(s),
		rtd_ipc_session_version(s));
	if (st->prof && (r = source_open(a, s, st, end)) != CLI_OK)
		goto out;
	if (opened && (r = opened(st)) != CLI_OK)
		goto out;
	r = CLI_FAIL;
	int rc;
	if (a->command) {
		rc = rtd_ipc_resume_runtime(c);
		if (rc) {
			r = dn_fail(c, rc);
			goto out;
		}
	} else if (started && (rc = started(c, st)) != 0) {
		r = cli_fail("%s", rtd_strerror(rc));
		goto out;
	}
	r = st->prof ? pull_session(s, c, st) : pump_session(a, s, c, st, end);
out:
	rtd_ipc_session_free(s);
	rtd_ipc_client_free(c);
	if (ln.l || ln.child) {
		char why[64];
		if (end->res.stopped && a->duration && !dn_stop_flag)
			snprintf(why, sizeof(why), "--duration %g s reached",
				 a->duration);
		else if (dn_stop_flag)
			snprintf(why, sizeof(why), "interrupted");
		else
			snprintf(why, sizeof(why), "the session failed");
		bool running_ok = r == CLI_OK && end->res.target_gone;
		launch_end(&ln, a->command, !running_ok, why);
		end->child_ended = ln.ended;
		end->child_status = ln.status;
	}
	if (a->record) {
		/* a failed session's bytes are kept too: replay shows why */
		if (!recorded)
			cli_out_abort(&rec);
		else if (cli_out_commit(&rec) && r == CLI_OK)
			r = CLI_FAIL;
	}
	return r;
}

/* The exit code of a session that ran: the program's own when rtdiag
 * started it and it ended by itself (as dotnet-trace does), else OK. */
int child_code(const struct session_end *e)
{
	if (!e->launched || !e->child_ended)
		return CLI_OK;
	if (WIFEXITED(e->child_status))
		return WEXITSTATUS(e->child_status);
	if (WIFSIGNALED(e->child_status))
		return 128 + WTERMSIG(e->child_status);
	return CLI_OK;
}

/*
 * The stream did not end with its end marker: what was received is kept
 * (a trace cut short still decodes up to there) and the exit code says
 * "incomplete, kept". Explains why and what names the trace may lack.
 */
int incomplete(const struct session_end *e, const char *what,
		      const char *why, const struct collect_args *a)
{
	if (e->res.rundown_timeout)
		fprintf(stderr, "rtdiag: %s: the rundown did not end within "
			"%.0f s after the stop (a runtime hung?)\n", e->target,
			a->rundown_wait);
	else if (e->res.target_gone)
		fprintf(stderr, "rtdiag: %s: the process ended the stream "
			"before a stop (it exited or was killed)\n", e->target);
	fprintf(stderr, "rtdiag: kept %s, incomplete: %s (exit code %d)\n",
		what, why, CLI_PARTIAL);
	return CLI_PARTIAL;
}

/* ---- collect --------------------------------------------------------------- */

static struct cli_out collect_out;

static int collect_open(struct sink_state *st)
{
	if (cli_out_open(&collect_out, st->path))
		return CLI_FAIL;
	st->out = collect_out.f;
	return CLI_OK;
}

static int cmd_collect(int argc, char **argv)
{
	const struct cli_cmd *cmd = &dn_cmd_collect;
	struct collect_args a;
	int r = parse_collect(cmd, argc, argv, &a, MODE_COLLECT);
	if (r >= 0) {
		rtd_ipc_providers_clear(&a.prov);
		return r;
	}
	struct sink_state st;
	memset(&collect_out, 0, sizeof(collect_out));
	/* the output is checked before the target is touched */
	if (cli_out_check(a.out)) {
		rtd_ipc_providers_clear(&a.prov);
		return CLI_FAIL;
	}
	if (sink_init(&st, &a, false)) {
		sink_free(&st);
		rtd_ipc_providers_clear(&a.prov);
		return cli_fail("out of memory");
	}
	st.path = a.out;
	struct session_end end;
	r = run_session(&a, &st, NULL, collect_open, &end);
	/* keep what arrived, even when the session broke off; never a file
	 * that holds nothing */
	if (st.out && (st.bytes == 0 || st.werr)) {
		cli_out_abort(&collect_out);
		if (r == CLI_OK)
			r = cli_fail("%s: the runtime sent nothing; %s not "
				     "written", end.target, a.out);
	} else if (st.out && cli_out_commit(&collect_out) != 0) {
		r = CLI_FAIL;
	} else if (st.out) {
		char b[32], why[256];
		struct rtd_nettrace_stats ns = {0};
		bool whole = sink_complete(&st, why, sizeof(why));
		rtd_nettrace_stats(st.dec, &ns);
		fprintf(stderr, "rtdiag: wrote %s (%s, %llu events, %llu "
			"dropped)\n", a.out, cli_bytes((double)st.bytes, b, sizeof(b)),
			(unsigned long long)ns.events,
			(unsigned long long)ns.dropped);
		if (r == CLI_OK && !whole && !(end.launched && end.child_ended)) {
			r = incomplete(&end, a.out, why, &a);
			fprintf(stderr, "rtdiag: method names come from the "
				"rundown at the end: without it, only the "
				"methods compiled while tracing are named, and "
				"only with Microsoft-Windows-DotNETRuntime:0x18:5 "
				"in --providers (MethodLoadVerbose); 'rtdiag "
				"dotnet profile' takes a rundown at the start "
				"too\n");
		} else if (r == CLI_OK) {
			r = child_code(&end);
		}
	}
	sink_free(&st);
	rtd_ipc_providers_clear(&a.prov);
	return r;
}

/* ---- profile --------------------------------------------------------------- */

static const char *kind_name(unsigned k)
{
	const char *n = rtd_nettrace_profile_kind_name(k);
	return n ? n : "?";
}

/* FILE with ".KIND" before its extension ("p.pb.gz" -> "p.alloc.pb.gz"),
 * for one file per kind. */
static void kind_path(const char *path, unsigned k, char *buf, size_t len)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *ext = strchr(base, '.');
	if (!ext || ext == base)
		ext = base + strlen(base);
	snprintf(buf, len, "%.*s.%s%s", (int)(ext - path), path, kind_name(k),
		 ext);
}

/* Check every output the profile will write, before the session. */
static int profile_check_out(const struct collect_args *a)
{
	if (!a->out)
		return 0;
	unsigned n = 0;
	for (unsigned k = 1; k <= RTD_IPC_PROFILE_WAIT; k <<= 1)
		n += !!(a->kinds & k);
	if (n == 1 || cli_out_is_stdout(a->out))
		return cli_out_check(a->out);
	for (unsigned k = 1; k <= RTD_IPC_PROFILE_WAIT; k <<= 1) {
		char p[4096];
		kind_path(a->out, k, p, sizeof(p));
		if ((a->kinds & k) && cli_out_check(p))
			return -1;
	}
	return 0;
}

static int write_profile(const rtd_profile *pr, const char *path,
			 enum rtd_profile_format fmt)
{
	struct cli_out o;
	if (cli_out_open(&o, path))
		return CLI_FAIL;
	int err = rtd_profile_write(pr, fmt, o.f, NULL);
	if (err) {
		cli_out_abort(&o);
		return cli_fail("%s: %s", path, rtd_strerror(err));
	}
	return cli_out_commit(&o) ? CLI_FAIL : CLI_OK;
}

/* The table of the hottest frames, after a line of totals. */
static void print_top(const rtd_profile *pr, unsigned k, uint64_t events,
		      const struct collect_args *a,
		      const struct rtd_nettrace_cpu_stats *cpu, double cpu_wall)
{
	size_t dt = rtd_profile_default_type(pr);
	const struct rtd_profile_type *t = rtd_profile_get_type(pr, dt);
	int64_t tot = rtd_profile_total_of(pr, dt);
	switch (k) {
	case RTD_IPC_PROFILE_CPU:
		if (a->cpu && cpu && cpu->kernel_known)
			printf("%llu samples, %.3f s of CPU in managed code (the "
			       "kernel's CPU time of each thread, spread over "
			       "its samples)\nthe process used %.3f s of CPU in "
			       "%.3f s on %ld CPUs; the sampler alone saw %.3f s "
			       "of thread time in managed code (threads running "
			       "or runnable: it sees their states, not the "
			       "CPU)\n",
			       (unsigned long long)events, (double)tot / 1e9,
			       (double)cpu->process_ns / 1e9, cpu_wall,
			       sysconf(_SC_NPROCESSORS_ONLN),
			       (double)cpu->thread_ns / 1e9);
		else
			printf("%llu samples, %.3f s of %s\n",
			       (unsigned long long)events, (double)tot / 1e9,
			       a->cpu ? "thread time in managed code (threads "
					"found in managed code, running or "
					"runnable: not CPU time)"
				      : "thread time (every managed thread, "
					"running or waiting)");
		break;
	case RTD_IPC_PROFILE_ALLOC:
		printf("%llu allocation ticks, %.1f MB allocated\n",
		       (unsigned long long)events, (double)tot / 1e6);
		break;
	case RTD_IPC_PROFILE_LOCK:
		printf("%llu contentions, %.3f s waiting\n",
		       (unsigned long long)events, (double)tot / 1e9);
		break;
	case RTD_IPC_PROFILE_WAIT:
		printf("%llu waits, %.3f s waiting\n",
		       (unsigned long long)events, (double)tot / 1e9);
		break;
	default:
		printf("%llu exceptions thrown\n", (unsigned long long)events);
		break;
	}
	struct rtd_profile_write_opts wo = {.sz = sizeof(wo), .top = a->top,
					    .type = t ? t->type : NULL};
	rtd_profile_write(pr, RTD_PROFILE_FMT_TOP, stdout, &wo);
	fflush(stdout);
}

/* What a picture's title says: the process, its pid, how long. */
struct prof_whose {
	pid_t pid;
	const char *process;
	double seconds;
};

static int profile_outputs(struct sink_state *st, const struct collect_args *a,
			   double cpu_wall, const struct prof_whose *who)
{
	struct rtd_nettrace_cpu_stats cs = {.sz = sizeof(cs)};
	bool have_cs = a->cpu && (a->kinds & RTD_IPC_PROFILE_CPU) &&
		       rtd_nettrace_profiler_cpu_stats(st->prof, &cs) == 0;
	unsigned nk = 0;
	for (unsigned k = 1; k <= RTD_IPC_PROFILE_WAIT; k <<= 1)
		nk += !!(a->kinds & k);
	int r = CLI_OK;
	for (unsigned k = 1; k <= RTD_IPC_PROFILE_WAIT && r == CLI_OK;
	     k <<= 1) {
		if (!(a->kinds & k))
			continue;
		int err = 0;
		rtd_profile *pr = rtd_nettrace_profiler_profile(st->prof, k, &err);
		if (!pr)
			return cli_fail("building the %s profile: %s",
					kind_name(k), rtd_strerror(err));
		uint64_t events = rtd_nettrace_profiler_count(st->prof, k);
		struct rtd_profile_meta m = {
			.sz = sizeof(m),
			.source = "eventpipe",
			.process = who->process,
			.pid = who->pid,
			.duration_nanos = (int64_t)(who->seconds * 1e9)};
		rtd_profile_set_meta(pr, &m);
		if (a->out) {
			char p[4096];
			if (nk > 1 && !cli_out_is_stdout(a->out))
				kind_path(a->out, k, p, sizeof(p));
			else
				snprintf(p, sizeof(p), "%s", a->out);
			r = write_profile(pr, p, a->format);
			if (r == CLI_OK && !cli_out_is_stdout(a->out))
				fprintf(stderr, "rtdiag: wrote %s (%s: %llu "
					"events)\n", p, kind_name(k),
					(unsigned long long)events);
		}
		if (r == CLI_OK && a->top && !cli_out_is_stdout(a->out ? a->out : ""))
			print_top(pr, k, events, a, have_cs ? &cs : NULL,
				  cpu_wall);
		if (r == CLI_OK && events == 0)
			fprintf(stderr, "rtdiag: no %s events in the session%s\n",
				kind_name(k),
				k == RTD_IPC_PROFILE_CPU
					? " (did the process run managed code?)"
				: k == RTD_IPC_PROFILE_ALLOC
					? " (it allocated less than ~100 KB?)"
				: k == RTD_IPC_PROFILE_LOCK
					? " (no thread waited for a lock)"
				: k == RTD_IPC_PROFILE_WAIT
					? " (no wait ended; a runtime before "
					  ".NET 9 sends no wait events)"
					: " (none was thrown)");
		rtd_profile_free(pr);
	}
	return r;
}

static int cmd_profile(int argc, char **argv)
{
	const struct cli_cmd *cmd = &dn_cmd_profile;
	struct collect_args a;
	int r = parse_collect(cmd, argc, argv, &a, MODE_PROFILE);
	if (r >= 0) {
		rtd_ipc_providers_clear(&a.prov);
		return r;
	}
	struct sink_state st;
	if (profile_check_out(&a)) {
		rtd_ipc_providers_clear(&a.prov);
		return CLI_FAIL;
	}
	if (a.cpu) {
		char why[512];
		r = dn_profile_perf(&a, why, sizeof(why));
		if (r >= 0) {
			rtd_ipc_providers_clear(&a.prov);
			return r;
		}
		fprintf(stderr, "rtdiag: --cpu with EventPipe's sampler (it stops "
			"every managed thread at each sample), not perf_event: "
			"%s\n", why);
	}
	if (sink_init(&st, &a, true)) {
		sink_free(&st);
		rtd_ipc_providers_clear(&a.prov);
		return cli_fail("out of memory");
	}
	struct session_end end;
	/* --cpu: the sampler sees threads' states, not the CPU; the kernel
	 * counts each thread's CPU time, read at the start and the end */
	st.cpu_pid = a.cpu && !a.command ? (int)a.t.pid : 0;
	st.cpu0_rc = -ENOENT;
	double t0 = mono_now();
	r = run_session(&a, &st, names_first, NULL, &end);
	struct prof_whose who = {.pid = end.pid, .seconds = mono_now() - t0};
	if (r == CLI_OK && end.res.bytes == 0)
		r = cli_fail("%s: the runtime sent nothing", end.target);
	if (r != CLI_OK)
		goto done;
	/* its name now, or the program rtdiag started (it may have ended) */
	char pname[64];
	if (end.pid && rtd_ipc_proc_name(end.pid, pname, sizeof(pname)) == 0)
		who.process = pname;
	else if (a.command)
		who.process = a.command[0];
	double cpu_wall = 0;
	if (a.cpu) {
		struct rtd_thread_cpu *cpu1 = NULL;
		size_t ncpu1 = 0;
		int rc = st.cpu0_rc ? st.cpu0_rc
				    : rtd_thread_cpu_read(st.cpu_pid, &cpu1, &ncpu1);
		cpu_wall = mono_now() - st.cpu_t0;
		if (!rc)
			rc = rtd_nettrace_profiler_thread_cpu(st.prof, st.cpu0,
							      st.ncpu0, cpu1,
							      ncpu1);
		if (rc)
			fprintf(stderr, "rtdiag: %s: the kernel's CPU time of "
				"its threads could not be read (%s): --cpu gives "
				"thread time in managed code, not CPU time\n",
				end.target, a.command ? "a program rtdiag started"
						      : rtd_strerror(rc));
		free(cpu1);
	}
	char why[256];
	bool whole = pulled_whole(&st, &end, why, sizeof(why));
	if (st.prof_rc) {
		r = cli_fail("building the profile: %s", rtd_strerror(st.prof_rc));
		goto done;
	}
	r = profile_outputs(&st, &a, cpu_wall, &who);
	if (r == CLI_OK && !whole && !(end.launched && end.child_ended))
		r = incomplete(&end, "the profile of what was received", why, &a);
	else if (r == CLI_OK)
		r = child_code(&end);
done:
	sink_free(&st);
	rtd_ipc_providers_clear(&a.prov);
	return r;
}

/* ---- stack ------------------------------------------------------------------- */

static const struct cli_opt stack_opts[] = {
	DN_TARGET_OPTS,
	{O_DURATION, "duration", 'd', CLI_ARG_DURATION, CLI_OPT_POSITIVE,
	 "TIME", "how long to sample (default 0.25 s: the sampler stops every "
	 "managed thread about every millisecond)", 0, 0},
	{O_RUNDOWN_WAIT, "rundown-wait", 0, CLI_ARG_DURATION, CLI_OPT_POSITIVE,
	 "TIME", "read the rundown (method names) for at most TIME (30 s)", 0, 0},
	{0},
};

static int cmd_stack(int argc, char **argv)
{
	const struct cli_cmd *cmd = &dn_cmd_stack;
	struct collect_args a;
	int r = parse_collect(cmd, argc, argv, &a, MODE_STACK);
	if (r >= 0) {
		rtd_ipc_providers_clear(&a.prov);
		return r;
	}
	struct sink_state st;
	if (sink_init(&st, &a, true)) {
		sink_free(&st);
		rtd_ipc_providers_clear(&a.prov);
		return cli_fail("out of memory");
	}
	struct session_end end;
	r = run_session(&a, &st, NULL, NULL, &end);
	if (r == CLI_OK && st.prof_rc)
		r = cli_fail("reading the samples: %s", rtd_strerror(st.prof_rc));
	if (r == CLI_OK && rtd_nettrace_profiler_samples(st.prof) == 0)
		r = cli_fail("%s: no thread was sampled (no managed thread, or "
			     "the session ended before the first sample)",
			     end.target);
	char why[256];
	if (r == CLI_OK) {
		bool whole = pulled_whole(&st, &end, why, sizeof(why));
		/* names now: the threads were sampled a moment ago */
		int rc = rtd_ipc_stack_report(st.prof, end.pid, stdout);
		if (rc)
			r = cli_fail("%s", rc == -EIO ? "stdout: write error"
						      : rtd_strerror(rc));
		else if (!whole)
			r = incomplete(&end, "the stacks of what was received",
				       why, &a);
	}
	sink_free(&st);
	rtd_ipc_providers_clear(&a.prov);
	return r;
}

/* ---- replay ------------------------------------------------------------------ */

static const struct cli_opt replay_opts[] = {
	{O_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "also write the nettrace stream it carried to FILE", 0, 0},
	{0},
};

static int cmd_replay(int argc, char **argv)
{
	const struct cli_cmd *cmd = &dn_cmd_replay;
	const char *outp = NULL;
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, cmd, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0)
		if (id == O_OUT)
			outp = v.str;
	if (id < 0)
		return cli_opt_exit(id);
	const char *rec = p.pos[0];
	if (outp && cli_out_check(outp))
		return CLI_FAIL;
	int err = 0;
	rtd_ipc_session *s = rtd_ipc_replay_open(rec, &err);
	if (!s)
		return cli_fail("%s: %s", rec,
				err == -RTD_E_FORMAT ? "not a recording holding a "
						       "session (collect --record)"
						     : rtd_strerror(err));
	struct sink_state st;
	struct collect_args none;
	memset(&none, 0, sizeof(none));
	int r = CLI_OK;
	struct cli_out o = {0};
	if (sink_init(&st, &none, false)) {
		rtd_ipc_session_free(s);
		sink_free(&st);
		return cli_fail("out of memory");
	}
	if (outp) {
		if (cli_out_open(&o, outp)) {
			r = CLI_FAIL;
			goto out;
		}
		st.out = o.f;
		st.path = outp;
	}
	struct rtd_ipc_pump_opts po = {.sz = sizeof(po), .sink = stream_sink,
				       .ctx = &st};
	int rc = rtd_ipc_session_pump(s, &po, NULL);
	if (rc) {
		r = st.werr ? cli_fail("%s: %s", outp, strerror(st.werr))
			    : cli_fail("%s: %s", rec, rtd_strerror(rc));
		goto out;
	}
	struct rtd_nettrace_stats ns = {0};
	char why[256];
	bool whole = sink_complete(&st, why, sizeof(why));
	rtd_nettrace_stats(st.dec, &ns);
	printf("session %llu: %llu bytes, %llu events, %llu dropped%s%s\n",
	       (unsigned long long)rtd_ipc_session_id(s),
	       (unsigned long long)st.bytes, (unsigned long long)ns.events,
	       (unsigned long long)ns.dropped, whole ? "" : "; incomplete: ",
	       whole ? "" : why);
out:
	if (st.out) {
		if (r == CLI_OK && st.bytes) {
			if (cli_out_commit(&o))
				r = CLI_FAIL;
		} else {
			cli_out_abort(&o);
		}
	}
	sink_free(&st);
	rtd_ipc_session_free(s);
	return r;
}

/* ---- the commands ------------------------------------------------------------ */

static const char collect_details[] =
	"Profiles (--profile): dotnet-common, dotnet-sampled-thread-time "
	"(dotnet-trace 10's\ndefault pair, also rtdiag's default), "
	"cpu-sampling (dotnet-trace 9's), gc-verbose,\ngc-collect, database. "
	"Providers use dotnet-trace's syntax.\n"
	"-- COMMAND starts the program suspended, starts the session, then "
	"resumes it;\na program that loads no .NET runtime within 5 s is "
	"taken for not .NET. When it\nends by itself its exit code is "
	"rtdiag's. On a terminal a live line shows bytes,\nevents and drops. "
	"SIGINT/SIGTERM stop the session cleanly; after a stop the\nrundown "
	"is read for at most --rundown-wait. The output is written to a "
	"temporary\nfile beside FILE and renamed into place: a failed "
	"command leaves FILE as it was.\n"
	"Exit codes: 0 done; 1 failed (nothing written); 2 bad usage; 3 "
	"incomplete, kept:\nthe stream ended without its end marker (the "
	"target died, or the rundown did\nnot come in time), what arrived "
	"is in FILE.\n";

const struct cli_cmd dn_cmd_collect = {
	"dotnet collect", NULL,
	"record an EventPipe trace (nettrace) of a .NET process",
	collect_opts, 0, 0, CLI_CMD_COMMAND, cmd_collect, collect_details};

static const char profile_details[] =
	"Types: cpu - the runtime's sampler stops every managed thread about "
	"every\nmillisecond and records its stack: by default each sample "
	"weighs the time since\nthe thread's previous one, running or "
	"waiting (pprof type 'wall', thread time);\nwith --cpu only samples "
	"of threads in managed code count, and weigh CPU time as\nthe kernel "
	"counted it for their thread (the sampler sees threads' states, not\n"
	"the CPU: a runnable or spinning thread in managed code is sampled "
	"the same);\nnative code and the kernel are not seen - 'rtdiag perf' "
	"sees them.\nalloc - GC/AllocationTick, one per ~100 KB a thread "
	"allocates: alloc_objects,\nalloc_space by allocated type (the leaf "
	"frame) and stack. lock - the wait from\nContention/Start to Stop: "
	"contentions, delay (ns) by the waiting stack.\nexception - "
	"exceptions thrown, by type (the leaf frame) and throwing stack.\n"
	"Several types write one file each: -o p.pb.gz gives p.cpu.pb.gz, "
	"p.alloc.pb.gz.\n"
	"The session asks only for what the profiles read (--dry-run shows "
	"it): cheaper\nfor the target than dotnet-trace's default session. "
	"A rundown taken at the start\nnames the frames even when the target "
	"dies before the end.\n"
	"Exit codes as collect's (3: the stream ended early, the profile of "
	"what arrived\nis written).\n";

const struct cli_cmd dn_cmd_profile = {
	"dotnet profile", NULL,
	"profile a .NET process: thread time or CPU, allocations, lock "
	"contention,\nexceptions (folded, pprof, top, svg, speedscope)",
	profile_opts, 0, 0, CLI_CMD_COMMAND, cmd_profile, profile_details};

const struct cli_cmd dn_cmd_stack = {
	"dotnet stack", NULL,
	"the managed stack of every thread now, as dotnet-stack report prints "
	"it", stack_opts, 0, 0, 0, cmd_stack,
	"The runtime's sampler stops each managed thread and records its "
	"stack; the latest\nsample of each thread is printed, leaf first "
	"(frames no method covers - native\ncode, runtime helpers - as "
	"[Native Frames]). Names come from the rundown at the\nend of the "
	"short session.\n"};

const struct cli_cmd dn_cmd_replay = {
	"dotnet replay", "RECORDING", "play a recording made with 'collect "
	"--record' through the decoder (and into FILE)",
	replay_opts, 1, 1, 0, cmd_replay, NULL};
