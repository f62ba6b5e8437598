/* SPDX-License-Identifier: MIT */
/*
 * profiler.c - CPU profiles from Microsoft-DotNETCore-SampleProfiler
 * ThreadSample events, with the weighting of pyroscope-io/dotnetdiag's
 * SampleProfiler so that its folded outputs are reproduced exactly:
 *
 * - samples are ordered by timestamp within each sequence-point interval;
 * - per thread, a Managed sample after Managed samples weighs the time
 *   since the thread's previous Managed sample; an External sample after
 *   External samples the time since the previous External one; a change of
 *   type is weighed as the earlier type (see account());
 * - --managed-only drops the External-to-External time;
 * - a thread's first sample weighs nothing.
 *
 * Stacks are interned (one copy per distinct stack), so memory grows with
 * distinct stacks and methods, not with samples. Names are resolved at the
 * end, when the rundown has delivered every method.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nettrace/nt.h"
#include "rtdiag/profile.h"

#define PROVIDER_SAMPLES "Microsoft-DotNETCore-SampleProfiler"
#define PROVIDER_RUNTIME "Microsoft-Windows-DotNETRuntime"
#define PROVIDER_RUNDOWN "Microsoft-Windows-DotNETRuntimeRundown"

enum kind { K_NONE, K_SAMPLE, K_METHOD, K_MODULE, K_DOMAIN_MODULE };

struct pending {
	uint64_t ts;
	uint64_t tid;
	uint32_t stack; /* interned index */
	uint32_t type;
	uint64_t order;
};

struct stk {
	uint64_t hash;
	uint32_t off, n; /* in ips */
	int64_t weight;  /* ticks */
};

struct method {
	uint64_t start;
	uint32_t size;
	uint64_t module;
	char *name; /* "Namespace.Name(sig)" */
	uint64_t order;
};

struct pthread {
	int64_t last_external;
	int64_t last_managed;
};

struct rtd_nettrace_profiler {
	struct rtd_nettrace_profiler_opts o;
	const rtd_nettrace *last_dec; /* events may come from several */
	const struct rtd_nettrace_metadata *last_meta;
	enum kind last_kind;
	uint64_t sync_ticks, freq;
	bool have_info;

	struct pending *pend;
	size_t npend, pend_cap;
	uint64_t order;

	uint64_t *ips;
	size_t nips, ips_cap;
	struct stk *stacks;
	size_t nstacks, stacks_cap;
	rtd_map stack_index; /* hash -> index + 1 (probing on collision) */

	rtd_map threads;     /* tid -> struct pthread * */

	struct method *methods;
	size_t nmethods, methods_cap;
	size_t nsorted;      /* methods[0..nsorted) sorted and unique */
	rtd_map modules;     /* module id -> char * name */

	uint64_t samples;
	bool finished;
	rtd_buf tmp;
};

rtd_nettrace_profiler *
rtd_nettrace_profiler_new(const struct rtd_nettrace_profiler_opts *opts)
{
	if (opts && opts->sz == 0)
		return NULL;
	rtd_nettrace_profiler *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (opts) {
		size_t n = opts->sz < sizeof(p->o) ? opts->sz : sizeof(p->o);
		memcpy(&p->o, opts, n);
	}
	p->o.sz = sizeof(p->o);
	if (!p->o.max_stacks)
		p->o.max_stacks = 1u << 20;
	if (!p->o.max_pending)
		p->o.max_pending = 1u << 22;
	rtd_map_init(&p->stack_index, p->o.max_stacks * 2);
	rtd_map_init(&p->threads, NT_CAP_THREADS);
	rtd_map_init(&p->modules, 1u << 20);
	rtd_buf_init(&p->tmp, RTD_CAP_STRING);
	return p;
}

