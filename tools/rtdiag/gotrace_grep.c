/* SPDX-License-Identifier: MIT */
/* gotrace_grep.c - 'rtdiag gotrace grep' (tracegrep). */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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

struct filt {
	bool has_type, has_g, has_p, has_m, has_since, has_until, has_stack, has_str;
	regex_t type_re, stack_re, str_re;
	uint64_t g, m;
	int64_t p, since, until;
	bool invert, count, ordered;
	const char *out;
};


/* Per-P current thread, from ProcStart (the old format's only M). */
struct pthread {
	int64_t p;
	uint64_t m;
};

struct grep {
	struct filt f;
	struct g2w *g2;       /* filtered -o, new format */
	rtd_map kept;         /* --ordered -o: offsets of the matching events */
	bool by_offset;
	rtd_gotrace_dec *stacks; /* first pass, for --stack */
	struct pthread *pm;
	size_t npm;
	/* -o */
	rtd_gotrace_enc *enc;
	FILE *of;
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

static uint64_t thread_of(struct grep *gr, int64_t p)
{
	for (size_t i = 0; i < gr->npm; i++)
		if (gr->pm[i].p == p)
			return gr->pm[i].m;
	return UINT64_MAX;
}

static void note_thread(struct grep *gr, const struct rtd_gotrace_event *ev)
{
	if (ev->type != RTD_GO_EV_PROC_START)
		return;
	for (size_t i = 0; i < gr->npm; i++)
		if (gr->pm[i].p == ev->p) {
			gr->pm[i].m = ev->args[0];
			return;
		}
	struct pthread *n = realloc(gr->pm, (gr->npm + 1) * sizeof(*n));
	if (!n)
		return;
	gr->pm = n;
	gr->pm[gr->npm++] = (struct pthread){ev->p, ev->args[0]};
}

static bool stack_matches(struct grep *gr, uint64_t id, rtd_gotrace_dec *d)
{
	const struct rtd_gotrace_frame *fr;
	size_t n = rtd_gotrace_dec_stack(gr->stacks ? gr->stacks : d, id, &fr);
	char buf[4096];
	for (size_t i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "%s %s:%" PRIu64, fr[i].fn, fr[i].file, fr[i].line);
		if (regexec(&gr->f.stack_re, buf, 0, NULL, 0) == 0)
			return true;
		snprintf(buf, sizeof(buf), "0x%" PRIx64, fr[i].pc);
		if (regexec(&gr->f.stack_re, buf, 0, NULL, 0) == 0)
			return true;
	}
	return false;
}

static bool matches(struct grep *gr, const struct rtd_gotrace_event *ev,
		    rtd_gotrace_dec *d)
{
	const struct filt *f = &gr->f;
	bool m = true;
	if (f->has_type)
		m = regexec(&f->type_re, ev->name, 0, NULL, 0) == 0;
	if (gt_is_meta(ev)) {
		/* Dictionary and batch events carry no G, P or time: they
		 * match only a type filter, or no filter at all. */
		if (f->has_type)
			return m;
		return !(f->has_g || f->has_p || f->has_m || f->has_since ||
			 f->has_until || f->has_stack || f->has_str || f->invert);
	}
	if (m && f->has_g)
		m = ev->g == f->g;
	if (m && f->has_p)
		m = ev->p == f->p;
	if (m && f->has_m)
		m = (ev->gen ? (uint64_t)ev->m : thread_of(gr, ev->p)) == f->m;
	if (m && f->has_since)
		m = ev->ts >= f->since;
	if (m && f->has_until)
		m = ev->ts <= f->until;
	if (m && f->has_stack)
		m = ev->stack && stack_matches(gr, ev->stack, d);
	if (m && f->has_str) {
		bool any = false;
		for (unsigned i = 0; i < ev->nsargs && !any; i++)
			any = regexec(&f->str_re, ev->sargs[i], 0, NULL, 0) == 0;
		m = any;
	}
	return f->invert ? !m : m;
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
		return g2w_event(gr->g2, ev, gr->by_offset ? rtd_map_get(&gr->kept, ev->off, NULL) : match);
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

static int compile(regex_t *re, const char *pat, const char *what)
{
	int rc = regcomp(re, pat, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char msg[256];
		regerror(rc, re, msg, sizeof(msg));
		return cli_usage(CMD, "bad %s regexp '%s': %s", what, pat, msg);
	}
	return 0;
}

static int num(const char *s, const char *opt, int64_t *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 0);
	if (errno || *end || end == s)
		return cli_usage(CMD, "%s takes a number, not '%s'", opt, s);
	*v = x;
	return 0;
}

/* First pass over a file: every Stack, so --stack can look ahead (Go
 * writes the stack table at the end of the trace). */
