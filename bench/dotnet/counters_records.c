/* SPDX-License-Identifier: MIT */
/*
 * bench/dotnet/counters_records.c - the counters of a nettrace file from
 * the decoder's events (rtd_counters_event(), as the agent reads them
 * today) or from a nettrace source's records (rtd_counters_record()), for
 * A/B CPU runs with bench/abcpu.c (bench/dotnet/counters_records.sh).
 *
 * Usage: counters_records events|records|records-all FILE [SPEC [SESSION]]
 *   events       the decoder (stream order) fed 1 MiB pieces, every event
 *                to rtd_counters_event()
 *   records      a nettrace source in stream order filtered by
 *                rtd_counters_want()/_fields(), rtd_source_each() to
 *                rtd_counters_record()
 *   records-all  the same source unfiltered (every event a record with
 *                all its fields: the bound for a filter that keeps much
 *                more, as the agent's OR with the profiler's)
 * Prints the records' count and a hash of their contents, so the modes'
 * outputs can be compared.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtdiag/counters.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/nettrace_source.h"

struct run {
	rtd_nettrace *dec;
	rtd_source *src;
	rtd_counters *c;
	uint64_t n, hash;
	int rc;
};

static void mix(struct run *x, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		x->hash = (x->hash ^ b[i]) * 1099511628211ull;
}

static int on_counter(void *ctx, const struct rtd_counter_record *r)
{
	struct run *x = ctx;
	const char *s[] = {r->provider, r->name, r->display_name, r->unit, r->tags};
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		mix(x, s[i], strlen(s[i]) + 1);
	double v[] = {r->value, r->total, r->min, r->max, r->count, r->sum};
	mix(x, v, sizeof(v));
	mix(x, &r->timestamp, sizeof(r->timestamp));
	x->n++;
	return 0;
}

static int on_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct run *x = ctx;
	return rtd_counters_event(x->c, x->dec, ev);
}

static int on_rec(void *ctx, const struct rtd_record *rec)
{
	struct run *x = ctx;
	struct rtd_clock clock;
	rtd_source_clock(x->src, &clock);
	x->rc = rtd_counters_record(x->c, &clock, rec);
	return x->rc;
}

static int by_events(struct run *x, const char *path)
{
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = x, .on_event = on_event};
	x->dec = rtd_nettrace_new(&o);
	FILE *f = fopen(path, "rb");
	if (!x->dec || !f)
		return -1;
	static unsigned char buf[1 << 20];
	size_t n;
	int rc = 0;
	while (!rc && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		rc = rtd_nettrace_feed(x->dec, buf, n) < 0;
	fclose(f);
	rc = rc || rtd_nettrace_finish(x->dec) < 0;
	rtd_nettrace_free(x->dec);
	return rc ? -1 : 0;
}

static int by_records(struct run *x, const char *path, bool filtered)
{
	struct rtd_nettrace_source_opts o = {.sz = sizeof(o), .stream_order = true,
					     .no_prepass = true};
	if (filtered) {
		o.want = rtd_counters_want;
		o.want_ctx = x->c;
		o.fields = rtd_counters_fields;
		o.fields_ctx = x->c;
	}
	int err;
	x->src = rtd_nettrace_source_open(path, &o, &err);
	if (!x->src)
		return -1;
	int rc = rtd_source_each(x->src, on_rec, x);
	rtd_source_free(x->src);
	return rc || x->rc ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s events|records|records-all FILE [SPEC [SESSION]]\n",
			argv[0]);
		return 2;
	}
	struct run x = {.hash = 14695981039346656037ull};
	char err[128];
	x.c = rtd_counters_new(argc > 3 ? argv[3] : NULL, on_counter, &x, err, sizeof(err));
	if (!x.c) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	struct rtd_ipc_providers pv = {0};
	if (argc > 4 && rtd_counters_request(x.c, 1, argv[4], &pv))
		return 2;
	rtd_ipc_providers_clear(&pv);
	rtd_counters_prefer_meters(x.c, 1.0);
	int rc = !strcmp(argv[1], "events")	   ? by_events(&x, argv[2])
		 : !strcmp(argv[1], "records")	   ? by_records(&x, argv[2], true)
		 : !strcmp(argv[1], "records-all") ? by_records(&x, argv[2], false)
						   : -2;
	if (rc == -2)
		return 2;
	rtd_counters_flush(x.c);
	rtd_counters_free(x.c);
	printf("%llu records, hash %016llx\n", (unsigned long long)x.n,
	       (unsigned long long)x.hash);
	return rc ? 1 : 0;
}