void rtd_nettrace_profiler_free(rtd_nettrace_profiler *p)
{
	if (!p)
		return;
	size_t it = 0;
	uint64_t k;
	void *v;
	while (rtd_map_next(&p->threads, &it, &k, &v))
		free(v);
	it = 0;
	while (rtd_map_next(&p->modules, &it, &k, &v))
		free(v);
	rtd_map_free(&p->threads);
	rtd_map_free(&p->modules);
	rtd_map_free(&p->stack_index);
	for (size_t i = 0; i < p->nmethods; i++)
		free(p->methods[i].name);
	free(p->methods);
	free(p->pend);
	free(p->ips);
	free(p->stacks);
	rtd_buf_free(&p->tmp);
	free(p);
}

uint64_t rtd_nettrace_profiler_samples(const rtd_nettrace_profiler *p)
{
	return p->samples;
}

static enum kind classify(const struct rtd_nettrace_metadata *m)
{
	if (!strcmp(m->provider, PROVIDER_SAMPLES))
		return m->event_id == 0 ? K_SAMPLE : K_NONE;
	bool rt = !strcmp(m->provider, PROVIDER_RUNTIME);
	bool rd = !strcmp(m->provider, PROVIDER_RUNDOWN);
	if (rt && m->event_id == 143)
		return K_METHOD; /* MethodLoadVerbose */
	if (rd && (m->event_id == 143 || m->event_id == 144))
		return K_METHOD; /* MethodDCStart/EndVerbose */
	if (rt && m->event_id == 152)
		return K_MODULE; /* ModuleLoad */
	if (rd && (m->event_id == 153 || m->event_id == 154))
		return K_MODULE; /* ModuleDCStart/End */
	if ((rt && m->event_id == 151) ||
	    (rd && (m->event_id == 151 || m->event_id == 152)))
		return K_DOMAIN_MODULE;
	return K_NONE;
}

