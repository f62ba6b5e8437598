/* SPDX-License-Identifier: MIT */
/*
 * analysis_summary.c - goroutine statistics, user regions and tasks.
 *
 * Go 1.19 (old-format traces): internal/trace/goroutines.go
 * GoroutineStats over the ordered events, and the task side of
 * cmd/trace/annotations.go (analyzeAnnotations).
 * Go 1.22+ (and old-format traces read as Go 1.23 does): the Summarizer
 * of internal/trace/summary.go over the state tracker's events.
 *
 * Go keeps every goroutine, region and task to the end. Here a goroutine
 * is given to the caller and forgotten when Go finalizes it (its end, or
 * the end of the trace), a region when it ends, a task when it has ended
 * and none of its regions is open; what is kept is what is alive, plus
 * one aggregate per goroutine group.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotrace/analysis_int.h"
#include "gotrace/gotrace_int.h"

/* ---- small maps of names ------------------------------------------------ */

int64_t *ga_kvs_find(const struct ga_kvs *m, const char *k)
{
	for (uint32_t i = 0; i < m->n; i++)
		if (m->e[i].k == k)
			return &m->e[i].v;
	return NULL;
}

int ga_kvs_set(struct ga_kvs *m, const char *k, int64_t v)
{
	int64_t *p = ga_kvs_find(m, k);
	if (p) {
		*p = v;
		return 0;
	}
	if (m->n == m->cap) {
		uint32_t nc = m->cap ? m->cap * 2 : 4;
		struct ga_kv *e = realloc(m->e, nc * sizeof(*e));
		if (!e)
			return -ENOMEM;
		m->e = e;
		m->cap = nc;
	}
	m->e[m->n++] = (struct ga_kv){k, v};
	return 0;
}

int ga_kvs_add(struct ga_kvs *m, const char *k, int64_t v)
{
	int64_t *p = ga_kvs_find(m, k);
	if (p) {
		*p += v;
		return 0;
	}
	return ga_kvs_set(m, k, v);
}

void ga_kvs_del(struct ga_kvs *m, const char *k)
{
	for (uint32_t i = 0; i < m->n; i++)
		if (m->e[i].k == k) {
			m->e[i] = m->e[--m->n];
			return;
		}
}

int ga_kvs_copy(struct ga_kvs *dst, const struct ga_kvs *src)
{
	/* src's keys are distinct: its entries as they are, in their order */
	dst->n = 0;
	if (src->n > dst->cap) {
		uint32_t nc = dst->cap ? dst->cap : 4;
		while (nc < src->n)
			nc *= 2;
		struct ga_kv *e = realloc(dst->e, nc * sizeof(*e));
		if (!e)
			return -ENOMEM;
		dst->e = e;
		dst->cap = nc;
	}
	if (src->n)
		memcpy(dst->e, src->e, src->n * sizeof(*src->e));
	dst->n = src->n;
	return 0;
}

void ga_kvs_free(struct ga_kvs *m)
{
	free(m->e);
	memset(m, 0, sizeof(*m));
}

/* ---- state ----------------------------------------------------------------- */

/* Go 1.19's GExecutionStat */
struct st1 {
	int64_t exec, sched, io, block, syscall, gc, sweep, total;
};

/* Go 1.22+'s GoroutineExecStats */
struct st2 {
	int64_t exec, sched, syscall, syscall_block, total;
	struct ga_kvs block; /* by reason */
	struct ga_kvs range; /* by range name */
};

struct region {
	uint64_t task;
	const char *name;
	int64_t start; /* -1: none */
	const char *frame_fn;
	uint64_t frame_pc;
	bool in_task; /* counted in its task's open regions */
	struct st1 s1;
	struct st2 s2;
};

struct gsum {
	uint64_t id;
	const char *name;
	uint64_t pc;
	int64_t creation, start, end;
	bool finalized;
	/* Go 1.19 */
	struct st1 s1;
	int64_t gc_base; /* GC time before creation */
	int64_t last_start, block_net, block_sync, block_syscall, block_sweep, block_sched;
	uint64_t create_pc; /* the start function, named at the first start */
	const char *create_fn;
	/* Go 1.22+ */
	struct st2 s2;
	int64_t last_runnable, last_block, last_syscall, last_syscall_block;
	const char *last_block_reason;
	struct ga_kvs last_range;
	/* open regions, innermost last */
	struct region *reg;
	uint32_t nreg, capreg;
};

struct task {
	uint64_t id;
	const char *name;
	uint64_t parent;
	bool has_parent;
	int64_t start, end; /* -1: not in the trace */
	bool begun, ended;
	uint64_t nregions, nlogs;
	uint32_t open; /* regions of it still open */
	uint64_t *gs;  /* goroutines that touched it */
	uint32_t ngs, capgs;
	struct st1 s1;
	struct st2 s2;
};

struct group {
	const char *name;
	uint64_t pc;
	uint64_t count;
	int64_t exec, total;
	struct ga_kvs stats, ranges;
};

struct ga_sum {
	struct ga_ctx *c;
	bool v2;       /* Go 1.22+'s Summarizer */
	bool sys_empty; /* Go 1.23: a goroutine without a name is a system one */
	bool starts_only; /* the profiles want only each goroutine's StartTime */
	struct rtd_vmap gs;    /* id -> struct gsum * */
	struct gsum *last_g; /* gfind()'s last */
	struct rtd_vmap tasks; /* id -> struct task * */
	struct rtd_vmap groups; /* key -> struct group * */
	/* Go 1.19 */
	int64_t gc_start, gc_done; /* running GC's start (0: none), completed GC time */
	bool gc_running;
	/* Go 1.22+ */
	int64_t sync_ts, last_ts;
	struct rtd_vmap sys_p; /* P -> goroutine in a syscall on it */
	struct rtd_vmap sys_g; /* goroutine -> its P */
	struct rtd_vmap ranges_p; /* hash(P, name) -> goroutine */
	struct rtd_vmap block_names; /* reason -> "Block time (reason)" */
	/* output scratch */
	struct rtd_goan_stat *out;
	size_t nout, capout;
	/* names */
	const char *s_exec, *s_sched, *s_sysexec, *s_sysblock, *s_unknown, *s_forever, *s_empty;
	/* a region's end: the stats now and its part (reused, not freed) */
	struct st2 scr_now, scr_d;
	const char *n1[7];
};

enum { N1_EXEC, N1_IO, N1_BLOCK, N1_SYSCALL, N1_SCHED, N1_SWEEP, N1_GC };
static const char *const n1_names[7] = {
	"Execution", "Network wait", "Sync block", "Blocking syscall",
	"Scheduler wait", "GC sweeping", "GC pause",
};

