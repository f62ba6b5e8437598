/* SPDX-License-Identifier: MIT */
/*
 * methods.c - names for managed code addresses, learnt from the trace's
 * own method and module events: MethodLoadVerbose (runtime, as methods are
 * jitted) and MethodDCStart/StopVerbose (rundown, every method alive), and
 * ModuleLoad / ModuleDCStart/Stop for module names. A name reads
 * "module!Namespace.Method(signature)" as TraceEvent and dotnetdiag show
 * frames. Precompiled (ReadyToRun) code gets no MethodLoad: its
 * R2RGetEntryPoint event (runtime, CompilationDiagnostic keyword) names it
 * without a size or module, so it is taken to run to the next method
 * known (at most 64 KiB) and a sized record at the same address wins,
 * as the nettrace profiler names such frames in profiles.
 *
 * Methods arrive in any order while lookups go on (cat prints stacks as it
 * goes), so the table is a sorted part plus a short unsorted tail that is
 * merged in when it grows: adding stays cheap and a lookup is a binary
 * search plus a scan of at most NT_METHODS_TAIL entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nettrace/clr_ids.h"
#include "common/map.h"
#include "nettrace/nt.h"

#define NT_METHODS_TAIL 256u
#define NT_CAP_METHODS (1u << 24)        /* methods kept */
#define NT_CAP_METHOD_NAMES (256u << 20) /* bytes of their names */
#define NT_R2R_MAX_SIZE 0x10000u         /* an unsized entry point's reach */

struct mth {
	uint64_t start;
	uint32_t size;   /* 0: an R2R entry point, up to the next method */
	uint32_t order;  /* later definitions of one address win */
	uint64_t module;
	size_t name;     /* offset in names */
	uint32_t reach;  /* sorted entry points: bytes to the next start */
};

struct rtd_nettrace_methods {
	struct mth *v, *tmp;
	size_t n, sorted, cap;
	uint32_t order;
	size_t tail_r2r; /* entry points in the unsorted tail */
	rtd_buf names;   /* "Namespace.Method(sig)\0" ... */
	rtd_map modules; /* module id -> malloc'd short name */
	rtd_buf s16;     /* UTF-16 conversion scratch */
	rtd_buf out;     /* the last name handed out */
	uint64_t changes; /* method and module events taken */
};

rtd_nettrace_methods *rtd_nettrace_methods_new(void)
{
	rtd_nettrace_methods *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	rtd_buf_init(&m->names, NT_CAP_METHOD_NAMES);
	rtd_map_init(&m->modules, 1u << 20);
	rtd_buf_init(&m->s16, RTD_CAP_STRING);
	rtd_buf_init(&m->out, RTD_CAP_STRING * 2);
	return m;
}

void rtd_nettrace_methods_free(rtd_nettrace_methods *m)
{
	if (!m)
		return;
	rtd_map_free_vals(&m->modules);
	rtd_buf_free(&m->names);
	rtd_buf_free(&m->s16);
	rtd_buf_free(&m->out);
	free(m->v);
	free(m->tmp);
	free(m);
}

size_t rtd_nettrace_methods_count(const rtd_nettrace_methods *m)
{
	return m->n;
}

uint64_t nt_methods_changes(const rtd_nettrace_methods *m)
{
	return m->changes;
}

