/* SPDX-License-Identifier: MIT */
/*
 * dotnet_collect.c - 'rtdiag dotnet collect' and 'rtdiag dotnet profile':
 * an EventPipe session from a running process (-p) or from a program we
 * start suspended through a reverse connection (-- COMMAND).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "dotnet_cli.h"
#include "rtdiag/ipc.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/profile.h"

struct collect_args {
	pid_t pid;
	const char *socket;
	const char *out;
	const char *record;
	double duration;
	double rundown_wait;
	unsigned buffer_mb;
	bool no_rundown;
	bool top; /* profile: print the top ten even with -o */
	bool dry_run; /* print the session request and stop */
	bool no_stackwalk;
	uint64_t rundown_keyword; /* 0: the library's default */
	bool filters_optional;
	char **command; /* after "--" */
	struct rtd_ipc_providers prov;
};

/* A started child and the reverse connection it made to us. */
struct launch {
	rtd_ipc_listener *l;
	pid_t child;
	char path[108];
};

/* --dry-run: what the session would ask the runtime for; the providers
 * in dotnet-trace's syntax, so the same request can be given to it. */
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

static int parse_collect(const char *cmd, int argc, char **argv,
			 struct collect_args *a, bool profile)
{
	static const struct option opts[] = {
		{"process-id", required_argument, NULL, 'p'},
		{"socket", required_argument, NULL, 'S'},
		{"output", required_argument, NULL, 'o'},
		{"providers", required_argument, NULL, 'P'},
		{"profile", required_argument, NULL, 'F'},
		{"duration", required_argument, NULL, 'd'},
		{"buffer-mb", required_argument, NULL, 'b'},
		{"no-rundown", no_argument, NULL, 'R'},
		{"rundown-wait", required_argument, NULL, 'w'},
		{"record", required_argument, NULL, 'r'},
		{"top", no_argument, NULL, 'T'},
		{"dry-run", no_argument, NULL, 'n'},
		{"no-stackwalk", no_argument, NULL, 'K'},
		{NULL, 0, NULL, 0},
	};
	int ch;
	char perr[512];
	memset(a, 0, sizeof(*a));
	a->rundown_wait = 30;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+p:S:o:", opts, NULL)) != -1) {
		char *end;
		switch (ch) {
		case 'p':
			if (dn_parse_pid(cmd, optarg, &a->pid))
				return CLI_USAGE;
			break;
		case 'S': a->socket = optarg; break;
		case 'o': a->out = optarg; break;
		case 'r': a->record = optarg; break;
		case 'R': a->no_rundown = true; break;
		case 'n': a->dry_run = true; break;
		case 'K': a->no_stackwalk = true; break;
		case 'T':
			if (!profile)
				goto unknown;
			a->top = true;
			break;
		case 'P':
			if (profile)
				goto unknown;
			if (rtd_ipc_providers_parse(optarg, &a->prov, perr,
						    sizeof(perr)))
				return cli_usage(cmd, "--providers: %s", perr);
			break;
		case 'F':
			if (profile)
				goto unknown;
			if (rtd_ipc_providers_add_profile(optarg, &a->prov)) {
				char names[256] = "";
				for (const char *const *n = rtd_ipc_profile_names(); *n; n++)
					snprintf(names + strlen(names),
						 sizeof(names) - strlen(names),
						 "%s%s", names[0] ? ", " : "", *n);
				return cli_usage(cmd, "no profile '%s' (known: %s)",
						 optarg, names);
			}
			break;
		case 'd':
		case 'w': {
			double v = strtod(optarg, &end);
			if (*end || v <= 0)
				return cli_usage(cmd, "'%s' is not a number of "
						 "seconds", optarg);
			if (ch == 'd')
				a->duration = v;
			else
				a->rundown_wait = v;
			break;
		}
		case 'b': {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || v == 0 || v > 4096)
				return cli_usage(cmd, "--buffer-mb wants 1 to 4096");
			a->buffer_mb = (unsigned)v;
			break;
		}
		default:
		unknown:
			return cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--") != 0)
			return cli_usage(cmd, "unexpected '%s' (a program to "
					 "start goes after --)", argv[optind]);
		a->command = argv + optind;
	}
	if (!a->pid && !a->socket && !a->command && !a->dry_run)
		return cli_usage(cmd, "which process? give -p PID or -- COMMAND");
	if ((a->pid || a->socket) && a->command)
		return cli_usage(cmd, "give -p PID or -- COMMAND, not both");
	if (!a->out && !profile && !a->dry_run)
		return cli_usage(cmd, "where to? give -o FILE");
	if (profile) {
		struct rtd_ipc_session_opts so = {.sz = sizeof(so)};
		int rc = rtd_ipc_profile_request(RTD_IPC_PROFILE_CPU, &a->prov,
						 &so);
		if (rc)
			return cli_fail("%s", rtd_strerror(rc));
		a->no_stackwalk |= so.no_stackwalk;
		a->rundown_keyword = so.rundown_keyword;
		a->filters_optional = so.filters_optional;
		if (!a->duration && !a->command)
			a->duration = 10;
	} else if (!a->prov.n) {
		rtd_ipc_providers_add_profile("cpu-sampling", &a->prov);
	}
	if (a->dry_run)
		return print_request(a);
	return -1;
}

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
	/* Wait for the runtime, but notice a child that died first. */
	for (int waited = 0; waited < 30000; waited += 200) {
		rc = rtd_ipc_listener_accept(ln->l, 200, &adv, &fd);
		if (rc != -RTD_E_IPC_TIMEOUT && rc != -EINTR)
			break;
		int st;
		if (waitpid(ln->child, &st, WNOHANG) == ln->child) {
			ln->child = 0;
			cli_fail("%s exited before its .NET runtime connected "
				 "(not a .NET program, or it failed to start)",
				 command[0]);
			return NULL;
		}
		if (dn_stop_flag) {
			cli_fail("interrupted");
			return NULL;
		}
	}
	if (rc) {
		cli_fail("%s: no .NET runtime connected to %s: %s", command[0],
			 ln->path, rtd_strerror(rc));
		return NULL;
	}
	rtd_ipc_client *c = rtd_ipc_client_new_listener(ln->l, &adv, fd, co, &err);
	if (!c)
		cli_fail("%s", rtd_strerror(err));
	return c;
}

