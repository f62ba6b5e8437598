/* SPDX-License-Identifier: MIT */
/*
 * agent.c - 'rtdiag agent': the continuous profiling agent. The options
 * are the library's (rtd_agent_options()): each is a flag here and a key
 * of the --config file, and flags win over the file.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "opt.h"
#include "rtdiag/agent.h"

enum { OPT_CONFIG = 100, OPT_CHECK };

static rtd_agent *running;

static void on_signal(int sig)
{
	if (!running)
		return;
	if (sig == SIGHUP)
		rtd_agent_reload(running); /* certificate, key, token */
	else
		rtd_agent_stop(running);
}

static void log_line(enum rtd_log_level level, const char *msg, void *ctx)
{
	static const char *const names[] = {"error", "warn", "info", "debug"};
	(void)ctx;
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(stderr, "%s rtdiag agent: %s: %s\n", ts,
		names[level <= RTD_LOG_DEBUG ? level : RTD_LOG_DEBUG], msg);
}

static const char summary[] =
	"Profile processes continuously and feed the backends you run: pprof\n"
	"endpoints for Grafana Alloy / Pyroscope and Parca to scrape, /metrics\n"
	"for Prometheus, /targets (JSON), and windows pushed to Pyroscope's\n"
	"/ingest. Targets are found by pid, process name, cgroup or as every\n"
	".NET process, and followed as they start, exit and restart. Runs until\n"
	"SIGTERM or Ctrl-C, which flush the current window.";

static const char details[] =
	"Every option is also a key of the --config file (YAML), e.g.:\n"
	"  listen: 127.0.0.1:4040\n"
	"  target:\n"
	"    - dotnet\n"
	"    - {name: \"^api$\", service: checkout}\n"
	"  push: http://pyroscope:4040\n"
	"  label: {env: prod}\n"
	"Flags win over the file; list options (target, label, push-header)\n"
	"add to it. --check-config prints the effective config and exits.\n"
	"\n"
	"Endpoints: /metrics, /targets, PREFIX/debug/pprof/profile?seconds=N,\n"
	"PREFIX/debug/pprof/allocs|mutex|block|exceptions, where PREFIX is each\n"
	"target's (see /targets); /debug/pprof/... when there is one target.\n";

static int build_opts(struct cli_opt *out, size_t max)
{
	size_t n;
	const struct rtd_agent_option *lo = rtd_agent_options(&n);
	size_t k = 0;
	static char helps[CLI_MAX_OPTS][320];
	out[k++] = (struct cli_opt){.id = OPT_CONFIG,
				    .name = "config",
				    .arg = CLI_ARG_STR,
				    .meta = "FILE",
				    .help = "read options from a YAML file"};
	out[k++] = (struct cli_opt)CLI_OLD(OPT_CONFIG, NULL, 'c', CLI_ARG_STR,
					   0, "FILE",
					   "--config FILE (-c is --count)",
					   0, 0);
	out[k++] = (struct cli_opt){.id = OPT_CHECK,
				    .name = "check-config",
				    .arg = CLI_ARG_NONE,
				    .help = "check the options, print the "
					    "effective config, exit"};
	for (size_t i = 0; i < n && k + 1 < max; i++, k++) {
		if (lo[i].def && lo[i].kind != RTD_AGENT_OPT_BOOL)
			snprintf(helps[k], sizeof(helps[k]), "%s (default %s)",
				 lo[i].help, lo[i].def);
		else
			snprintf(helps[k], sizeof(helps[k]), "%s", lo[i].help);
		out[k] = (struct cli_opt){
			.id = (int)i + 1,
			.name = lo[i].name,
			.arg = lo[i].kind == RTD_AGENT_OPT_BOOL ? CLI_ARG_NONE
								: CLI_ARG_STR,
			.flags = lo[i].kind == RTD_AGENT_OPT_LIST ? CLI_OPT_REPEAT
								  : 0,
			.meta = lo[i].meta,
			.help = helps[k],
		};
	}
	out[k] = (struct cli_opt){0};
	return 0;
}

static struct cli_opt agent_opts[CLI_MAX_OPTS];
static int run_agent(int argc, char **argv);

static const struct cli_cmd agent_cmd = {
	.name = "agent",
	.args = NULL,
	.summary = summary,
	.opts = agent_opts,
	.min_pos = 0,
	.max_pos = 0,
	.run = run_agent,
	.details = details,
};

struct flag {
	int id;
	const char *val;
};

/* The config from --config FILE and the flags over it, checked; *check
 * says --check-config. Returns CLI_OK with *out set, or the exit code
 * (CLI_OK for --help) with *out NULL. */
