/* SPDX-License-Identifier: MIT */
/* gotrace_grep.c - 'rtdiag gotrace grep' (tracegrep). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "out.h"
#include "common/map.h"
#include "gotrace/gotrace_int.h"
#include "gotrace_cli.h"

#define CMD "gotrace grep"

struct idset {
	uint64_t *k;
	unsigned char *u;
	size_t n, cap;
};

static bool idset_has(const struct idset *s, uint64_t v)
{
	if (!s->cap)
		return false;
	size_t j = (size_t)(v * 0x9e3779b97f4a7c15ULL) & (s->cap - 1);
	while (s->u[j]) {
		if (s->k[j] == v)
			return true;
		j = (j + 1) & (s->cap - 1);
	}
	return false;
}

/* Returns 1 when added, 0 when present, -1 without memory. */
static int idset_add(struct idset *s, uint64_t v)
{
	if (idset_has(s, v))
		return 0;
	if ((s->n + 1) * 2 > s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;
		uint64_t *k = calloc(nc, sizeof(*k));
		unsigned char *u = calloc(nc, 1);
		if (!k || !u) {
			free(k);
			free(u);
			return -1;
		}
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->u[i])
				continue;
			size_t j = (size_t)(s->k[i] * 0x9e3779b97f4a7c15ULL) & (nc - 1);
			while (u[j])
				j = (j + 1) & (nc - 1);
			k[j] = s->k[i];
			u[j] = 1;
		}
		free(s->k);
		free(s->u);
		s->k = k;
		s->u = u;
		s->cap = nc;
	}
	size_t j = (size_t)(v * 0x9e3779b97f4a7c15ULL) & (s->cap - 1);
	while (s->u[j])
		j = (j + 1) & (s->cap - 1);
	s->k[j] = v;
	s->u[j] = 1;
	s->n++;
	return 1;
}

static void idset_free(struct idset *s)
{
	free(s->k);
	free(s->u);
}

/* Per-P current thread, from ProcStart (the old format's only M). */
struct pthread {
	int64_t p;
	uint64_t m;
};

struct grep {
	rtd_gotrace_filter *f;
	struct g2w *g2;       /* filtered -o, new format */
	/* -o */
	rtd_gotrace_enc *enc;
	struct cli_out out;
	bool out_open, write_err;
	struct idset strs_done, stacks_done, strs_wanted, stacks_wanted;
	struct rtd_gotrace_event batch; /* last Batch seen, written lazily */
	uint64_t batch_raw[3];
	bool have_batch, batch_written;
	/* the goroutine a reader of the output will infer, per P */
	uint64_t out_g;
	struct pthread *outg;
	size_t noutg;
	int ver;
};

static uint64_t *outg_slot(struct grep *gr, int64_t p)
{
	for (size_t i = 0; i < gr->noutg; i++)
		if (gr->outg[i].p == p)
			return &gr->outg[i].m;
	struct pthread *n = realloc(gr->outg, (gr->noutg + 1) * sizeof(*n));
	if (!n)
		return NULL;
	gr->outg = n;
	gr->outg[gr->noutg] = (struct pthread){p, 0};
	return &gr->outg[gr->noutg++].m;
}

/* What a reader of the old format makes of the current G (parser.go's
 * lastG rules). */
static bool sets_own_g(unsigned t)
{
	switch (t) {
	case RTD_GO_EV_GO_START:
	case RTD_GO_EV_GO_START_LOCAL:
	case RTD_GO_EV_GO_START_LABEL:
	case RTD_GO_EV_GO_SYS_EXIT:
	case RTD_GO_EV_GO_WAITING:
	case RTD_GO_EV_GO_IN_SYSCALL:
	case RTD_GO_EV_GC_START:
	case RTD_GO_EV_GC_DONE:
	case RTD_GO_EV_GC_STW_START:
	case RTD_GO_EV_GC_STW_DONE:
	case RTD_GO_EV_CPU_SAMPLE:
		return true;
	}
	return false;
}

static void track_out_g(struct grep *gr, const struct rtd_gotrace_event *ev)
{
	switch (ev->type) {
	case RTD_GO_EV_GO_START:
	case RTD_GO_EV_GO_START_LOCAL:
	case RTD_GO_EV_GO_START_LABEL:
		gr->out_g = ev->args[0];
		break;
	default:
		if (go1_ends_running_g(ev->type))
			gr->out_g = 0;
	}
}