static void st2_free(struct st2 *s)
{
	ga_kvs_free(&s->block);
	ga_kvs_free(&s->range);
}

static void gsum_free(struct gsum *g)
{
	if (!g)
		return;
	st2_free(&g->s2);
	ga_kvs_free(&g->last_range);
	for (uint32_t i = 0; i < g->nreg; i++)
		st2_free(&g->reg[i].s2);
	free(g->reg);
	free(g);
}

static void task_free(struct task *t)
{
	if (!t)
		return;
	free(t->gs);
	st2_free(&t->s2);
	free(t);
}

struct ga_sum *ga_sum_new(struct ga_ctx *c)
{
	struct ga_sum *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->c = c;
	s->v2 = c->sem != RTD_GOAN_GO119;
	s->sys_empty = c->sem == RTD_GOAN_GO123;
	s->starts_only = !(c->o.what & (RTD_GOAN_GOROUTINES | RTD_GOAN_TASKS));
	rtd_vmap_init(&s->gs, sizeof(struct gsum *), RTD_GOAN_MAX_GOROUTINES);
	rtd_vmap_init(&s->tasks, sizeof(struct task *), RTD_GOAN_MAX_GOROUTINES);
	rtd_vmap_init(&s->groups, sizeof(struct group *), 0);
	rtd_vmap_init(&s->sys_p, sizeof(uint64_t), 0);
	rtd_vmap_init(&s->sys_g, sizeof(int64_t), 0);
	rtd_vmap_init(&s->ranges_p, sizeof(uint64_t), 0);
	rtd_vmap_init(&s->block_names, sizeof(const char *), 4096);
	struct ga_strs *st = &c->strs;
	s->s_exec = ga_intern(st, "Execution time", 14);
	s->s_sched = ga_intern(st, "Sched wait time", 15);
	s->s_sysexec = ga_intern(st, "Syscall execution time", 22);
	s->s_sysblock = ga_intern(st, "Block time (syscall)", 20);
	s->s_unknown = ga_intern(st, "Unknown time", 12);
	s->s_forever = ga_intern(st, "forever", 7); /* the tracker's reasons are interned */
	s->s_empty = ga_intern(st, "", 0);
	for (int i = 0; i < 7; i++)
		s->n1[i] = ga_intern(st, n1_names[i], strlen(n1_names[i]));
	return s;
}

void ga_sum_free(struct ga_sum *s)
{
	if (!s)
		return;
	size_t it = 0;
	void **v;
	while ((v = rtd_vmap_next(&s->gs, &it, NULL)))
		gsum_free(*v);
	it = 0;
	while ((v = rtd_vmap_next(&s->tasks, &it, NULL)))
		task_free(*v);
	it = 0;
	while ((v = rtd_vmap_next(&s->groups, &it, NULL))) {
		struct group *g = *v;
		ga_kvs_free(&g->stats);
		ga_kvs_free(&g->ranges);
		free(g);
	}
	rtd_vmap_free(&s->gs);
	rtd_vmap_free(&s->tasks);
	rtd_vmap_free(&s->groups);
	rtd_vmap_free(&s->sys_p);
	rtd_vmap_free(&s->sys_g);
	rtd_vmap_free(&s->ranges_p);
	rtd_vmap_free(&s->block_names);
	st2_free(&s->scr_now);
	st2_free(&s->scr_d);
	free(s->out);
	free(s);
}

#define NOMEM(s) ga_fail((s)->c, -ENOMEM, "out of memory")

static struct gsum *gfind(struct ga_sum *s, uint64_t id)
{
	/* the last one found (a goroutine's events come in runs); drop_g()
	 * forgets it */
	if (s->last_g && s->last_g->id == id)
		return s->last_g;
	struct gsum **p = rtd_vmap_get(&s->gs, id, false, NULL, NULL);
	if (!p)
		return NULL;
	s->last_g = *p;
	return *p;
}

static struct task *tfind(struct ga_sum *s, uint64_t id)
{
	struct task **p = rtd_vmap_get(&s->tasks, id, false, NULL, NULL);
	return p ? *p : NULL;
}

static struct task *tget(struct ga_sum *s, uint64_t id)
{
	bool created;
	int err = -ENOMEM;
	struct task **p = rtd_vmap_get(&s->tasks, id, true, &created, &err);
	if (!p) {
		ga_fail(s->c, err, err == -RTD_E_CAP ? "more than %u open tasks" : "out of memory",
			RTD_GOAN_MAX_GOROUTINES);
		return NULL;
	}
	if (created) {
		*p = calloc(1, sizeof(**p));
		if (!*p) {
			rtd_vmap_del(&s->tasks, id);
			NOMEM(s);
			return NULL;
		}
		(*p)->id = id;
		(*p)->name = ga_intern(&s->c->strs, "", 0);
		(*p)->start = (*p)->end = -1;
	}
	return *p;
}

static int task_touch(struct task *t, uint64_t g)
{
	for (uint32_t i = 0; i < t->ngs; i++)
		if (t->gs[i] == g)
			return 0;
	if (t->ngs == t->capgs) {
		uint32_t nc = t->capgs ? t->capgs * 2 : 4;
		uint64_t *p = realloc(t->gs, nc * sizeof(*p));
		if (!p)
			return -ENOMEM;
		t->gs = p;
		t->capgs = nc;
	}
	t->gs[t->ngs++] = g;
	return 0;
}

/* ---- stats as the caller sees them ----------------------------------------- */

static int out_add(struct ga_sum *s, const char *name, int64_t ns, bool overlaps)
{
	for (size_t i = 0; i < s->nout; i++)
		if (s->out[i].name == name) {
			s->out[i].ns += ns;
			return 0;
		}
	if (s->nout == s->capout) {
		size_t nc = s->capout ? s->capout * 2 : 16;
		struct rtd_goan_stat *o = realloc(s->out, nc * sizeof(*o));
		if (!o)
			return -ENOMEM;
		s->out = o;
		s->capout = nc;
	}
	s->out[s->nout++] = (struct rtd_goan_stat){name, ns, overlaps};
	return 0;
}

static int cmp_stat(const void *a, const void *b)
{
	const struct rtd_goan_stat *x = a, *y = b;
	if (x->overlaps != y->overlaps)
		return x->overlaps ? 1 : -1;
	return strcmp(x->name, y->name);
}

static const char *block_name(struct ga_sum *s, const char *reason)
{
	/* reasons are interned: one formatted name each */
	bool created;
	const char **c = rtd_vmap_get(&s->block_names, (uint64_t)(uintptr_t)reason, true, &created, NULL);
	if (c && !created)
		return *c;
	char buf[300];
	int n = snprintf(buf, sizeof(buf), "Block time (%s)", reason);
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = (int)sizeof(buf) - 1;
	const char *r = ga_intern(&s->c->strs, buf, (size_t)n);
	if (c) {
		if (r)
			*c = r;
		else
			rtd_vmap_del(&s->block_names, (uint64_t)(uintptr_t)reason);
	}
	return r;
}

