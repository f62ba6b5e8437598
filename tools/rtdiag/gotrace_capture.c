/* SPDX-License-Identifier: MIT */
/*
 * gotrace_capture.c - 'rtdiag gotrace capture': a Go program's execution
 * trace from net/http/pprof, written to a file and decoded as it arrives.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_format.h"
#include "gotrace_analyze.h"
#include "opt.h"
#include "out.h"
#include "rtdiag/gocapture.h"
#include "rtdiag/gotrace.h"

enum { CP_HTTP = 1, CP_PID, CP_SECONDS, CP_TIMEOUT, CP_OUT, CP_PATH };
static const struct cli_opt capture_opts[] = {
	{CP_HTTP, "http", 0, CLI_ARG_STR, 0, "HOST:PORT",
	 "the program's net/http/pprof address (or an http:// URL)", 0, 0},
	{CP_PID, "pid", 'p', CLI_ARG_INT, 0, "PID",
	 "a local process: find the port it serves net/http/pprof on", 1, 2147483647},
	{CP_SECONDS, "duration", 'd', CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "how long the program traces (default 5 s)", 0, 0},
	{CP_SECONDS, "seconds", 0, CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "the same, by net/http/pprof's name", 0, 0},
	CLI_OLD(CP_SECONDS, NULL, 's', CLI_ARG_DURATION, CLI_OPT_POSITIVE,
		"TIME", "-d TIME (-s is --summary)", 0, 0),
	{CP_TIMEOUT, "timeout", 0, CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "how long beyond --duration the reply may take (default 10 s)", 0, 0},
	{CP_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "write the trace to FILE ('-': stdout, the default when it is not a terminal)", 0, 0},
	{CP_PATH, "path", 0, CLI_ARG_STR, 0, "PATH",
	 "the trace endpoint (default /debug/pprof/trace)", 0, 0},
	{0},
};

int gt_cmd_capture(int argc, char **argv);

const struct cli_cmd gt_capture_cmd = {
	"gotrace capture", NULL,
	"Capture a running Go program's execution trace through net/http/pprof.\n"
	"Fetches /debug/pprof/trace?seconds=S, writing it to a file and decoding it as\n"
	"it arrives (events, generations).",
	capture_opts, 0, 0, 0, gt_cmd_capture,
	"Give --http HOST:PORT (the address the program serves net/http/pprof on;\n"
	"loopback or an address given explicitly: nothing else is contacted, no proxy,\n"
	"no redirect), or --pid PID for a local process (its listening ports are\n"
	"asked for /debug/pprof/, loopback first).\n"
	"A trace cut short (the program stopped, Ctrl-C) is kept: a Go 1.22+ trace\n"
	"decodes up to its last complete generation.\n"};


static volatile int stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct cap {
	struct cli_out out;
	rtd_gotrace_dec *d;
	const char *dest;
	uint64_t bytes, events, gens;
	double t0, first_event; /* seconds after the request, -1: none yet */
	uint64_t first_event_byte;
	int dec_rc;
	char dec_err[256];
	uint64_t dec_off;
};

/* the events the decoder has now */
static void drain(struct cap *c, int rc)
{
	struct rtd_gotrace_event ev;
	while (rc >= 0 && (rc = rtd_gotrace_dec_next(c->d, &ev)) > 0) {
		/* every event, batches and tables too, as 'gotrace stats' counts */
		if (ev.gen && ev.type == RTD_GO2_EV_EVENT_BATCH && ev.args[0] > c->gens)
			c->gens = ev.args[0];
		if (c->events++ == 0) {
			c->first_event = mono() - c->t0;
			c->first_event_byte = c->bytes;
		}
	}
	if (rc < 0) {
		c->dec_rc = rc;
		snprintf(c->dec_err, sizeof(c->dec_err), "%s", rtd_gotrace_dec_error(c->d, &c->dec_off));
	}
}

static int on_data(const void *buf, size_t len, void *ctx)
{
	struct cap *c = ctx;
	if (fwrite(buf, 1, len, c->out.f) != len)
		return -errno ? -errno : -EIO;
	c->bytes += len;
	if (c->dec_rc < 0)
		return 0; /* the file keeps everything; decoding stopped at the error */
	drain(c, rtd_gotrace_dec_feed(c->d, buf, len));
	if (cli_progress_enabled()) {
		char b[32];
		cli_progress("%s: %s, %" PRIu64 " events decoded", c->dest, cli_bytes((double)c->bytes, b, sizeof(b)),
			     c->events);
	}
	return 0;
}

