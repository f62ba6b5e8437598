/* SPDX-License-Identifier: MIT */
/*
 * profiler.c - profiles of a .NET process from its EventPipe events:
 * thread time / CPU from Microsoft-DotNETCore-SampleProfiler ThreadSample
 * events, allocations from GC/AllocationTick, lock contention from
 * Contention/Start+Stop, exceptions from Exception/Start (thrown), waits
 * from WaitHandleWait/Start+Stop (.NET 9+). Locks and waits are one
 * mechanism: a span opened by a thread's Start (its stack kept) and closed
 * by the same thread's Stop (span_start/span_stop below).
 *
 * Two ways in, one set of handlers: a decoder's events
 * (rtd_nettrace_profiler_event(), payloads read here) or a nettrace
 * source's records (rtd_nettrace_profiler_record()/_pull(), fields read
 * by name), each read into a struct pev that the handlers take.
 *
 * Thread time follows pyroscope-io/dotnetdiag's SampleProfiler, so that its
 * folded outputs are reproduced exactly (tests/unit/nettrace/test_profile.c):
 *
 * - samples are ordered by timestamp within each sequence-point interval;
 * - per thread, a Managed sample after Managed samples weighs the time
 *   since the thread's previous Managed sample; an External sample after
 *   External samples the time since the previous External one; a change of
 *   type is weighed as the earlier type (see account());
 * - --managed-only drops the External-to-External time;
 * - a thread's first sample weighs nothing.
 *
 * The "running" mode (dotnet profile --cpu) keeps only Managed samples: the
 * thread was executing managed code when the sampler stopped it; each
 * weighs the time since the thread's previous sample.
 *
 * Stacks are interned (one copy per distinct stack) and values kept per
 * (kind, stack, thread, type name), so memory grows with distinct stacks,
 * threads and types, not with events. Names are resolved at the end, when
 * the rundown has delivered every method; methods named by a rundown taken
 * at the start or by MethodLoadVerbose during the session keep frames named
 * when the end rundown never comes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/stats.h"
#include "nettrace/clr_ids.h"
#include "nettrace/nt.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/profile.h"
#include "rtdiag/source.h"

#define PROVIDER_SAMPLES "Microsoft-DotNETCore-SampleProfiler"
#define PROVIDER_RUNTIME "Microsoft-Windows-DotNETRuntime"

enum kind {
	K_NONE,
	K_SAMPLE,
	K_NAMES, /* a method, an R2R entry point, a module: to the table */
	K_ALLOC,
	K_CONT_START,
	K_CONT_STOP,
	K_EXCEPTION,
	K_WAIT_START,
	K_WAIT_STOP,
	K_COUNT
};

/* The named fields the record path reads of a kind, at most. */
#define SHAPE_FIELDS 4u

/*
 * Where a kind's fields were in the last record of that kind: a source
 * gives every record of one event type the same array of interned names
 * (rtdiag/source.h), so a record whose first field has the same name
 * pointer and the same count has its fields at the same places. Found
 * by name once per shape, not per record.
 */
struct shape {
	const char *first; /* the first field's name (NULL: not yet seen) */
	size_t n;          /* the record's field count */
	int at[SHAPE_FIELDS]; /* each wanted field's index, or -1: absent */
};

/* Samples from records are accounted a chunk at a time while they come in
 * time order (a source sorts them): memory stays bounded without
 * sequence points. */
#define RECORD_PENDING_CHUNK 1024u
#define RECORD_KINDS_CACHE 4096u /* instant names classified, kept */

/* the profile kinds, as indexes */
enum { PK_CPU, PK_ALLOC, PK_LOCK, PK_EXCEPTION, PK_WAIT, PK_COUNT };

/* the spans a thread may have open, one of each: a contention, a wait */
enum { SPAN_LOCK, SPAN_WAIT, SPANS };

/* An open Start: when, and the thread's stack then. */
struct span {
	bool open;
	uint64_t ts;
	uint32_t stack;
};

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
	int64_t weight;  /* ticks, for the dotnetdiag view */
};

/* Values of one (kind, stack, thread, type name). */
struct entry {
	uint64_t tid;
	uint32_t stack;
	uint32_t type; /* index + 1 in names, 0 for none */
	uint8_t kind;
	int64_t v[2];
};

struct pthread {
	int64_t last_external;
	int64_t last_managed;
	int64_t last_any; /* running mode */
	int64_t all_time; /* running mode: thread time of every sample, ticks */
	struct span span[SPANS]; /* an open Contention/Start, a wait */
	/* the latest sample (dotnet stack) */
	bool sampled;
	uint32_t last_stack;
	uint64_t last_ts;
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
	bool pend_unordered; /* a pending sample came before an earlier one */

	/* the record path: a source's stack id -> interned index + 1 (0:
	 * not yet), its addresses copied out once; instant names -> kind */
	uint32_t *sid;
	size_t nsid;
	uint64_t *rips;
	size_t rips_cap;
	rtd_map rec_kinds;
	const char *last_rec_name; /* the last instant's name and kind */
	enum kind last_rec_kind;
	struct shape shapes[K_COUNT]; /* where each kind's fields were */
	rtd_nettrace_methods *src_methods; /* a source's table (borrowed) */

	uint64_t *ips;
	size_t nips, ips_cap;
	struct stk *stacks;
	size_t nstacks, stacks_cap;
	rtd_map stack_index; /* hash -> index + 1 (probing on collision) */

	struct entry *entries;
	size_t nentries, entries_cap;
	rtd_map entry_index; /* hash -> index + 1 (probing) */

	char **names; /* type names of allocations and exceptions */
	size_t nnames, names_cap;
	rtd_strmap name_index; /* name -> index + 1 */

	rtd_map threads;     /* tid -> struct pthread * */

	rtd_nettrace_methods *methods; /* code addresses' names (methods.c) */
	size_t unnamed;      /* entries emitted with an unnamed frame */

	/* running mode: each thread's CPU time in the session, as the kernel
	 * counted it (rtd_nettrace_profiler_thread_cpu()), by tid */
	struct rtd_thread_cpu *tcpu;
	size_t ntcpu;
	bool have_tcpu;
	uint64_t process_cpu_ns;

	uint64_t samples;
	uint64_t counts[PK_COUNT]; /* events read per kind */
	bool finished;
	rtd_buf tmp;
};

rtd_nettrace_profiler *
rtd_nettrace_profiler_new(const struct rtd_nettrace_profiler_opts *opts)
{
	rtd_nettrace_profiler *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (rtd_opts_copy(&p->o, sizeof(p->o), opts,
			  RTD_OPTS_END(rtd_nettrace_profiler_opts, max_entries))) {
		free(p);
		return NULL;
	}
	if (!p->o.max_stacks)
		p->o.max_stacks = 1u << 20;
	if (!p->o.max_pending)
		p->o.max_pending = 1u << 22;
	if (!p->o.max_entries)
		p->o.max_entries = 1u << 22;
	if (!p->o.kinds)
		p->o.kinds = RTD_NETTRACE_PROFILE_CPU;
	rtd_map_init(&p->stack_index, p->o.max_stacks * 2);
	rtd_map_init(&p->entry_index, p->o.max_entries * 2);
	rtd_strmap_init(&p->name_index, 1u << 20);
	rtd_map_init(&p->threads, NT_CAP_THREADS);
	rtd_map_init(&p->rec_kinds, RECORD_KINDS_CACHE);
	rtd_buf_init(&p->tmp, RTD_CAP_STRING);
	if (!(p->methods = rtd_nettrace_methods_new())) {
		rtd_nettrace_profiler_free(p);
		return NULL;
	}
	return p;
}