/* Go 1.22+: NonOverlappingStats() and the ranges, "Execution time" first,
 * then by name as the goroutine page orders its columns. */
static int out_st2(struct ga_sum *s, const struct st2 *st)
{
	s->nout = 0;
	int rc = out_add(s, s->s_exec, st->exec, false);
	rc |= out_add(s, s->s_sched, st->sched, false);
	rc |= out_add(s, s->s_sysexec, st->syscall, false);
	rc |= out_add(s, s->s_sysblock, st->syscall_block, false);
	int64_t sum = st->exec + st->sched + st->syscall + st->syscall_block;
	for (uint32_t i = 0; i < st->block.n; i++) {
		const char *n = block_name(s, st->block.e[i].k);
		if (!n)
			return NOMEM(s);
		rc |= out_add(s, n, st->block.e[i].v, false);
		sum += st->block.e[i].v;
	}
	rc |= out_add(s, s->s_unknown, sum < st->total ? st->total - sum : 0, false);
	for (uint32_t i = 0; i < st->range.n; i++)
		rc |= out_add(s, st->range.e[i].k, st->range.e[i].v, true);
	if (rc)
		return NOMEM(s);
	if (s->nout > 2)
		qsort(s->out + 1, s->nout - 1, sizeof(*s->out), cmp_stat);
	return 0;
}

/* Go 1.19: the goroutine page's columns, in its order. */
static int out_st1(struct ga_sum *s, const struct st1 *st)
{
	const int64_t v[7] = {st->exec, st->io, st->block, st->syscall, st->sched, st->sweep, st->gc};
	s->nout = 0;
	for (int i = 0; i < 7; i++)
		if (out_add(s, s->n1[i], v[i], i >= N1_SWEEP) < 0)
			return NOMEM(s);
	return 0;
}

static int group_add(struct ga_sum *s, const struct rtd_goan_goroutine *g)
{
	uint64_t key = s->v2 ? (uint64_t)(uintptr_t)g->name : g->pc;
	bool created;
	int err = -ENOMEM;
	struct group **p = rtd_vmap_get(&s->groups, key, true, &created, &err);
	if (!p)
		return NOMEM(s);
	if (created) {
		*p = calloc(1, sizeof(**p));
		if (!*p) {
			rtd_vmap_del(&s->groups, key);
			return NOMEM(s);
		}
	}
	struct group *gr = *p;
	gr->name = g->name;
	gr->pc = s->v2 ? 0 : g->pc;
	gr->count++;
	gr->exec += g->exec;
	gr->total += g->total;
	for (size_t i = 0; i < g->nstats; i++)
		if (ga_kvs_add(g->stats[i].overlaps ? &gr->ranges : &gr->stats, g->stats[i].name,
			       g->stats[i].ns) < 0)
			return NOMEM(s);
	return 0;
}

static int emit_goroutine(struct ga_sum *s, struct gsum *g)
{
	int rc = s->v2 ? out_st2(s, &g->s2) : out_st1(s, &g->s1);
	if (rc < 0)
		return rc;
	struct rtd_goan_goroutine o = {
		.id = g->id, .name = g->name, .pc = g->pc, .creation = g->creation,
		.start = g->start, .end = g->end,
		.total = s->v2 ? g->s2.total : g->s1.total,
		.exec = s->v2 ? g->s2.exec : g->s1.exec,
		.stats = s->out, .nstats = s->nout,
	};
	if (s->c->o.on_goroutine)
		s->c->o.on_goroutine(&o, s->c->o.ctx);
	return group_add(s, &o);
}

/* A task has ended and none of its regions is open: give it out. */
static int task_done(struct ga_sum *s, struct task *t, bool force)
{
	if (!force && (!t->ended || t->open))
		return 0;
	int rc = s->v2 ? out_st2(s, &t->s2) : out_st1(s, &t->s1);
	if (rc < 0)
		return rc;
	struct rtd_goan_task o = {
		.id = t->id, .name = t->name, .parent = t->has_parent ? t->parent : 0,
		.start = t->start, .end = t->end, .goroutines = t->ngs,
		.regions = t->nregions, .logs = t->nlogs, .stats = s->out, .nstats = s->nout,
	};
	if (s->c->o.on_task)
		s->c->o.on_task(&o, s->c->o.ctx);
	rtd_vmap_del(&s->tasks, t->id);
	task_free(t);
	return 0;
}

static int st2_sub(struct st2 *r, const struct st2 *a, const struct st2 *b);

/* A region ends (or the trace does): give it out, add it to its task. */
static int region_done(struct ga_sum *s, uint64_t g, struct region *r, int64_t end)
{
	int rc = 0;
	if (s->c->o.on_region) {
		if ((rc = s->v2 ? out_st2(s, &r->s2) : out_st1(s, &r->s1)) < 0)
			return rc;
		struct rtd_goan_region o = {
			.g = g, .task = r->task, .name = r->name, .start = r->start, .end = end,
			.frame_fn = r->frame_fn, .frame_pc = r->frame_pc, .stats = s->out,
			.nstats = s->nout,
		};
		s->c->o.on_region(&o, s->c->o.ctx);
	}
	if (!r->in_task)
		return 0;
	struct task *t = tfind(s, r->task);
	if (!t)
		return 0;
	t->nregions++;
	if (s->v2) {
		t->s2.exec += r->s2.exec;
		t->s2.sched += r->s2.sched;
		t->s2.syscall += r->s2.syscall;
		t->s2.syscall_block += r->s2.syscall_block;
		t->s2.total += r->s2.total;
		for (uint32_t i = 0; i < r->s2.block.n; i++)
			rc |= ga_kvs_add(&t->s2.block, r->s2.block.e[i].k, r->s2.block.e[i].v);
		for (uint32_t i = 0; i < r->s2.range.n; i++)
			rc |= ga_kvs_add(&t->s2.range, r->s2.range.e[i].k, r->s2.range.e[i].v);
		if (rc)
			return NOMEM(s);
	} else {
		t->s1.exec += r->s1.exec;
		t->s1.sched += r->s1.sched;
		t->s1.io += r->s1.io;
		t->s1.block += r->s1.block;
		t->s1.syscall += r->s1.syscall;
		t->s1.gc += r->s1.gc;
		t->s1.sweep += r->s1.sweep;
		t->s1.total += r->s1.total;
	}
	if (t->open)
		t->open--;
	return task_done(s, t, false);
}

