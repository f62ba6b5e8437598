/* SPDX-License-Identifier: MIT */
/*
 * first_event - rtdiag's side of the attach-to-first-event benchmark:
 * attach to PID, start a session for PROVIDER (no rundown), decode the
 * stream until the first event of PROVIDER, stop, read to the end.
 * Prints "first_event_ms total_ms". Built by bench/dotnet/run.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rtdiag/ipc.h"
#include "rtdiag/nettrace.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct st {
	const char *provider;
	int seen;
	double t0, first;
	rtd_nettrace *dec;
	volatile int stop;
};

static int on_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct st *s = ctx;
	if (!s->seen && strcmp(ev->meta->provider, s->provider) == 0) {
		s->seen = 1;
		s->first = now_ms() - s->t0;
		s->stop = 1;
	}
	return 0;
}

static int sink(const void *d, size_t n, void *ctx)
{
	struct st *s = ctx;
	int rc = rtd_nettrace_feed(s->dec, d, n);
	return rc < 0 ? rc : 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: first_event PID PROVIDER\n");
		return 2;
	}
	struct st s = {.provider = argv[2]};
	s.t0 = now_ms();
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = &s, .on_event = on_event};
	s.dec = rtd_nettrace_new(&o);
	rtd_ipc_client *c = rtd_ipc_client_new(atoi(argv[1]), NULL, NULL);
	if (!c) {
		fprintf(stderr, "%s\n", rtd_ipc_errmsg_last());
		return 1;
	}
	struct rtd_ipc_provider p = {.name = argv[2], .keywords = ~0ull, .level = 5};
	struct rtd_ipc_session_opts so = {.sz = sizeof(so), .providers = &p,
					  .n_providers = 1, .no_rundown = true};
	rtd_ipc_session *ses = rtd_ipc_session_start(c, &so, NULL);
	if (!ses) {
		fprintf(stderr, "%s\n", rtd_ipc_client_errmsg(c));
		return 1;
	}
	struct rtd_ipc_pump_opts po = {.sz = sizeof(po), .sink = sink, .ctx = &s,
				       .stop = &s.stop};
	rtd_ipc_session_pump(ses, &po, NULL);
	double total = now_ms() - s.t0;
	rtd_ipc_session_free(ses);
	rtd_ipc_client_free(c);
	rtd_nettrace_free(s.dec);
	printf("%.1f %.1f\n", s.first, total);
	return s.seen ? 0 : 1;
}