static void launch_end(struct launch *ln, bool kill_child)
{
	if (ln->child > 0) {
		int st;
		if (kill_child && waitpid(ln->child, &st, WNOHANG) == 0) {
			kill(ln->child, SIGTERM);
		}
		waitpid(ln->child, &st, 0);
	}
	rtd_ipc_listener_free(ln->l);
	ln->l = NULL;
}

/*
 * Everything read from the session goes to the output file (all of it,
 * whatever the decoder thinks) and through the nettrace decoder, which
 * gives the live event and drop counts and, for profile, the samples.
 */
struct sink_state {
	FILE *out;
	const char *path;
	int werr;
	uint64_t bytes;
	rtd_nettrace *dec;
	int dec_rc; /* first decoder error; decoding stops there */
	rtd_nettrace_profiler *prof;
	int prof_rc;
	rtd_nettrace *names; /* a rundown taken at the start, for names */
};

static int on_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct sink_state *st = ctx;
	if (st->prof && !st->prof_rc)
		st->prof_rc = rtd_nettrace_profiler_event(st->prof, st->dec, ev);
	return 0;
}

static int on_seqpoint(void *ctx, uint64_t ts)
{
	struct sink_state *st = ctx;
	(void)ts;
	if (st->prof && !st->prof_rc)
		st->prof_rc = rtd_nettrace_profiler_seqpoint(st->prof);
	return 0;
}

static int on_names_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct sink_state *st = ctx;
	if (!st->prof_rc)
		st->prof_rc = rtd_nettrace_profiler_event(st->prof, st->names, ev);
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
static int names_first(rtd_ipc_client *c, void *ctx)
{
	struct sink_state *st = ctx;
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
	rtd_nettrace_free(st->names);
	st->names = NULL;
	return 0;
}