static int push_region(struct ga_sum *s, struct gsum *g, struct region *r)
{
	if (g->nreg >= RTD_GOAN_MAX_REGIONS)
		return ga_fail(s->c, -RTD_E_CAP, "goroutine %llu has more than %u open regions",
			       (unsigned long long)g->id, RTD_GOAN_MAX_REGIONS);
	if (g->nreg == g->capreg) {
		uint32_t nc = g->capreg ? g->capreg * 2 : 4;
		struct region *p = realloc(g->reg, nc * sizeof(*p));
		if (!p)
			return NOMEM(s);
		g->reg = p;
		g->capreg = nc;
	}
	g->reg[g->nreg++] = *r;
	return 0;
}

/* The top frame of the decoder's stack (a region's fingerprint). */
static void top_frame(struct ga_sum *s, uint32_t stack, const char **fn, uint64_t *pc)
{
	*fn = s->s_empty;
	*pc = 0;
	if (ga_stack_len(&s->c->stacks, stack)) {
		const struct ga_frame *f = ga_stack_frame(&s->c->stacks, stack, 0);
		*fn = f->fn;
		*pc = f->pc;
	}
}

/* ---- Go 1.22+: the Summarizer ------------------------------------------------ */

static int st2_sub(struct st2 *r, const struct st2 *a, const struct st2 *b)
{
	/* r = a - b over a's keys (Go's sub); b may be NULL (a copy) */
	r->exec = a->exec - (b ? b->exec : 0);
	r->sched = a->sched - (b ? b->sched : 0);
	r->syscall = a->syscall - (b ? b->syscall : 0);
	r->syscall_block = a->syscall_block - (b ? b->syscall_block : 0);
	r->total = a->total - (b ? b->total : 0);
	if (ga_kvs_copy(&r->block, &a->block) < 0 || ga_kvs_copy(&r->range, &a->range) < 0)
		return -ENOMEM;
	if (b) {
		for (uint32_t i = 0; i < r->block.n; i++) {
			int64_t *v = ga_kvs_find(&b->block, r->block.e[i].k);
			r->block.e[i].v -= v ? *v : 0;
		}
		for (uint32_t i = 0; i < r->range.n; i++) {
			int64_t *v = ga_kvs_find(&b->range, r->range.e[i].k);
			r->range.e[i].v -= v ? *v : 0;
		}
	}
	return 0;
}

/* snapshotStat: the stats as of ts, pending times included */
static int snap2(struct gsum *g, int64_t ts, struct st2 *r)
{
	if (st2_sub(r, &g->s2, NULL) < 0)
		return -ENOMEM;
	if (g->finalized)
		return 0;
	if (g->s2.total == 0)
		r->total = ts - g->creation;
	if (g->last_start)
		r->exec += ts - g->last_start;
	if (g->last_runnable)
		r->sched += ts - g->last_runnable;
	if (g->last_block && ga_kvs_add(&r->block, g->last_block_reason, ts - g->last_block) < 0)
		return -ENOMEM;
	if (g->last_syscall)
		r->syscall += ts - g->last_syscall;
	if (g->last_syscall_block)
		r->sched += ts - g->last_syscall_block;
	for (uint32_t i = 0; i < g->last_range.n; i++)
		if (ga_kvs_add(&r->range, g->last_range.e[i].k, ts - g->last_range.e[i].v) < 0)
			return -ENOMEM;
	return 0;
}

static bool is_system(struct ga_sum *s, const char *fn)
{
	if (!*fn)
		return s->sys_empty;
	return strcmp(fn, "runtime.main") != 0 && strncmp(fn, "runtime.", 8) == 0;
}

/* finalize: the goroutine ends (trigger) or the trace does */
static int finalize2(struct ga_sum *s, struct gsum *g, int64_t ts, bool trigger)
{
	if (trigger)
		g->end = ts;
	struct st2 fin = {0};
	if (snap2(g, ts, &fin) < 0)
		return NOMEM(s);
	st2_free(&g->s2);
	g->s2 = fin;
	int rc = 0;
	if (!is_system(s, g->name)) {
		for (uint32_t i = 0; i < g->nreg && rc == 0; i++) {
			struct region *r = &g->reg[i];
			struct st2 d = {0};
			if (st2_sub(&d, &fin, &r->s2) < 0) {
				st2_free(&d);
				return NOMEM(s);
			}
			st2_free(&r->s2);
			r->s2 = d;
			rc = region_done(s, g->id, r, trigger ? ts : -1);
		}
	} else {
		for (uint32_t i = 0; i < g->nreg; i++) {
			struct task *t = g->reg[i].in_task ? tfind(s, g->reg[i].task) : NULL;
			if (t && t->open && --t->open == 0 && (rc = task_done(s, t, false)) < 0)
				return rc;
		}
	}
	for (uint32_t i = 0; i < g->nreg; i++)
		st2_free(&g->reg[i].s2);
	g->nreg = 0;
	g->finalized = true;
	g->last_start = g->last_runnable = g->last_block = 0;
	g->last_syscall = g->last_syscall_block = 0;
	g->last_range.n = 0;
	return rc < 0 ? rc : emit_goroutine(s, g);
}

static void drop_g(struct ga_sum *s, uint64_t id)
{
	struct gsum **p = rtd_vmap_get(&s->gs, id, false, NULL, NULL);
	if (p) {
		if (s->last_g == *p)
			s->last_g = NULL;
		gsum_free(*p);
		rtd_vmap_del(&s->gs, id);
	}
}

