/* SPDX-License-Identifier: MIT */
/*
 * firefox.c - the Firefox Profiler's Gecko profile from records
 * (rtdiag/firefox.h). The layout is the one `perf script report gecko`
 * writes (tools/perf/scripts/python/gecko.py, Gecko profile version 24):
 * meta, libs, threads (each with its own string, frame and stack tables,
 * samples and markers, every table a {schema, data} pair), processes,
 * pausedRanges.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/map.h"
#include "rtdiag/firefox.h"

#define FF_MAX_THREADS (1u << 20)
#define FF_MAX_STRING (64u << 10) /* one frame's text */

enum { CAT_USER, CAT_KERNEL };

struct ff_sample {
	uint32_t stack;
	double t;
};

struct ff_marker {
	uint32_t name;
	double start, end;
	uint8_t phase;  /* 0 instant, 1 interval */
	bool offcpu;
};

struct ff_thread {
	uint32_t pid;
	uint64_t tid;
	const char *name;
	char **str;
	size_t nstr, cstr;
	rtd_strmap strs;   /* text -> string id + 1 */
	rtd_map frames;    /* string id -> frame id + 1 (the frame's category in cat[]) */
	uint32_t *fstr;    /* frame -> string id */
	uint8_t *fcat;
	size_t nframe, cframe;
	rtd_map stacks;    /* (prefix + 1) << 32 | frame -> stack id + 1 */
	int64_t (*stack)[2];
	size_t nstack, cstack;
	struct ff_sample *samp;
	size_t nsamp, csamp;
	struct ff_marker *mk;
	size_t nmk, cmk;
	bool open;         /* a slice begun on lane 0, not ended */
	double open_start;
	uint32_t open_name;
	bool open_offcpu;
};

struct rtd_firefox {
	char *product;
	rtd_map threads; /* tid -> struct ff_thread * */
	struct ff_thread **order;
	size_t nthreads, cthreads;
	size_t total;
	double start;
	bool started;
	rtd_buf tmp;
};

rtd_firefox *rtd_firefox_new(const struct rtd_firefox_opts *opts, int *err)
{
	struct rtd_firefox_opts o;
	int rc = rtd_opts_copy(&o, sizeof(o), opts, RTD_OPTS_END(rtd_firefox_opts, product));
	rtd_firefox *ff = rc ? NULL : calloc(1, sizeof(*ff));
	if (ff && !(ff->product = strdup(o.product ? o.product : "rtdiag"))) {
		free(ff);
		ff = NULL;
	}
	if (!ff) {
		if (err)
			*err = rc ? rc : -ENOMEM;
		return NULL;
	}
	rtd_map_init(&ff->threads, FF_MAX_THREADS);
	rtd_buf_init(&ff->tmp, FF_MAX_STRING);
	return ff;
}

static void thread_free(struct ff_thread *t)
{
	for (size_t i = 0; i < t->nstr; i++)
		free(t->str[i]);
	free(t->str);
	rtd_strmap_free(&t->strs);
	rtd_map_free(&t->frames);
	rtd_map_free(&t->stacks);
	free(t->fstr);
	free(t->fcat);
	free(t->stack);
	free(t->samp);
	free(t->mk);
	free(t);
}

void rtd_firefox_free(rtd_firefox *ff)
{
	if (!ff)
		return;
	for (size_t i = 0; i < ff->nthreads; i++)
		thread_free(ff->order[i]);
	free(ff->order);
	rtd_map_free(&ff->threads);
	rtd_buf_free(&ff->tmp);
	free(ff->product);
	free(ff);
}