static int write_file(const void *buf, size_t len, void *ctx)
{
	return fwrite(buf, 1, len, (FILE *)ctx) == len ? 0 : -errno;
}

/* Make sure string id is in the output before an event that uses it. */
static int need_string(struct grep *gr, rtd_gotrace_dec *d, uint64_t id)
{
	if (id == 0 || idset_has(&gr->strs_done, id))
		return 0;
	size_t len;
	const char *s = rtd_gotrace_dec_string(d, id, &len);
	if (!s) /* not seen yet: write it when it comes */
		return idset_add(&gr->strs_wanted, id) < 0 ? -ENOMEM : 0;
	struct rtd_gotrace_event sev = {.type = RTD_GO_EV_STRING, .str_id = id,
					.str = s, .str_len = len};
	if (idset_add(&gr->strs_done, id) < 0)
		return -ENOMEM;
	return rtd_gotrace_enc_event(gr->enc, &sev);
}

static int write_matching(struct grep *gr, rtd_gotrace_dec *d,
			  const struct rtd_gotrace_event *ev)
{
	int rc = 0;
	switch (ev->type) {
	case RTD_GO_EV_GO_START_LABEL:
	case RTD_GO_EV_USER_TASK_CREATE:
	case RTD_GO_EV_USER_REGION:
		rc = need_string(gr, d, ev->args[2]);
		break;
	case RTD_GO_EV_USER_LOG:
		rc = need_string(gr, d, ev->args[1]);
		break;
	}
	if (rc == 0 && ev->stack && idset_add(&gr->stacks_wanted, ev->stack) < 0)
		rc = -ENOMEM;
	if (rc == 0 && !gr->batch_written) {
		if (!gr->have_batch)
			return -RTD_E_GO_EVENT;
		uint64_t *slot = outg_slot(gr, gr->batch.p);
		if (!slot)
			return -ENOMEM;
		rc = rtd_gotrace_enc_event(gr->enc, &gr->batch);
		gr->batch_written = true;
		gr->out_g = *slot;
	}
	/* The old format names a goroutine only when it starts: if the
	 * starting event was filtered out, say it again with a GoStartLocal
	 * (Go 1.7+) so the event reads back with its own G. */
	if (rc == 0 && ev->g && ev->g != gr->out_g && !sets_own_g(ev->type) &&
	    gr->ver >= 1007) {
		uint64_t raw[2] = {0, ev->g};
		struct rtd_gotrace_event st = {.type = RTD_GO_EV_GO_START_LOCAL,
					       .ticks = ev->ticks, .nraw = 2,
					       .raw = raw};
		rc = rtd_gotrace_enc_event(gr->enc, &st);
		gr->out_g = ev->g;
	}
	if (rc == 0)
		rc = rtd_gotrace_enc_event(gr->enc, ev);
	if (rc == 0) {
		track_out_g(gr, ev);
		uint64_t *slot = outg_slot(gr, gr->batch.p);
		if (!slot)
			return -ENOMEM;
		*slot = gr->out_g;
	}
	return rc;
}

/* -o: the trace of the matching events with what they need. */
static int output(struct grep *gr, rtd_gotrace_dec *d,
		  const struct rtd_gotrace_event *ev, bool match, bool filtered)
{
	int rc = 0;
	if (gr->g2) /* new format: the kept events go by offset or by filter */
		return g2w_event(gr->g2, ev, match);
	if (!filtered) /* a plain rewrite: every event as it came */
		return rtd_gotrace_enc_event(gr->enc, ev);
	switch (ev->type) {
	case RTD_GO_EV_BATCH:
		gr->batch = *ev;
		memcpy(gr->batch_raw, ev->raw, ev->nraw * sizeof(uint64_t));
		gr->batch.raw = gr->batch_raw;
		gr->have_batch = true;
		gr->batch_written = false;
		return 0;
	case RTD_GO_EV_FREQUENCY:
	case RTD_GO_EV_TIMER_GOROUTINE:
		return rtd_gotrace_enc_event(gr->enc, ev);
	case RTD_GO_EV_STRING:
		if (idset_has(&gr->strs_wanted, ev->str_id) &&
		    !idset_has(&gr->strs_done, ev->str_id)) {
			if (idset_add(&gr->strs_done, ev->str_id) < 0)
				return -ENOMEM;
			return rtd_gotrace_enc_event(gr->enc, ev);
		}
		return 0;
	case RTD_GO_EV_STACK:
		if (!idset_has(&gr->stacks_wanted, ev->args[0]) ||
		    idset_has(&gr->stacks_done, ev->args[0]))
			return 0;
		for (size_t i = 0; i < ev->nframes && rc == 0; i++) {
			rc = need_string(gr, d, ev->frames[i].fn_id);
			if (rc == 0)
				rc = need_string(gr, d, ev->frames[i].file_id);
		}
		if (rc == 0 && idset_add(&gr->stacks_done, ev->args[0]) < 0)
			rc = -ENOMEM;
		return rc < 0 ? rc : rtd_gotrace_enc_event(gr->enc, ev);
	}
	return match ? write_matching(gr, d, ev) : 0;
}