static int sink_init(struct sink_state *st, bool profile)
{
	memset(st, 0, sizeof(*st));
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = st,
				      .on_event = on_event,
				      .on_seqpoint = on_seqpoint};
	st->dec = rtd_nettrace_new(&o);
	if (profile) {
		struct rtd_nettrace_profiler_opts po = {.sz = sizeof(po)};
		st->prof = rtd_nettrace_profiler_new(&po);
	}
	return st->dec && (!profile || st->prof) ? 0 : -ENOMEM;
}

static void sink_free(struct sink_state *st)
{
	rtd_nettrace_free(st->dec);
	rtd_nettrace_profiler_free(st->prof);
}

static int stream_sink(const void *data, size_t len, void *ctx)
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
	return 0;
}

/* After the stream ended: 0 when it decoded to its end marker. */
static int sink_finish(struct sink_state *st, const char *what)
{
	int rc = st->dec_rc < 0 ? st->dec_rc : rtd_nettrace_finish(st->dec);
	if (rc) {
		uint64_t off = 0;
		const char *m = rtd_nettrace_error(st->dec, &off);
		fprintf(stderr, "rtdiag: %s: the stream does not decode to its "
			"end: %s%s%s\n", what, rtd_strerror(rc), m && *m ? ": " : "",
			m ? m : "");
	}
	return rc;
}

static void tick(uint64_t bytes, void *ctx)
{
	struct sink_state *st = ctx;
	struct rtd_nettrace_stats ns = {0};
	char b[32];
	rtd_nettrace_stats(st->dec, &ns);
	cli_progress("collecting: %s, %llu events, %llu dropped",
		     cli_bytes((double)bytes, b, sizeof(b)),
		     (unsigned long long)ns.events,
		     (unsigned long long)ns.dropped);
}

/* Run one session to its end; shared by collect and profile. @started
 * (may be NULL) runs once the session is on, before its stream is read,
 * for a target we did not start. */
static int run_session(const char *cmd, struct collect_args *a,
		       rtd_ipc_sink_fn sink, void *ctx,
		       int (*started)(rtd_ipc_client *, void *),
		       struct rtd_ipc_pump_result *res)
{
	struct launch ln = {0};
	FILE *rec = NULL;
	int r = CLI_FAIL;
	rtd_ipc_client *c = NULL;
	rtd_ipc_session *s = NULL;
	(void)cmd;
	if (a->record) {
		rec = fopen(a->record, "wb");
		if (!rec)
			return cli_fail("%s: %s", a->record, strerror(errno));
	}
	struct rtd_ipc_client_opts co = {.sz = sizeof(co), .record = rec};
	dn_catch_signals();
	if (a->command)
		c = launch(a->command, &ln, &co);
	else
		c = dn_client(a->pid, a->socket, 0);
	if (c && rec) {
		/* dn_client has no record option: rebuild with it */
		if (!a->command) {
			rtd_ipc_client_free(c);
			int err;
			c = a->socket ? rtd_ipc_client_new_path(a->socket, &co, &err)
				      : rtd_ipc_client_new(a->pid, &co, &err);
			if (!c)
				cli_fail("%s", rtd_ipc_errmsg_last());
		}
	}
	if (!c)
		goto out;
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
	if (a->command) {
		int rc = rtd_ipc_resume_runtime(c);
		if (rc) {
			r = dn_fail(c, rc);
			goto out;
		}
	} else if (started) {
		int rc = started(c, ctx);
		if (rc) {
			r = cli_fail("%s", rtd_strerror(rc));
			goto out;
		}
	}
	struct rtd_ipc_pump_opts po = {
		.sz = sizeof(po),
		.sink = sink,
		.ctx = ctx,
		.stop = &dn_stop_flag,
		.duration_ms = (uint64_t)(a->duration * 1000),
		.rundown_wait_ms = (uint64_t)(a->rundown_wait * 1000),
		.tick = cli_progress_enabled() ? tick : NULL,
		/* tick gets the sink's ctx: both are the sink_state */
	};
	int rc = rtd_ipc_session_pump(s, &po, res);
	cli_progress_done();
	if (rc) {
		r = cli_fail("%s: reading the trace: %s",
			     rtd_ipc_client_target(c), rtd_strerror(rc));
		goto out;
	}
	if (res->rundown_timeout)
		fprintf(stderr, "rtdiag: %s: the rundown did not end within "
			"%.0f s; the trace may lack method names\n",
			rtd_ipc_client_target(c), a->rundown_wait);
	if (res->target_gone && !a->command)
		fprintf(stderr, "rtdiag: %s: the process ended the stream "
			"(exited?); kept everything received\n",
			rtd_ipc_client_target(c));
	r = CLI_OK;
out:
	rtd_ipc_session_free(s);
	rtd_ipc_client_free(c);
	if (a->command && ln.l)
		launch_end(&ln, true);
	if (rec)
		fclose(rec);
	return r;
}