static int g_state2(struct ga_sum *s, const struct rtd_goev *ev)
{
	uint64_t id = ev->id;
	unsigned from = ev->from, to = ev->to;
	if (from == to)
		return 0;
	int64_t ts = ev->ts;
	struct gsum *g = gfind(s, id);
	switch (from) {
	case RTD_GO_G_UNDETERMINED:
	case RTD_GO_G_NOTEXIST: {
		/* a new summary (an older one of the same id is forgotten, as
		 * Go's map entry is replaced) */
		drop_g(s, id);
		g = calloc(1, sizeof(*g));
		if (!g)
			return NOMEM(s);
		int err = -ENOMEM;
		struct gsum **p = rtd_vmap_get(&s->gs, id, true, NULL, &err);
		if (!p) {
			free(g);
			return ga_fail(s->c, err, "more than %u live goroutines",
				       RTD_GOAN_MAX_GOROUTINES);
		}
		*p = g;
		g->id = id;
		g->name = s->s_empty;
		g->creation = from == RTD_GO_G_UNDETERMINED ? s->sync_ts : ts;
		/* inherit the creator's innermost region's task */
		struct gsum *cr = ev->g != RTD_GO_NOG ? gfind(s, ev->g) : NULL;
		if (cr && cr->nreg) {
			struct region r = {0};
			r.task = cr->reg[cr->nreg - 1].task;
			r.name = g->name;
			r.start = ts;
			top_frame(s, ev->stack, &r.frame_fn, &r.frame_pc);
			int rc = push_region(s, g, &r);
			if (rc < 0)
				return rc;
		}
		break;
	}
	case RTD_GO_G_RUNNING:
		if (g) {
			g->s2.exec += ts - g->last_start;
			g->last_start = 0;
		}
		break;
	case RTD_GO_G_WAITING:
		if (g && g->last_block) {
			if (ga_kvs_add(&g->s2.block, g->last_block_reason, ts - g->last_block) < 0)
				return NOMEM(s);
			g->last_block = 0;
		}
		break;
	case RTD_GO_G_RUNNABLE:
		if (g && g->last_runnable) {
			g->s2.sched += ts - g->last_runnable;
			g->last_runnable = 0;
		}
		break;
	case RTD_GO_G_SYSCALL:
		if (g && g->last_syscall) {
			if (g->last_syscall_block) {
				g->s2.syscall_block += ts - g->last_syscall_block;
				g->s2.syscall += g->last_syscall_block - g->last_syscall;
			} else {
				g->s2.syscall += ts - g->last_syscall;
			}
			g->last_syscall = g->last_syscall_block = 0;
			int64_t *p = rtd_vmap_get(&s->sys_g, id, false, NULL, NULL);
			rtd_vmap_del(&s->sys_p, p ? (uint64_t)*p : UINT64_MAX);
			rtd_vmap_del(&s->sys_g, id);
		}
		break;
	}
	if (!g)
		return 0;
	if (!*g->name && ev->tstack) {
		const struct ga_stacks *st = &s->c->stacks;
		const struct ga_frame *f = ga_stack_frame(st, ev->tstack, ga_stack_len(st, ev->tstack) - 1);
		g->pc = f->pc;
		g->name = f->fn;
	}
	int err = -ENOMEM;
	switch (to) {
	case RTD_GO_G_RUNNING:
		g->last_start = ts;
		if (g->start == 0)
			g->start = ts;
		break;
	case RTD_GO_G_RUNNABLE:
		g->last_runnable = ts;
		break;
	case RTD_GO_G_WAITING:
		if (ev->reason != s->s_forever) {
			g->last_block = ts;
			g->last_block_reason = ev->reason;
			break;
		}
		/* blocked forever is like the goroutine's end */
		/* fallthrough */
	case RTD_GO_G_NOTEXIST: {
		int rc = finalize2(s, g, ts, true);
		drop_g(s, id);
		return rc;
	}
	case RTD_GO_G_SYSCALL: {
		uint64_t *gp = rtd_vmap_get(&s->sys_p, (uint64_t)ev->p, true, NULL, &err);
		int64_t *pp = rtd_vmap_get(&s->sys_g, id, true, NULL, &err);
		if (!gp || !pp)
			return NOMEM(s);
		*gp = id;
		*pp = ev->p;
		g->last_syscall = ts;
		break;
	}
	}
	return 0;
}

static int p_state2(struct ga_sum *s, const struct rtd_goev *ev)
{
	if (ev->from == ev->to || ev->to != RTD_GO_P_IDLE)
		return 0;
	uint64_t *gp = rtd_vmap_get(&s->sys_p, ev->id, false, NULL, NULL);
	if (!gp)
		return 0;
	struct gsum *g = gfind(s, *gp);
	if (g)
		g->last_syscall_block = ev->ts;
	rtd_vmap_del(&s->sys_p, ev->id);
	return 0;
}

static uint64_t rp_key(int64_t p, const char *name)
{
	return rtd_hash_u64((uint64_t)p) ^ (uint64_t)(uintptr_t)name;
}

static int range2(struct ga_sum *s, const struct rtd_goev *ev)
{
	struct gsum *g = NULL;
	if (ev->kind == RTD_GOEV_RANGE_END) {
		if (ev->scope == RTD_GOEV_RES_GOROUTINE) {
			g = gfind(s, (uint64_t)ev->scope_id);
		} else if (ev->scope == RTD_GOEV_RES_PROC) {
			uint64_t k = rp_key(ev->scope_id, ev->name);
			uint64_t *gp = rtd_vmap_get(&s->ranges_p, k, false, NULL, NULL);
			if (gp) {
				if (*gp == ev->g)
					g = gfind(s, *gp);
				rtd_vmap_del(&s->ranges_p, k);
			}
		}
		if (!g || g->finalized)
			return 0;
		int64_t *t0 = ga_kvs_find(&g->last_range, ev->name);
		if (!t0 || *t0 == 0)
			return 0;
		if (ga_kvs_add(&g->s2.range, ev->name, ev->ts - *t0) < 0)
			return NOMEM(s);
		ga_kvs_del(&g->last_range, ev->name);
		return 0;
	}
	if (ev->scope == RTD_GOEV_RES_GOROUTINE) {
		g = gfind(s, (uint64_t)ev->scope_id);
	} else if (ev->scope == RTD_GOEV_RES_PROC) {
		g = ev->g != RTD_GO_NOG ? gfind(s, ev->g) : NULL;
		if (g) {
			int err = -ENOMEM;
			uint64_t *gp = rtd_vmap_get(&s->ranges_p, rp_key(ev->scope_id, ev->name), true,
						  NULL, &err);
			if (!gp)
				return NOMEM(s);
			*gp = ev->g;
		}
	}
	if (!g || g->finalized)
		return 0;
	int64_t t = ev->ts;
	if (ev->kind == RTD_GOEV_RANGE_ACTIVE) {
		int64_t *t0 = ga_kvs_find(&g->last_range, ev->name);
		if (t0 && *t0 && ga_kvs_add(&g->s2.range, ev->name, s->sync_ts - *t0) < 0)
			return NOMEM(s);
		t = s->sync_ts;
	}
	return ga_kvs_set(&g->last_range, ev->name, t) < 0 ? NOMEM(s) : 0;
}