/* A time for --since/--until: a whole number is in the events' units (as
 * cat prints them); with a unit or a fraction ("1.5s", "200ms", "1.5",
 * "hh:mm:ss") a time after the trace's first event. */
static int parse_time(const char *s, int64_t *t, bool *from_start)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (!errno && end != s && !*end) {
		*t = v;
		*from_start = false;
		return 0;
	}
	*from_start = true;
	return gt_parse_duration_ns(s, t);
}

static int add_id(struct grep *gr, enum rtd_gotrace_filter_id k, const char *opt,
		  const char *val)
{
	char *end;
	errno = 0;
	long long v = strtoll(val, &end, 0);
	if (errno || *end || end == val)
		return cli_usage(CMD, "%s takes a number, not '%s'", opt, val);
	return rtd_gotrace_filter_add_id(gr->f, k, v) < 0 ? cli_fail("out of memory") : CLI_OK;
}

static int add_re(struct grep *gr, enum rtd_gotrace_filter_re k, const char *opt,
		  const char *val)
{
	if (rtd_gotrace_filter_add_regex(gr->f, k, val) < 0)
		return cli_usage(CMD, "%s: %s", opt, rtd_gotrace_filter_error(gr->f));
	return CLI_OK;
}

struct grep_opts {
	const char *path, *out;
	bool count, ordered;
	bool has_since, has_until;
};

static int parse(struct grep *gr, struct grep_opts *o, int argc, char **argv)
{
	int rc = CLI_OK;
	for (int i = 1; i < argc && rc == CLI_OK; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes = strcmp(a, "-e") == 0 || strcmp(a, "-g") == 0 ||
			     strcmp(a, "-p") == 0 || strcmp(a, "-m") == 0 ||
			     strcmp(a, "--since") == 0 || strcmp(a, "--until") == 0 ||
			     strcmp(a, "--stack") == 0 || strcmp(a, "--string") == 0 ||
			     strcmp(a, "-o") == 0;
		if (takes && !val)
			return cli_usage(CMD, "%s needs a value", a);
		if (takes)
			i++;
		if (strcmp(a, "-e") == 0) {
			rc = add_re(gr, RTD_GOTRACE_FILTER_TYPE, a, val);
		} else if (strcmp(a, "--stack") == 0) {
			rc = add_re(gr, RTD_GOTRACE_FILTER_STACK, a, val);
		} else if (strcmp(a, "--string") == 0) {
			rc = add_re(gr, RTD_GOTRACE_FILTER_STRING, a, val);
		} else if (strcmp(a, "-g") == 0) {
			rc = add_id(gr, RTD_GOTRACE_FILTER_G, a, val);
		} else if (strcmp(a, "-p") == 0) {
			rc = add_id(gr, RTD_GOTRACE_FILTER_P, a, val);
		} else if (strcmp(a, "-m") == 0) {
			rc = add_id(gr, RTD_GOTRACE_FILTER_M, a, val);
		} else if (strcmp(a, "--since") == 0 || strcmp(a, "--until") == 0) {
			bool until = a[2] == 'u', rel;
			int64_t t;
			if (until ? o->has_until : o->has_since)
				return cli_usage(CMD, "%s given twice", a);
			if (parse_time(val, &t, &rel) < 0)
				return cli_usage(CMD, "%s takes a time in the trace's units (as cat prints it) or a duration from its start (1.5s, 200ms, 1:30), not '%s'",
						 a, val);
			rtd_gotrace_filter_set_time(gr->f, until, t, rel);
			*(until ? &o->has_until : &o->has_since) = true;
		} else if (strcmp(a, "-o") == 0) {
			o->out = val;
		} else if (strcmp(a, "-v") == 0) {
			rtd_gotrace_filter_set_invert(gr->f, true);
		} else if (strcmp(a, "-c") == 0) {
			o->count = true;
		} else if (strcmp(a, "--ordered") == 0) {
			o->ordered = true;
		} else if (takes || (a[0] == '-' && a[1])) {
			rc = cli_usage(CMD, "unknown option '%s'", a);
		} else if (o->path) {
			rc = cli_usage(CMD, "one FILE only");
		} else {
			o->path = a;
		}
	}
	if (rc == CLI_OK && !o->path)
		rc = cli_usage(CMD, "missing FILE (or - for stdin)");
	if (rc == CLI_OK && o->count && o->out)
		rc = cli_usage(CMD, "-c and -o do not go together");
	if (rc == CLI_OK && o->ordered && o->out && strcmp(o->path, "-") == 0)
		rc = cli_usage(CMD, "--ordered with -o needs a FILE: a first pass finds the matching events in Go's order, a second writes them from the file's batches");
	return rc;
}