void rtd_nettrace_profiler_free(rtd_nettrace_profiler *p)
{
	if (!p)
		return;
	rtd_map_free_vals(&p->threads);
	rtd_map_free(&p->stack_index);
	rtd_map_free(&p->entry_index);
	rtd_map_free(&p->rec_kinds);
	free(p->sid);
	free(p->rips);
	rtd_strmap_free(&p->name_index);
	for (size_t i = 0; i < p->nnames; i++)
		free(p->names[i]);
	free(p->names);
	rtd_nettrace_methods_free(p->methods);
	free(p->pend);
	free(p->ips);
	free(p->stacks);
	free(p->entries);
	free(p->tcpu);
	rtd_buf_free(&p->tmp);
	free(p);
}

uint64_t rtd_nettrace_profiler_samples(const rtd_nettrace_profiler *p)
{
	return p->samples;
}

uint64_t rtd_nettrace_profiler_count(const rtd_nettrace_profiler *p,
				     unsigned kind)
{
	switch (kind) {
	case RTD_NETTRACE_PROFILE_CPU: return p->counts[PK_CPU];
	case RTD_NETTRACE_PROFILE_ALLOC: return p->counts[PK_ALLOC];
	case RTD_NETTRACE_PROFILE_LOCK: return p->counts[PK_LOCK];
	case RTD_NETTRACE_PROFILE_EXCEPTION: return p->counts[PK_EXCEPTION];
	case RTD_NETTRACE_PROFILE_WAIT: return p->counts[PK_WAIT];
	default: return 0;
	}
}

static enum kind classify(const rtd_nettrace_profiler *p,
			  const struct rtd_nettrace_metadata *m)
{
	unsigned kinds = p->o.kinds;
	if (!strcmp(m->provider, PROVIDER_SAMPLES))
		return m->event_id == CLR_SAMPLE_PROFILER_THREAD_SAMPLE && (kinds & RTD_NETTRACE_PROFILE_CPU)
			       ? K_SAMPLE
			       : K_NONE;
	if (nt_names_of(m))
		return K_NAMES; /* the method table's (methods.c) */
	bool rt = !strcmp(m->provider, PROVIDER_RUNTIME);
	if (rt) {
		switch (m->event_id) {
		case CLR_GC_ALLOCATION_TICK:
			return kinds & RTD_NETTRACE_PROFILE_ALLOC ? K_ALLOC : K_NONE;
		case CLR_CONTENTION_START:
			return kinds & RTD_NETTRACE_PROFILE_LOCK ? K_CONT_START
								 : K_NONE;
		case CLR_CONTENTION_STOP:
			return kinds & RTD_NETTRACE_PROFILE_LOCK ? K_CONT_STOP
								 : K_NONE;
		case CLR_EXCEPTION_START: /* thrown */
			return kinds & RTD_NETTRACE_PROFILE_EXCEPTION ? K_EXCEPTION
								      : K_NONE;
		case CLR_WAIT_HANDLE_WAIT_START:
			return kinds & RTD_NETTRACE_PROFILE_WAIT ? K_WAIT_START
								 : K_NONE;
		case CLR_WAIT_HANDLE_WAIT_STOP:
			return kinds & RTD_NETTRACE_PROFILE_WAIT ? K_WAIT_STOP
								 : K_NONE;
		default: return K_NONE;
		}
	}
	return K_NONE;
}

bool rtd_nettrace_profiler_want(void *ctx, const struct rtd_nettrace_metadata *m)
{
	enum kind k = ctx && m && m->provider ? classify(ctx, m) : K_NONE;
	/* method events name frames through the source's table, not records */
	return k != K_NONE && k != K_NAMES;
}

/* The fields each kind reads of a record (read_record()) */
static const char *const alloc_fields[] = {"AllocationAmount", "AllocationAmount64", "TypeName",
					   "ObjectSize"};
static const char *const dur_fields[] = {"DurationNs"};
static const char *const thrown_fields[] = {"ExceptionType"};
static const char *const type_fields[] = {"Type"};

size_t rtd_nettrace_profiler_fields(void *ctx, const struct rtd_nettrace_metadata *m)
{
	if (!ctx || !m || !m->provider)
		return 0;
	switch (classify(ctx, m)) {
	case K_ALLOC: return nt_fields_upto(m, alloc_fields, 4);
	case K_CONT_STOP: return nt_fields_upto(m, dur_fields, 1);
	case K_EXCEPTION: return nt_fields_upto(m, thrown_fields, 1);
	case K_SAMPLE: return nt_fields_upto(m, type_fields, 1);
	default: return 0; /* a Start, a wait's Stop: the time and stack alone */
	}
}