static struct ff_thread *thread_of(rtd_firefox *ff, const struct rtd_record *r)
{
	void *v;
	if (rtd_map_get(&ff->threads, r->tid, &v))
		return v;
	struct ff_thread *t = calloc(1, sizeof(*t));
	struct ff_thread **o = t ? rtd_grow(ff->order, &ff->cthreads, ff->nthreads + 1,
					    sizeof(*o), 64) : NULL;
	if (!o || rtd_map_put(&ff->threads, r->tid, t, NULL)) {
		free(t);
		return NULL;
	}
	ff->order = o;
	ff->order[ff->nthreads++] = t;
	t->pid = r->pid;
	t->tid = r->tid;
	rtd_strmap_init(&t->strs, RTD_FIREFOX_MAX_SAMPLES);
	rtd_map_init(&t->frames, RTD_FIREFOX_MAX_SAMPLES);
	rtd_map_init(&t->stacks, RTD_FIREFOX_MAX_SAMPLES);
	return t;
}

/* The id of a text in the thread's string table (-1: out of memory). */
static int64_t string_id(struct ff_thread *t, const char *s, size_t n)
{
	void *v;
	if (rtd_strmap_get(&t->strs, s, n, &v))
		return (int64_t)(uintptr_t)v - 1;
	char **a = rtd_grow(t->str, &t->cstr, t->nstr + 1, sizeof(*a), 64);
	if (!a)
		return -1;
	t->str = a;
	if (!(t->str[t->nstr] = strndup(s, n)) ||
	    rtd_strmap_put(&t->strs, s, n, (void *)(uintptr_t)(t->nstr + 1))) {
		free(t->str[t->nstr]);
		return -1;
	}
	return (int64_t)t->nstr++;
}

static bool kernel_module(const char *m)
{
	return m && m[0] == '[' && strcmp(m, "[vdso]") && strcmp(m, "[jit]") &&
	       strcmp(m, "[anon]") && strcmp(m, "[unknown]");
}

static int64_t frame_id(rtd_firefox *ff, struct ff_thread *t, const struct rtd_rec_frame *f)
{
	rtd_buf *b = &ff->tmp;
	b->len = 0;
	int rc = f->name ? rtd_buf_puts(b, f->name) : rtd_buf_printf(b, "0x%llx",
								    (unsigned long long)f->ip);
	if (!rc && f->module)
		rc = rtd_buf_printf(b, " (in %s)", f->module);
	if (rc)
		return -1;
	int64_t sid = string_id(t, (const char *)b->data, b->len);
	if (sid < 0)
		return -1;
	void *v;
	if (rtd_map_get(&t->frames, (uint64_t)sid, &v))
		return (int64_t)(uintptr_t)v - 1;
	uint32_t *fs = rtd_grow(t->fstr, &t->cframe, t->nframe + 1, sizeof(*fs), 64);
	if (!fs)
		return -1;
	t->fstr = fs;
	size_t cc = t->nframe;
	uint8_t *fc = realloc(t->fcat, t->cframe);
	if (!fc)
		return -1;
	t->fcat = fc;
	t->fstr[cc] = (uint32_t)sid;
	t->fcat[cc] = kernel_module(f->module) ? CAT_KERNEL : CAT_USER;
	if (rtd_map_put(&t->frames, (uint64_t)sid, (void *)(uintptr_t)(cc + 1), NULL))
		return -1;
	return (int64_t)t->nframe++;
}

/* The stack table's entry for a record's stack, root first (-1: none). */
static int64_t stack_id(rtd_firefox *ff, struct ff_thread *t, const struct rtd_stack *st)
{
	int64_t prefix = -1;
	for (uint32_t i = st->n; i-- > 0;) {
		int64_t fr = frame_id(ff, t, &st->frames[i]);
		if (fr < 0)
			return -2;
		uint64_t key = (uint64_t)(prefix + 1) << 32 | (uint64_t)fr;
		void *v;
		if (rtd_map_get(&t->stacks, key, &v)) {
			prefix = (int64_t)(uintptr_t)v - 1;
			continue;
		}
		int64_t(*s)[2] = rtd_grow(t->stack, &t->cstack, t->nstack + 1, sizeof(*s), 64);
		if (!s)
			return -2;
		t->stack = s;
		t->stack[t->nstack][0] = prefix;
		t->stack[t->nstack][1] = fr;
		if (rtd_map_put(&t->stacks, key, (void *)(uintptr_t)(t->nstack + 1), NULL))
			return -2;
		prefix = (int64_t)t->nstack++;
	}
	return prefix;
}

