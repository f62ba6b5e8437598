/* SPDX-License-Identifier: MIT */
/*
 * dotnet.c - the 'rtdiag dotnet' command group: talk to running .NET
 * processes over the diagnostics IPC protocol (named after the dotnet-*
 * tools where they have a name). collect and profile live in
 * dotnet_collect.c.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dotnet_cli.h"
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

int dn_parse_pid(const char *cmd, const char *s, pid_t *pid)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > 0x7fffffff)
		return cli_usage(cmd, "'%s' is not a process id", s);
	*pid = (pid_t)v;
	return 0;
}

rtd_ipc_client *dn_client(pid_t pid, const char *socket, int timeout_ms)
{
	struct rtd_ipc_client_opts o = {.sz = sizeof(o), .timeout_ms = timeout_ms};
	int err = 0;
	rtd_ipc_client *c = socket ? rtd_ipc_client_new_path(socket, &o, &err)
				   : rtd_ipc_client_new(pid, &o, &err);
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

/* -p PID / --socket PATH, shared by the one-command subcommands. */
struct target_args {
	pid_t pid;
	const char *socket;
};

static const struct option target_opts[] = {
	{"process-id", required_argument, NULL, 'p'},
	{"socket", required_argument, NULL, 'S'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* Parse only -p/--socket; returns -1 to go on, or an exit code. */
static int parse_target(const char *cmd, int argc, char **argv,
			struct target_args *t, int *optind_out)
{
	int ch;
	memset(t, 0, sizeof(*t));
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+p:S:h", target_opts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			if (dn_parse_pid(cmd, optarg, &t->pid))
				return CLI_USAGE;
			break;
		case 'S':
			t->socket = optarg;
			break;
		case 'h':
			dn_help(stdout, cmd + strlen("dotnet "));
			return CLI_OK;
		default:
			return cli_usage(cmd, "unknown option '%s'",
					 argv[optind - 1]);
		}
	}
	if (!t->pid && !t->socket)
		return cli_usage(cmd, "which process? give -p PID");
	*optind_out = optind;
	return -1;
}

static int cmd_ps(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return cli_usage("dotnet ps", "takes no arguments");
	struct rtd_ipc_proc *v;
	size_t n;
	int rc = rtd_ipc_list(&v, &n);
	if (rc)
		return cli_fail("listing processes: %s", rtd_strerror(rc));
	printf("%8s  %-20s %-12s %s\n", "PID", "NAME", "VERSION", "COMMAND");
	for (size_t i = 0; i < n; i++) {
		char comm[64] = "?", path[64];
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)v[i].pid);
		FILE *f = fopen(path, "r");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		struct rtd_ipc_client_opts o = {.sz = sizeof(o),
						.timeout_ms = 2000};
		rtd_ipc_client *c = rtd_ipc_client_new_path(v[i].socket, &o, NULL);
		struct rtd_ipc_process_info pi;
		memset(&pi, 0, sizeof(pi));
		int qrc = c ? rtd_ipc_process_info(c, 2, &pi) : -ENOMEM;
		if (qrc)
			printf("%8d  %-20s %-12s (%s)\n", (int)v[i].pid, comm, "?",
			       rtd_strerror(qrc));
		else
			printf("%8d  %-20s %-12s %s\n", (int)v[i].pid, comm,
			       pi.clr_version, pi.cmdline);
		rtd_ipc_process_info_clear(&pi);
		rtd_ipc_client_free(c);
	}
	free(v);
	return CLI_OK;
}