static int region2(struct ga_sum *s, const struct rtd_goev *ev)
{
	struct gsum *g = ev->g != RTD_GO_NOG ? gfind(s, ev->g) : NULL;
	if (!g) /* Go would stop on a nil goroutine here */
		return 0;
	if (ev->kind == RTD_GOEV_REGION_BEGIN) {
		struct region r = {0};
		r.task = ev->task;
		r.name = ev->name;
		r.start = ev->ts;
		r.in_task = true;
		top_frame(s, ev->stack, &r.frame_fn, &r.frame_pc);
		if (snap2(g, ev->ts, &r.s2) < 0)
			return NOMEM(s);
		int rc = push_region(s, g, &r);
		if (rc < 0) {
			st2_free(&r.s2);
			return rc;
		}
		struct task *t = tget(s, ev->task);
		if (!t)
			return -ENOMEM;
		t->open++;
		return task_touch(t, g->id) < 0 ? NOMEM(s) : 0;
	}
	struct region r = {0};
	if (g->nreg) {
		r = g->reg[--g->nreg];
	} else {
		/* an end without its start: Go makes the region up now */
		r.task = ev->task;
		r.name = ev->name;
		r.start = -1;
		r.in_task = true;
		top_frame(s, 0, &r.frame_fn, &r.frame_pc);
		struct task *t = tget(s, ev->task);
		if (!t || task_touch(t, g->id) < 0)
			return NOMEM(s);
		t->open++;
	}
	/* the part since its start (scratch kept from region to region: no
	 * allocation for each) */
	struct st2 *now = &s->scr_now, *d = &s->scr_d;
	int rc = snap2(g, ev->ts, now) < 0 || st2_sub(d, now, &r.s2) < 0 ? NOMEM(s) : 0;
	st2_free(&r.s2);
	r.s2 = *d;
	if (rc == 0)
		rc = region_done(s, g->id, &r, ev->ts);
	return rc;
}

static int task2(struct ga_sum *s, const struct rtd_goev *ev)
{
	struct task *t = tget(s, ev->task);
	if (!t)
		return -ENOMEM;
	bool begin = ev->kind == RTD_GOEV_TASK_BEGIN;
	/* parent 0 is no parent (Go's ordering makes it NoTask); an end
	 * names the parent only when the ordering knew the begin */
	bool has_parent = ev->parent != 0;
	uint64_t parent = ev->parent;
	t->name = ev->name;
	if (task_touch(t, ev->g) < 0)
		return NOMEM(s);
	if (begin) {
		t->begun = true;
		t->start = ev->ts;
	} else {
		t->ended = true;
		t->end = ev->ts;
	}
	if (has_parent && !t->has_parent) {
		t->has_parent = true;
		t->parent = parent;
		/* Go creates the parent's entry too */
		if (!tget(s, parent))
			return -ENOMEM;
		t = tfind(s, ev->task);
	}
	return begin ? 0 : task_done(s, t, false);
}

static int log2_(struct ga_sum *s, const struct rtd_goev *ev)
{
	struct task *t = tget(s, ev->task);
	if (!t)
		return -ENOMEM;
	t->nlogs++;
	return task_touch(t, ev->g) < 0 ? NOMEM(s) : 0;
}

/* Only what the profiles need: which goroutines live, and when each
 * first ran (Go's StartTime). */
static int starts2(struct ga_sum *s, const struct rtd_goev *ev)
{
	if (ev->kind != RTD_GOEV_STATE || ev->resource != RTD_GOEV_RES_GOROUTINE ||
	    ev->from == ev->to)
		return 0;
	struct gsum *g;
	if (ev->from == RTD_GO_G_UNDETERMINED || ev->from == RTD_GO_G_NOTEXIST) {
		drop_g(s, ev->id);
		g = calloc(1, sizeof(*g));
		int err = -ENOMEM;
		struct gsum **p = g ? rtd_vmap_get(&s->gs, ev->id, true, NULL, &err) : NULL;
		if (!p) {
			free(g);
			return ga_fail(s->c, err, "out of memory or more than %u live goroutines",
				       RTD_GOAN_MAX_GOROUTINES);
		}
		*p = g;
		g->id = ev->id;
	} else if (!(g = gfind(s, ev->id))) {
		return 0;
	}
	if (ev->to == RTD_GO_G_RUNNING && g->start == 0)
		g->start = ev->ts;
	if (ev->to == RTD_GO_G_NOTEXIST ||
	    (ev->to == RTD_GO_G_WAITING && ev->reason == s->s_forever))
		drop_g(s, ev->id);
	return 0;
}

int ga_sum_v2(struct ga_sum *s, const struct rtd_goev *ev)
{
	if (s->starts_only)
		return starts2(s, ev);
	if (s->sync_ts == 0)
		s->sync_ts = ev->ts;
	s->last_ts = ev->ts;
	switch (ev->kind) {
	case RTD_GOEV_SYNC:
		s->sync_ts = ev->ts;
		return 0;
	case RTD_GOEV_STATE:
		return ev->resource == RTD_GOEV_RES_GOROUTINE ? g_state2(s, ev) : p_state2(s, ev);
	case RTD_GOEV_RANGE_BEGIN:
	case RTD_GOEV_RANGE_ACTIVE:
	case RTD_GOEV_RANGE_END:
		return range2(s, ev);
	case RTD_GOEV_REGION_BEGIN:
	case RTD_GOEV_REGION_END:
		return region2(s, ev);
	case RTD_GOEV_TASK_BEGIN:
	case RTD_GOEV_TASK_END:
		return task2(s, ev);
	case RTD_GOEV_LOG:
		return log2_(s, ev);
	}
	return 0;
}

int64_t ga_sum_start_time(const struct ga_sum *s, uint64_t g, bool *known)
{
	struct gsum **p = rtd_vmap_get((struct rtd_vmap *)&s->gs, g, false, NULL, NULL);
	*known = p != NULL;
	return p ? (*p)->start : 0;
}

/* ---- Go 1.19: GoroutineStats ------------------------------------------------- */

/* GC time before t: completed cycles plus the running one */
static int64_t gc_before(const struct ga_sum *s, int64_t t)
{
	return s->gc_done + (s->gc_running ? t - s->gc_start : 0);
}

static void snap1(const struct ga_sum *s, const struct gsum *g, int64_t ts, struct st1 *r)
{
	*r = g->s1;
	if (g->finalized)
		return;
	r->gc = gc_before(s, ts) - g->gc_base;
	if (g->s1.total == 0)
		r->total = ts - g->creation;
	if (g->last_start)
		r->exec += ts - g->last_start;
	if (g->block_net)
		r->io += ts - g->block_net;
	if (g->block_sync)
		r->block += ts - g->block_sync;
	if (g->block_syscall)
		r->syscall += ts - g->block_syscall;
	if (g->block_sched)
		r->sched += ts - g->block_sched;
	if (g->block_sweep)
		r->sweep += ts - g->block_sweep;
}

static void st1_sub(struct st1 *r, const struct st1 *a, const struct st1 *b)
{
	r->exec = a->exec - b->exec;
	r->sched = a->sched - b->sched;
	r->io = a->io - b->io;
	r->block = a->block - b->block;
	r->syscall = a->syscall - b->syscall;
	r->gc = a->gc - b->gc;
	r->sweep = a->sweep - b->sweep;
	r->total = a->total - b->total;
}

