/* SPDX-License-Identifier: MIT */
/*
 * dotnet.c - the 'rtdiag dotnet' command group: talk to running .NET
 * processes over the diagnostics IPC protocol (named after the dotnet-*
 * tools where they have a name). collect, profile and replay live in
 * dotnet_collect.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dotnet_cli.h"
#include "out.h"
#include "rtdiag/ipc.h"

volatile int dn_stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	dn_stop_flag = 1;
}

void dn_catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: poll() wakes up */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

bool dn_target_opt(int id, const struct cli_val *v, struct dn_target *t)
{
	switch (id) {
	case DN_OPT_PID: t->pid = (pid_t)v->i; return true;
	case DN_OPT_NAME: t->name = v->str; return true;
	case DN_OPT_SOCKET: t->socket = v->str; return true;
	default: return false;
	}
}

const char *dn_proc_name(pid_t pid, char *buf, size_t len)
{
	if (rtd_ipc_proc_name(pid, buf, len) != 0)
		snprintf(buf, len, "pid%d", (int)pid);
	return buf;
}

int dn_target_resolve(const struct cli_cmd *cmd, struct dn_target *t,
		      bool required)
{
	int given = !!t->pid + !!t->name + !!t->socket;
	if (given > 1 && t->name && t->name[strspn(t->name, "0123456789")] == 0)
		/* "-n 12" from perf's or an older rtdiag's habit */
		return cli_cmd_usage(cmd, "-n is --name, a process name (as "
					  "dotnet-trace's -n), and -p is given "
					  "too; for %s rows say --top %s",
				     t->name, t->name);
	if (given > 1)
		return cli_cmd_usage(cmd, "give one of -p PID, -n NAME and "
					  "--socket PATH");
	if (!given) {
		if (required)
			return cli_cmd_usage(cmd, "which process? give -p PID "
						  "or -n NAME");
		return -1;
	}
	if (!t->name)
		return -1;
	struct rtd_ipc_proc *v;
	size_t n;
	int rc = rtd_ipc_list(&v, &n);
	if (rc)
		return cli_fail("listing .NET processes: %s", rtd_strerror(rc));
	size_t hits = 0;
	char list[256] = "";
	for (size_t i = 0; i < n; i++) {
		if (!rtd_ipc_proc_matches(v[i].pid, t->name))
			continue;
		if (!hits++)
			t->pid = v[i].pid;
		size_t l = strlen(list);
		if (l < sizeof(list) - 16)
			snprintf(list + l, sizeof(list) - l, "%s%d",
				 l ? ", " : "", (int)v[i].pid);
	}
	free(v);
	if (hits == 1)
		return -1;
	if (!hits)
		return cli_fail("no .NET process named '%s' ('rtdiag dotnet "
				"ps' lists them)", t->name);
	return cli_fail("%zu .NET processes are named '%s' (pids %s): give "
			"-p PID", hits, t->name, list);
}

rtd_ipc_client *dn_connect(const struct dn_target *t, int timeout_ms,
			   FILE *record)
{
	struct rtd_ipc_client_opts o = {.sz = sizeof(o), .timeout_ms = timeout_ms,
					.record = record};
	int err = 0;
	rtd_ipc_client *c = t->socket ? rtd_ipc_client_new_path(t->socket, &o, &err)
				      : rtd_ipc_client_new(t->pid, &o, &err);
	if (!c)
		cli_fail("%s", rtd_ipc_errmsg_last());
	return c;
}

int dn_fail(rtd_ipc_client *c, int rc)
{
	const char *m = rtd_ipc_client_errmsg(c);
	if (m && *m)
		return cli_fail("%s", m);
	return cli_fail("%s: %s", rtd_ipc_client_target(c), rtd_strerror(rc));
}

/*
 * The one-command subcommands: parse the target (and their own options
 * through @take), connect, run @fn, report.
 */
struct simple {
	struct dn_target t;
	const struct cli_cmd *cmd;
	struct cli_parser p;
};

/* Parse a command that takes only the target options and positional
 * arguments; -1 to go on, or an exit code. */
static int parse_simple(const struct cli_cmd *cmd, int argc, char **argv,
			struct simple *s)
{
	memset(s, 0, sizeof(*s));
	s->cmd = cmd;
	cli_opt_init(&s->p, cmd, argc, argv);
	struct cli_val v;
	int id;
	while ((id = cli_opt_next(&s->p, &v)) > 0)
		dn_target_opt(id, &v, &s->t);
	if (id < 0)
		return cli_opt_exit(id);
	return dn_target_resolve(cmd, &s->t, true);
}