/* After the header: what the filter cannot do with this input. */
static int check(struct grep *gr, const struct grep_opts *o, struct gt_in *in)
{
	char why[400];
	int c = rtd_gotrace_filter_check(gr->f, gt_dec(in), why, sizeof(why));
	if (c > 0)
		fprintf(stderr, "rtdiag: warning: %s: %s (use --ordered)\n", o->path, why);
	if (c >= 0)
		return CLI_OK;
	if (rtd_gotrace_dec_version(gt_dec(in)) < 1022)
		return cli_fail("%s: --stack on a Go 1.5-1.21 trace needs a FILE or --ordered: the runtime writes the stacks at the end of the trace, so raw mode reads them in a first pass",
				o->path);
	return cli_fail("%s: %s", o->path, why);
}

/* -o: where the matching events go. */
static int open_out(struct grep *gr, const struct grep_opts *o, struct gt_in *in,
		    bool filtered)
{
	gr->ver = rtd_gotrace_dec_version(gt_dec(in));
	if (cli_out_open(&gr->out, o->out) < 0)
		return CLI_FAIL;
	gr->out_open = true;
	if (gr->ver >= 1022 && filtered) {
		if (!(gr->g2 = g2w_new(gr->out.f, gr->ver)))
			return cli_fail("out of memory");
	} else if (!(gr->enc = rtd_gotrace_enc_new(gr->ver, write_file, gr->out.f))) {
		return cli_fail("%s: cannot encode this version", o->out);
	}
	return CLI_OK;
}

/* The events through the filter: printed, counted or written. */
static int run(struct grep *gr, const struct grep_opts *o, struct gt_in *in,
	       uint64_t *nmatch, bool *in_err)
{
	struct rtd_gotrace_event ev;
	struct gt_pr pr = {.fmt = GT_TEXT, .ordered = o->ordered, .d = gt_dec(in)};
	bool filtered = rtd_gotrace_filter_active(gr->f);
	int r, rc = CLI_OK;
	bool first = true;
	while ((r = gt_next(in, &ev)) > 0) {
		if (first && (rc = check(gr, o, in)) != CLI_OK)
			return rc;
		first = false;
		bool m = rtd_gotrace_filter_match(gr->f, gt_dec(in), &ev);
		*nmatch += m;
		if (!o->out) {
			if (m && !o->count)
				gt_print(stdout, &pr, &ev);
			continue;
		}
		if (!gr->enc && !gr->g2 && (rc = open_out(gr, o, in, filtered)) != CLI_OK)
			return rc;
		int e = output(gr, gt_dec(in), &ev, m, filtered);
		gr->write_err = e < 0;
		if (e < 0)
			return cli_fail("%s: writing event at offset %" PRIu64 ": %s", o->out,
					ev.off, rtd_strerror(e));
	}
	*in_err = r < 0;
	return r < 0 ? CLI_FAIL : CLI_OK;
}