static rtd_gotrace_dec *load_stacks(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		cli_fail("%s: %s", path, strerror(errno));
		return NULL;
	}
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_RAW};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	uint8_t *buf = malloc(1 << 16);
	struct rtd_gotrace_event ev;
	int rc = 0;
	size_t n;
	while (d && buf && rc >= 0 && (n = fread(buf, 1, 1 << 16, f)) > 0) {
		rc = rtd_gotrace_dec_feed(d, buf, n);
		while (rc >= 0 && (rc = rtd_gotrace_dec_next(d, &ev)) > 0)
			;
	}
	if (d && rc >= 0) {
		rc = rtd_gotrace_dec_finish(d);
		while (rc >= 0 && (rc = rtd_gotrace_dec_next(d, &ev)) > 0)
			;
	}
	free(buf);
	fclose(f);
	if (!d || rc < 0) {
		cli_fail("%s: %s", path, d ? rtd_gotrace_dec_error(d, NULL) : "out of memory");
		rtd_gotrace_dec_free(d);
		return NULL;
	}
	return d;
}

#define MAX_KEPT (1u << 28) /* matching events remembered for --ordered -o */

/* --ordered -o, first pass: the offsets of the events that match in
 * Go's order (Go's synthetic events count for the event they come from). */
static int ordered_offsets(struct grep *gr, const char *path)
{
	struct gt_in *in = malloc(gt_in_size());
	if (!in || gt_open(in, path, RTD_GOTRACE_ORDERED) < 0) {
		free(in);
		return CLI_FAIL;
	}
	rtd_map_init(&gr->kept, MAX_KEPT);
	gr->by_offset = true;
	struct rtd_gotrace_event ev;
	int r, rc = CLI_OK;
	while (rc == CLI_OK && (r = gt_next(in, &ev)) > 0) {
		int ver = rtd_gotrace_dec_version(gt_dec(in));
		if (ver < 1022) {
			rc = cli_fail("%s: --ordered with -o is for Go 1.22+ traces; in this Go 1.%d trace the G and P of an event are known without it",
				      path, ver % 1000);
			break;
		}
		if (ev.type == RTD_GO2_EV_READER_SYNC)
			continue;
		note_thread(gr, &ev);
		if (matches(gr, &ev, gt_dec(in)) && rtd_map_put(&gr->kept, ev.off, (void *)1, NULL) < 0)
			rc = cli_fail("%s: more than %u matching events to keep for -o", path, MAX_KEPT);
	}
	if (rc == CLI_OK && r < 0)
		rc = CLI_FAIL;
	gt_close(in);
	free(in);
	free(gr->pm);
	gr->pm = NULL;
	gr->npm = 0;
	return rc;
}