static const struct cli_opt target_only[] = {DN_TARGET_OPTS, {0}};

static int cmd_ps(int argc, char **argv);
static const struct cli_cmd c_ps = {
	"dotnet ps", NULL, "list .NET processes with a diagnostic socket: pid, "
	"name, runtime version, command line", NULL, 0, 0, 0, cmd_ps, NULL};

static int cmd_ps(int argc, char **argv)
{
	struct cli_parser p;
	struct cli_val v;
	cli_opt_init(&p, &c_ps, argc, argv);
	int id = cli_opt_next(&p, &v);
	if (id < 0)
		return cli_opt_exit(id);
	struct rtd_ipc_proc *pv;
	size_t n;
	int rc = rtd_ipc_list(&pv, &n);
	if (rc)
		return cli_fail("listing processes: %s", rtd_strerror(rc));
	printf("%8s  %-20s %-12s %s\n", "PID", "NAME", "VERSION", "COMMAND");
	for (size_t i = 0; i < n; i++) {
		char name[64];
		dn_proc_name(pv[i].pid, name, sizeof(name));
		struct rtd_ipc_client_opts o = {.sz = sizeof(o),
						.timeout_ms = 2000};
		rtd_ipc_client *c = rtd_ipc_client_new_path(pv[i].socket, &o, NULL);
		struct rtd_ipc_process_info pi;
		memset(&pi, 0, sizeof(pi));
		int qrc = c ? rtd_ipc_process_info(c, 2, &pi) : -ENOMEM;
		if (qrc)
			printf("%8d  %-20s %-12s (%s)\n", (int)pv[i].pid, name,
			       "?", rtd_strerror(qrc));
		else
			printf("%8d  %-20s %-12s %s\n", (int)pv[i].pid, name,
			       pi.clr_version, pi.cmdline);
		rtd_ipc_process_info_clear(&pi);
		rtd_ipc_client_free(c);
	}
	free(pv);
	return CLI_OK;
}

static int cmd_info(int argc, char **argv);
static const struct cli_cmd c_info = {
	"dotnet info", NULL, "process info (ProcessInfo3, falling back to 2 "
	"and 1)", target_only, 0, 0, 0, cmd_info, NULL};

static int cmd_info(int argc, char **argv)
{
	struct simple s;
	int r = parse_simple(&c_info, argc, argv, &s);
	if (r >= 0)
		return r;
	rtd_ipc_client *c = dn_connect(&s.t, 0, NULL);
	if (!c)
		return CLI_FAIL;
	struct rtd_ipc_process_info pi;
	int rc = rtd_ipc_process_info(c, 3, &pi);
	if (rc) {
		r = dn_fail(c, rc);
		rtd_ipc_client_free(c);
		return r;
	}
	char g[40];
	printf("pid:          %llu\n", (unsigned long long)pi.pid);
	printf("cookie:       %s\n", rtd_ipc_guid_format(pi.cookie, g, sizeof(g)));
	printf("command line: %s\n", pi.cmdline);
	printf("os:           %s\n", pi.os);
	printf("arch:         %s\n", pi.arch);
	printf("assembly:     %s\n", pi.assembly);
	printf("clr version:  %s\n", pi.clr_version);
	printf("runtime id:   %s\n", pi.rid);
	printf("answered by:  ProcessInfo%s\n",
	       pi.version == 1 ? "" : pi.version == 2 ? "2" : "3");
	rtd_ipc_process_info_clear(&pi);
	rtd_ipc_client_free(c);
	return CLI_OK;
}

static int print_env(const char *e, void *ctx)
{
	(void)ctx;
	puts(e);
	return 0;
}

static int cmd_env(int argc, char **argv);
static const struct cli_cmd c_env = {
	"dotnet env", NULL, "the target's environment, one NAME=value a line",
	target_only, 0, 0, 0, cmd_env, NULL};