static int marker(rtd_firefox *ff, struct ff_thread *t, uint32_t name, double start, double end,
		  uint8_t phase, bool offcpu)
{
	if (ff->total >= RTD_FIREFOX_MAX_SAMPLES)
		return -RTD_E_CAP;
	struct ff_marker *m = rtd_grow(t->mk, &t->cmk, t->nmk + 1, sizeof(*m), 64);
	if (!m)
		return -ENOMEM;
	t->mk = m;
	t->mk[t->nmk++] = (struct ff_marker){name, start, end, phase, offcpu};
	ff->total++;
	return 0;
}

int rtd_firefox_add(rtd_firefox *ff, const struct rtd_record *r)
{
	if (r->kind == RTD_REC_ERROR)
		return r->code;
	if (r->kind == RTD_REC_PROCESS || r->kind == RTD_REC_FLOW || r->kind == RTD_REC_COUNTER)
		return 0;
	if (r->lane)
		return 0; /* sub-tracks: not a thread's */
	struct ff_thread *t = thread_of(ff, r);
	if (!t)
		return -ENOMEM;
	double ms = (double)r->mono / 1e6;
	if (r->kind != RTD_REC_THREAD && !ff->started) {
		ff->started = true;
		ff->start = ms;
	}
	const char *nm = r->name ? r->name : "";
	switch (r->kind) {
	case RTD_REC_THREAD:
		t->name = r->name;
		return 0;
	case RTD_REC_SAMPLE:
	case RTD_REC_INSTANT:
		if (r->stack) {
			if (ff->total >= RTD_FIREFOX_MAX_SAMPLES)
				return -RTD_E_CAP;
			int64_t st = stack_id(ff, t, r->stack);
			struct ff_sample *s = st >= -1 ? rtd_grow(t->samp, &t->csamp, t->nsamp + 1,
								  sizeof(*s), 256) : NULL;
			if (!s)
				return -ENOMEM;
			t->samp = s;
			t->samp[t->nsamp++] = (struct ff_sample){(uint32_t)(st < 0 ? 0 : st), ms};
			ff->total++;
			if (st < 0)
				t->nsamp--; /* an empty stack is no sample */
		}
		if (r->kind == RTD_REC_INSTANT) {
			int64_t sid = string_id(t, nm, strlen(nm));
			return sid < 0 ? -ENOMEM : marker(ff, t, (uint32_t)sid, ms, ms, 0, false);
		}
		return 0;
	case RTD_REC_SLICE_BEGIN: {
		int64_t sid = string_id(t, nm, strlen(nm));
		if (sid < 0)
			return -ENOMEM;
		t->open = true;
		t->open_start = ms;
		t->open_name = (uint32_t)sid;
		t->open_offcpu = r->category && !strcmp(r->category, "off-cpu");
		return 0;
	}
	case RTD_REC_SLICE_END:
		if (!t->open)
			return 0;
		t->open = false;
		return marker(ff, t, t->open_name, t->open_start, ms, 1, t->open_offcpu);
	default:
		return 0;
	}
}

int rtd_firefox_pull(rtd_firefox *ff, rtd_source *src)
{
	const struct rtd_record *r;
	int rc;
	while ((rc = rtd_source_next(src, &r)) == 1)
		if ((rc = rtd_firefox_add(ff, r)))
			return rc;
	return rc;
}

static int json_str(rtd_firefox *ff, FILE *f, const char *s)
{
	ff->tmp.len = 0;
	if (rtd_buf_json_str(&ff->tmp, s, strlen(s)))
		return -ENOMEM;
	fwrite(ff->tmp.data, 1, ff->tmp.len, f);
	return 0;
}