int dn_cmd_collect(int argc, char **argv)
{
	const char *cmd = "dotnet collect";
	struct collect_args a;
	int r = parse_collect(cmd, argc, argv, &a, false);
	if (r >= 0) {
		rtd_ipc_providers_clear(&a.prov);
		return r;
	}
	struct sink_state st;
	if (sink_init(&st, false)) {
		sink_free(&st);
		rtd_ipc_providers_clear(&a.prov);
		return cli_fail("out of memory");
	}
	st.path = a.out;
	st.out = strcmp(a.out, "-") == 0 ? stdout : fopen(a.out, "wb");
	if (!st.out) {
		sink_free(&st);
		rtd_ipc_providers_clear(&a.prov);
		return cli_fail("%s: %s", a.out, strerror(errno));
	}
	struct rtd_ipc_pump_result res = {0};
	r = run_session(cmd, &a, stream_sink, &st, NULL, &res);
	if (st.out != stdout && fclose(st.out) != 0 && r == CLI_OK)
		r = cli_fail("%s: %s", a.out, strerror(errno));
	if (r == CLI_OK) {
		char b[32];
		struct rtd_nettrace_stats ns = {0};
		sink_finish(&st, a.out);
		rtd_nettrace_stats(st.dec, &ns);
		fprintf(stderr, "rtdiag: wrote %s (%s, %llu events, %llu "
			"dropped)\n", a.out, cli_bytes((double)st.bytes, b, sizeof(b)),
			(unsigned long long)ns.events,
			(unsigned long long)ns.dropped);
	}
	sink_free(&st);
	rtd_ipc_providers_clear(&a.prov);
	return r;
}

int dn_cmd_profile(int argc, char **argv)
{
	const char *cmd = "dotnet profile";
	struct collect_args a;
	int r = parse_collect(cmd, argc, argv, &a, true);
	if (r >= 0) {
		rtd_ipc_providers_clear(&a.prov);
		return r;
	}
	struct sink_state st;
	rtd_profile *prof = rtd_profile_new("cpu", "nanoseconds");
	if (sink_init(&st, true) || !prof) {
		sink_free(&st);
		rtd_profile_free(prof);
		rtd_ipc_providers_clear(&a.prov);
		return cli_fail("out of memory");
	}
	FILE *out = NULL;
	if (a.out && !(out = strcmp(a.out, "-") == 0 ? stdout : fopen(a.out, "w"))) {
		r = cli_fail("%s: %s", a.out, strerror(errno));
		goto done;
	}
	struct rtd_ipc_pump_result res = {0};
	r = run_session(cmd, &a, stream_sink, &st, names_first, &res);
	if (r != CLI_OK)
		goto done;
	sink_finish(&st, "profile");
	if (st.prof_rc) {
		r = cli_fail("building the profile: %s", rtd_strerror(st.prof_rc));
		goto done;
	}
	int err = rtd_nettrace_profiler_finish(st.prof, prof);
	if (err) {
		r = cli_fail("building the profile: %s", rtd_strerror(err));
		goto done;
	}
	uint64_t samples = rtd_nettrace_profiler_samples(st.prof);
	if (samples == 0) {
		r = cli_fail("no CPU samples in the trace (did the process run "
			     "managed code while profiled?)");
		goto done;
	}
	if (out) {
		err = rtd_profile_write_folded(prof, out);
		if (err)
			r = cli_fail("%s: %s", a.out, rtd_strerror(err));
		else
			fprintf(stderr, "rtdiag: wrote %s (%llu samples)\n",
				a.out, (unsigned long long)samples);
		if (err || !a.top)
			goto done;
	}
	struct rtd_profile_entry top[10];
	int nt = rtd_profile_top(prof, top, 10);
	int64_t tot = rtd_profile_total(prof);
	printf("%llu samples, %.3f s of thread time\n",
	       (unsigned long long)samples, (double)tot / 1e9);
	printf("%7s %7s  %s\n", "self%", "total%", "method");
	for (int i = 0; i < nt; i++)
		printf("%6.1f%% %6.1f%%  %s\n",
		       tot ? 100.0 * (double)top[i].self / (double)tot : 0.0,
		       tot ? 100.0 * (double)top[i].total / (double)tot : 0.0,
		       top[i].name);
	if (nt < 0)
		r = cli_fail("%s", rtd_strerror(nt));
done:
	if (out && out != stdout && fclose(out) != 0 && r == CLI_OK)
		r = cli_fail("%s: %s", a.out, strerror(errno));
	sink_free(&st);
	rtd_profile_free(prof);
	rtd_ipc_providers_clear(&a.prov);
	return r;
}