static int finalize1(struct ga_sum *s, struct gsum *g, int64_t ts, bool trigger)
{
	if (trigger)
		g->end = ts;
	struct st1 fin;
	snap1(s, g, ts, &fin);
	g->s1 = fin;
	int rc = 0;
	bool sys = strcmp(g->name, "runtime.main") != 0 && strncmp(g->name, "runtime.", 8) == 0;
	for (uint32_t i = 0; i < g->nreg && rc == 0; i++) {
		struct region *r = &g->reg[i];
		if (sys) {
			struct task *t = r->in_task ? tfind(s, r->task) : NULL;
			if (t && t->open && --t->open == 0)
				rc = task_done(s, t, false);
			continue;
		}
		st1_sub(&r->s1, &fin, &r->s1);
		rc = region_done(s, g->id, r, trigger ? ts : -1);
	}
	g->nreg = 0;
	g->finalized = true;
	return rc < 0 ? rc : emit_goroutine(s, g);
}

static int region1(struct ga_sum *s, struct gsum *g, const struct rtd_gotrace_event *ev)
{
	uint64_t mode = ev->args[1];
	const char *name = ev->nsargs ? ga_intern(&s->c->strs, ev->sargs[0], ev->sarg_lens[0])
				      : ga_intern(&s->c->strs, "", 0);
	if (!name)
		return NOMEM(s);
	if (mode == 0) {
		struct region r = {0};
		r.task = ev->args[0];
		r.name = name;
		r.start = ev->ts;
		r.in_task = r.task != 0;
		int64_t st = ga_stack(s->c, ev->stack);
		if (st < 0)
			return (int)st;
		top_frame(s, (uint32_t)st, &r.frame_fn, &r.frame_pc);
		snap1(s, g, ev->ts, &r.s1);
		int rc = push_region(s, g, &r);
		if (rc < 0)
			return rc;
		if (r.in_task) {
			struct task *t = tget(s, r.task);
			if (!t || task_touch(t, g->id) < 0)
				return -ENOMEM;
			t->open++;
		}
		return 0;
	}
	if (mode != 1)
		return 0;
	struct region r = {0};
	if (g->nreg) {
		r = g->reg[--g->nreg];
	} else {
		r.task = ev->args[0];
		r.name = name;
		r.start = -1;
		r.in_task = r.task != 0;
		top_frame(s, 0, &r.frame_fn, &r.frame_pc);
		if (r.in_task) {
			struct task *t = tget(s, r.task);
			if (!t || task_touch(t, g->id) < 0)
				return -ENOMEM;
			t->open++;
		}
	}
	struct st1 now;
	snap1(s, g, ev->ts, &now);
	st1_sub(&r.s1, &now, &r.s1);
	return region_done(s, g->id, &r, ev->ts);
}

static int task1(struct ga_sum *s, const struct rtd_gotrace_event *ev)
{
	uint64_t id = ev->args[0];
	if (id == 0)
		return 0; /* no task */
	struct task *t = tget(s, id);
	if (!t || task_touch(t, ev->g) < 0)
		return -ENOMEM;
	switch (ev->type) {
	case RTD_GO_EV_USER_TASK_CREATE:
		t->name = ev->nsargs ? ga_intern(&s->c->strs, ev->sargs[0], ev->sarg_lens[0])
				     : t->name;
		if (!t->name)
			return NOMEM(s);
		t->begun = true;
		t->start = ev->ts;
		if (ev->args[1]) {
			t->has_parent = true;
			t->parent = ev->args[1];
			if (!tget(s, ev->args[1]))
				return -ENOMEM;
		}
		return 0;
	case RTD_GO_EV_USER_TASK_END:
		t->ended = true;
		t->end = ev->ts;
		return task_done(s, t, false);
	default:
		t->nlogs++;
		return 0;
	}
}

static struct gsum *g1(struct ga_sum *s, uint64_t id)
{
	struct gsum *g = gfind(s, id);
	return g && !g->finalized ? g : NULL;
}

/* A goroutine created inside a task's region starts in that task: Go gives
 * it an unnamed region of the task, from its creation. */
static int inherit_task1(struct ga_sum *s, struct gsum *g,
			 const struct gsum *cr, const struct rtd_gotrace_event *ev)
{
	int64_t ts = ev->ts;
	struct region r = {0};
	r.task = cr->reg[cr->nreg - 1].task;
	r.name = ga_intern(&s->c->strs, "", 0);
	r.start = ts;
	r.in_task = true;
	int64_t cs = ga_stack(s->c, ev->stack);
	if (cs < 0)
		return (int)cs;
	top_frame(s, (uint32_t)cs, &r.frame_fn, &r.frame_pc);
	int rc = push_region(s, g, &r);
	if (rc < 0)
		return rc;
	struct task *t = tget(s, r.task);
	if (!t || task_touch(t, g->id) < 0)
		return -ENOMEM;
	t->open++;
	return 0;
}

/* GoCreate: a new goroutine, named by the function Go created it at. */
static int go_create1(struct ga_sum *s, const struct rtd_gotrace_event *ev)
{
	int64_t ts = ev->ts;
	struct gsum *g = calloc(1, sizeof(*g));
	if (!g)
		return NOMEM(s);
	drop_g(s, ev->args[0]);
	int err = -ENOMEM;
	struct gsum **p = rtd_vmap_get(&s->gs, ev->args[0], true, NULL, &err);
	if (!p) {
		free(g);
		return ga_fail(s->c, err, "more than %u live goroutines",
			       RTD_GOAN_MAX_GOROUTINES);
	}
	*p = g;
	g->id = ev->args[0];
	g->creation = ts;
	g->block_sched = ts;
	g->gc_base = gc_before(s, ts);
	/* the start function, which Go takes at the first GoStart */
	g->name = ga_intern(&s->c->strs, "", 0);
	g->create_fn = g->name;
	if (s->c->ver < 1007) {
		g->create_pc = ev->args[1] + 1; /* Go 1.5/1.6: a PC */
	} else {
		int64_t st = ga_stack(s->c, ev->args[1]);
		if (st < 0)
			return (int)st;
		if (ga_stack_len(&s->c->stacks, (uint32_t)st)) {
			const struct ga_frame *f = ga_stack_frame(&s->c->stacks, (uint32_t)st, 0);
			g->create_pc = f->pc;
			g->create_fn = f->fn;
		}
	}
	struct gsum *cr = ev->g ? g1(s, ev->g) : NULL;
	if (cr && cr->nreg && cr->reg[cr->nreg - 1].task != 0)
		return inherit_task1(s, g, cr, ev);
	return 0;
}

/* The goroutine stops running: its time running ends, and the wait
 * the event starts (the one Go counts for it, if any). */