static int cmp_mth(const void *a, const void *b)
{
	const struct mth *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Sort the tail and merge it into the sorted part. */
static void merge_tail(rtd_nettrace_methods *m)
{
	if (m->sorted == m->n)
		return;
	qsort(m->v + m->sorted, m->n - m->sorted, sizeof(*m->v), cmp_mth);
	size_t i = 0, j = m->sorted, o = 0;
	while (i < m->sorted && j < m->n)
		m->tmp[o++] = cmp_mth(&m->v[j], &m->v[i]) < 0 ? m->v[j++]
							       : m->v[i++];
	while (i < m->sorted)
		m->tmp[o++] = m->v[i++];
	while (j < m->n)
		m->tmp[o++] = m->v[j++];
	struct mth *t = m->v;
	m->v = m->tmp;
	m->tmp = t;
	m->sorted = m->n;
	m->tail_r2r = 0;
	/* an entry point runs to the next start (records at one start are
	 * adjacent), at most NT_R2R_MAX_SIZE */
	for (size_t i = 0, next = 0; i < m->n; i++) {
		if (next <= i)
			for (next = i + 1; next < m->n &&
					   m->v[next].start == m->v[i].start;)
				next++;
		uint64_t d = next < m->n ? m->v[next].start - m->v[i].start : 0;
		m->v[i].reach = !d || d > NT_R2R_MAX_SIZE ? NT_R2R_MAX_SIZE
							  : (uint32_t)d;
	}
}

static bool str16(rtd_nettrace_methods *m, rtd_rd *r)
{
	return rtd_rd_utf16z(r, &m->s16) == 0;
}

/* Append "Namespace.Name(sig)\0" read from r to the names; *at gets its
 * offset. Returns 0, 1 when r is malformed (nothing kept), or an error. */
static int read_name(rtd_nettrace_methods *m, rtd_rd *r, size_t *at)
{
	*at = m->names.len;
	/* "Namespace.Name" then the signature from its '(' (as TraceEvent
	 * and dotnetdiag print frames) */
	if (!str16(m, r))
		return 1;
	int err = rtd_buf_append(&m->names, m->s16.data, m->s16.len);
	if (!err && !str16(m, r))
		goto bad;
	if (!err && m->names.len > *at)
		err = rtd_buf_putc(&m->names, '.');
	if (!err)
		err = rtd_buf_append(&m->names, m->s16.data, m->s16.len);
	if (!err && !str16(m, r))
		goto bad;
	if (!err) {
		const char *sig = rtd_buf_cstr(&m->s16);
		const char *paren = strchr(sig, '(');
		err = rtd_buf_append(&m->names, paren ? paren : "",
				     paren ? strlen(paren) + 1 : 1);
	}
	if (err)
		m->names.len = *at;
	return err;
bad:
	m->names.len = *at;
	return 1;
}

static int push(rtd_nettrace_methods *m, uint64_t start, uint32_t size,
		uint64_t module, size_t at)
{
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 1024;
		if (nc > NT_CAP_METHODS)
			return -RTD_E_CAP;
		struct mth *nv = realloc(m->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		m->v = nv;
		nv = realloc(m->tmp, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		m->tmp = nv;
		m->cap = nc;
	}
	m->v[m->n++] = (struct mth){start, size, m->order++, module, at, 0};
	m->tail_r2r += size == 0;
	if (m->n - m->sorted > NT_METHODS_TAIL)
		merge_tail(m);
	return 0;
}

static int add_method(rtd_nettrace_methods *m, const uint8_t *p, size_t n)
{
	rtd_rd r;
	rd_init(&r, p, n);
	(void)rd_u64le(&r); /* MethodID */
	uint64_t module = rd_u64le(&r);
	uint64_t start = rd_u64le(&r);
	uint32_t size = rd_u32le(&r);
	(void)rd_u32le(&r); /* MethodToken */
	(void)rd_u32le(&r); /* MethodFlags */
	if (!rd_ok(&r))
		return 0; /* a size of 0 is kept: it reaches as an entry point does */
	size_t at;
	int err = read_name(m, &r, &at);
	if (err)
		return err < 0 ? err : 0;
	return push(m, start, size, module, at);
}

/* R2RGetEntryPoint: MethodID, Namespace, Name, Signature, EntryPoint. */
static int add_r2r(rtd_nettrace_methods *m, const uint8_t *p, size_t n)
{
	rtd_rd r;
	rd_init(&r, p, n);
	(void)rd_u64le(&r); /* MethodID */
	size_t at;
	int err = read_name(m, &r, &at);
	if (err)
		return err < 0 ? err : 0;
	uint64_t entry = rd_u64le(&r);
	if (!rd_ok(&r) || !entry) {
		m->names.len = at;
		return 0;
	}
	return push(m, entry, 0, 0, at);
}

static int add_module(rtd_nettrace_methods *m, const uint8_t *p, size_t n,
		      bool domain)
{
	rtd_rd r;
	rd_init(&r, p, n);
	uint64_t id = rd_u64le(&r);
	(void)rd_u64le(&r); /* AssemblyID */
	if (domain)
		(void)rd_u64le(&r); /* AppDomainID */
	(void)rd_u32le(&r); /* ModuleFlags */
	(void)rd_u32le(&r); /* Reserved1 */
	if (!rd_ok(&r) || !str16(m, &r))
		return 0;
	/* the IL file's name without folder and extension */
	const char *path = rtd_buf_cstr(&m->s16);
	const char *base = path;
	for (const char *q = path; *q; q++)
		if (*q == '/' || *q == '\\')
			base = q + 1;
	size_t len = strlen(base);
	const char *dot = strrchr(base, '.');
	if (dot && dot != base)
		len = (size_t)(dot - base);
	char *s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, base, len);
	s[len] = 0;
	void *old = NULL;
	int err = rtd_map_put(&m->modules, id, s, &old);
	if (err) {
		free(s);
		return err == -RTD_E_CAP ? 0 : err;
	}
	free(old);
	return 0;
}

enum nt_names nt_names_of(const struct rtd_nettrace_metadata *md)
{
	const char *p = md->provider;
	bool rt = !strcmp(p, "Microsoft-Windows-DotNETRuntime");
	bool rd = !rt && !strcmp(p, "Microsoft-Windows-DotNETRuntimeRundown");
	if (!rt && !rd)
		return NT_NAMES_NONE;
	uint32_t id = md->event_id;
	if (rt)
		return id == CLR_METHOD_LOAD_VERBOSE ? NT_NAMES_METHOD
		       : id == CLR_METHOD_R2R_GET_ENTRY_POINT ? NT_NAMES_R2R
		       : id == CLR_LOADER_MODULE_LOAD ? NT_NAMES_MODULE
		       : id == CLR_LOADER_DOMAIN_MODULE_LOAD ? NT_NAMES_DOMAIN_MODULE
							     : NT_NAMES_NONE;
	switch (id) {
	case CLR_RUNDOWN_METHOD_DC_START_VERBOSE:
	case CLR_RUNDOWN_METHOD_DC_STOP_VERBOSE:
		return NT_NAMES_METHOD;
	case CLR_RUNDOWN_LOADER_MODULE_DC_START:
	case CLR_RUNDOWN_LOADER_MODULE_DC_STOP:
		return NT_NAMES_MODULE;
	case CLR_RUNDOWN_LOADER_DOMAIN_MODULE_DC_START:
	case CLR_RUNDOWN_LOADER_DOMAIN_MODULE_DC_STOP:
		return NT_NAMES_DOMAIN_MODULE;
	}
	return NT_NAMES_NONE;
}

int rtd_nettrace_methods_event(rtd_nettrace_methods *m,
			       const struct rtd_nettrace_event *ev)
{
	enum nt_names what = nt_names_of(ev->meta);
	if (what != NT_NAMES_NONE)
		m->changes++;
	switch (what) {
	case NT_NAMES_METHOD:
		return add_method(m, ev->payload, ev->payload_len);
	case NT_NAMES_R2R:
		return add_r2r(m, ev->payload, ev->payload_len);
	case NT_NAMES_MODULE:
		return add_module(m, ev->payload, ev->payload_len, false);
	case NT_NAMES_DOMAIN_MODULE:
		return add_module(m, ev->payload, ev->payload_len, true);
	default:
		return 0;
	}
}

/* The index of the first sorted record that starts after s. */
static size_t upper(const rtd_nettrace_methods *m, uint64_t s)
{
	size_t lo = 0, hi = m->sorted;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].start <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first method start after s (sorted part and tail), 0 for none. */
static uint64_t next_start(const rtd_nettrace_methods *m, uint64_t s)
{
	size_t lo = upper(m, s);
	uint64_t next = lo < m->sorted ? m->v[lo].start : 0;
	for (size_t i = m->sorted; i < m->n; i++)
		if (m->v[i].start > s && (!next || m->v[i].start < next))
			next = m->v[i].start;
	return next;
}

/* Does x hold ip? An entry point without a size runs to the next method
 * (worked out when it was merged into the sorted part; lookups merge a
 * tail that holds one, so the walk below is for a table used otherwise). */
static bool covers(const rtd_nettrace_methods *m, const struct mth *x,
		   uint64_t ip)
{
	if (ip < x->start)
		return false;
	if (x->size)
		return ip - x->start < x->size;
	if (x->reach)
		return ip - x->start < x->reach;
	if (ip - x->start >= NT_R2R_MAX_SIZE)
		return false;
	uint64_t next = next_start(m, x->start);
	uint64_t size = next ? next - x->start : 0;
	if (!size || size > NT_R2R_MAX_SIZE)
		size = NT_R2R_MAX_SIZE;
	return ip - x->start < size;
}

/* Of two records covering one address: the later start; at one start a
 * sized record over an entry point, else the later definition. */
static bool better(const struct mth *x, const struct mth *best)
{
	if (!best || x->start != best->start)
		return !best || x->start > best->start;
	if (!x->size != !best->size)
		return x->size != 0;
	return x->order > best->order;
}

bool nt_methods_find(rtd_nettrace_methods *m, uint64_t ip,
		     struct nt_method_hit *hit)
{
	/* an entry point's reach needs the starts after it: worked out once
	 * by a merge rather than by every lookup scanning the tail */
	if (m->tail_r2r)
		merge_tail(m);
	const struct mth *best = NULL;
	size_t lo = upper(m, ip);
	/* the records at the greatest start at or below ip */
	for (size_t k = lo; k > 0 && m->v[k - 1].start == m->v[lo - 1].start; k--)
		if (covers(m, &m->v[k - 1], ip) && better(&m->v[k - 1], best))
			best = &m->v[k - 1];
	for (size_t i = m->sorted; i < m->n; i++) {
		const struct mth *x = &m->v[i];
		if (covers(m, x, ip) && better(x, best))
			best = x;
	}
	if (!best)
		return false;
	void *mod = NULL;
	hit->name = (const char *)m->names.data + best->name;
	hit->module_id = best->module;
	hit->module = best->module && rtd_map_get(&m->modules, best->module, &mod)
			      ? mod
			      : NULL;
	return true;
}

const char *rtd_nettrace_methods_name(rtd_nettrace_methods *m, uint64_t ip)
{
	struct nt_method_hit h;
	if (!nt_methods_find(m, ip, &h))
		return NULL;
	rtd_buf_reset(&m->out);
	if (h.module) {
		rtd_buf_puts(&m->out, h.module);
		rtd_buf_putc(&m->out, '!');
	}
	rtd_buf_puts(&m->out, h.name);
	return rtd_buf_cstr(&m->out);
}

/* ---- names matched the way people type them -------------------------- */

bool rtd_nettrace_glob(const char *pat, const char *s)
{
	/* '*' matches any run; letters match in any case (iterative, with
	 * one backtrack point: linear in practice) */
	const char *star = NULL, *resume = NULL;
	while (*s) {
		if (*pat == '*') {
			star = pat++;
			resume = s;
			continue;
		}
		char a = *pat, b = *s;
		if (a >= 'A' && a <= 'Z')
			a = (char)(a - 'A' + 'a');
		if (b >= 'A' && b <= 'Z')
			b = (char)(b - 'A' + 'a');
		if (a && a == b) {
			pat++;
			s++;
			continue;
		}
		if (!star)
			return false;
		pat = star + 1;
		s = ++resume;
	}
	while (*pat == '*')
		pat++;
	return *pat == 0;
}