int gt_cmd_capture(int argc, char **argv)
{
	const char *http = NULL, *out = NULL, *path = NULL;
	long long pid = 0;
	double seconds = 5, grace = 10;
	struct cli_parser p;
	struct cli_val v;
	int id;
	cli_opt_init(&p, &gt_capture_cmd, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		switch (id) {
		case CP_HTTP: http = v.str; break;
		case CP_PID: pid = v.i; break;
		case CP_SECONDS: seconds = v.d; break;
		case CP_TIMEOUT: grace = v.d; break;
		case CP_OUT: out = v.str; break;
		case CP_PATH: path = v.str; break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	if (!http == !pid)
		return cli_cmd_usage(&gt_capture_cmd, "give --http HOST:PORT or --pid PID (one of them)");
	if (!out) {
		if (isatty(STDOUT_FILENO))
			return cli_cmd_usage(&gt_capture_cmd, "a trace is binary: give -o FILE (or a pipe)");
		out = "-";
	}
	if (cli_format_recording(gt_capture_cmd.name, out, "a Go execution trace"))
		return CLI_USAGE;
	if (cli_out_check(out))
		return CLI_FAIL;
	char host[128], err[512];
	if (pid) {
		int rc = rtd_gocapture_find((int)pid, host, sizeof(host), err, sizeof(err));
		if (rc < 0)
			return cli_fail("%s", err);
		http = host;
		fprintf(stderr, "rtdiag: process %lld serves net/http/pprof on %s\n", pid, host);
	}
	struct cap c;
	memset(&c, 0, sizeof(c));
	c.dest = cli_out_is_stdout(out) ? "stdout" : out;
	c.first_event = -1;
	struct rtd_gotrace_opts dopts = {.sz = sizeof(dopts), .mode = RTD_GOTRACE_RAW};
	c.d = rtd_gotrace_dec_new(&dopts);
	if (!c.d)
		return cli_fail("out of memory");
	if (cli_out_open(&c.out, out)) {
		rtd_gotrace_dec_free(c.d);
		return CLI_FAIL;
	}
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	struct rtd_gocapture_opts o = {.sz = sizeof(o), .host = http, .path = path, .seconds = seconds,
				       .grace = grace, .on_data = on_data, .ctx = &c, .stop = &stop};
	struct rtd_gocapture_result res;
	c.t0 = mono();
	int rc = rtd_gocapture_run(&o, &res, err, sizeof(err));
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	cli_progress_done();
	if (c.dec_rc == 0 && c.bytes)
		drain(&c, rtd_gotrace_dec_finish(c.d));
	int ver = rtd_gotrace_dec_version(c.d);
	rtd_gotrace_dec_free(c.d);
	if (c.bytes == 0) { /* nothing worth keeping */
		cli_out_abort(&c.out);
		return cli_fail("%s: %s", res.url, err);
	}
	if (cli_out_commit(&c.out))
		return CLI_FAIL;
	fprintf(stderr, "rtdiag: %s: %" PRIu64 " bytes in %.2f s to %s: go %d.%d trace, %" PRIu64
		" events decoded as they arrived", res.url, c.bytes, res.seconds, c.dest, ver / 1000,
		ver % 1000, c.events);
	if (c.first_event >= 0)
		fprintf(stderr, " (the first %.3f s after the request, at byte %" PRIu64 ")", c.first_event,
			c.first_event_byte);
	if (ver >= 1022)
		fprintf(stderr, ", %" PRIu64 " generation%s", c.gens, c.gens == 1 ? "" : "s");
	fputc('\n', stderr);
	if (c.dec_rc < 0)
		fprintf(stderr, "rtdiag: %s: decoding stopped at byte %" PRIu64 ": %s (the file has every byte received)\n",
			c.dest, c.dec_off, c.dec_err);
	if (rc < 0) {
		fprintf(stderr, "rtdiag: %s: %s; the %" PRIu64 " bytes received are kept in %s%s\n", res.url, err,
			c.bytes, c.dest,
			ver >= 1022 ? " (its complete generations decode)"
				    : " (raw mode decodes its events; ordering needs a whole trace)");
		return CLI_FAIL;
	}
	return c.dec_rc < 0 ? CLI_FAIL : CLI_OK;
}