static void go_block1(struct gsum *g, const struct rtd_gotrace_event *ev)
{
	int64_t ts = ev->ts;
	g->s1.exec += ts - g->last_start;
	g->last_start = 0;
	switch (ev->type) {
	case RTD_GO_EV_GO_SCHED:
	case RTD_GO_EV_GO_PREEMPT:
		g->block_sched = ts;
		break;
	case RTD_GO_EV_GO_BLOCK_NET:
		g->block_net = ts;
		break;
	case RTD_GO_EV_GO_SYS_BLOCK:
		g->block_syscall = ts;
		break;
	case RTD_GO_EV_GO_SLEEP:
	case RTD_GO_EV_GO_BLOCK:
	case RTD_GO_EV_GO_BLOCK_GC:
		break; /* Go keeps the GC assist block time nowhere */
	default:
		g->block_sync = ts;
	}
}

int ga_sum_v1(struct ga_sum *s, const struct rtd_gotrace_event *ev)
{
	int64_t ts = ev->ts;
	struct gsum *g;
	switch (ev->type) {
	case RTD_GO_EV_GO_CREATE:
		return go_create1(s, ev);
	case RTD_GO_EV_GO_START:
	case RTD_GO_EV_GO_START_LABEL:
		if (!(g = g1(s, ev->g)))
			return 0;
		if (g->pc == 0) {
			g->pc = g->create_pc;
			g->name = g->create_fn;
		}
		g->last_start = ts;
		if (g->start == 0)
			g->start = ts;
		if (g->block_sched) {
			g->s1.sched += ts - g->block_sched;
			g->block_sched = 0;
		}
		return 0;
	case RTD_GO_EV_GO_END:
	case RTD_GO_EV_GO_STOP:
		if (!(g = g1(s, ev->g)))
			return 0;
		{
			int rc = finalize1(s, g, ts, true);
			drop_g(s, ev->g);
			return rc;
		}
	case RTD_GO_EV_GO_UNBLOCK:
		if (!(g = g1(s, ev->args[0])))
			return 0;
		if (g->block_net) {
			g->s1.io += ts - g->block_net;
			g->block_net = 0;
		}
		if (g->block_sync) {
			g->s1.block += ts - g->block_sync;
			g->block_sync = 0;
		}
		g->block_sched = ts;
		return 0;
	case RTD_GO_EV_GO_SYS_EXIT:
		if (!(g = g1(s, ev->g)))
			return 0;
		if (g->block_syscall) {
			g->s1.syscall += ts - g->block_syscall;
			g->block_syscall = 0;
		}
		g->block_sched = ts;
		return 0;
	case RTD_GO_EV_GC_SWEEP_START:
		if ((g = g1(s, ev->g)))
			g->block_sweep = ts;
		return 0;
	case RTD_GO_EV_GC_SWEEP_DONE:
		if ((g = g1(s, ev->g)) && g->block_sweep) {
			g->s1.sweep += ts - g->block_sweep;
			g->block_sweep = 0;
		}
		return 0;
	case RTD_GO_EV_GC_START:
		s->gc_start = ts;
		s->gc_running = true;
		return 0;
	case RTD_GO_EV_GC_DONE:
		if (s->gc_running)
			s->gc_done += ts - s->gc_start;
		s->gc_running = false;
		s->gc_start = 0;
		return 0;
	case RTD_GO_EV_USER_REGION:
		if (!(g = g1(s, ev->g)))
			return 0;
		return region1(s, g, ev);
	case RTD_GO_EV_USER_TASK_CREATE:
	case RTD_GO_EV_USER_TASK_END:
	case RTD_GO_EV_USER_LOG:
		return task1(s, ev);
	}
	/* off its P and not ended (GoEnd and GoStop are above): scheduled,
	 * preempted, blocked, asleep */
	if (go1_ends_running_g(ev->type) && (g = g1(s, ev->g)))
		go_block1(g, ev);
	return 0;
}

/* ---- the end ----------------------------------------------------------------- */

int ga_sum_finish(struct ga_sum *s)
{
	if (s->starts_only)
		return 0;
	int64_t last = s->v2 ? s->last_ts : s->c->last_ts;
	/* Go finalizes in map order; ascending ids keep the output stable */
	size_t n = s->gs.n, k = 0, it = 0;
	uint64_t *ids = n ? malloc(n * sizeof(*ids)) : NULL;
	if (n && !ids)
		return NOMEM(s);
	uint64_t id;
	while (rtd_vmap_next(&s->gs, &it, &id))
		ids[k++] = id;
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			uint64_t t = ids[j];
			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	int rc = 0;
	for (size_t i = 0; i < k && rc == 0; i++) {
		struct gsum *g = gfind(s, ids[i]);
		if (g && !g->finalized) {
			rc = s->v2 ? finalize2(s, g, last, false) : finalize1(s, g, last, false);
		}
		drop_g(s, ids[i]);
	}
	free(ids);
	if (rc < 0)
		return rc;
	/* what is left of the tasks: not ended, or with regions that never
	 * closed, in id order */
	n = s->tasks.n;
	ids = n ? malloc(n * sizeof(*ids)) : NULL;
	if (n && !ids)
		return NOMEM(s);
	k = it = 0;
	while (rtd_vmap_next(&s->tasks, &it, &id))
		ids[k++] = id;
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			uint64_t t = ids[j];
			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	for (size_t i = 0; i < k && rc == 0; i++) {
		struct task *t = tfind(s, ids[i]);
		if (t)
			rc = task_done(s, t, true);
	}
	free(ids);
	return rc;
}

int ga_sum_groups(const struct ga_sum *s, int (*fn)(const struct rtd_goan_group *g, void *ctx),
		  void *ctx)
{
	size_t it = 0;
	void **v;
	struct rtd_goan_stat *st = NULL;
	size_t cap = 0;
	int rc = 0;
	while (rc == 0 && (v = rtd_vmap_next(&s->groups, &it, NULL))) {
		const struct group *g = *v;
		size_t n = g->stats.n + g->ranges.n;
		if (n > cap) {
			struct rtd_goan_stat *p = realloc(st, n * sizeof(*p));
			if (!p) {
				rc = -ENOMEM;
				break;
			}
			st = p;
			cap = n;
		}
		for (uint32_t i = 0; i < g->stats.n; i++)
			st[i] = (struct rtd_goan_stat){g->stats.e[i].k, g->stats.e[i].v, false};
		for (uint32_t i = 0; i < g->ranges.n; i++)
			st[g->stats.n + i] = (struct rtd_goan_stat){g->ranges.e[i].k, g->ranges.e[i].v, true};
		struct rtd_goan_group o = {g->name, g->pc, g->count, g->exec, g->total, st, n};
		rc = fn(&o, ctx);
	}
	free(st);
	return rc;
}