static int write_thread(rtd_firefox *ff, FILE *f, const struct ff_thread *t)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)t->tid);
	fprintf(f, "{\"tid\":%llu,\"pid\":%u,\"name\":", (unsigned long long)t->tid, t->pid);
	if (json_str(ff, f, t->name ? t->name : buf))
		return -ENOMEM;
	fputs(",\"processType\":\"default\",\"registerTime\":0,\"unregisterTime\":null,"
	      "\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,"
	      "\"category\":4,\"data\":5},\"data\":[", f);
	for (size_t i = 0; i < t->nmk; i++) {
		const struct ff_marker *m = &t->mk[i];
		fprintf(f, "%s[%u,%.6f,", i ? "," : "", m->name, m->start);
		if (m->phase)
			fprintf(f, "%.6f,1,%d,", m->end, CAT_USER);
		else
			fprintf(f, "null,0,%d,", CAT_USER);
		if (m->offcpu) {
			fputs("{\"type\":\"OffCPU\",\"state\":", f);
			json_str(ff, f, t->str[m->name]);
			fputs("}]", f);
		} else {
			fputs("null]", f);
		}
	}
	fputs("]},\"samples\":{\"schema\":{\"stack\":0,\"time\":1,\"responsiveness\":2},\"data\":[", f);
	for (size_t i = 0; i < t->nsamp; i++)
		fprintf(f, "%s[%u,%.6f,0]", i ? "," : "", t->samp[i].stack, t->samp[i].t);
	fputs("]},\"frameTable\":{\"schema\":{\"location\":0,\"relevantForJS\":1,"
	      "\"innerWindowID\":2,\"implementation\":3,\"optimizations\":4,\"line\":5,"
	      "\"column\":6,\"category\":7,\"subcategory\":8},\"data\":[", f);
	for (size_t i = 0; i < t->nframe; i++)
		fprintf(f, "%s[%u,false,0,null,null,null,null,%u,null]", i ? "," : "", t->fstr[i],
			t->fcat[i]);
	fputs("]},\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[", f);
	for (size_t i = 0; i < t->nstack; i++) {
		if (t->stack[i][0] < 0)
			fprintf(f, "%s[null,%lld]", i ? "," : "", (long long)t->stack[i][1]);
		else
			fprintf(f, "%s[%lld,%lld]", i ? "," : "", (long long)t->stack[i][0],
				(long long)t->stack[i][1]);
	}
	fputs("]},\"stringTable\":[", f);
	for (size_t i = 0; i < t->nstr; i++) {
		if (i)
			fputc(',', f);
		if (json_str(ff, f, t->str[i]))
			return -ENOMEM;
	}
	fputs("]}", f);
	return 0;
}

int rtd_firefox_write(rtd_firefox *ff, FILE *f, size_t *samples)
{
	size_t n = 0;
	fputs("{\"meta\":{\"interval\":1,\"processType\":0,\"product\":", f);
	if (json_str(ff, f, ff->product))
		return -ENOMEM;
	fprintf(f, ",\"stackwalk\":1,\"debug\":0,\"gcpoison\":0,\"asyncstack\":1,"
		   "\"startTime\":%.6f,\"shutdownTime\":null,\"version\":24,"
		   "\"presymbolicated\":true,\"categories\":["
		   "{\"name\":\"User\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
		   "{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]}],"
		   "\"markerSchema\":[{\"name\":\"OffCPU\",\"display\":[\"marker-chart\","
		   "\"marker-table\",\"timeline-overview\"],\"tooltipLabel\":\"{marker.name}\","
		   "\"tableLabel\":\"{marker.data.state}\",\"data\":[{\"key\":\"state\","
		   "\"label\":\"State\",\"format\":\"string\"}]}]},"
		   "\"libs\":[],\"threads\":[",
		ff->started ? ff->start : 0.0);
	bool first = true;
	for (size_t i = 0; i < ff->nthreads; i++) {
		const struct ff_thread *t = ff->order[i];
		if (!t->nsamp && !t->nmk)
			continue;
		if (!first)
			fputc(',', f);
		first = false;
		int rc = write_thread(ff, f, t);
		if (rc)
			return rc;
		n += t->nsamp;
	}
	fputs("],\"processes\":[],\"pausedRanges\":[]}\n", f);
	if (samples)
		*samples = n;
	return ferror(f) ? -EIO : 0;
}