static int cmd_env(int argc, char **argv)
{
	struct simple s;
	int r = parse_simple(&c_env, argc, argv, &s);
	if (r >= 0)
		return r;
	rtd_ipc_client *c = dn_connect(&s.t, 0, NULL);
	if (!c)
		return CLI_FAIL;
	int rc = rtd_ipc_process_env(c, print_env, NULL);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

static int cmd_setenv(int argc, char **argv);
static const struct cli_cmd c_setenv = {
	"dotnet setenv", "NAME VALUE", "set an environment variable inside the "
	"target (an empty VALUE unsets it)", target_only, 2, 2, 0, cmd_setenv,
	NULL};

static int cmd_setenv(int argc, char **argv)
{
	struct simple s;
	int r = parse_simple(&c_setenv, argc, argv, &s);
	if (r >= 0)
		return r;
	rtd_ipc_client *c = dn_connect(&s.t, 0, NULL);
	if (!c)
		return CLI_FAIL;
	int rc = rtd_ipc_set_env(c, s.p.pos[0], s.p.pos[1]);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

static int cmd_resume(int argc, char **argv);
static const struct cli_cmd c_resume = {
	"dotnet resume", NULL, "resume a runtime suspended at startup",
	target_only, 0, 0, 0, cmd_resume, NULL};

static int cmd_resume(int argc, char **argv)
{
	struct simple s;
	int r = parse_simple(&c_resume, argc, argv, &s);
	if (r >= 0)
		return r;
	rtd_ipc_client *c = dn_connect(&s.t, 0, NULL);
	if (!c)
		return CLI_FAIL;
	int rc = rtd_ipc_resume_runtime(c);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

enum { OPT_TYPE = 1, OPT_CLSID, OPT_PATH, OPT_TIMEOUT, OPT_DATA, OPT_OUT,
       OPT_CRASH, OPT_DIAG, OPT_SESSION, OPT_COUNT, OPT_NORESUME,
       OPT_STARTUP_PROF };

static const struct cli_opt perfmap_opts[] = {
	DN_TARGET_OPTS,
	{OPT_TYPE, "type", 0, CLI_ARG_CHOICE, 0, "all|jitdump|perfmap",
	 "what the runtime writes (enable; default all)", 0, 0},
	{0},
};

static int cmd_perfmap(int argc, char **argv);
static const struct cli_cmd c_perfmap = {
	"dotnet perfmap", "enable|disable", "make the runtime write "
	"/tmp/perf-PID.map and jitdump files (for perf), or stop",
	perfmap_opts, 1, 1, 0, cmd_perfmap, NULL};

static int cmd_perfmap(int argc, char **argv)
{
	static const enum rtd_ipc_perfmap_type types[] = {
		RTD_IPC_PERFMAP_ALL, RTD_IPC_PERFMAP_JITDUMP,
		RTD_IPC_PERFMAP_PERFMAP};
	struct dn_target t = {0};
	enum rtd_ipc_perfmap_type type = RTD_IPC_PERFMAP_ALL;
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, &c_perfmap, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0)
		if (!dn_target_opt(id, &v, &t) && id == OPT_TYPE)
			type = types[v.i];
	if (id < 0)
		return cli_opt_exit(id);
	bool on = strcmp(p.pos[0], "enable") == 0;
	if (!on && strcmp(p.pos[0], "disable") != 0)
		return cli_cmd_usage(&c_perfmap, "want 'enable' or 'disable', "
				     "not '%s'", p.pos[0]);
	int r = dn_target_resolve(&c_perfmap, &t, true);
	if (r >= 0)
		return r;
	rtd_ipc_client *c = dn_connect(&t, 0, NULL);
	if (!c)
		return CLI_FAIL;
	int rc = on ? rtd_ipc_perfmap_enable(c, type) : rtd_ipc_perfmap_disable(c);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

static int cmd_startup_hook(int argc, char **argv);
static const struct cli_cmd c_startup_hook = {
	"dotnet startup-hook", "PATH", "add a startup hook assembly to a "
	"runtime suspended at startup (DOTNET_DefaultDiagnosticPortSuspend=1), "
	"then 'resume' it", target_only, 1, 1, 0, cmd_startup_hook, NULL};

static int cmd_startup_hook(int argc, char **argv)
{
	struct simple s;
	int r = parse_simple(&c_startup_hook, argc, argv, &s);
	if (r >= 0)
		return r;
	rtd_ipc_client *c = dn_connect(&s.t, 0, NULL);
	if (!c)
		return CLI_FAIL;
	int rc = rtd_ipc_apply_startup_hook(c, s.p.pos[0]);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

/* The options of attach-profiler and startup-profiler. */
struct prof_args {
	struct dn_target t;
	const char *path, *data;
	uint8_t clsid[16];
	unsigned timeout_ms;
};

static const struct cli_opt attach_opts[] = {
	DN_TARGET_OPTS,
	{OPT_CLSID, "clsid", 0, CLI_ARG_STR, 0, "GUID",
	 "the profiler's CLSID", 0, 0},
	{OPT_PATH, "path", 0, CLI_ARG_STR, 0, "LIB",
	 "the profiler library, as the target sees it (absolute)", 0, 0},
	{OPT_TIMEOUT, "timeout", 0, CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "how long the runtime may wait for a GC to end first (10 s)", 0, 3600},
	{OPT_DATA, "data", 0, CLI_ARG_STR, 0, "TEXT",
	 "client data handed to InitializeForAttach, as is", 0, 0},
	{0},
};

static const struct cli_opt startup_prof_opts[] = {
	DN_TARGET_OPTS,
	{OPT_CLSID, "clsid", 0, CLI_ARG_STR, 0, "GUID",
	 "the profiler's CLSID", 0, 0},
	{OPT_PATH, "path", 0, CLI_ARG_STR, 0, "LIB",
	 "the profiler library, as the target sees it (absolute)", 0, 0},
	{0},
};

static int parse_prof_args(const struct cli_cmd *cmd, int argc, char **argv,
			   struct prof_args *a)
{
	const char *clsid = NULL;
	struct cli_parser p;
	struct cli_val v;
	int id;
	memset(a, 0, sizeof(*a));
	a->timeout_ms = 10000;
	cli_opt_init(&p, cmd, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		if (dn_target_opt(id, &v, &a->t))
			continue;
		switch (id) {
		case OPT_CLSID: clsid = v.str; break;
		case OPT_PATH: a->path = v.str; break;
		case OPT_DATA: a->data = v.str; break;
		case OPT_TIMEOUT: a->timeout_ms = (unsigned)(v.ns / 1000000); break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	if (!clsid || !a->path)
		return cli_cmd_usage(cmd, "want --clsid GUID --path LIB");
	if (rtd_ipc_guid_parse(clsid, a->clsid))
		return cli_cmd_usage(cmd, "'%s' is not a GUID", clsid);
	return dn_target_resolve(cmd, &a->t, true);
}

static int cmd_attach_profiler(int argc, char **argv);
static const struct cli_cmd c_attach_profiler = {
	"dotnet attach-profiler", NULL, "attach a CLR profiler to the running "
	"runtime", attach_opts, 0, 0, 0, cmd_attach_profiler, NULL};

static int cmd_attach_profiler(int argc, char **argv)
{
	struct prof_args a;
	int r = parse_prof_args(&c_attach_profiler, argc, argv, &a);
	if (r >= 0)
		return r;
	rtd_ipc_client *c = dn_connect(&a.t, (int)a.timeout_ms + 5000, NULL);
	if (!c)
		return CLI_FAIL;
	int rc = rtd_ipc_attach_profiler(c, a.timeout_ms, a.clsid, a.path,
					 a.data, a.data ? strlen(a.data) : 0);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

/*
 * StartupProfiler is accepted only once the runtime has reached its startup
 * pause (ds_server_pause_for_diagnostics_monitor sets the flag the command
 * checks), but the diagnostic server connects and answers commands before
 * the main thread gets there: right after the advertise (or after the
 * default socket appears) the runtime answers DS_IPC_E_INVALIDARG. Found
 * under load against .NET 10. Retry that answer for up to 3 s; a runtime
 * already resumed keeps refusing and gets the error after that.
 */
static int startup_profiler_retry(rtd_ipc_client *c, const uint8_t g[16],
				  const char *path)
{
	int rc = 0;
	for (int i = 0; i < 150; i++) {
		rc = rtd_ipc_startup_profiler(c, g, path);
		if (rc != -RTD_E_IPC_INVALIDARG)
			break;
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return rc;
}

static int cmd_startup_profiler(int argc, char **argv);
static const struct cli_cmd c_startup_profiler = {
	"dotnet startup-profiler", NULL, "register a CLR profiler to load when "
	"a runtime suspended at startup (DOTNET_DefaultDiagnosticPortSuspend=1) "
	"is resumed", startup_prof_opts, 0, 0, 0, cmd_startup_profiler, NULL};

static int cmd_startup_profiler(int argc, char **argv)
{
	struct prof_args a;
	int r = parse_prof_args(&c_startup_profiler, argc, argv, &a);
	if (r >= 0)
		return r;
	rtd_ipc_client *c = dn_connect(&a.t, 0, NULL);
	if (!c)
		return CLI_FAIL;
	int rc = startup_profiler_retry(c, a.clsid, a.path);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

static const struct cli_opt dump_opts[] = {
	DN_TARGET_OPTS,
	{OPT_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "where the runtime writes the core (made absolute)", 0, 0},
	{OPT_TYPE, "type", 0, CLI_ARG_CHOICE, 0, "full|heap|mini|triage",
	 "what the dump holds (default full)", 0, 0},
	{OPT_CRASH, "crash-report", 0, CLI_ARG_NONE, 0, NULL,
	 "also write FILE.crashreport.json", 0, 0},
	{OPT_DIAG, "diag", 0, CLI_ARG_NONE, 0, NULL,
	 "the runtime logs what it does to its stdout", 0, 0},
	{0},
};

static int cmd_dump(int argc, char **argv);
static const struct cli_cmd c_dump = {
	"dotnet dump", NULL, "make the runtime write a core dump (ELF) of its "
	"process", dump_opts, 0, 0, 0, cmd_dump, NULL};

static int cmd_dump(int argc, char **argv)
{
	static const enum rtd_ipc_dump_type types[] = {
		RTD_IPC_DUMP_FULL, RTD_IPC_DUMP_HEAP, RTD_IPC_DUMP_MINI,
		RTD_IPC_DUMP_TRIAGE};
	struct dn_target t = {0};
	const char *out = NULL;
	enum rtd_ipc_dump_type type = RTD_IPC_DUMP_FULL;
	uint32_t flags = 0;
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, &c_dump, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		if (dn_target_opt(id, &v, &t))
			continue;
		switch (id) {
		case OPT_OUT: out = v.str; break;
		case OPT_TYPE: type = types[v.i]; break;
		case OPT_CRASH: flags |= RTD_IPC_DUMP_CRASHREPORT; break;
		case OPT_DIAG: flags |= RTD_IPC_DUMP_LOG; break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	if (!out)
		return cli_cmd_usage(&c_dump, "where to? give -o FILE");
	int r = dn_target_resolve(&c_dump, &t, true);
	if (r >= 0)
		return r;
	/* The runtime writes the file: give it an absolute path. */
	char abs[4096];
	if (out[0] != '/') {
		char cwd[3000];
		if (!getcwd(cwd, sizeof(cwd)))
			return cli_fail("getcwd: %s", strerror(errno));
		snprintf(abs, sizeof(abs), "%s/%s", cwd, out);
		out = abs;
	}
	if (cli_out_check(out))
		return CLI_FAIL;
	rtd_ipc_client *c = dn_connect(&t, 300000, NULL);
	if (!c)
		return CLI_FAIL;
	int rc = rtd_ipc_dump(c, out, type, flags, NULL, 0);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	if (!rc)
		fprintf(stderr, "rtdiag: wrote %s\n", out);
	rtd_ipc_client_free(c);
	return r;
}

static const struct cli_opt stop_opts[] = {
	DN_TARGET_OPTS,
	{OPT_SESSION, "session", 0, CLI_ARG_STR, 0, "ID",
	 "the session, as 'rtdiag dotnet collect' printed it", 0, 0},
	{0},
};

static int cmd_stop(int argc, char **argv);
static const struct cli_cmd c_stop = {
	"dotnet stop", NULL, "stop an EventPipe session", stop_opts, 0, 0, 0,
	cmd_stop, "The runtime answers OK to any id; an id that is no address "
	"of the target is\nrefused here (a session id is the address of the "
	"runtime's session object).\n"};

static int cmd_stop(int argc, char **argv)
{
	struct dn_target t = {0};
	const char *sid = NULL;
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, &c_stop, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0)
		if (!dn_target_opt(id, &v, &t) && id == OPT_SESSION)
			sid = v.str;
	if (id < 0)
		return cli_opt_exit(id);
	if (!sid)
		return cli_cmd_usage(&c_stop, "which session? give --session ID");
	char *end;
	errno = 0;
	unsigned long long sess = strtoull(sid, &end, 0);
	if (errno || *end || !*sid)
		return cli_cmd_usage(&c_stop, "'%s' is not a session id", sid);
	int r = dn_target_resolve(&c_stop, &t, true);
	if (r >= 0)
		return r;
	if (t.pid && rtd_ipc_session_id_mapped(t.pid, sess) == 0)
		return cli_fail("pid %d has no session %s (a session id is an "
				"address in the target, as 'rtdiag dotnet "
				"collect' prints it)", (int)t.pid, sid);
	rtd_ipc_client *c = dn_connect(&t, 0, NULL);
	if (!c)
		return CLI_FAIL;
	int rc = rtd_ipc_stop_tracing(c, sess);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

static const struct cli_opt listen_opts[] = {
	{OPT_COUNT, "max-runtimes", 0, CLI_ARG_INT, CLI_OPT_POSITIVE, "N",
	 "end after N runtimes", 0, 0},
	CLI_OLD(OPT_COUNT, "count", 'n', CLI_ARG_INT, CLI_OPT_POSITIVE, "N",
		"--max-runtimes N (-n is --name)", 0, 0),
	{OPT_TIMEOUT, "timeout", 0, CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "fail when no runtime connects within TIME", 0, 0},
	CLI_OLD(OPT_TIMEOUT, NULL, 't', CLI_ARG_DURATION, CLI_OPT_POSITIVE,
		"TIME", "--timeout TIME (-t is --type)", 0, 0),
	{OPT_NORESUME, "no-resume", 0, CLI_ARG_NONE, 0, NULL,
	 "leave the runtimes suspended", 0, 0},
	{OPT_STARTUP_PROF, "startup-profiler", 0, CLI_ARG_STR, 0, "CLSID,PATH",
	 "register this CLR profiler on each runtime before resuming it", 0, 0},
	{0},
};

static int cmd_listen(int argc, char **argv);
static const struct cli_cmd c_listen = {
	"dotnet listen", "SOCKET", "accept runtimes started with "
	"DOTNET_DiagnosticPorts=SOCKET: print each, with --startup-profiler "
	"register that CLR profiler to load at startup, and resume it",
	listen_opts, 1, 1, 0, cmd_listen, NULL};

/* Print one runtime that connected; register the profiler and resume it
 * as asked. Returns 0, or an exit code to end with. */
static int listen_one(rtd_ipc_listener *l, const struct rtd_ipc_advertise *adv,
		      int fd, const char *prof_path, const uint8_t *clsid,
		      bool resume)
{
	rtd_ipc_client *c = rtd_ipc_client_new_listener(l, adv, fd, NULL, NULL);
	struct rtd_ipc_process_info pi;
	char g[40];
	int rc = c ? rtd_ipc_process_info(c, 3, &pi) : -ENOMEM;
	printf("pid %llu cookie %s", (unsigned long long)adv->pid,
	       rtd_ipc_guid_format(adv->cookie, g, sizeof(g)));
	if (!rc) {
		printf(" version %s: %s\n", pi.clr_version, pi.cmdline);
		rtd_ipc_process_info_clear(&pi);
	} else {
		printf(" (ProcessInfo failed: %s)\n",
		       c ? rtd_ipc_client_errmsg(c) : "out of memory");
	}
	fflush(stdout);
	int r = 0;
	if (c && prof_path) {
		rc = startup_profiler_retry(c, clsid, prof_path);
		if (rc) {
			/* do not resume a runtime without the profiler that
			 * was asked for */
			r = cli_fail("%s", rtd_ipc_client_errmsg(c));
			rtd_ipc_client_free(c);
			return r;
		}
		fprintf(stderr, "rtdiag: pid %llu: startup profiler %s\n",
			(unsigned long long)adv->pid, prof_path);
	}
	if (c && resume) {
		rc = rtd_ipc_resume_runtime(c);
		if (rc)
			fprintf(stderr, "rtdiag: %s\n", rtd_ipc_client_errmsg(c));
		else
			fprintf(stderr, "rtdiag: pid %llu resumed\n",
				(unsigned long long)adv->pid);
	}
	rtd_ipc_client_free(c);
	return r;
}

static int cmd_listen(int argc, char **argv)
{
	long long count = 0;
	int timeout_ms = -1;
	bool resume = true;
	const char *prof_path = NULL;
	uint8_t prof_clsid[16];
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, &c_listen, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		switch (id) {
		case OPT_COUNT: count = v.i; break;
		case OPT_TIMEOUT: timeout_ms = (int)(v.ns / 1000000); break;
		case OPT_NORESUME: resume = false; break;
		case OPT_STARTUP_PROF: {
			/* CLSID,PATH: a GUID has no comma, a path may */
			const char *comma = strchr(v.str, ',');
			char gs[64];
			size_t gl = comma ? (size_t)(comma - v.str) : 0;
			if (!comma || !comma[1] || gl >= sizeof(gs))
				return cli_cmd_usage(&c_listen, "--startup-profiler "
						     "wants CLSID,PATH, not '%s'",
						     v.str);
			memcpy(gs, v.str, gl);
			gs[gl] = 0;
			if (rtd_ipc_guid_parse(gs, prof_clsid))
				return cli_cmd_usage(&c_listen, "'%s' is not a "
						     "GUID", gs);
			prof_path = comma + 1;
			break;
		}
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	const char *path = p.pos[0];
	int err = 0;
	rtd_ipc_listener *l = rtd_ipc_listen(path, &err);
	if (!l)
		return cli_fail("%s", rtd_ipc_errmsg_last());
	dn_catch_signals();
	fprintf(stderr, "rtdiag: listening on %s (start a runtime with "
			"DOTNET_DiagnosticPorts=%s)\n", path, path);
	long long seen = 0;
	int r = CLI_OK;
	/* Remember cookies: a runtime reconnects after each command and
	 * advertises again; report each runtime once. */
	uint8_t (*cookies)[16] = NULL;
	size_t ncookies = 0;
	while (!dn_stop_flag && (!count || seen < count)) {
		struct rtd_ipc_advertise adv;
		int fd;
		int rc = rtd_ipc_listener_accept(l, timeout_ms, &adv, &fd);
		if (rc == -EINTR)
			continue;
		if (rc == -RTD_E_IPC_TIMEOUT) {
			r = cli_fail("%s: no runtime connected within %.1f s",
				     path, timeout_ms / 1000.0);
			break;
		}
		if (rc == -RTD_E_IPC_PROTOCOL) {
			fprintf(stderr, "rtdiag: %s: a peer that is not a .NET "
					"runtime connected (no ADVR_V1); ignored\n", path);
			continue;
		}
		if (rc) {
			r = cli_fail("%s: accept: %s", path, rtd_strerror(rc));
			break;
		}
		bool known = false;
		for (size_t i = 0; i < ncookies; i++)
			known |= memcmp(cookies[i], adv.cookie, 16) == 0;
		if (known) {
			close(fd);
			continue;
		}
		void *nc = realloc(cookies, (ncookies + 1) * sizeof(*cookies));
		if (!nc) {
			close(fd);
			r = cli_fail("out of memory");
			break;
		}
		cookies = nc;
		memcpy(cookies[ncookies++], adv.cookie, 16);
		seen++;
		r = listen_one(l, &adv, fd, prof_path, prof_clsid, resume);
		if (r)
			break;
	}
	free(cookies);
	rtd_ipc_listener_free(l);
	return r;
}

static const struct cli_cmd *const cmds[] = {
	&c_ps, &c_info, &c_env, &c_setenv, &c_resume, &c_perfmap,
	&c_startup_hook, &c_attach_profiler, &c_startup_profiler, &c_dump,
	&c_stop, &c_listen, &dn_cmd_collect, &dn_cmd_replay, &dn_cmd_profile,
	&dn_cmd_stack, &dn_cmd_counters, &dn_cmd_gcdump,
	NULL,
};

static const char summary[] =
	"Talk to running .NET processes over the diagnostics IPC protocol.\n"
	"A target is -p PID (its socket is found through /proc/PID/root and "
	"its TMPDIR),\n-n NAME, or --socket PATH.";

static int run(int argc, char **argv)
{
	return cli_group_run("dotnet", cmds, argc, argv);
}

static bool help(FILE *f, const char *sub)
{
	return cli_group_help(f, "dotnet", summary, cmds, sub);
}

static const struct cli_cmd *const *list_cmds(void)
{
	return cmds;
}

const struct cli_group cli_group_dotnet = {
	"dotnet", ".NET diagnostics IPC: ps, info, collect, profile, dump, ...",
	run, help, list_cmds};