static int finish_out(struct grep *gr, const struct grep_opts *o, int rc, bool in_err)
{
	if (gr->g2) {
		/* Damaged input: the events before the damage are kept. */
		int e = (rc == CLI_OK || in_err) && !gr->write_err ? g2w_finish(gr->g2) : 0;
		gr->write_err |= e < 0;
		if (e < 0)
			rc = cli_fail("%s: %s", o->out, rtd_strerror(e));
		else if (in_err)
			cli_fail("%s: written with the matching events before the damage", o->out);
		g2w_free(gr->g2);
	}
	if (gr->enc) {
		if (rtd_gotrace_enc_flush(gr->enc) < 0 && !gr->write_err) {
			gr->write_err = true;
			rc = cli_fail("%s: write failed", o->out);
		}
		rtd_gotrace_enc_free(gr->enc);
	}
	/* OUT is replaced by a whole result, or by what came before damage
	 * in the input; never by a failed write */
	if (gr->out_open) {
		if (rc == CLI_OK || (in_err && !gr->write_err)) {
			if (cli_out_commit(&gr->out) < 0)
				rc = CLI_FAIL;
		} else {
			cli_out_abort(&gr->out);
		}
	}
	return rc;
}

int gt_cmd_grep(int argc, char **argv)
{
	struct grep *gr = calloc(1, sizeof(*gr));
	if (!gr || !(gr->f = rtd_gotrace_filter_new())) {
		free(gr);
		return cli_fail("out of memory");
	}
	struct grep_opts o = {0};
	int rc = parse(gr, &o, argc, argv);
	if (rc == CLI_OK && o.out && cli_out_check(o.out) < 0)
		rc = CLI_FAIL;
	struct gt_in *in = NULL;
	if (rc == CLI_OK && o.ordered && o.out) {
		/* Go 1.22+: match in Go's order (G and P known), keep by offset. */
		in = malloc(gt_in_size());
		if (!in || gt_open(in, o.path, RTD_GOTRACE_RAW, 0) < 0) {
			free(in);
			in = NULL;
			rc = CLI_FAIL;
		} else if (rtd_gotrace_filter_keep_ordered(gr->f, gt_read_at, in) < 0) {
			rc = cli_fail("%s: %s", o.path, rtd_gotrace_filter_error(gr->f));
		}
		if (in)
			gt_close(in);
		free(in);
		in = NULL;
		o.ordered = false;
	}
	enum rtd_gotrace_mode mode = o.ordered ? RTD_GOTRACE_ORDERED : RTD_GOTRACE_RAW;
	if (rc == CLI_OK) {
		in = malloc(gt_in_size());
		if (!in || gt_open(in, o.path, mode, RTD_GOTRACE_RESOLVE) < 0) {
			free(in);
			in = NULL;
			rc = CLI_FAIL;
		}
	}
	if (rc == CLI_OK &&
	    rtd_gotrace_filter_prepare(gr->f, mode, gt_in_is_file(in) ? gt_read_at : NULL, in) < 0)
		rc = gt_in_is_file(in)
		     ? cli_fail("%s: %s", o.path, rtd_gotrace_filter_error(gr->f))
		     : cli_usage(CMD, "--since/--until with a time from the start (1.5s) need a FILE in raw mode (a first pass finds the trace's frequency and first time), or --ordered");
	uint64_t nmatch = 0;
	bool in_err = false;
	if (rc == CLI_OK)
		rc = run(gr, &o, in, &nmatch, &in_err);
	gt_flush();
	cli_progress_done();
	rc = finish_out(gr, &o, rc, in_err);
	if (o.count && rc == CLI_OK)
		printf("%" PRIu64 "\n", nmatch);
	if (in) {
		gt_close(in);
		free(in);
	}
	rtd_gotrace_filter_free(gr->f);
	idset_free(&gr->strs_done);
	idset_free(&gr->stacks_done);
	idset_free(&gr->strs_wanted);
	idset_free(&gr->stacks_wanted);
	free(gr->outg);
	free(gr);
	if (rc == CLI_OK && fflush(stdout) != 0)
		return cli_fail("stdout: %s", strerror(errno));
	return rc;
}