static int cmd_info(int argc, char **argv)
{
	struct target_args t;
	int oi, r = parse_target("dotnet info", argc, argv, &t, &oi);
	if (r >= 0)
		return r;
	if (oi < argc)
		return cli_usage("dotnet info", "unexpected '%s'", argv[oi]);
	rtd_ipc_client *c = dn_client(t.pid, t.socket, 0);
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

static int cmd_env(int argc, char **argv)
{
	struct target_args t;
	int oi, r = parse_target("dotnet env", argc, argv, &t, &oi);
	if (r >= 0)
		return r;
	if (oi < argc)
		return cli_usage("dotnet env", "unexpected '%s'", argv[oi]);
	rtd_ipc_client *c = dn_client(t.pid, t.socket, 0);
	if (!c)
		return CLI_FAIL;
	int rc = rtd_ipc_process_env(c, print_env, NULL);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

static int cmd_setenv(int argc, char **argv)
{
	struct target_args t;
	int oi, r = parse_target("dotnet setenv", argc, argv, &t, &oi);
	if (r >= 0)
		return r;
	if (argc - oi != 2)
		return cli_usage("dotnet setenv", "want NAME VALUE");
	rtd_ipc_client *c = dn_client(t.pid, t.socket, 0);
	if (!c)
		return CLI_FAIL;
	int rc = rtd_ipc_set_env(c, argv[oi], argv[oi + 1]);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

static int cmd_resume(int argc, char **argv)
{
	struct target_args t;
	int oi, r = parse_target("dotnet resume", argc, argv, &t, &oi);
	if (r >= 0)
		return r;
	if (oi < argc)
		return cli_usage("dotnet resume", "unexpected '%s'", argv[oi]);
	rtd_ipc_client *c = dn_client(t.pid, t.socket, 0);
	if (!c)
		return CLI_FAIL;
	int rc = rtd_ipc_resume_runtime(c);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

static int cmd_perfmap(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "enable") && strcmp(argv[1], "disable")))
		return cli_usage("dotnet perfmap", "want 'enable' or 'disable'");
	bool on = strcmp(argv[1], "enable") == 0;
	enum rtd_ipc_perfmap_type type = RTD_IPC_PERFMAP_ALL;
	/* optional --type all|jitdump|perfmap after the target */
	struct target_args t;
	int oi, r = parse_target("dotnet perfmap", argc - 1, argv + 1, &t, &oi);
	if (r >= 0)
		return r;
	oi++;
	if (oi < argc && strcmp(argv[oi], "--type") == 0 && oi + 1 < argc) {
		const char *ty = argv[oi + 1];
		if (strcmp(ty, "all") == 0)
			type = RTD_IPC_PERFMAP_ALL;
		else if (strcmp(ty, "jitdump") == 0)
			type = RTD_IPC_PERFMAP_JITDUMP;
		else if (strcmp(ty, "perfmap") == 0)
			type = RTD_IPC_PERFMAP_PERFMAP;
		else
			return cli_usage("dotnet perfmap", "--type is all, "
					 "jitdump or perfmap, not '%s'", ty);
		oi += 2;
	}
	if (oi < argc)
		return cli_usage("dotnet perfmap", "unexpected '%s'", argv[oi]);
	rtd_ipc_client *c = dn_client(t.pid, t.socket, 0);
	if (!c)
		return CLI_FAIL;
	int rc = on ? rtd_ipc_perfmap_enable(c, type) : rtd_ipc_perfmap_disable(c);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

static int cmd_startup_hook(int argc, char **argv)
{
	struct target_args t;
	int oi, r = parse_target("dotnet startup-hook", argc, argv, &t, &oi);
	if (r >= 0)
		return r;
	if (argc - oi != 1)
		return cli_usage("dotnet startup-hook", "want the PATH of the "
				 "hook assembly");
	rtd_ipc_client *c = dn_client(t.pid, t.socket, 0);
	if (!c)
		return CLI_FAIL;
	int rc = rtd_ipc_apply_startup_hook(c, argv[oi]);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

/* The options of attach-profiler and startup-profiler. */
struct prof_args {
	pid_t pid;
	const char *sock, *path, *data;
	uint8_t clsid[16];
	unsigned timeout;
};

/* Parse them (--timeout/--data only when @attach); -1 to go on, or an
 * exit code. */
static int parse_prof_args(const char *cmd, bool attach, int argc, char **argv,
			   struct prof_args *a)
{
	static const struct option opts[] = {
		{"process-id", required_argument, NULL, 'p'},
		{"socket", required_argument, NULL, 'S'},
		{"clsid", required_argument, NULL, 'c'},
		{"path", required_argument, NULL, 'l'},
		{"timeout", required_argument, NULL, 't'},
		{"data", required_argument, NULL, 'd'},
		{NULL, 0, NULL, 0},
	};
	const char *clsid = NULL;
	int ch;
	memset(a, 0, sizeof(*a));
	a->timeout = 10000;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+p:S:", opts, NULL)) != -1) {
		if (!attach && (ch == 't' || ch == 'd'))
			ch = '?';
		switch (ch) {
		case 'p':
			if (dn_parse_pid(cmd, optarg, &a->pid))
				return CLI_USAGE;
			break;
		case 'S': a->sock = optarg; break;
		case 'c': clsid = optarg; break;
		case 'l': a->path = optarg; break;
		case 'd': a->data = optarg; break;
		case 't': a->timeout = (unsigned)strtoul(optarg, NULL, 10); break;
		default:
			return cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if ((!a->pid && !a->sock) || !clsid || !a->path || optind != argc)
		return cli_usage(cmd, "want -p PID --clsid GUID --path LIB");
	if (rtd_ipc_guid_parse(clsid, a->clsid))
		return cli_usage(cmd, "'%s' is not a GUID", clsid);
	return -1;
}

static int cmd_attach_profiler(int argc, char **argv)
{
	struct prof_args a;
	int r = parse_prof_args("dotnet attach-profiler", true, argc, argv, &a);
	if (r >= 0)
		return r;
	rtd_ipc_client *c = dn_client(a.pid, a.sock, (int)a.timeout + 5000);
	if (!c)
		return CLI_FAIL;
	int rc = rtd_ipc_attach_profiler(c, a.timeout, a.clsid, a.path, a.data,
					 a.data ? strlen(a.data) : 0);
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

static int cmd_startup_profiler(int argc, char **argv)
{
	struct prof_args a;
	int r = parse_prof_args("dotnet startup-profiler", false, argc, argv, &a);
	if (r >= 0)
		return r;
	rtd_ipc_client *c = dn_client(a.pid, a.sock, 0);
	if (!c)
		return CLI_FAIL;
	int rc = startup_profiler_retry(c, a.clsid, a.path);
	r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

static int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{"process-id", required_argument, NULL, 'p'},
		{"socket", required_argument, NULL, 'S'},
		{"output", required_argument, NULL, 'o'},
		{"type", required_argument, NULL, 't'},
		{"crash-report", no_argument, NULL, 'c'},
		{"diag", no_argument, NULL, 'd'},
		{NULL, 0, NULL, 0},
	};
	const char *cmd = "dotnet dump";
	pid_t pid = 0;
	const char *sock = NULL, *out = NULL;
	enum rtd_ipc_dump_type type = RTD_IPC_DUMP_FULL;
	uint32_t flags = 0;
	int ch;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+p:S:o:", opts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			if (dn_parse_pid(cmd, optarg, &pid))
				return CLI_USAGE;
			break;
		case 'S': sock = optarg; break;
		case 'o': out = optarg; break;
		case 'c': flags |= RTD_IPC_DUMP_CRASHREPORT; break;
		case 'd': flags |= RTD_IPC_DUMP_LOG; break;
		case 't':
			if (!strcmp(optarg, "mini")) type = RTD_IPC_DUMP_MINI;
			else if (!strcmp(optarg, "heap")) type = RTD_IPC_DUMP_HEAP;
			else if (!strcmp(optarg, "triage")) type = RTD_IPC_DUMP_TRIAGE;
			else if (!strcmp(optarg, "full")) type = RTD_IPC_DUMP_FULL;
			else
				return cli_usage(cmd, "--type is mini, heap, "
						 "triage or full, not '%s'", optarg);
			break;
		default:
			return cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if ((!pid && !sock) || !out)
		return cli_usage(cmd, "want -p PID -o FILE");
	/* The runtime writes the file: give it an absolute path. */
	char abs[4096];
	if (out[0] != '/') {
		char cwd[3000];
		if (!getcwd(cwd, sizeof(cwd)))
			return cli_fail("getcwd: %s", strerror(errno));
		snprintf(abs, sizeof(abs), "%s/%s", cwd, out);
		out = abs;
	}
	rtd_ipc_client *c = dn_client(pid, sock, 300000);
	if (!c)
		return CLI_FAIL;
	int rc = rtd_ipc_dump(c, out, type, flags, NULL, 0);
	int r = rc ? dn_fail(c, rc) : CLI_OK;
	if (!rc)
		fprintf(stderr, "rtdiag: wrote %s\n", out);
	rtd_ipc_client_free(c);
	return r;
}

static int cmd_stop(int argc, char **argv)
{
	static const struct option opts[] = {
		{"process-id", required_argument, NULL, 'p'},
		{"socket", required_argument, NULL, 'S'},
		{"session", required_argument, NULL, 's'},
		{NULL, 0, NULL, 0},
	};
	const char *cmd = "dotnet stop";
	pid_t pid = 0;
	const char *sock = NULL, *sid = NULL;
	int ch;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+p:S:s:", opts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			if (dn_parse_pid(cmd, optarg, &pid))
				return CLI_USAGE;
			break;
		case 'S': sock = optarg; break;
		case 's': sid = optarg; break;
		default:
			return cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if ((!pid && !sock) || !sid)
		return cli_usage(cmd, "want -p PID --session ID");
	char *end;
	errno = 0;
	unsigned long long id = strtoull(sid, &end, 0);
	if (errno || *end)
		return cli_usage(cmd, "'%s' is not a session id", sid);
	if (pid) {
		/* the runtime answers OK to any id: check it can be one */
		int m = rtd_ipc_session_id_mapped(pid, id);
		if (m == 0)
			return cli_fail("pid %d has no session %s (a session id "
					"is an address in the target, as 'rtdiag "
					"dotnet collect' prints it)", (int)pid, sid);
	}
	rtd_ipc_client *c = dn_client(pid, sock, 0);
	if (!c)
		return CLI_FAIL;
	int rc = rtd_ipc_stop_tracing(c, id);
	int r = rc ? dn_fail(c, rc) : CLI_OK;
	rtd_ipc_client_free(c);
	return r;
}

static int cmd_listen(int argc, char **argv)
{
	static const struct option opts[] = {
		{"count", required_argument, NULL, 'n'},
		{"timeout", required_argument, NULL, 't'},
		{"no-resume", no_argument, NULL, 'R'},
		{"startup-profiler", required_argument, NULL, 'P'},
		{NULL, 0, NULL, 0},
	};
	const char *cmd = "dotnet listen";
	long count = 0, timeout = -1;
	bool resume = true;
	const char *prof_path = NULL;
	uint8_t prof_clsid[16];
	int ch;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "n:t:", opts, NULL)) != -1) {
		switch (ch) {
		case 'n': count = strtol(optarg, NULL, 10); break;
		case 't': timeout = strtol(optarg, NULL, 10) * 1000; break;
		case 'R': resume = false; break;
		case 'P': {
			/* CLSID,PATH: a GUID has no comma, a path may */
			const char *comma = strchr(optarg, ',');
			char gs[64];
			size_t gl = comma ? (size_t)(comma - optarg) : 0;
			if (!comma || !comma[1] || gl >= sizeof(gs))
				return cli_usage(cmd, "--startup-profiler wants "
						 "CLSID,PATH, not '%s'", optarg);
			memcpy(gs, optarg, gl);
			gs[gl] = 0;
			if (rtd_ipc_guid_parse(gs, prof_clsid))
				return cli_usage(cmd, "'%s' is not a GUID", gs);
			prof_path = comma + 1;
			break;
		}
		default:
			return cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return cli_usage(cmd, "want the SOCKET path to listen on");
	const char *path = argv[optind];
	int err = 0;
	rtd_ipc_listener *l = rtd_ipc_listen(path, &err);
	if (!l)
		return cli_fail("%s", rtd_ipc_errmsg_last());
	dn_catch_signals();
	fprintf(stderr, "rtdiag: listening on %s (start a runtime with "
			"DOTNET_DiagnosticPorts=%s)\n", path, path);
	long seen = 0;
	int r = CLI_OK;
	/* Remember cookies: a runtime reconnects after each command and
	 * advertises again; report each runtime once. */
	uint8_t (*cookies)[16] = NULL;
	size_t ncookies = 0;
	while (!dn_stop_flag && (!count || seen < count)) {
		struct rtd_ipc_advertise adv;
		int fd;
		int rc = rtd_ipc_listener_accept(l, timeout < 0 ? -1 : (int)timeout,
						 &adv, &fd);
		if (rc == -EINTR)
			continue;
		if (rc == -RTD_E_IPC_TIMEOUT) {
			r = cli_fail("%s: no runtime connected within %ld s",
				     path, timeout / 1000);
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
		rtd_ipc_client *c = rtd_ipc_client_new_listener(l, &adv, fd, NULL, NULL);
		struct rtd_ipc_process_info pi;
		char g[40];
		rc = c ? rtd_ipc_process_info(c, 3, &pi) : -ENOMEM;
		printf("pid %llu cookie %s", (unsigned long long)adv.pid,
		       rtd_ipc_guid_format(adv.cookie, g, sizeof(g)));
		if (!rc) {
			printf(" version %s: %s\n", pi.clr_version, pi.cmdline);
			rtd_ipc_process_info_clear(&pi);
		} else {
			printf(" (ProcessInfo failed: %s)\n",
			       c ? rtd_ipc_client_errmsg(c) : "out of memory");
		}
		fflush(stdout);
		if (c && prof_path) {
			rc = startup_profiler_retry(c, prof_clsid, prof_path);
			if (rc) {
				/* do not resume a runtime without the profiler
				 * that was asked for */
				r = cli_fail("%s", rtd_ipc_client_errmsg(c));
				rtd_ipc_client_free(c);
				break;
			}
			fprintf(stderr, "rtdiag: pid %llu: startup profiler %s\n",
				(unsigned long long)adv.pid, prof_path);
		}
		if (c && resume) {
			rc = rtd_ipc_resume_runtime(c);
			if (rc)
				fprintf(stderr, "rtdiag: %s\n", rtd_ipc_client_errmsg(c));
			else
				fprintf(stderr, "rtdiag: pid %llu resumed\n",
					(unsigned long long)adv.pid);
		}
		rtd_ipc_client_free(c);
	}
	free(cookies);
	rtd_ipc_listener_free(l);
	return r;
}

static const struct dn_sub {
	const char *name;
	int (*run)(int, char **);
	const char *usage;
	const char *help;
} subs[] = {
	{"ps", cmd_ps, "", "list .NET processes with a diagnostic socket: pid, "
	 "name, runtime version, command line"},
	{"info", cmd_info, "-p PID", "process info (ProcessInfo3, falling back "
	 "to 2 and 1)"},
	{"env", cmd_env, "-p PID", "the target's environment, one NAME=value a line"},
	{"setenv", cmd_setenv, "-p PID NAME VALUE", "set an environment variable "
	 "inside the target (empty VALUE unsets)"},
	{"resume", cmd_resume, "-p PID", "resume a runtime suspended at startup"},
	{"perfmap", cmd_perfmap, "enable|disable -p PID [--type all|jitdump|perfmap]",
	 "make the runtime write /tmp/perf-PID.map and jitdump files, or stop"},
	{"startup-hook", cmd_startup_hook, "-p PID PATH", "add a startup hook "
	 "assembly to a runtime suspended at startup "
	 "(DOTNET_DefaultDiagnosticPortSuspend=1), then 'resume' it"},
	{"attach-profiler", cmd_attach_profiler,
	 "-p PID --clsid GUID --path LIB [--timeout MS] [--data TEXT]",
	 "attach a CLR profiler to the running runtime"},
	{"startup-profiler", cmd_startup_profiler,
	 "-p PID --clsid GUID --path LIB", "register a CLR profiler to load "
	 "when a runtime suspended at startup (DOTNET_DefaultDiagnosticPortSuspend=1) "
	 "is resumed"},
	{"dump", cmd_dump, "-p PID -o FILE [--type mini|heap|triage|full] "
	 "[--crash-report] [--diag]", "make the runtime write a core dump (ELF) of "
	 "its process"},
	{"stop", cmd_stop, "-p PID --session ID", "stop an EventPipe session"},
	{"listen", cmd_listen, "SOCKET [--count N] [--timeout S] [--no-resume] "
	 "[--startup-profiler CLSID,PATH]",
	 "accept runtimes started with DOTNET_DiagnosticPorts=SOCKET: print each, "
	 "with --startup-profiler register that CLR profiler to load at startup, "
	 "and resume it"},
	{"collect", dn_cmd_collect, "(-p PID | -- COMMAND ARGS) [--providers SPEC] "
	 "[--profile NAME] [--duration S] [--buffer-mb N] [--no-rundown] "
	 "[--rundown-wait S] [--record FILE] -o FILE",
	 "record an EventPipe trace (nettrace); SIGINT/SIGTERM stop it cleanly"},
	{"replay", dn_cmd_replay, "RECORDING [-o FILE]", "play a recording made "
	 "with 'collect --record' through the decoder (and into FILE)"},
	{"profile", dn_cmd_profile, "(-p PID | -- COMMAND ARGS) [--duration S] "
	 "[-o FILE [--top]]", "CPU-sample the process: folded stacks to FILE, "
	 "and/or the ten hottest methods"},
};
#define NSUBS (sizeof(subs) / sizeof(subs[0]))

bool dn_help(FILE *f, const char *sub)
{
	if (sub) {
		for (size_t i = 0; i < NSUBS; i++)
			if (strcmp(subs[i].name, sub) == 0) {
				fprintf(f, "usage: rtdiag dotnet %s %s\n\n%s.\n",
					subs[i].name, subs[i].usage, subs[i].help);
				if (!strcmp(sub, "collect") || !strcmp(sub, "profile"))
					dn_collect_help(f, sub);
				return true;
			}
		return false;
	}
	fprintf(f, "usage: rtdiag dotnet SUBCOMMAND ...\n\n"
		   "Talk to running .NET processes over the diagnostics IPC "
		   "protocol.\nA target is -p PID (its socket is found through "
		   "/proc/PID/root and its TMPDIR)\nor --socket PATH.\n\n"
		   "subcommands:\n");
	for (size_t i = 0; i < NSUBS; i++)
		fprintf(f, "  %-16s %s\n", subs[i].name, subs[i].help);
	return true;
}

static int run(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage("dotnet", "missing subcommand");
	for (size_t i = 0; i < NSUBS; i++)
		if (strcmp(subs[i].name, argv[1]) == 0) {
			if (argc > 2 && cli_is_help(argv[2])) {
				dn_help(stdout, argv[1]);
				return CLI_OK;
			}
			return subs[i].run(argc - 1, argv + 1);
		}
	return cli_usage("dotnet", "no subcommand '%s'", argv[1]);
}

static bool help(FILE *f, const char *sub)
{
	return dn_help(f, sub);
}

const struct cli_group cli_group_dotnet = {
	"dotnet", ".NET diagnostics IPC: ps, info, collect, profile, dump, ...",
	run, help};