bool rtd_nettrace_profiler_field_want(void *ctx, const struct rtd_nettrace_metadata *m,
				      size_t i)
{
	if (!ctx || !m || !m->provider || i >= m->nfields || !m->fields[i].name)
		return false;
	const char *const *names = NULL;
	size_t n = 0;
	switch (classify(ctx, m)) {
	case K_ALLOC: names = alloc_fields, n = 4; break;
	case K_CONT_STOP: names = dur_fields, n = 1; break;
	case K_EXCEPTION: names = thrown_fields, n = 1; break;
	case K_SAMPLE: names = type_fields, n = 1; break;
	default: break;
	}
	for (size_t j = 0; j < n; j++)
		if (!strcmp(m->fields[i].name, names[j]))
			return true;
	return false;
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
	struct stk *ns = rtd_grow(p->stacks, &p->stacks_cap, p->nstacks + 1,
				  sizeof(*ns), 1024);
	if (!ns)
		return -ENOMEM;
	p->stacks = ns;
	if (n > p->ips_cap - p->nips) {
		uint64_t *ni = rtd_grow(p->ips, &p->ips_cap, p->nips + n,
					sizeof(*ni), 8192);
		if (!ni)
			return -ENOMEM;
		p->ips = ni;
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

/* Add values to the entry of (kind, stack, tid, type). */
static int add_values(rtd_nettrace_profiler *p, int kind, uint32_t stack,
		      uint64_t tid, uint32_t type, int64_t v0, int64_t v1)
{
	uint64_t h = rtd_hash_u64(((uint64_t)stack << 8 | (uint64_t)kind) ^
				  rtd_hash_u64(tid ^ ((uint64_t)type << 40)));
	for (uint64_t probe = h;; probe++) {
		void *v;
		if (!rtd_map_get(&p->entry_index, probe, &v))
			break;
		struct entry *e = &p->entries[(uintptr_t)v - 1];
		if (e->stack == stack && e->tid == tid && e->type == type &&
		    e->kind == kind) {
			e->v[0] += v0;
			e->v[1] += v1;
			return 0;
		}
		h = probe + 1;
	}
	if (p->nentries >= p->o.max_entries)
		return -RTD_E_CAP;
	struct entry *ne = rtd_grow(p->entries, &p->entries_cap,
				    p->nentries + 1, sizeof(*ne), 1024);
	if (!ne)
		return -ENOMEM;
	p->entries = ne;
	struct entry *e = &p->entries[p->nentries];
	e->tid = tid;
	e->stack = stack;
	e->type = type;
	e->kind = (uint8_t)kind;
	e->v[0] = v0;
	e->v[1] = v1;
	int err = rtd_map_put(&p->entry_index, h,
			      (void *)(uintptr_t)(p->nentries + 1), NULL);
	if (err)
		return err;
	p->nentries++;
	return 0;
}

/* The index + 1 of a type name, added when new; 0 for "". */
static long name_id(rtd_nettrace_profiler *p, const char *s)
{
	size_t n = strlen(s);
	if (!n)
		return 0;
	void *v;
	if (rtd_strmap_get(&p->name_index, s, n, &v))
		return (long)(uintptr_t)v;
	char **nn = rtd_grow(p->names, &p->names_cap, p->nnames + 1,
			     sizeof(*nn), 256);
	if (!nn)
		return -ENOMEM;
	p->names = nn;
	char *c = strdup(s);
	if (!c)
		return -ENOMEM;
	int err = rtd_strmap_put(&p->name_index, s, n,
				 (void *)(uintptr_t)(p->nnames + 1));
	if (err) {
		free(c);
		return err;
	}
	p->names[p->nnames++] = c;
	return (long)p->nnames;
}

static struct pthread *thread_of(rtd_nettrace_profiler *p, uint64_t tid,
				 int *err)
{
	void *v;
	if (rtd_map_get(&p->threads, tid, &v))
		return v;
	struct pthread *t = calloc(1, sizeof(*t));
	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = rtd_map_put(&p->threads, tid, t, NULL);
	if (*err) {
		free(t);
		return NULL;
	}
	return t;
}

/*
 * One event the builder uses, as both paths read it: a decoder's event
 * (rtd_nettrace_profiler_event(), its payload read here) or a nettrace
 * source's record (rtd_nettrace_profiler_record(), its named fields). The
 * handlers below take only this, so the two paths are the same code.
 */
struct pev {
	enum kind k;
	uint64_t tid, ts;
	const uint64_t *ips; /* the stack, leaf first, when @stack < 0 */
	size_t n;
	long stack;          /* its interned index, or -1: intern @ips */
	uint64_t freq;       /* the clock's ticks per second (0: unknown) */
	uint64_t sync_ticks;
	bool have_clock;
	uint32_t type;       /* a sample's: SAMPLE_MANAGED, _EXTERNAL */
	uint64_t amount, objsize; /* an allocation tick's */
	const char *tname;   /* the allocated or thrown type ("": none) */
	double dur_ns;       /* Contention/Stop's DurationNs, or -1 */
};

static long pev_stack(rtd_nettrace_profiler *p, const struct pev *e)
{
	return e->stack >= 0 ? e->stack : intern(p, e->ips, e->ips ? e->n : 0);
}

/* A sample of kind pk on the event's stack and type name (what was
 * allocated or thrown): values (v0, v1). */
static int add_typed(rtd_nettrace_profiler *p, const struct pev *e, int pk, int64_t v0,
		     int64_t v1)
{
	long stack = pev_stack(p, e);
	if (stack < 0)
		return (int)stack;
	long tn = name_id(p, e->tname);
	if (tn < 0)
		return (int)tn;
	p->counts[pk]++;
	return add_values(p, pk, (uint32_t)stack, e->tid, (uint32_t)tn, v0, v1);
}

/* An allocation tick: its stack, weighted by the amount it stands for;
 * the object count estimated as that amount over the object's size. */
static int add_alloc(rtd_nettrace_profiler *p, const struct pev *e)
{
	int64_t objects = e->objsize ? (int64_t)((e->amount + e->objsize / 2) / e->objsize) : 1;
	if (objects < 1)
		objects = 1;
	return add_typed(p, e, PK_ALLOC, objects, (int64_t)e->amount);
}

/*
 * A Start event opens a span on its thread: Contention/Start or
 * WaitHandleWait/Start. The span keeps the waiting thread's stack. A
 * thread blocked in one wait starts no other (on .NET 10 even
 * Monitor.Wait's Stop comes before the wait for its lock), so a second
 * Start replaces the first: its Stop was lost.
 */
static int span_start(rtd_nettrace_profiler *p, const struct pev *e, int which)
{
	int err = 0;
	struct pthread *t = thread_of(p, e->tid, &err);
	if (!t)
		return err;
	long stack = pev_stack(p, e);
	if (stack < 0)
		return (int)stack;
	t->span[which] = (struct span){.open = true, .ts = e->ts, .stack = (uint32_t)stack};
	return 0;
}

static int64_t ticks_to_ns(int64_t t, uint64_t freq);

/* The Stop on the same thread closes it: one sample of (1, delay) on the
 * Start's stack, in profile kind pk. @dur_ns >= 0 is the runtime's own
 * measure (Contention/Stop V1's DurationNs); else the two timestamps. A
 * Stop whose Start came before the session counts nothing. */
static int span_stop(rtd_nettrace_profiler *p, const struct pev *e, int which, int pk)
{
	int err = 0;
	struct pthread *t = thread_of(p, e->tid, &err);
	if (!t)
		return err;
	struct span *sp = &t->span[which];
	if (!sp->open)
		return 0; /* its Start came before the session */
	sp->open = false;
	int64_t delay;
	if (e->dur_ns >= 0 && e->dur_ns < 9.2e18) {
		delay = (int64_t)e->dur_ns;
	} else {
		int64_t d = e->ts > sp->ts ? (int64_t)(e->ts - sp->ts) : 0;
		delay = ticks_to_ns(d, e->freq);
	}
	p->counts[pk]++;
	return add_values(p, pk, sp->stack, e->tid, 0, 1, delay);
}

static int add_exception(rtd_nettrace_profiler *p, const struct pev *e)
{
	return add_typed(p, e, PK_EXCEPTION, 1, 0);
}

/* A ThreadSample: pending until the samples around it are in time order
 * (a sequence point's window, or at once from a source that sorts). */
static int add_sample(rtd_nettrace_profiler *p, const struct pev *e)
{
	/* the clock of the stream that carries the samples (another stream,
	 * a rundown taken aside, only gives names) */
	if (!p->have_info && e->have_clock) {
		p->sync_ticks = e->sync_ticks;
		p->freq = e->freq;
		p->have_info = true;
	}
	p->samples++;
	long idx = pev_stack(p, e);
	if (idx < 0)
		return (int)idx;
	if (p->npend >= p->o.max_pending)
		return -RTD_E_CAP;
	struct pending *np = rtd_grow(p->pend, &p->pend_cap, p->npend + 1, sizeof(*np), 4096);
	if (!np)
		return -ENOMEM;
	p->pend = np;
	if (p->npend && e->ts < p->pend[p->npend - 1].ts)
		p->pend_unordered = true;
	struct pending *s = &p->pend[p->npend++];
	s->ts = e->ts;
	s->tid = e->tid;
	s->stack = (uint32_t)idx;
	s->type = e->type;
	s->order = p->order++;
	return 0;
}

static int use(rtd_nettrace_profiler *p, const struct pev *e)
{
	switch (e->k) {
	case K_ALLOC: return add_alloc(p, e);
	case K_CONT_START: return span_start(p, e, SPAN_LOCK);
	case K_CONT_STOP: return span_stop(p, e, SPAN_LOCK, PK_LOCK);
	case K_WAIT_START: return span_start(p, e, SPAN_WAIT);
	case K_WAIT_STOP: return span_stop(p, e, SPAN_WAIT, PK_WAIT);
	case K_EXCEPTION: return add_exception(p, e);
	case K_SAMPLE: return add_sample(p, e);
	default: return 0;
	}
}

/* ---- from a decoder's events ---------------------------------------------- */

/* Read a NUL-terminated UTF-16 field into out; false when malformed. */
static bool str16(rtd_rd *r, rtd_buf *out)
{
	return rtd_rd_utf16z(r, out) == 0;
}

static uint64_t rd_ptr(rtd_rd *r, uint32_t psize)
{
	return psize == 4 ? rd_u32le(r) : rd_u64le(r);
}

/*
 * GC/AllocationTick (V2+): AllocationAmount u32, AllocationKind u32,
 * ClrInstanceID u16, AllocationAmount64 u64, TypeID ptr, TypeName string,
 * HeapIndex u32, [V3] Address ptr, [V4] ObjectSize u64. The runtime sends
 * one about every 100 KB allocated on a thread, for the object that
 * crossed the mark: AllocationAmount64 is what the tick stands for.
 * Returns false for a payload too short to use.
 */
static bool read_alloc(rtd_nettrace_profiler *p, rtd_nettrace *dec,
		       const struct rtd_nettrace_event *ev, struct pev *e)
{
	const struct rtd_nettrace_info *info = rtd_nettrace_info(dec);
	uint32_t ps = info && info->pointer_size == 4 ? 4 : 8;
	rtd_rd r;
	rd_init(&r, ev->payload ? ev->payload : (const uint8_t *)"", ev->payload_len);
	uint32_t amount32 = rd_u32le(&r);
	(void)rd_u32le(&r); /* AllocationKind */
	(void)rd_u16le(&r); /* ClrInstanceID */
	if (!rd_ok(&r))
		return false;
	e->amount = amount32;
	if (rd_left(&r) >= 8) {
		e->amount = rd_u64le(&r);
		(void)rd_ptr(&r, ps); /* TypeID */
		if (rd_ok(&r) && str16(&r, &p->tmp)) {
			e->tname = rtd_buf_cstr(&p->tmp);
			(void)rd_u32le(&r); /* HeapIndex */
			(void)rd_ptr(&r, ps); /* Address */
			uint64_t os = rd_u64le(&r);
			if (rd_ok(&r))
				e->objsize = os;
		}
	}
	return true;
}

/* The facts of @ev the handlers need: its payload read by kind.
 * Contention/Stop V1 adds DurationNs (double) after ContentionFlags u8
 * and ClrInstanceID u16; Exception/Start (ExceptionThrown_V1) begins
 * with ExceptionType; a ThreadSample's payload is its Type u32. */
static bool read_event(rtd_nettrace_profiler *p, rtd_nettrace *dec,
		       const struct rtd_nettrace_event *ev, struct pev *e)
{
	e->tid = ev->thread_id;
	e->ts = ev->timestamp;
	e->ips = ev->stack;
	e->n = ev->nframes;
	const struct rtd_nettrace_info *info = rtd_nettrace_info(dec);
	if (info) {
		e->freq = info->tick_freq;
		e->sync_ticks = info->sync_ticks;
		e->have_clock = true;
	}
	rtd_rd r;
	/* an event with no payload has no pointer to read from */
	rd_init(&r, ev->payload ? ev->payload : (const uint8_t *)"", ev->payload_len);
	switch (e->k) {
	case K_ALLOC: return read_alloc(p, dec, ev, e);
	case K_CONT_STOP:
		(void)rd_u8(&r);
		(void)rd_u16le(&r);
		e->dur_ns = rd_f64le(&r);
		if (!rd_ok(&r))
			e->dur_ns = -1;
		break;
	case K_EXCEPTION:
		if (str16(&r, &p->tmp))
			e->tname = rtd_buf_cstr(&p->tmp);
		break;
	case K_SAMPLE:
		if (ev->payload_len >= 4)
			e->type = rd_u32le(&r);
		break;
	default: break;
	}
	return true;
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
		k = classify(p, ev->meta);
		p->last_dec = dec;
		p->last_meta = ev->meta;
		p->last_kind = k;
	}
	if (k == K_NONE)
		return 0;
	if (k == K_NAMES)
		return rtd_nettrace_methods_event(p->methods, ev);
	struct pev e = {.k = k, .stack = -1, .tname = "", .dur_ns = -1};
	return read_event(p, dec, ev, &e) ? use(p, &e) : 0;
}

/* ---- from a nettrace source's records ------------------------------------ */

/* What a record is for the builder: by its kind, and an instant by its
 * name ("Provider/Event", interned by its source: kept by pointer). */
static enum kind classify_record(rtd_nettrace_profiler *p, const struct rtd_record *rec)
{
	if (rec->kind == RTD_REC_SAMPLE)
		return p->o.kinds & RTD_NETTRACE_PROFILE_CPU ? K_SAMPLE : K_NONE;
	if (rec->kind != RTD_REC_INSTANT || !rec->name)
		return K_NONE;
	if (rec->name == p->last_rec_name)
		return p->last_rec_kind;
	void *v;
	if (rtd_map_get(&p->rec_kinds, (uint64_t)(uintptr_t)rec->name, &v)) {
		p->last_rec_name = rec->name;
		p->last_rec_kind = (enum kind)(uintptr_t)v;
		return p->last_rec_kind;
	}
	static const struct {
		const char *name;
		enum kind k;
		unsigned want;
	} named[] = {
		{PROVIDER_RUNTIME "/GC/AllocationTick", K_ALLOC, RTD_NETTRACE_PROFILE_ALLOC},
		{PROVIDER_RUNTIME "/Contention/Start", K_CONT_START, RTD_NETTRACE_PROFILE_LOCK},
		{PROVIDER_RUNTIME "/Contention/Stop", K_CONT_STOP, RTD_NETTRACE_PROFILE_LOCK},
		{PROVIDER_RUNTIME "/Exception/Start", K_EXCEPTION, RTD_NETTRACE_PROFILE_EXCEPTION},
		{PROVIDER_RUNTIME "/WaitHandleWait/Start", K_WAIT_START, RTD_NETTRACE_PROFILE_WAIT},
		{PROVIDER_RUNTIME "/WaitHandleWait/Stop", K_WAIT_STOP, RTD_NETTRACE_PROFILE_WAIT},
	};
	enum kind k = K_NONE;
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (!strcmp(rec->name, named[i].name))
			k = p->o.kinds & named[i].want ? named[i].k : K_NONE;
	/* a cache: when it is full, classify again (same answer) */
	(void)rtd_map_put(&p->rec_kinds, (uint64_t)(uintptr_t)rec->name, (void *)(uintptr_t)k,
			  NULL);
	p->last_rec_name = rec->name;
	p->last_rec_kind = k;
	return k;
}

static int field_at(const struct rtd_record *rec, const char *name)
{
	for (size_t i = 0; i < rec->nfields; i++)
		if (!strcmp(rec->fields[i].name, name))
			return (int)i;
	return -1;
}

/* Where the fields of @names (at most SHAPE_FIELDS) are in @rec, looked
 * up by name only when the record's shape is new for kind @k. */
static inline const struct shape *shape_of(rtd_nettrace_profiler *p, enum kind k,
					   const struct rtd_record *rec,
					   const char *const *names, size_t n)
{
	struct shape *sh = &p->shapes[k];
	const char *first = rec->nfields ? rec->fields[0].name : NULL;
	if (!first || sh->first != first || sh->n != rec->nfields) {
		sh->first = first;
		sh->n = rec->nfields;
		for (size_t j = 0; j < n; j++)
			sh->at[j] = field_at(rec, names[j]);
	}
	return sh;
}

/* Field @j of a shape in @rec, or NULL: absent */
static inline const struct rtd_field *shape_field(const struct shape *sh,
						  const struct rtd_record *rec, size_t j)
{
	return sh->at[j] >= 0 ? &rec->fields[sh->at[j]] : NULL;
}

static uint64_t field_u64(const struct rtd_field *f)
{
	return f->type == RTD_FIELD_I64 ? (uint64_t)f->i
	       : f->type == RTD_FIELD_F64 ? (uint64_t)f->f
					  : f->u;
}

/* The record's stack as the builder's interned index: by the source's
 * stack id once it is known (a stack interned by the source is one id). */
static long record_stack(rtd_nettrace_profiler *p, const struct rtd_stack *st)
{
	if (!st)
		return intern(p, NULL, 0);
	if (st->id < p->nsid && p->sid[st->id])
		return (long)p->sid[st->id] - 1;
	if (st->n > p->rips_cap) {
		uint64_t *ni = rtd_grow(p->rips, &p->rips_cap, st->n, sizeof(*ni), 64);
		if (!ni)
			return -ENOMEM;
		p->rips = ni;
	}
	for (uint32_t i = 0; i < st->n; i++)
		p->rips[i] = st->frames[i].ip;
	long idx = intern(p, p->rips, st->n);
	if (idx < 0)
		return idx;
	if (st->id >= p->nsid) {
		size_t cap = p->nsid;
		uint32_t *ns = rtd_grow(p->sid, &cap, (size_t)st->id + 1, sizeof(*ns), 1024);
		if (!ns)
			return -ENOMEM;
		memset(ns + p->nsid, 0, (cap - p->nsid) * sizeof(*ns));
		p->sid = ns;
		p->nsid = cap;
	}
	p->sid[st->id] = (uint32_t)idx + 1;
	return idx;
}

/* The facts of a record the handlers need, from its named fields (the
 * payload's, as rtd_nettrace_walk() names them). */
static int read_record(rtd_nettrace_profiler *p, const struct rtd_clock *clock,
		       const struct rtd_record *rec, struct pev *e)
{
	e->tid = rec->tid;
	e->ts = (uint64_t)rec->ts;
	if (clock && clock->domain == RTD_CLOCK_QPC) {
		e->freq = clock->freq;
		e->sync_ticks = (uint64_t)clock->ref_ts;
		e->have_clock = true;
	}
	const struct shape *sh;
	const struct rtd_field *f, *f64;
	switch (e->k) {
	case K_ALLOC:
		sh = shape_of(p, e->k, rec, alloc_fields, 4);
		if (!(f = shape_field(sh, rec, 0)))
			return 0; /* too short to use */
		f64 = shape_field(sh, rec, 1);
		e->amount = field_u64(f64 ? f64 : f);
		if ((f = shape_field(sh, rec, 2)) && f->type == RTD_FIELD_STR)
			e->tname = f->s;
		if ((f = shape_field(sh, rec, 3)))
			e->objsize = field_u64(f);
		break;
	case K_CONT_STOP:
		sh = shape_of(p, e->k, rec, dur_fields, 1);
		if ((f = shape_field(sh, rec, 0)) && f->type == RTD_FIELD_F64)
			e->dur_ns = f->f;
		break;
	case K_EXCEPTION:
		sh = shape_of(p, e->k, rec, thrown_fields, 1);
		if ((f = shape_field(sh, rec, 0)) && f->type == RTD_FIELD_STR)
			e->tname = f->s;
		break;
	case K_SAMPLE:
		sh = shape_of(p, e->k, rec, type_fields, 1);
		if ((f = shape_field(sh, rec, 0)))
			e->type = (uint32_t)field_u64(f);
		break;
	default: break;
	}
	long idx = record_stack(p, rec->stack);
	if (idx < 0)
		return (int)idx;
	e->stack = idx;
	return 1;
}

int rtd_nettrace_profiler_record(rtd_nettrace_profiler *p, const struct rtd_clock *clock,
				 const struct rtd_record *rec)
{
	if (!p || !rec)
		return -RTD_E_INVAL;
	if (p->finished)
		return -RTD_E_STATE;
	if (rec->kind == RTD_REC_ERROR)
		return rec->code;
	struct pev e = {.k = classify_record(p, rec), .stack = -1, .tname = "", .dur_ns = -1};
	if (e.k == K_NONE)
		return 0;
	int rc = read_record(p, clock, rec, &e);
	if (rc <= 0)
		return rc;
	if ((rc = use(p, &e)) < 0)
		return rc;
	/* a source gives its records in time order: what is pending is in
	 * order whatever comes next, so it need not wait for a window's end
	 * (a chunk at a time: the same weights as one sort of the window) */
	if (e.k == K_SAMPLE && p->npend >= RECORD_PENDING_CHUNK &&
	    !p->pend_unordered)
		return rtd_nettrace_profiler_seqpoint(p);
	return 0;
}

/* rtd_nettrace_profiler_pull()'s walk of a source */
struct pull {
	rtd_nettrace_profiler *p;
	rtd_source *src;
	struct rtd_clock clock;
	bool have_clock;
	rtd_nettrace_tee_fn fn; /* each record first to it, or NULL */
	void *ctx;
	int rc; /* the builder's error, or fn's */
};

static int pull_one(void *ctx, const struct rtd_record *rec)
{
	struct pull *u = ctx;
	if (!u->have_clock && rec->kind != RTD_REC_PROCESS) {
		/* the header came before the first event */
		(void)rtd_source_clock(u->src, &u->clock);
		u->have_clock = true;
	}
	int rc = u->fn ? u->fn(u->ctx, &u->clock, rec) : 0;
	if (!rc)
		rc = rtd_nettrace_profiler_record(u->p, &u->clock, rec);
	if (rc < 0)
		u->rc = rc;
	return rc < 0;
}

int rtd_nettrace_profiler_pull(rtd_nettrace_profiler *p, rtd_source *src)
{
	return rtd_nettrace_profiler_pull_tee(p, src, NULL, NULL);
}

int rtd_nettrace_profiler_pull_tee(rtd_nettrace_profiler *p, rtd_source *src,
				   rtd_nettrace_tee_fn fn, void *ctx)
{
	if (!p || !src)
		return -RTD_E_INVAL;
	rtd_nettrace_methods *m = rtd_nettrace_source_methods(src);
	if (m)
		p->src_methods = m;
	/* each record handed over as the source reads it: a nettrace source
	 * in stream order makes no queue or copy of it */
	struct pull u = {.p = p, .src = src, .fn = fn, .ctx = ctx};
	int rc = rtd_source_each(src, pull_one, &u);
	if (u.rc)
		return u.rc;
	/* a live source's idle: records carry no sequence points, so what
	 * is pending is accounted here, as a decoder's sequence point would
	 * (a round's samples held, not a take's window of them) */
	if (rc == RTD_SOURCE_IDLE && p->npend) {
		int err = rtd_nettrace_profiler_seqpoint(p);
		if (err)
			return err;
	}
	return rc;
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

enum { SAMPLE_ERROR = 0, SAMPLE_EXTERNAL = 1, SAMPLE_MANAGED = 2 };

/* Thread time: the weight a sample adds to its stack (dotnetdiag). */
static int64_t managed_sample(struct pthread *t, int64_t rt)
{
	return t->last_managed > 0 ? rt - t->last_managed : 0;
}

static int64_t external_sample(rtd_nettrace_profiler *p, struct pthread *t,
			       int64_t rt)
{
	return t->last_external > 0 && !p->o.managed_only
		       ? rt - t->last_external
		       : 0;
}

/* One sample on its thread: dotnetdiag's state machine, where a thread's
 * state is Managed when last_external < 0, External when > 0, else new.
 * Returns the sample's weight in ticks. */
static int64_t account(rtd_nettrace_profiler *p, struct pthread *t,
		       const struct pending *x)
{
	int64_t rt = (int64_t)(x->ts - p->sync_ticks), w = 0;
	if (x->type == SAMPLE_MANAGED) {
		if (t->last_external == 0) {
			w = managed_sample(t, rt);
			t->last_external = -1;
		} else if (t->last_external < 0) {
			w = managed_sample(t, rt);
		} else {
			w = external_sample(p, t, rt);
			t->last_external = -rt;
		}
		t->last_managed = rt;
	} else if (x->type == SAMPLE_EXTERNAL) {
		if (t->last_external >= 0)
			w = external_sample(p, t, rt);
		else
			w = managed_sample(t, rt);
		t->last_external = rt;
	}
	return w;
}

/* Running mode: only Managed samples count, each for the time since the
 * thread's previous sample of any type; every sample's time is the
 * thread's thread time (over which its CPU time is spread). */
static int64_t account_running(struct pthread *t, const struct pending *x,
			       int64_t rt, bool *counted)
{
	int64_t w = 0;
	*counted = x->type == SAMPLE_MANAGED;
	if (t->last_any > 0)
		w = rt - t->last_any;
	t->last_any = rt;
	t->all_time += w;
	return *counted ? w : 0;
}

int rtd_nettrace_profiler_seqpoint(rtd_nettrace_profiler *p)
{
	if (p->finished)
		return -RTD_E_STATE;
	/* samples that came in time order are in (time, arrival) order */
	if (p->npend > 1 && p->pend_unordered)
		qsort(p->pend, p->npend, sizeof(*p->pend), cmp_pending);
	for (size_t i = 0; i < p->npend; i++) {
		const struct pending *x = &p->pend[i];
		int err = 0;
		struct pthread *t = thread_of(p, x->tid, &err);
		if (!t)
			return err;
		if (!t->sampled || x->ts >= t->last_ts) {
			t->sampled = true;
			t->last_ts = x->ts;
			t->last_stack = x->stack;
		}
		int64_t w;
		bool counted = true;
		if (p->o.running_only) {
			int64_t rt = (int64_t)(x->ts - p->sync_ticks);
			/* keep rt > 0 as "seen" */
			w = account_running(t, x, rt > 0 ? rt : 1, &counted);
		} else {
			w = account(p, t, x);
		}
		if (!counted)
			continue;
		p->stacks[x->stack].weight += w;
		p->counts[PK_CPU]++;
		err = add_values(p, PK_CPU, x->stack, x->tid, 0, 1, w);
		if (err)
			return err;
	}
	p->npend = 0;
	p->pend_unordered = false;
	return 0;
}

static int64_t ticks_to_ns(int64_t t, uint64_t freq);
static int finish(rtd_nettrace_profiler *p);

static int cmp_tcpu(const void *a, const void *b)
{
	const struct rtd_thread_cpu *x = a, *y = b;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static const struct rtd_thread_cpu *tcpu_find(const struct rtd_thread_cpu *v,
					      size_t n, int64_t tid)
{
	struct rtd_thread_cpu k = {.tid = tid};
	return n ? bsearch(&k, v, n, sizeof(*v), cmp_tcpu) : NULL;
}

int rtd_nettrace_profiler_thread_cpu(rtd_nettrace_profiler *p,
				     const struct rtd_thread_cpu *before,
				     size_t nbefore,
				     const struct rtd_thread_cpu *after,
				     size_t nafter)
{
	if (!p || !p->o.running_only || (nbefore && !before) ||
	    (nafter && !after))
		return -RTD_E_INVAL;
	struct rtd_thread_cpu *b = NULL, *d = NULL;
	if (nbefore && !(b = malloc(nbefore * sizeof(*b))))
		return -ENOMEM;
	if (nafter && !(d = malloc(nafter * sizeof(*d)))) {
		free(b);
		return -ENOMEM;
	}
	if (nbefore) {
		memcpy(b, before, nbefore * sizeof(*b));
		qsort(b, nbefore, sizeof(*b), cmp_tcpu);
	}
	uint64_t total = 0;
	for (size_t i = 0; i < nafter; i++) {
		/* a thread born in the session ran all its time in it */
		const struct rtd_thread_cpu *o = tcpu_find(b, nbefore, after[i].tid);
		uint64_t ns = o && o->ns <= after[i].ns ? after[i].ns - o->ns
			      : o ? 0 : after[i].ns;
		d[i] = (struct rtd_thread_cpu){.tid = after[i].tid, .ns = ns};
		total += ns;
	}
	if (nafter)
		qsort(d, nafter, sizeof(*d), cmp_tcpu);
	free(b);
	free(p->tcpu);
	p->tcpu = d;
	p->ntcpu = nafter;
	p->have_tcpu = true;
	p->process_cpu_ns = total;
	return 0;
}

/* A CPU entry's value in ns: its thread time, or with the kernel's
 * figures its share of the thread's CPU time (0 for a thread the kernel
 * gave none for: it ended during the session). */
static int64_t cpu_value(rtd_nettrace_profiler *p, const struct entry *e)
{
	int64_t tt = ticks_to_ns(e->v[1], p->freq);
	if (!p->have_tcpu)
		return tt;
	void *v;
	const struct rtd_thread_cpu *c = tcpu_find(p->tcpu, p->ntcpu,
						   (int64_t)e->tid);
	if (!c || !rtd_map_get(&p->threads, e->tid, &v))
		return 0;
	const struct pthread *t = v;
	int64_t all = ticks_to_ns(t->all_time, p->freq);
	if (all <= 0)
		return 0;
	return (int64_t)((long double)c->ns * (long double)tt / (long double)all);
}

int rtd_nettrace_profiler_cpu_stats(rtd_nettrace_profiler *p,
				    struct rtd_nettrace_cpu_stats *out)
{
	/* an older caller's shorter struct gets the fields it knows */
	struct rtd_nettrace_cpu_stats all = {.sz = sizeof(all)}, *st = &all;
	if (!p || !out || out->sz < sizeof(size_t))
		return -RTD_E_INVAL;
	int err = finish(p);
	if (err)
		return err;
	st->kernel_known = p->have_tcpu;
	st->process_ns = p->process_cpu_ns;
	for (size_t i = 0; i < p->nentries; i++) {
		const struct entry *e = &p->entries[i];
		if (e->kind != PK_CPU)
			continue;
		st->thread_ns += (uint64_t)ticks_to_ns(e->v[1], p->freq);
		st->placed_ns += (uint64_t)cpu_value(p, e);
	}
	/* the sampled threads: their CPU time, and those with none known */
	size_t it = 0;
	uint64_t tid;
	void *v;
	while (p->have_tcpu && rtd_map_next(&p->threads, &it, &tid, &v)) {
		const struct pthread *t = v;
		if (!t->last_any)
			continue;
		const struct rtd_thread_cpu *c = tcpu_find(p->tcpu, p->ntcpu,
							   (int64_t)tid);
		if (c)
			st->sampled_ns += c->ns;
		else
			st->threads_unknown++;
	}
	return rtd_stats_copy(out, st, sizeof(*st));
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

/* Account what is pending; once. */
static int finish(rtd_nettrace_profiler *p)
{
	if (p->finished)
		return 0;
	int err = rtd_nettrace_profiler_seqpoint(p);
	if (err)
		return err;
	p->finished = true;
	return 0;
}

/* "module!Namespace.Method(sig)" of ip into nb; false when no method
 * covers it. */
static bool frame_name(rtd_nettrace_profiler *p, uint64_t ip, rtd_buf *nb)
{
	struct nt_method_hit h;
	if (!nt_methods_find(p->methods, ip, &h) &&
	    (!p->src_methods || !nt_methods_find(p->src_methods, ip, &h)))
		return false;
	rtd_buf_reset(nb);
	if (!h.module_id) /* an R2R entry point: its module is not given */
		rtd_buf_puts(nb, h.name);
	else
		rtd_buf_printf(nb, "%s!%s", h.module ? h.module : "?", h.name);
	return true;
}

int rtd_nettrace_profiler_finish(rtd_nettrace_profiler *p,
				 struct rtd_profile *out)
{
	if (p->finished)
		return -RTD_E_STATE;
	int err = finish(p);
	if (err)
		return err;
	const char **frames = NULL;
	char **owned = NULL;
	size_t cap = 0;
	rtd_buf nb;
	rtd_buf_init(&nb, RTD_CAP_LINE);
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
		for (size_t j = 0; j < n; j++)
			owned[j] = NULL;
		for (size_t j = 0; j < n && !err; j++) {
			/* frames[0] is the root: the stack's last entry */
			uint64_t ip = p->ips[s->off + n - 1 - j];
			if (!frame_name(p, ip, &nb)) {
				frames[j] = "?!?";
				continue;
			}
			owned[j] = strdup(rtd_buf_cstr(&nb));
			if (!owned[j])
				err = -ENOMEM;
			frames[j] = owned[j];
		}
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

/* The sample types of a kind's profile. */
static const struct rtd_profile_type *kind_types(const rtd_nettrace_profiler *p,
						 int pk, size_t *n)
{
	static const struct rtd_profile_type wall[] = {
		{"samples", "count"}, {"wall", "nanoseconds"}};
	static const struct rtd_profile_type cpu[] = {
		{"samples", "count"}, {"cpu", "nanoseconds"}};
	static const struct rtd_profile_type alloc[] = {
		{"alloc_objects", "count"}, {"alloc_space", "bytes"}};
	static const struct rtd_profile_type lock[] = {
		{"contentions", "count"}, {"delay", "nanoseconds"}};
	static const struct rtd_profile_type exc[] = {
		{"exceptions", "count"}};
	*n = 2;
	switch (pk) {
	case PK_CPU: return p->o.running_only ? cpu : wall;
	case PK_ALLOC: return alloc;
	case PK_LOCK:
	case PK_WAIT: return lock; /* Go's mutex and block profiles alike */
	default: *n = 1; return exc;
	}
}

const char *rtd_nettrace_profile_kind_name(unsigned kind)
{
	switch (kind) {
	case RTD_NETTRACE_PROFILE_CPU: return "cpu";
	case RTD_NETTRACE_PROFILE_ALLOC: return "alloc";
	case RTD_NETTRACE_PROFILE_LOCK: return "lock";
	case RTD_NETTRACE_PROFILE_EXCEPTION: return "exception";
	case RTD_NETTRACE_PROFILE_WAIT: return "wait";
	default: return NULL;
	}
}

int rtd_nettrace_profile_kinds(const char *list, unsigned *kinds,
			       const char **bad, size_t *badlen)
{
	unsigned k = 0;
	for (const char *s = list; *s;) {
		size_t n = strcspn(s, ",");
		unsigned bit = 0;
		for (unsigned b = 1; b <= RTD_NETTRACE_PROFILE_WAIT && !bit; b <<= 1) {
			const char *w = rtd_nettrace_profile_kind_name(b);
			if (strlen(w) == n && !strncmp(w, s, n))
				bit = b;
		}
		if (!bit) {
			if (bad)
				*bad = s;
			if (badlen)
				*badlen = n;
			return -RTD_E_INVAL;
		}
		k |= bit;
		s += n;
		if (*s == ',')
			s++;
	}
	*kinds = k;
	return 0;
}

static int pk_of(unsigned kind)
{
	switch (kind) {
	case RTD_NETTRACE_PROFILE_CPU: return PK_CPU;
	case RTD_NETTRACE_PROFILE_ALLOC: return PK_ALLOC;
	case RTD_NETTRACE_PROFILE_LOCK: return PK_LOCK;
	case RTD_NETTRACE_PROFILE_EXCEPTION: return PK_EXCEPTION;
	case RTD_NETTRACE_PROFILE_WAIT: return PK_WAIT;
	default: return -1;
	}
}

/* Add one entry to out as a sample with structured frames. */
static int emit_entry(rtd_nettrace_profiler *p, const struct entry *e,
		      rtd_profile *out, struct rtd_frame **fr, size_t *cap,
		      rtd_buf *names, uint32_t **offs, size_t *offcap)
{
	const struct stk *s = &p->stacks[e->stack];
	size_t n = s->n + (e->type ? 1 : 0);
	if (n > *cap) {
		struct rtd_frame *nf = realloc(*fr, n * sizeof(**fr));
		if (!nf)
			return -ENOMEM;
		*fr = nf;
		*cap = n;
	}
	if (n > *offcap) {
		uint32_t *no = realloc(*offs, n * sizeof(**offs));
		if (!no)
			return -ENOMEM;
		*offs = no;
		*offcap = n;
	}
	/* names of the frames, leaf first, into one buffer (offsets, as it
	 * may move while it grows) */
	rtd_buf_reset(names);
	rtd_buf nb;
	rtd_buf_init(&nb, RTD_CAP_LINE);
	size_t k = 0;
	int err = 0;
	if (e->type) {
		/* what was allocated or thrown, as the leaf */
		(*offs)[k] = (uint32_t)names->len;
		err = rtd_buf_append(names, p->names[e->type - 1],
				     strlen(p->names[e->type - 1]) + 1);
		(*fr)[k] = (struct rtd_frame){.kind = RTD_FRAME_OTHER};
		k++;
	}
	for (size_t j = 0; j < s->n && !err; j++, k++) {
		uint64_t ip = p->ips[s->off + j];
		(*fr)[k] = (struct rtd_frame){.addr = ip,
					      .kind = RTD_FRAME_MANAGED};
		if (frame_name(p, ip, &nb)) {
			const char *c = rtd_buf_cstr(&nb);
			(*offs)[k] = (uint32_t)names->len;
			err = rtd_buf_append(names, c, strlen(c) + 1);
		} else {
			(*offs)[k] = UINT32_MAX;
			(*fr)[k].kind = RTD_FRAME_UNKNOWN;
		}
	}
	rtd_buf_free(&nb);
	if (err)
		return err;
	bool unnamed = false;
	for (size_t j = 0; j < n; j++) {
		unnamed |= (*offs)[j] == UINT32_MAX;
		(*fr)[j].name = (*offs)[j] == UINT32_MAX
					? "?!?"
					: (const char *)names->data + (*offs)[j];
	}
	p->unnamed += unnamed;
	int64_t v[2] = {e->v[0], e->v[1]};
	if (e->kind == PK_CPU)
		v[1] = cpu_value(p, e);
	struct rtd_sample smp = {
		.sz = sizeof(smp), .frames = *fr, .nframes = n,
		.leaf_first = true, .values = v,
		.nvalues = e->kind == PK_EXCEPTION ? 1 : 2, .tid = (int64_t)e->tid};
	return rtd_profile_add_sample(out, &smp);
}

/* A new profile of kind pk from the entries there are. */
static rtd_profile *build_kind(rtd_nettrace_profiler *p, int pk, int *errp)
{
	int err = 0;
	size_t nt;
	const struct rtd_profile_type *types = kind_types(p, pk, &nt);
	struct rtd_profile_opts po = {.sz = sizeof(po), .types = types,
				      .ntypes = nt, .default_type = nt - 1};
	rtd_profile *out = rtd_profile_new2(&po);
	if (!out) {
		*errp = -ENOMEM;
		return NULL;
	}
	struct rtd_frame *fr = NULL;
	uint32_t *offs = NULL;
	size_t cap = 0, offcap = 0;
	rtd_buf names;
	rtd_buf_init(&names, RTD_CAP_STRING);
	for (size_t i = 0; i < p->nentries && !err; i++) {
		const struct entry *e = &p->entries[i];
		if (e->kind == pk)
			err = emit_entry(p, e, out, &fr, &cap, &names, &offs,
					 &offcap);
	}
	rtd_buf_free(&names);
	free(fr);
	free(offs);
	if (err) {
		rtd_profile_free(out);
		*errp = err;
		return NULL;
	}
	return out;
}

rtd_profile *rtd_nettrace_profiler_profile(rtd_nettrace_profiler *p,
					   unsigned kind, int *errp)
{
	int err = 0, pk = pk_of(kind);
	rtd_profile *out = NULL;
	if (pk < 0 || !(p->o.kinds & kind)) {
		err = -RTD_E_INVAL;
		goto fail;
	}
	err = finish(p);
	if (err)
		goto fail;
	out = build_kind(p, pk, &err);
	if (!out)
		goto fail;
	return out;
fail:
	if (errp)
		*errp = err;
	return NULL;
}

/* Drop the stacks and values taken: keep only the stacks threads still
 * point at (an open contention or wait, the latest sample), interned
 * again. */
static int drop_taken(rtd_nettrace_profiler *p)
{
	size_t n = p->threads.count, k = 0, it = 0;
	struct keep {
		struct pthread *t;
		int what; /* 0: the latest sample; 1 + SPAN_*: a span */
		uint64_t *ips;
		uint32_t n;
	} *keep = calloc((1 + SPANS) * n + 1, sizeof(*keep));
	if (!keep)
		return -ENOMEM;
	uint64_t tid;
	void *v;
	int err = 0;
	while (!err && rtd_map_next(&p->threads, &it, &tid, &v)) {
		struct pthread *t = v;
		for (int c = 0; c < 1 + SPANS; c++) {
			bool want = c ? t->span[c - 1].open : t->sampled;
			if (!want)
				continue;
			const struct stk *s =
				&p->stacks[c ? t->span[c - 1].stack : t->last_stack];
			keep[k] = (struct keep){t, c, NULL, s->n};
			if (s->n && !(keep[k].ips = malloc(s->n * sizeof(uint64_t)))) {
				err = -ENOMEM;
				break;
			}
			if (s->n)
				memcpy(keep[k].ips, p->ips + s->off,
				       s->n * sizeof(uint64_t));
			k++;
		}
	}
	if (!err) {
		p->nentries = 0;
		rtd_map_clear(&p->entry_index);
		p->nstacks = 0;
		p->nips = 0;
		rtd_map_clear(&p->stack_index);
		if (p->nsid) /* the indexes are new */
			memset(p->sid, 0, p->nsid * sizeof(*p->sid));
	}
	for (size_t i = 0; i < k; i++) {
		if (!err) {
			long idx = intern(p, keep[i].ips, keep[i].n);
			if (idx < 0)
				err = (int)idx;
			else if (keep[i].what)
				keep[i].t->span[keep[i].what - 1].stack =
					(uint32_t)idx;
			else
				keep[i].t->last_stack = (uint32_t)idx;
		}
		free(keep[i].ips);
	}
	free(keep);
	return err;
}

int rtd_nettrace_profiler_take(rtd_nettrace_profiler *p,
			       struct rtd_profile **out)
{
	for (int pk = 0; pk < PK_COUNT; pk++)
		out[pk] = NULL;
	if (p->finished)
		return -RTD_E_STATE;
	int err = rtd_nettrace_profiler_seqpoint(p);
	if (err)
		return err;
	p->unnamed = 0;
	for (int pk = 0; pk < PK_COUNT && !err; pk++) {
		if (!(p->o.kinds & (1u << pk)) && !(pk == PK_CPU && !p->o.kinds))
			continue;
		bool any = false;
		for (size_t i = 0; i < p->nentries && !any; i++)
			any = p->entries[i].kind == pk;
		if (any)
			out[pk] = build_kind(p, pk, &err);
	}
	if (!err)
		err = drop_taken(p);
	if (err) {
		for (int pk = 0; pk < PK_COUNT; pk++) {
			rtd_profile_free(out[pk]);
			out[pk] = NULL;
		}
		return err;
	}
	return p->unnamed > INT32_MAX ? INT32_MAX : (int)p->unnamed;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int rtd_nettrace_profiler_thread_stacks(rtd_nettrace_profiler *p,
					rtd_nettrace_thread_stack_fn fn,
					void *ctx)
{
	int err = finish(p);
	if (err)
		return err;
	size_t n = p->threads.count, k = 0, it = 0;
	uint64_t *tids = malloc((n ? n : 1) * sizeof(*tids)), key;
	if (!tids)
		return -ENOMEM;
	void *v;
	while (k < n && rtd_map_next(&p->threads, &it, &key, &v))
		if (((struct pthread *)v)->sampled)
			tids[k++] = key;
	qsort(tids, k, sizeof(*tids), cmp_u64);
	const char **frames = NULL;
	rtd_buf names, nb;
	rtd_buf_init(&names, RTD_CAP_STRING);
	rtd_buf_init(&nb, RTD_CAP_LINE);
	size_t *offs = NULL;
	for (size_t i = 0; i < k && !err; i++) {
		rtd_map_get(&p->threads, tids[i], &v);
		const struct stk *s = &p->stacks[((struct pthread *)v)->last_stack];
		const char **nf = realloc(frames, (s->n + 1) * sizeof(*nf));
		size_t *no = realloc(offs, (s->n + 1) * sizeof(*no));
		if (nf)
			frames = nf;
		if (no)
			offs = no;
		if (!nf || !no) {
			err = -ENOMEM;
			break;
		}
		rtd_buf_reset(&names);
		for (size_t j = 0; j < s->n && !err; j++) {
			offs[j] = SIZE_MAX;
			if (frame_name(p, p->ips[s->off + j], &nb)) {
				const char *c = rtd_buf_cstr(&nb);
				offs[j] = names.len;
				err = rtd_buf_append(&names, c, strlen(c) + 1);
			}
		}
		for (size_t j = 0; j < s->n; j++)
			frames[j] = offs[j] == SIZE_MAX
					    ? "?!?"
					    : (const char *)names.data + offs[j];
		if (!err)
			err = fn(ctx, tids[i], frames, s->n);
	}
	rtd_buf_free(&names);
	rtd_buf_free(&nb);
	free(frames);
	free(offs);
	free(tids);
	return err;
}