int gt_cmd_grep(int argc, char **argv)
{
	struct grep *gr = calloc(1, sizeof(*gr));
	if (!gr)
		return cli_fail("out of memory");
	struct filt *f = &gr->f;
	const char *path = NULL;
	int rc = CLI_OK;
	int64_t v = 0;
	for (int i = 1; i < argc && rc == CLI_OK; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes = strcmp(a, "-e") == 0 || strcmp(a, "-g") == 0 ||
			     strcmp(a, "-p") == 0 || strcmp(a, "-m") == 0 ||
			     strcmp(a, "--since") == 0 || strcmp(a, "--until") == 0 ||
			     strcmp(a, "--stack") == 0 || strcmp(a, "--string") == 0 ||
			     strcmp(a, "-o") == 0;
		if (takes && !val) {
			rc = cli_usage(CMD, "%s needs a value", a);
			break;
		}
		if (takes)
			i++;
		if (strcmp(a, "-e") == 0) {
			if (f->has_type) {
				rc = cli_usage(CMD, "-e given twice (use one regexp with |)");
				break;
			}
			rc = compile(&f->type_re, val, "type");
			f->has_type = rc == 0;
		} else if (strcmp(a, "--stack") == 0 && !f->has_stack) {
			rc = compile(&f->stack_re, val, "stack");
			f->has_stack = rc == 0;
		} else if (strcmp(a, "--string") == 0 && !f->has_str) {
			rc = compile(&f->str_re, val, "string");
			f->has_str = rc == 0;
		} else if (strcmp(a, "-g") == 0) {
			rc = num(val, a, &v);
			f->g = (uint64_t)v;
			f->has_g = true;
		} else if (strcmp(a, "-p") == 0) {
			rc = num(val, a, &f->p);
			f->has_p = true;
		} else if (strcmp(a, "-m") == 0) {
			rc = num(val, a, &v);
			f->m = (uint64_t)v;
			f->has_m = true;
		} else if (strcmp(a, "--since") == 0) {
			rc = num(val, a, &f->since);
			f->has_since = true;
		} else if (strcmp(a, "--until") == 0) {
			rc = num(val, a, &f->until);
			f->has_until = true;
		} else if (strcmp(a, "-o") == 0) {
			f->out = val;
		} else if (strcmp(a, "-v") == 0) {
			f->invert = true;
		} else if (strcmp(a, "-c") == 0) {
			f->count = true;
		} else if (strcmp(a, "--ordered") == 0) {
			f->ordered = true;
		} else if (takes || (a[0] == '-' && a[1])) {
			rc = cli_usage(CMD, "unknown or repeated option '%s'", a);
		} else if (path) {
			rc = cli_usage(CMD, "one FILE only");
		} else {
			path = a;
		}
	}
	if (rc == CLI_OK && !path)
		rc = cli_usage(CMD, "missing FILE (or - for stdin)");
	if (rc == CLI_OK && f->count && f->out)
		rc = cli_usage(CMD, "-c and -o do not go together");
	if (rc == CLI_OK && f->ordered && f->out && strcmp(path, "-") == 0)
		rc = cli_usage(CMD, "--ordered with -o needs a FILE: a first pass finds the matching events in Go's order, a second writes them from the file's batches");
	if (rc == CLI_OK && f->has_stack) {
		if (strcmp(path, "-") == 0)
			rc = cli_usage(CMD, "--stack needs a FILE: Go writes stacks at the end of the trace, so a first pass reads them");
		else if (!(gr->stacks = load_stacks(path)))
			rc = CLI_FAIL;
	}
	bool filtered = f->has_type || f->has_g || f->has_p || f->has_m ||
			f->has_since || f->has_until || f->has_stack || f->has_str ||
			f->invert;
	if (rc == CLI_OK && f->ordered && f->out) {
		/* Go 1.22+: match in Go's order (G and P known), keep by offset. */
		rc = ordered_offsets(gr, path);
		f->ordered = false;
		filtered = true;
	}
	struct gt_in *in = NULL;
	if (rc == CLI_OK) {
		in = malloc(gt_in_size());
		if (!in || gt_open(in, path, f->ordered ? RTD_GOTRACE_ORDERED : RTD_GOTRACE_RAW) < 0) {
			free(in);
			in = NULL;
			rc = CLI_FAIL;
		}
	}
	uint64_t nmatch = 0;
	bool in_err = false;
	if (rc == CLI_OK) {
		struct rtd_gotrace_event ev;
		int r;
		while ((r = gt_next(in, &ev)) > 0) {
			note_thread(gr, &ev);
			bool m = matches(gr, &ev, gt_dec(in));
			if (m)
				nmatch++;
			if (f->out) {
				if (!gr->enc && !gr->g2) {
					gr->ver = rtd_gotrace_dec_version(gt_dec(in));
					gr->of = fopen(f->out, "wb");
					if (!gr->of) {
						rc = cli_fail("%s: %s", f->out, strerror(errno));
						break;
					}
					if (gr->ver >= 1022 && filtered) {
						if (!(gr->g2 = g2w_new(gr->of, gr->ver))) {
							rc = cli_fail("out of memory");
							break;
						}
					} else if (!(gr->enc = rtd_gotrace_enc_new(gr->ver,
								     write_file, gr->of))) {
						rc = cli_fail("%s: cannot encode this version", f->out);
						break;
					}
				}
				int e = output(gr, gt_dec(in), &ev, m, filtered);
				if (e < 0) {
					rc = cli_fail("%s: writing event at offset %" PRIu64 ": %s",
						      f->out, ev.off, rtd_strerror(e));
					break;
				}
			} else if (m && !f->count) {
				gt_print(stdout, &ev, GT_TEXT);
			}
		}
		if (r < 0) {
			rc = CLI_FAIL;
			in_err = true;
		}
	}
	gt_flush();
	cli_progress_done();
	if (gr->g2) {
		/* Damaged input: the events before the damage are kept. */
		int e = rc == CLI_OK || in_err ? g2w_finish(gr->g2) : 0;
		if (e < 0)
			rc = cli_fail("%s: %s", f->out, rtd_strerror(e));
		else if (in_err)
			cli_fail("%s: written with the matching events before the damage", f->out);
		g2w_free(gr->g2);
	}
	if (gr->enc) {
		if (rtd_gotrace_enc_flush(gr->enc) < 0 && rc == CLI_OK)
			rc = cli_fail("%s: write failed", f->out);
		rtd_gotrace_enc_free(gr->enc);
	}
	if (gr->of && fclose(gr->of) != 0 && rc == CLI_OK)
		rc = cli_fail("%s: %s", f->out, strerror(errno));
	if (f->count && rc == CLI_OK)
		printf("%" PRIu64 "\n", nmatch);
	if (in) {
		gt_close(in);
		free(in);
	}
	if (f->has_type)
		regfree(&f->type_re);
	if (f->has_stack)
		regfree(&f->stack_re);
	if (f->has_str)
		regfree(&f->str_re);
	rtd_gotrace_dec_free(gr->stacks);
	rtd_map_free(&gr->kept);
	idset_free(&gr->strs_done);
	idset_free(&gr->stacks_done);
	idset_free(&gr->strs_wanted);
	idset_free(&gr->stacks_wanted);
	free(gr->pm);
	free(gr->outg);
	free(gr);
	if (rc == CLI_OK && fflush(stdout) != 0)
		return cli_fail("stdout: %s", strerror(errno));
	return rc;
}

