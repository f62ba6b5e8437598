/* SPDX-License-Identifier: MIT */
/*
 * convert_perfdata.c - `rtdiag convert x.data -o OUT`: a perf.data file
 * (rtdiag/perf_data.h) through its record source into a profile
 * (rtdiag/profile_records.h) or a timeline (rtdiag/timeline_records.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_format.h"
#include "convert_perfdata.h"
#include "out.h"
#include "rtdiag/firefox.h"
#include "rtdiag/perf_data.h"
#include "rtdiag/profile_records.h"
#include "rtdiag/timeline_records.h"

/* The event a profile shows: NAME (perf's name, or the part before its
 * ":ppp" modifiers), else the file's first. */
static const struct rtd_perf_data_event *pick_event(const rtd_perf_data *d, const char *name)
{
	for (size_t i = 0; i < rtd_perf_data_nevents(d); i++) {
		const struct rtd_perf_data_event *e = rtd_perf_data_event(d, i);
		size_t n = name ? strlen(name) : 0;
		if (!name || !strcmp(e->name, name) ||
		    (!strncmp(e->name, name, n) && e->name[n] == ':' && !strchr(name, ':')))
			return e;
	}
	return NULL;
}

static bool is_clock(const struct rtd_perf_data_event *e)
{
	return e->type == 1 /* PERF_TYPE_SOFTWARE */ && e->config <= 1; /* cpu-, task-clock */
}

/* The source's end: 0, or its error said (exit 3: what came before is kept). */
static int source_end(const char *path, rtd_source *src, int got)
{
	if (got >= 0)
		return 0;
	const struct rtd_record *r;
	/* a failed source gives its error record again */
	if (rtd_source_next(src, &r) >= 0 || r->kind != RTD_REC_ERROR) {
		cli_fail("%s: %s", path, rtd_strerror(got));
		return -1;
	}
	cli_fail("%s: %s at offset %llu (what came before is converted)", path,
		 r->message && r->message[0] ? r->message : rtd_strerror(r->code),
		 (unsigned long long)r->offset);
	return 1;
}

static int to_timeline(rtd_source *src, const char *path, const struct cli_format *f,
		       const char *outp)
{
	struct cli_timeline t;
	if (cli_timeline_open(&t, f, outp))
		return CLI_FAIL;
	int rc = 0;
	rtd_timeline_records *c = rtd_timeline_records_new(t.tl, NULL, &rc);
	int got = c ? rtd_timeline_records_pull(c, src) : rc;
	struct rtd_timeline_records_stats st = {0};
	if (c)
		rtd_timeline_records_stats(c, &st);
	rtd_timeline_records_free(c);
	bool some = st.samples + st.slices + st.instants > 0;
	int partial = source_end(path, src, got);
	int out = cli_timeline_close(&t, some && partial >= 0);
	if (partial < 0)
		return CLI_FAIL;
	if (!some) /* said before the abandoned output's result: it is none */
		return cli_fail("%s: nothing to draw (no samples, switches or tracepoints; "
				"%s not written)", path, outp);
	if (out != CLI_OK)
		return CLI_FAIL;
	return partial ? CLI_PARTIAL : CLI_OK;
}

static int to_profile(rtd_source *src, const rtd_perf_data *d, const char *path,
		      const struct cli_format *f, const char *outp,
		      const struct rtd_profile_write_opts *wo, const char *event)
{
	const struct rtd_perf_data_event *e = pick_event(d, event);
	if (!e) {
		cli_fail("%s has no event '%s'; it has:", path, event);
		for (size_t i = 0; i < rtd_perf_data_nevents(d); i++)
			fprintf(stderr, "  %s\n", rtd_perf_data_event(d, i)->name);
		return CLI_FAIL;
	}
	/* the period's type: the event's name without perf's modifiers
	 * ("cycles:ppp"), nanoseconds of a clock */
	char tname[128];
	snprintf(tname, sizeof(tname), "%.*s", (int)strcspn(e->name, ":"), e->name);
	struct rtd_profile_type types[2] = {{"samples", "count"}, {tname, "count"}};
	if (is_clock(e))
		types[1] = (struct rtd_profile_type){"cpu", "nanoseconds"};
	bool tp = e->type == 2; /* PERF_TYPE_TRACEPOINT: its period counts events */
	struct rtd_profile_opts po = {.sz = sizeof(po), .types = types, .ntypes = tp ? 1 : 2,
				      .default_type = tp ? 0 : 1, .period_type = types[tp ? 0 : 1]};
	rtd_profile *p = rtd_profile_new2(&po);
	int rc = p ? 0 : -ENOMEM;
	RTD_OPTS(rtd_profile_records_opts, ro, .name = e->name);
	rtd_profile_records *c = p ? rtd_profile_records_new(p, &ro, &rc) : NULL;
	int got = c ? rtd_profile_records_pull(c, src) : rc;
	uint64_t n = 0;
	int64_t first = 0, last = 0;
	if (c)
		rtd_profile_records_stats(c, &n, &first, &last);
	rtd_profile_records_free(c);
	if (!p || (got < 0 && !c)) {
		rtd_profile_free(p);
		return cli_fail("%s: %s", path, rtd_strerror(got));
	}
	int partial = source_end(path, src, got);
	if (partial < 0) {
		rtd_profile_free(p);
		return CLI_FAIL;
	}
	const struct rtd_perf_data_info *in = rtd_perf_data_info(d);
	struct rtd_profile_meta m = {.sz = sizeof(m), .source = "perf.data",
				     .process = in->cmdline ? in->cmdline : path,
				     .duration_nanos = last - first};
	rtd_profile_set_meta(p, &m);
	if (!n) {
		rtd_profile_free(p);
		return cli_fail("%s: no samples of %s to convert (%s not written)", path, e->name,
				cli_out_is_stdout(outp) ? "nothing" : outp);
	}
	struct rtd_profile_write_opts w = *wo;
	if (w.type && rtd_profile_find_type(p, w.type) < 0) {
		rtd_profile_free(p);
		return cli_fail("%s: the profile of %s has no sample type '%s' (it has samples%s%s)",
				path, e->name, w.type, tp ? "" : " and ", tp ? "" : types[1].type);
	}
	int out = cli_write_profile(p, f, outp, &w);
	rtd_profile_free(p);
	return out == CLI_OK && partial ? CLI_PARTIAL : out;
}