/* replay REC [-o OUT]: a recording made with --record, through the decoder
 * (and into OUT as the nettrace stream it carried). */
int dn_cmd_replay(int argc, char **argv)
{
	const char *cmd = "dotnet replay", *rec = NULL, *outp = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			outp = argv[++i];
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_usage(cmd, "unknown option '%s'", argv[i]);
		else if (!rec)
			rec = argv[i];
		else
			return cli_usage(cmd, "unexpected '%s'", argv[i]);
	}
	if (!rec)
		return cli_usage(cmd, "want the RECORDING made with collect --record");
	int err = 0;
	rtd_ipc_session *s = rtd_ipc_replay_open(rec, &err);
	if (!s)
		return cli_fail("%s: %s", rec,
				err == -RTD_E_FORMAT ? "not a recording holding a "
						       "session (collect --record)"
						     : rtd_strerror(err));
	struct sink_state st;
	int r = CLI_OK;
	if (sink_init(&st, false)) {
		rtd_ipc_session_free(s);
		sink_free(&st);
		return cli_fail("out of memory");
	}
	if (outp && !(st.out = fopen(outp, "wb"))) {
		r = cli_fail("%s: %s", outp, strerror(errno));
		goto out;
	}
	struct rtd_ipc_pump_opts po = {.sz = sizeof(po), .sink = stream_sink,
				       .ctx = &st};
	int rc = rtd_ipc_session_pump(s, &po, NULL);
	if (rc) {
		r = cli_fail("%s: %s", rec, rtd_strerror(rc));
		goto out;
	}
	struct rtd_nettrace_stats ns = {0};
	int drc = sink_finish(&st, rec);
	rtd_nettrace_stats(st.dec, &ns);
	printf("session %llu: %llu bytes, %llu events, %llu dropped%s\n",
	       (unsigned long long)rtd_ipc_session_id(s),
	       (unsigned long long)st.bytes, (unsigned long long)ns.events,
	       (unsigned long long)ns.dropped,
	       drc ? " (stream incomplete)" : "");
out:
	if (st.out && fclose(st.out) != 0 && r == CLI_OK)
		r = cli_fail("%s: %s", outp, strerror(errno));
	sink_free(&st);
	rtd_ipc_session_free(s);
	return r;
}

void dn_collect_help(FILE *f, const char *sub)
{
	if (strcmp(sub, "collect") == 0) {
		fprintf(f, "\nProviders use dotnet-trace's syntax: "
			   "Name[:Keywords[:Level[:Args]]],...\n"
			   "Profiles:");
		for (const char *const *n = rtd_ipc_profile_names(); *n; n++)
			fprintf(f, " %s", *n);
		fprintf(f, "\nWith neither, cpu-sampling. -- COMMAND starts the "
			   "program suspended, starts the\nsession, then resumes "
			   "it. On a terminal a live line shows bytes, events and\n"
			   "drops. After a stop the rundown is read for at most "
			   "--rundown-wait seconds (30).\n--record FILE keeps every "
			   "byte exchanged, for 'rtdiag dotnet replay'.\n");
	}
}