static int agent_config(int argc, char **argv, rtd_agent_config **out,
			bool *check)
{
	build_opts(agent_opts, CLI_MAX_OPTS);
	size_t nopt;
	const struct rtd_agent_option *lo = rtd_agent_options(&nopt);
	(void)nopt;
	*out = NULL;
	struct flag *flags = calloc((size_t)argc + 1, sizeof(*flags));
	if (!flags)
		return cli_fail("out of memory");
	size_t nflags = 0;
	const char *config = NULL;
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, &agent_cmd, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		if (id == OPT_CONFIG)
			config = v.str;
		else if (id == OPT_CHECK)
			*check = true;
		else
			flags[nflags++] = (struct flag){id, v.str};
	}
	if (id < 0) {
		free(flags);
		return cli_opt_exit(id);
	}
	rtd_agent_config *c = rtd_agent_config_new();
	if (!c) {
		free(flags);
		return cli_fail("out of memory");
	}
	int rc = CLI_OK;
	if (config && rtd_agent_config_load(c, config)) {
		rc = cli_fail("%s", rtd_agent_config_errmsg(c));
		goto out;
	}
	for (size_t i = 0; i < nflags; i++) {
		const struct rtd_agent_option *o = &lo[flags[i].id - 1];
		if (rtd_agent_config_set(c, o->name, flags[i].val)) {
			rc = cli_cmd_usage(&agent_cmd, "--%s",
					   rtd_agent_config_errmsg(c));
			goto out;
		}
	}
	if (rtd_agent_config_check(c))
		rc = cli_fail("%s%s%s", config ? config : "",
			      config ? ": " : "", rtd_agent_config_errmsg(c));
out:
	free(flags);
	if (rc == CLI_OK)
		*out = c;
	else
		rtd_agent_config_free(c);
	return rc;
}

/* The agent over config @c, until a signal stops it. */
static int agent_serve(rtd_agent_config *c)
{
	enum rtd_log_level lvl = rtd_agent_config_log_level(c);
	rtd_set_log(log_line, NULL, lvl);

	rtd_agent *a = NULL;
	int err = rtd_agent_new(c, &a);
	if (err)
		return cli_fail("%s", rtd_agent_errmsg_last()[0]
					      ? rtd_agent_errmsg_last()
					      : rtd_strerror(err));
	running = a;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fprintf(stderr, "rtdiag agent: serving %s (/metrics, /targets, "
			"PREFIX/debug/pprof/...)\n", rtd_agent_url(a));
	fflush(stderr);
	err = rtd_agent_run(a);
	running = NULL;
	struct rtd_agent_stats st = {.sz = sizeof(st)};
	rtd_agent_get_stats(a, &st);
	rtd_agent_free(a);
	if (err)
		return cli_fail("%s", rtd_strerror(err));
	fprintf(stderr,
		"rtdiag agent: stopped: %llu targets seen, %llu windows, "
		"%llu uploaded, %llu dropped; otlp: %llu uploaded, "
		"%llu dropped\n",
		(unsigned long long)st.targets_seen,
		(unsigned long long)st.windows,
		(unsigned long long)st.uploads,
		(unsigned long long)st.dropped_windows,
		(unsigned long long)st.otlp_uploads,
		(unsigned long long)st.otlp_dropped_windows);
	return CLI_OK;
}

static int run_agent(int argc, char **argv)
{
	rtd_agent_config *c = NULL;
	bool check = false;
	int rc = agent_config(argc, argv, &c, &check);
	if (!c) /* refused, or --help */
		return rc;
	if (check) {
		if (rtd_agent_config_write(c, stdout) || fflush(stdout))
			rc = cli_fail("writing the config: %s", strerror(errno));
		else
			fprintf(stderr, "rtdiag agent: the config is valid\n");
	} else {
		rc = agent_serve(c);
	}
	rtd_agent_config_free(c);
	return rc;
}

static int agent_run(int argc, char **argv)
{
	return run_agent(argc, argv);
}

static bool agent_help(FILE *f, const char *sub)
{
	if (sub)
		return false;
	build_opts(agent_opts, CLI_MAX_OPTS);
	cli_cmd_help(f, &agent_cmd);
	return true;
}

static const struct cli_cmd *const *agent_cmds(void)
{
	build_opts(agent_opts, CLI_MAX_OPTS);
	static const struct cli_cmd *const list[] = {&agent_cmd, NULL};
	return list;
}

const struct cli_group cli_group_agent = {
	.name = "agent",
	.summary = "continuous profiling agent for Pyroscope, Parca, "
		   "Prometheus",
	.run = agent_run,
	.help = agent_help,
	.cmds = agent_cmds,
};