/* The Firefox Profiler's Gecko profile of every thread's samples and
 * off-CPU waits. */
int cli_convert_firefox(rtd_source *src, const char *path, const char *outp)
{
	int rc = 0;
	rtd_firefox *ff = rtd_firefox_new(NULL, &rc);
	int got = ff ? rtd_firefox_pull(ff, src) : rc;
	int partial = ff ? source_end(path, src, got) : -1;
	struct cli_out o;
	size_t n = 0;
	if (partial < 0 || cli_out_open(&o, outp)) {
		rtd_firefox_free(ff);
		return ff ? CLI_FAIL : cli_fail("%s: %s", path, rtd_strerror(rc));
	}
	rc = rtd_firefox_write(ff, o.f, &n);
	rtd_firefox_free(ff);
	if (rc || !n) {
		cli_out_abort(&o);
		return rc ? cli_fail("writing %s: %s", outp ? outp : "stdout", rtd_strerror(rc))
			  : cli_fail("%s: no samples to write (nothing written)", path);
	}
	if (cli_out_commit(&o))
		return CLI_FAIL;
	return partial ? CLI_PARTIAL : CLI_OK;
}

/* Standard input: the bytes convert read to tell the format, then the rest. */
struct stdin_ctx {
	const uint8_t *first;
	size_t n, pos;
	FILE *in;
};

static int64_t stdin_read(void *ctx, void *buf, size_t len)
{
	struct stdin_ctx *c = ctx;
	if (c->pos < c->n) {
		size_t k = c->n - c->pos < len ? c->n - c->pos : len;
		memcpy(buf, c->first + c->pos, k);
		c->pos += k;
		return (int64_t)k;
	}
	size_t k = fread(buf, 1, len, c->in);
	return k ? (int64_t)k : ferror(c->in) ? -EIO : 0;
}

int cli_convert_perfdata(const char *path, const struct cli_format *f, const char *outp,
			 const struct rtd_profile_write_opts *wo, const char *event,
			 bool no_inline, bool firefox, FILE *in, const uint8_t *first,
			 size_t nfirst)
{
	rtd_perf_data *d = NULL;
	struct stdin_ctx sc = {first, nfirst, 0, in};
	bool std_in = !strcmp(path, "-");
	int rc = std_in ? rtd_perf_data_open_reader(stdin_read, &sc, NULL, &d)
			: rtd_perf_data_open(path, NULL, &d);
	if (std_in)
		path = "standard input";
	if (rc) {
		const char *msg = d ? rtd_perf_data_error(d, NULL) : "";
		cli_fail("%s: %s (nothing written)", path, msg[0] ? msg : rtd_strerror(rc));
		rtd_perf_data_free(d);
		return CLI_FAIL;
	}
	RTD_OPTS(rtd_perf_data_source_opts, so, .sym_flags = no_inline ? RTD_SYM_NO_DWARF : 0);
	rtd_source *src = rtd_perf_data_source(d, &so, &rc);
	if (!src)
		return cli_fail("%s: %s", path, rtd_strerror(rc));
	int out = firefox ? cli_convert_firefox(src, path, outp)
		  : f->kind == CLI_FMT_TIMELINE ? to_timeline(src, path, f, outp)
						: to_profile(src, d, path, f, outp, wo, event);
	rtd_source_free(src);
	return out;
}