/* Intern a stack (leaf first); returns its index or a negative error. */
static long intern(rtd_nettrace_profiler *p, const uint64_t *ips, size_t n)
{
	uint64_t h = n ? rtd_hash_bytes(ips, n * sizeof(*ips)) ^ n : 0;
	for (uint64_t probe = h;; probe++) {
		void *v;
		if (!rtd_map_get(&p->stack_index, probe, &v))
			break;
		struct stk *s = &p->stacks[(uintptr_t)v - 1];
		if (s->n == n &&
		    (n == 0 || !memcmp(p->ips + s->off, ips, n * sizeof(*ips))))
			return (long)((uintptr_t)v - 1);
		h = probe + 1;
	}
	if (p->nstacks >= p->o.max_stacks || p->nips + n > UINT32_MAX)
		return -RTD_E_CAP;
	if (p->nstacks == p->stacks_cap) {
		size_t nc = p->stacks_cap ? p->stacks_cap * 2 : 1024;
		struct stk *ns = realloc(p->stacks, nc * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		p->stacks = ns;
		p->stacks_cap = nc;
	}
	if (n > p->ips_cap - p->nips) {
		size_t nc = p->ips_cap ? p->ips_cap : 8192;
		while (nc < p->nips + n)
			nc *= 2;
		uint64_t *ni = realloc(p->ips, nc * sizeof(*ni));
		if (!ni)
			return -ENOMEM;
		p->ips = ni;
		p->ips_cap = nc;
	}
	if (n)
		memcpy(p->ips + p->nips, ips, n * sizeof(*ips));
	struct stk *s = &p->stacks[p->nstacks];
	s->hash = h;
	s->off = (uint32_t)p->nips;
	s->n = (uint32_t)n;
	s->weight = 0;
	p->nips += n;
	int err = rtd_map_put(&p->stack_index, h,
			      (void *)(uintptr_t)(p->nstacks + 1), NULL);
	if (err)
		return err;
	return (long)p->nstacks++;
}

/* Read a NUL-terminated UTF-16 field into tmp; false when malformed. */
static bool str16(rtd_rd *r, rtd_buf *out)
{
	return nt_read_utf16z(r, out) == 0;
}

static int add_method(rtd_nettrace_profiler *p, const struct rtd_nettrace_event *ev)
{
	rtd_rd r;
	rd_init(&r, ev->payload, ev->payload_len);
	(void)rd_u64le(&r); /* MethodID */
	uint64_t module = rd_u64le(&r);
	uint64_t start = rd_u64le(&r);
	uint32_t size = rd_u32le(&r);
	(void)rd_u32le(&r); /* token */
	(void)rd_u32le(&r); /* flags */
	if (!rd_ok(&r))
		return 0;
	rtd_buf *t = &p->tmp;
	rtd_buf ns, name;
	rtd_buf_init(&ns, RTD_CAP_STRING);
	rtd_buf_init(&name, RTD_CAP_STRING);
	int err = 0;
	if (!str16(&r, &ns) || !str16(&r, &name) || !str16(&r, t))
		goto out;
	/* "Namespace.Name" + the signature from its '(' (dotnetdiag) */
	const char *sig = rtd_buf_cstr(t);
	const char *paren = strchr(sig, '(');
	if (!paren)
		paren = sig;
	size_t len = ns.len + 1 + name.len + strlen(paren) + 1;
	char *s = malloc(len);
	if (!s) {
		err = -ENOMEM;
		goto out;
	}
	snprintf(s, len, "%s.%s%s", rtd_buf_cstr(&ns), rtd_buf_cstr(&name),
		 paren);
	if (p->nmethods == p->methods_cap) {
		size_t nc = p->methods_cap ? p->methods_cap * 2 : 1024;
		if (nc > (1u << 24)) {
			free(s);
			err = -RTD_E_CAP;
			goto out;
		}
		struct method *nm = realloc(p->methods, nc * sizeof(*nm));
		if (!nm) {
			free(s);
			err = -ENOMEM;
			goto out;
		}
		p->methods = nm;
		p->methods_cap = nc;
	}
	struct method *m = &p->methods[p->nmethods++];
	m->start = start;
	m->size = size;
	m->module = module;
	m->name = s;
	m->order = p->order++;
out:
	rtd_buf_free(&ns);
	rtd_buf_free(&name);
	return err;
}

static int add_module(rtd_nettrace_profiler *p,
		      const struct rtd_nettrace_event *ev, bool domain)
{
	rtd_rd r;
	rd_init(&r, ev->payload, ev->payload_len);
	uint64_t id = rd_u64le(&r);
	(void)rd_u64le(&r); /* AssemblyID */
	if (domain)
		(void)rd_u64le(&r); /* AppDomainID */
	(void)rd_u32le(&r); /* flags */
	(void)rd_u32le(&r); /* reserved */
	if (!rd_ok(&r) || !str16(&r, &p->tmp))
		return 0;
	/* the file name without directory and extension, as Go's
	 * filepath.Base + TrimSuffix(Ext) on the IL path */
	const char *path = rtd_buf_cstr(&p->tmp);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	const char *dot = strrchr(base, '.');
	if (dot)
		n = (size_t)(dot - base);
	char *s = malloc(n + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, base, n);
	s[n] = 0;
	void *old = NULL;
	int err = rtd_map_put(&p->modules, id, s, &old);
	if (err) {
		free(s);
		return err == -RTD_E_CAP ? 0 : err;
	}
	free(old);
	return 0;
}

int rtd_nettrace_profiler_event(rtd_nettrace_profiler *p, rtd_nettrace *dec,
				const struct rtd_nettrace_event *ev)
{
	if (p->finished)
		return -RTD_E_STATE;
	enum kind k;
	if (ev->meta == p->last_meta && dec == p->last_dec) {
		k = p->last_kind;
	} else {
		k = classify(ev->meta);
		p->last_dec = dec;
		p->last_meta = ev->meta;
		p->last_kind = k;
	}
	switch (k) {
	case K_NONE:
		return 0;
	case K_METHOD:
		return add_method(p, ev);
	case K_MODULE:
		return add_module(p, ev, false);
	case K_DOMAIN_MODULE:
		return add_module(p, ev, true);
	case K_SAMPLE:
		break;
	}
	/* the clock of the stream that carries the samples (another stream,
	 * a rundown taken aside, only gives names) */
	if (!p->have_info) {
		const struct rtd_nettrace_info *info = rtd_nettrace_info(dec);
		if (info) {
			p->sync_ticks = info->sync_ticks;
			p->freq = info->tick_freq;
			p->have_info = true;
		}
	}
	p->samples++;
	uint32_t type = 0;
	if (ev->payload_len >= 4) {
		rtd_rd r;
		rd_init(&r, ev->payload, ev->payload_len);
		type = rd_u32le(&r);
	}
	long idx = intern(p, ev->stack, ev->stack ? ev->nframes : 0);
	if (idx < 0)
		return (int)idx;
	if (p->npend >= p->o.max_pending)
		return -RTD_E_CAP;
	if (p->npend == p->pend_cap) {
		size_t nc = p->pend_cap ? p->pend_cap * 2 : 4096;
		struct pending *np = realloc(p->pend, nc * sizeof(*np));
		if (!np)
			return -ENOMEM;
		p->pend = np;
		p->pend_cap = nc;
	}
	struct pending *s = &p->pend[p->npend++];
	s->ts = ev->timestamp;
	s->tid = ev->thread_id;
	s->stack = (uint32_t)idx;
	s->type = type;
	s->order = p->order++;
	return 0;
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

enum { SAMPLE_ERROR = 0, SAMPLE_EXTERNAL = 1, SAMPLE_MANAGED = 2 };

static void managed_sample(struct pthread *t, struct stk *s, int64_t rt)
{
	if (t->last_managed > 0)
		s->weight += rt - t->last_managed;
}

static void external_sample(rtd_nettrace_profiler *p, struct pthread *t,
			    struct stk *s, int64_t rt)
{
	if (t->last_external > 0 && !p->o.managed_only)
		s->weight += rt - t->last_external;
}

/* One sample on its thread: dotnetdiag's state machine, where a thread's
 * state is Managed when last_external < 0, External when > 0, else new. */
static void account(rtd_nettrace_profiler *p, struct pthread *t,
		    const struct pending *x)
{
	int64_t rt = (int64_t)(x->ts - p->sync_ticks);
	struct stk *s = &p->stacks[x->stack];
	if (x->type == SAMPLE_MANAGED) {
		if (t->last_external == 0) {
			managed_sample(t, s, rt);
			t->last_external = -1;
		} else if (t->last_external < 0) {
			managed_sample(t, s, rt);
		} else {
			external_sample(p, t, s, rt);
			t->last_external = -rt;
		}
		t->last_managed = rt;
	} else if (x->type == SAMPLE_EXTERNAL) {
		if (t->last_external >= 0)
			external_sample(p, t, s, rt);
		else
			managed_sample(t, s, rt);
		t->last_external = rt;
	}
}

int rtd_nettrace_profiler_seqpoint(rtd_nettrace_profiler *p)
{
	if (p->finished)
		return -RTD_E_STATE;
	if (p->npend > 1)
		qsort(p->pend, p->npend, sizeof(*p->pend), cmp_pending);
	for (size_t i = 0; i < p->npend; i++) {
		const struct pending *x = &p->pend[i];
		void *v;
		struct pthread *t;
		if (rtd_map_get(&p->threads, x->tid, &v)) {
			t = v;
		} else {
			t = calloc(1, sizeof(*t));
			if (!t)
				return -ENOMEM;
			int err = rtd_map_put(&p->threads, x->tid, t, NULL);
			if (err) {
				free(t);
				return err;
			}
		}
		account(p, t, x);
	}
	p->npend = 0;
	return 0;
}

static int cmp_method(const void *a, const void *b)
{
	const struct method *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The method covering ip, or NULL. methods[] is sorted and unique. */
static const struct method *find_method(const rtd_nettrace_profiler *p,
					uint64_t ip)
{
	size_t lo = 0, hi = p->nmethods;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->methods[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct method *m = &p->methods[lo - 1];
	if (ip - m->start >= m->size)
		return NULL;
	return m;
}

static int64_t ticks_to_ns(int64_t t, uint64_t freq)
{
	if (freq == 0 || freq == 1000000000ULL)
		return t;
	bool neg = t < 0;
	uint64_t a = neg ? (uint64_t)(-t) : (uint64_t)t;
	uint64_t ns = a / freq * 1000000000ULL + a % freq * 1000000000ULL / freq;
	return neg ? -(int64_t)ns : (int64_t)ns;
}

/* Sort the methods by start address; a later record for the same start
 * wins (a method re-jitted at another tier, or code memory reused). */
static void sort_methods(rtd_nettrace_profiler *p)
{
	if (p->nsorted == p->nmethods)
		return; /* nothing new since the last take */
	if (p->nmethods > 1)
		qsort(p->methods, p->nmethods, sizeof(*p->methods), cmp_method);
	size_t w = 0;
	for (size_t i = 0; i < p->nmethods; i++) {
		if (w && p->methods[w - 1].start == p->methods[i].start) {
			free(p->methods[w - 1].name);
			p->methods[w - 1] = p->methods[i];
			continue;
		}
		p->methods[w++] = p->methods[i];
	}
	p->nmethods = w;
	p->nsorted = w;
}

/* Add every stack with weight to out, names resolved with the methods
 * known now; *unresolved counts stacks holding an address no method
 * covers. */
static int emit_stacks(rtd_nettrace_profiler *p, struct rtd_profile *out,
		       size_t *unresolved)
{
	int err = 0;
	const char **frames = NULL;
	char **owned = NULL;
	size_t cap = 0;
	rtd_buf nb;
	rtd_buf_init(&nb, RTD_CAP_LINE);
	*unresolved = 0;
	for (size_t i = 0; i < p->nstacks && !err; i++) {
		struct stk *s = &p->stacks[i];
		if (s->weight == 0)
			continue;
		if (s->n > cap) {
			size_t nc = s->n;
			const char **nf = realloc(frames, nc * sizeof(*nf));
			if (!nf) {
				err = -ENOMEM;
				break;
			}
			frames = nf;
			char **no = realloc(owned, nc * sizeof(*no));
			if (!no) {
				err = -ENOMEM;
				break;
			}
			owned = no;
			cap = nc;
		}
		size_t n = s->n;
		bool missing = false;
		for (size_t j = 0; j < n; j++)
			owned[j] = NULL;
		for (size_t j = 0; j < n && !err; j++) {
			/* frames[0] is the root: the stack's last entry */
			uint64_t ip = p->ips[s->off + n - 1 - j];
			const struct method *m = find_method(p, ip);
			if (!m) {
				frames[j] = "?!?";
				missing = true;
				continue;
			}
			void *mod;
			const char *mn = rtd_map_get(&p->modules, m->module, &mod)
						 ? mod
						 : "?";
			rtd_buf_reset(&nb);
			rtd_buf_printf(&nb, "%s!%s", mn, m->name);
			owned[j] = strdup(rtd_buf_cstr(&nb));
			if (!owned[j])
				err = -ENOMEM;
			frames[j] = owned[j];
		}
		*unresolved += missing;
		if (!err)
			err = rtd_profile_add(out, frames, n,
					      ticks_to_ns(s->weight, p->freq));
		for (size_t j = 0; j < n; j++)
			free(owned[j]);
	}
	rtd_buf_free(&nb);
	free(frames);
	free(owned);
	return err;
}

int rtd_nettrace_profiler_finish(rtd_nettrace_profiler *p,
				 struct rtd_profile *out)
{
	if (p->finished)
		return -RTD_E_STATE;
	int err = rtd_nettrace_profiler_seqpoint(p);
	if (err)
		return err;
	p->finished = true;
	sort_methods(p);
	size_t unresolved;
	return emit_stacks(p, out, &unresolved);
}

int rtd_nettrace_profiler_take(rtd_nettrace_profiler *p,
			       struct rtd_profile *out)
{
	if (p->finished)
		return -RTD_E_STATE;
	int err = rtd_nettrace_profiler_seqpoint(p);
	if (err)
		return err;
	sort_methods(p);
	size_t unresolved;
	err = emit_stacks(p, out, &unresolved);
	/* the stacks go (their weight is in @out); methods, modules and each
	 * thread's last sample stay, so the next take goes on from here */
	p->nstacks = 0;
	p->nips = 0;
	rtd_map_clear(&p->stack_index);
	return err ? err : (int)(unresolved > INT32_MAX ? INT32_MAX : unresolved);
}
