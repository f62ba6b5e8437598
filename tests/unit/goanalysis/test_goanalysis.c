/* SPDX-License-Identifier: MIT */
/*
 * test_goanalysis.c - the goroutine state tracker and the analyses on
 * hand-built Go 1.22 traces whose answers are known exactly, and the
 * tracker's invariants on every shared vector (old and new format).
 */
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>

#include "rtdiag/goanalysis.h"
#include "rtdiag/gocapture.h"
#include "rtdiag/gotrace.h"
#include "test_gotrace.h"

/* ---- a tiny Go 1.22 trace writer ------------------------------------------ */

struct tb {
	uint8_t b[1 << 16];
	size_t n;
	size_t batch_size_at; /* where the open batch's size goes */
	size_t batch_start;
	uint8_t sizebuf[8];
};

static void put(struct tb *t, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		t->b[t->n++] = c | (v ? 0x80 : 0);
	} while (v);
}

static void close_batch(struct tb *t)
{
	if (!t->batch_size_at)
		return;
	/* the size was written as 4 bytes of padded uvarint */
	uint64_t size = t->n - t->batch_start;
	for (int i = 0; i < 4; i++) {
		t->b[t->batch_size_at + i] = (uint8_t)((size & 0x7f) | (i < 3 ? 0x80 : 0));
		size >>= 7;
	}
	t->batch_size_at = 0;
}

static void batch(struct tb *t, uint64_t gen, uint64_t m, uint64_t time)
{
	close_batch(t);
	t->b[t->n++] = 1; /* EventBatch */
	put(t, gen);
	put(t, m);
	put(t, time);
	t->batch_size_at = t->n;
	t->n += 4;
	t->batch_start = t->n;
}

static void ev(struct tb *t, unsigned type, int nargs, ...)
{
	va_list ap;
	va_start(ap, nargs);
	t->b[t->n++] = (uint8_t)type;
	for (int i = 0; i < nargs; i++)
		put(t, va_arg(ap, uint64_t));
	va_end(ap);
}

static void str(struct tb *t, uint64_t id, const char *s)
{
	t->b[t->n++] = 5; /* String */
	put(t, id);
	put(t, strlen(s));
	memcpy(t->b + t->n, s, strlen(s));
	t->n += strlen(s);
}

#define U(x) ((uint64_t)(x))
/* event types (tracev2) */
enum {
	STACKS = 2, STACK = 3, STRINGS = 4, FREQ = 8, PROCS_CHANGE = 9, PROC_STATUS = 13,
	GO_CREATE = 14, GO_START = 16, GO_DESTROY = 17, GO_BLOCK = 20, GO_UNBLOCK = 21,
	SYSCALL_BEGIN = 22, SYSCALL_END = 23, GO_STATUS = 25, STW_BEGIN = 26, STW_END = 27,
	TASK_BEGIN = 40, TASK_END = 41, REGION_BEGIN = 42, REGION_END = 43,
	GC_ACTIVE = 28, GC_BEGIN = 29, GC_END = 30,
};

/* The dictionary of every test trace: strings and two stacks. */
static void tables(struct tb *t, uint64_t gen)
{
	batch(t, gen, U(-1), 0);
	ev(t, FREQ, 1, U(1000000000)); /* 1 tick = 1 ns */
	batch(t, gen, U(-1), 0);
	ev(t, STACKS, 0);
	/* stack 1: main.worker <- main.main; stack 2: main.recv <- main.worker */
	ev(t, STACK, 6, U(1), U(1), U(0x1000), U(1), U(2), U(10));
	ev(t, STACK, 10, U(2), U(2), U(0x2000), U(3), U(2), U(20), U(0x1010), U(1), U(2), U(11));
	batch(t, gen, U(-1), 0);
	ev(t, STRINGS, 0);
	str(t, 1, "main.worker");
	str(t, 2, "main.go");
	str(t, 3, "main.recv");
	str(t, 4, "chan receive");
	str(t, 5, "GC mark termination");
	str(t, 6, "job");
	str(t, 7, "phase");
	str(t, 8, "forever");
}

static void header(struct tb *t)
{
	memcpy(t->b, "go 1.22 trace\0\0\0", 16);
	t->n = 16;
}

/*
 * One generation on thread 0 and P 0:
 *   t=100 P0 running; t=101 G1 running; t=102 ProcsChange 1
 *   t=110 G1 creates G2 at main.worker (stack 1)
 *   t=120 G1 blocks ("chan receive" on stack 2)  -> G1 waiting
 *   t=130 G2 starts
 *   t=200 G2 unblocks G1 (stack 1)               -> G1 waited 80 ns
 *   t=210 STW begin (GC mark termination)        -> utilization 0 for 40 ns
 *   t=250 STW end
 *   t=260 G2 task 9 "job", t=265 region "phase" in it
 *   t=300 region end, t=305 task end
 *   t=310 G2 syscall begin (stack 1), t=330 end
 *   t=340 G2 destroyed
 *   t=350 G1 starts
 *   t=400 G1 blocks again (chan receive, stack 2)
 */
static size_t build_trace(uint8_t *out)
{
	static struct tb t;
	memset(&t, 0, sizeof(t));
	header(&t);
	batch(&t, 1, 0, 100);
	ev(&t, PROC_STATUS, 3, U(0), U(0), U(1));
	ev(&t, GO_STATUS, 4, U(1), U(1), U(0), U(2));
	ev(&t, PROCS_CHANGE, 3, U(1), U(1), U(0));
	ev(&t, GO_CREATE, 4, U(8), U(2), U(1), U(0));
	ev(&t, GO_BLOCK, 3, U(10), U(4), U(2));
	ev(&t, GO_START, 3, U(10), U(2), U(1));
	ev(&t, GO_UNBLOCK, 4, U(70), U(1), U(1), U(1));
	ev(&t, STW_BEGIN, 3, U(10), U(5), U(0));
	ev(&t, STW_END, 1, U(40));
	ev(&t, TASK_BEGIN, 5, U(10), U(9), U(0), U(6), U(0));
	ev(&t, REGION_BEGIN, 4, U(5), U(9), U(7), U(0));
	ev(&t, REGION_END, 4, U(35), U(9), U(7), U(0));
	ev(&t, TASK_END, 3, U(5), U(9), U(0));
	ev(&t, SYSCALL_BEGIN, 3, U(5), U(1), U(1));
	ev(&t, SYSCALL_END, 1, U(20));
	ev(&t, GO_DESTROY, 1, U(10));
	ev(&t, GO_START, 3, U(10), U(1), U(2));
	ev(&t, GO_BLOCK, 3, U(50), U(4), U(2));
	tables(&t, 1);
	close_batch(&t);
	memcpy(out, t.b, t.n);
	return t.n;
}

static rtd_gotrace_dec *open_dec(const uint8_t *b, size_t n)
{
	struct rtd_gotrace_opts o = {.sz = sizeof(o), .mode = RTD_GOTRACE_ORDERED};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&o);
	assert_non_null(d);
	const char *dump = getenv("GOAN_TEST_DUMP"); /* to look at it with the CLI */
	FILE *f = dump ? fopen(dump, "wb") : NULL;
	if (f) {
		fwrite(b, 1, n, f);
		fclose(f);
	}
	assert_int_equal(rtd_gotrace_dec_feed(d, b, n), 0);
	assert_int_equal(rtd_gotrace_dec_finish(d), 0);
	return d;
}

/* ---- the tracker ------------------------------------------------------------ */

struct tr {
	uint64_t id;
	unsigned from, to;
	char reason[32];
	char tleaf[32]; /* leaf of the transition stack */
	char leaf[32];  /* leaf of the event stack */
	int64_t ts;
};

static void test_tracker_transitions(void **state)
{
	(void)state;
	uint8_t buf[1 << 16];
	size_t n = build_trace(buf);
	rtd_gotrace_dec *d = open_dec(buf, n);
	rtd_gostate *s = rtd_gostate_new(d);
	assert_non_null(s);
	struct tr got[64];
	size_t ng = 0;
	bool saw_sync = false, saw_stw = false;
	struct rtd_gotrace_event e;
	struct rtd_goev g;
	int rc;
	while ((rc = rtd_gotrace_dec_next(d, &e)) > 0) {
		assert_int_equal(rtd_gostate_feed(s, &e), 0);
		while (rtd_gostate_next(s, &g) > 0) {
			saw_sync |= g.kind == RTD_GOEV_SYNC;
			if (g.kind == RTD_GOEV_RANGE_BEGIN) {
				assert_string_equal(g.name, "stop-the-world (GC mark termination)");
				saw_stw = true;
			}
			if (g.kind != RTD_GOEV_STATE || g.resource != RTD_GOEV_RES_GOROUTINE)
				continue;
			assert_true(ng < 64);
			struct tr *x = &got[ng++];
			memset(x, 0, sizeof(*x));
			x->id = g.id;
			x->from = g.from;
			x->to = g.to;
			x->ts = g.ts;
			snprintf(x->reason, sizeof(x->reason), "%s", g.reason);
			const struct rtd_goframe *f;
			if (rtd_gostate_stack(s, g.tstack, &f))
				snprintf(x->tleaf, sizeof(x->tleaf), "%s", f[0].fn);
			if (rtd_gostate_stack(s, g.stack, &f))
				snprintf(x->leaf, sizeof(x->leaf), "%s", f[0].fn);
			if (g.id == 2 && g.to == RTD_GO_G_RUNNING) {
				/* the tracker's table: named by the create's stack */
				struct rtd_goroutine_info gi;
				assert_int_equal(rtd_gostate_goroutine(s, 2, &gi), 0);
				assert_string_equal(gi.start_fn, "main.worker");
				assert_int_equal(gi.state, RTD_GO_G_RUNNING);
			}
		}
	}
	assert_int_equal(rc, 0);
	assert_true(saw_sync);
	assert_true(saw_stw);
	const struct {
		uint64_t id;
		unsigned from, to;
		const char *reason, *tleaf, *leaf;
		int64_t ts;
	} want[] = {
		{1, RTD_GO_G_UNDETERMINED, RTD_GO_G_RUNNING, "", "", "", 101},
		{2, RTD_GO_G_NOTEXIST, RTD_GO_G_RUNNABLE, "", "main.worker", "", 110},
		{1, RTD_GO_G_RUNNING, RTD_GO_G_WAITING, "chan receive", "main.recv", "main.recv", 120},
		{2, RTD_GO_G_RUNNABLE, RTD_GO_G_RUNNING, "", "", "", 130},
		{1, RTD_GO_G_WAITING, RTD_GO_G_RUNNABLE, "", "", "main.worker", 200},
		{2, RTD_GO_G_RUNNING, RTD_GO_G_SYSCALL, "", "main.worker", "main.worker", 310},
		{2, RTD_GO_G_SYSCALL, RTD_GO_G_RUNNING, "", "", "", 330},
		{2, RTD_GO_G_RUNNING, RTD_GO_G_NOTEXIST, "", "", "", 340},
		{1, RTD_GO_G_RUNNABLE, RTD_GO_G_RUNNING, "", "", "", 350},
		{1, RTD_GO_G_RUNNING, RTD_GO_G_WAITING, "chan receive", "main.recv", "main.recv", 400},
	};
	assert_int_equal(ng, sizeof(want) / sizeof(want[0]));
	int64_t t0 = got[1].ts - 110;
	for (size_t i = 0; i < ng; i++) {
		assert_int_equal(got[i].id, want[i].id);
		assert_int_equal(got[i].from, want[i].from);
		assert_int_equal(got[i].to, want[i].to);
		assert_string_equal(got[i].reason, want[i].reason);
		assert_string_equal(got[i].tleaf, want[i].tleaf);
		assert_string_equal(got[i].leaf, want[i].leaf);
		assert_int_equal(got[i].ts - t0, want[i].ts);
	}
	/* G2 ended: the tracker forgot it; G1 is waiting */
	struct rtd_goroutine_info gi;
	assert_int_equal(rtd_gostate_goroutine(s, 2, &gi), -RTD_E_NOTFOUND);
	assert_int_equal(rtd_gostate_goroutine(s, 1, &gi), 0);
	assert_int_equal(gi.state, RTD_GO_G_WAITING);
	assert_string_equal(gi.reason, "chan receive");
	assert_string_equal(rtd_go_gstate_name(RTD_GO_G_SYSCALL), "Syscall");
	rtd_gostate_free(s);
	rtd_gotrace_dec_free(d);
}

/* ---- the analyses -------------------------------------------------------------- */

struct seen {
	int goroutines, regions, tasks, gcs;
	int64_t g1_block, g2_exec, g2_total, g2_syscall, region_ns, task_ns, stw_ns;
	char stw_reason[64];
};

static int64_t stat_of(const struct rtd_goan_stat *st, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(st[i].name, name) == 0)
			return st[i].ns;
	return -1;
}

static void on_g(const struct rtd_goan_goroutine *g, void *ctx)
{
	struct seen *s = ctx;
	s->goroutines++;
	if (g->id == 1)
		s->g1_block = stat_of(g->stats, g->nstats, "Block time (chan receive)");
	if (g->id == 2) {
		s->g2_exec = g->exec;
		s->g2_total = g->total;
		s->g2_syscall = stat_of(g->stats, g->nstats, "Syscall execution time");
		assert_string_equal(g->name, "main.worker");
	}
}

static void on_r(const struct rtd_goan_region *r, void *ctx)
{
	struct seen *s = ctx;
	s->regions++;
	assert_string_equal(r->name, "phase");
	assert_int_equal(r->task, 9);
	s->region_ns = r->end - r->start;
}

static void on_t(const struct rtd_goan_task *t, void *ctx)
{
	struct seen *s = ctx;
	s->tasks++;
	assert_int_equal(t->id, 9);
	assert_string_equal(t->name, "job");
	assert_int_equal(t->parent, 0);
	assert_int_equal(t->regions, 1);
	s->task_ns = t->end - t->start;
}

static void on_gc(const struct rtd_goan_gc *gc, void *ctx)
{
	struct seen *s = ctx;
	s->gcs++;
	assert_true(gc->stw);
	s->stw_ns = gc->end - gc->start;
	snprintf(s->stw_reason, sizeof(s->stw_reason), "%s", gc->reason);
}

struct recs {
	int n;
	uint64_t count;
	int64_t ns;
	char leaf[32];
};

static int rec(const struct rtd_goframe *f, size_t n, uint64_t count, int64_t ns, void *ctx)
{
	struct recs *r = ctx;
	r->n++;
	r->count += count;
	r->ns += ns;
	if (n)
		snprintf(r->leaf, sizeof(r->leaf), "%s", f[0].fn);
	return 0;
}

static rtd_goan *analyse(rtd_gotrace_dec *d, struct rtd_goan_opts *o)
{
	struct rtd_gotrace_event e;
	rtd_goan *a = NULL;
	int rc;
	while ((rc = rtd_gotrace_dec_next(d, &e)) > 0) {
		if (!a)
			assert_non_null(a = rtd_goan_new(d, o));
		assert_int_equal(rtd_goan_feed(a, &e), 0);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(rtd_goan_finish(a), 0);
	return a;
}

static void test_analyses(void **state)
{
	(void)state;
	uint8_t buf[1 << 16];
	size_t n = build_trace(buf);
	rtd_gotrace_dec *d = open_dec(buf, n);
	struct seen s = {0};
	const int64_t windows[] = {10, 40, 80, 100, 1000000};
	struct rtd_goan_opts o = {
		.sz = sizeof(o),
		.what = RTD_GOAN_PPROF | RTD_GOAN_GOROUTINES | RTD_GOAN_GC | RTD_GOAN_TASKS,
		.profiles = (1u << RTD_GOAN_PROF_SYNC) | (1u << RTD_GOAN_PROF_SYSCALL) |
			    (1u << RTD_GOAN_PROF_SCHED) | (1u << RTD_GOAN_PROF_NET),
		.mmu_windows = windows, .n_mmu_windows = 5,
		.on_goroutine = on_g, .on_region = on_r, .on_task = on_t, .on_gc = on_gc, .ctx = &s,
	};
	rtd_goan *a = analyse(d, &o);
	assert_int_equal(rtd_goan_semantics(a), RTD_GOAN_GO123);
	/* goroutines: G1 waited 80 ns the first time, and from 400 to the
	 * trace's end (the final sync, 1 ns after the last event) */
	assert_int_equal(s.goroutines, 2);
	assert_int_equal(s.g1_block, 80 + 1);
	assert_int_equal(s.g2_exec, 340 - 130 - 20); /* less its syscall */
	assert_int_equal(s.g2_syscall, 20);
	assert_int_equal(s.g2_total, 340 - 110);
	assert_int_equal(s.regions, 1);
	assert_int_equal(s.region_ns, 35);
	assert_int_equal(s.tasks, 1);
	assert_int_equal(s.task_ns, 45);
	assert_int_equal(s.gcs, 1);
	assert_int_equal(s.stw_ns, 40);
	assert_string_equal(s.stw_reason, "GC mark termination");
	/* sync: the first block counts to the unblock (a transition with a
	 * stack), 80 ns, at the blocking stack; the second never ends */
	struct recs r = {0};
	assert_int_equal(rtd_goan_profile_foreach(a, RTD_GOAN_PROF_SYNC, rec, &r), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.count, 1);
	assert_int_equal(r.ns, 80);
	assert_string_equal(r.leaf, "main.recv");
	/* syscall: from the begin to G2's next transition with a stack: none
	 * (GoSyscallEnd and GoDestroy have none), so nothing - as Go */
	memset(&r, 0, sizeof(r));
	assert_int_equal(rtd_goan_profile_foreach(a, RTD_GOAN_PROF_SYSCALL, rec, &r), 0);
	assert_int_equal(r.n, 0);
	/* sched: G1 runnable from the unblock (a stack) to its next
	 * transition with a stack, the block at 400 (GoStart has none): 200
	 * ns, all inside G1's [StartTime 101, end], at the unblocking stack */
	memset(&r, 0, sizeof(r));
	assert_int_equal(rtd_goan_profile_foreach(a, RTD_GOAN_PROF_SCHED, rec, &r), 0);
	assert_int_equal(r.count, 1);
	assert_int_equal(r.ns, 200);
	assert_string_equal(r.leaf, "main.worker");
	uint64_t cnt;
	int64_t ns;
	assert_int_equal(rtd_goan_profile_total(a, RTD_GOAN_PROF_NET, &cnt, &ns), 0);
	assert_int_equal(cnt, 0);
	assert_int_equal(rtd_goan_profile_total(a, RTD_GOAN_PROF_CPU, &cnt, &ns), -RTD_E_STATE);
	rtd_profile *p;
	assert_int_equal(rtd_goan_profile_build(a, RTD_GOAN_PROF_SYNC, &p), 0);
	assert_int_equal(rtd_profile_total(p), 80);
	rtd_profile_free(p);
	/* MMU, one P: utilization 1 except the 40 ns STW (210-250); the
	 * function runs from 102 (ProcsChange) to the end at 401 with 0 */
	int64_t w;
	assert_true(fabs(rtd_goan_mmu(a, 0, &w) - 0.0) < 1e-12); /* 10 ns inside the pause */
	assert_int_equal(w, 10);
	assert_true(fabs(rtd_goan_mmu(a, 1, NULL) - 0.0) < 1e-12);        /* 40 ns: the pause */
	assert_true(fabs(rtd_goan_mmu(a, 2, NULL) - 40.0 / 80) < 1e-12);  /* 80 ns */
	assert_true(fabs(rtd_goan_mmu(a, 3, NULL) - 60.0 / 100) < 1e-12); /* 100 ns */
	/* longer than the function: the whole function */
	double all = rtd_goan_mmu(a, 4, NULL);
	assert_true(fabs(all - (299.0 - 40.0) / 299.0) < 1e-12);
	assert_true(rtd_goan_mmu(a, 5, NULL) < 0); /* no such window */
	int64_t first, last;
	assert_true(rtd_goan_trace_bounds(a, &first, &last) > 0);
	assert_int_equal(last - first, 301);
	rtd_goan_free(a);
	rtd_gotrace_dec_free(d);
}

static void test_bad_options(void **state)
{
	(void)state;
	uint8_t buf[1 << 16];
	size_t n = build_trace(buf);
	struct rtd_gotrace_opts to = {.sz = sizeof(to), .mode = RTD_GOTRACE_ORDERED};
	rtd_gotrace_dec *d = rtd_gotrace_dec_new(&to);
	struct rtd_goan_opts o = {.sz = sizeof(o), .what = RTD_GOAN_GC};
	/* no header yet */
	assert_null(rtd_goan_new(d, &o));
	assert_true(strstr(rtd_goan_new_error(), "header") != NULL);
	assert_int_equal(rtd_gotrace_dec_feed(d, buf, n), 0);
	struct rtd_gotrace_event e;
	assert_int_equal(rtd_gotrace_dec_next(d, &e), 0); /* header read, events wait */
	o.semantics = RTD_GOAN_GO119;
	assert_null(rtd_goan_new(d, &o));
	assert_true(strstr(rtd_goan_new_error(), "1.22") != NULL);
	o.semantics = 0;
	o.n_mmu_windows = 5000;
	o.mmu_windows = (const int64_t[]){1};
	assert_null(rtd_goan_new(d, &o));
	rtd_goan_free(NULL);
	rtd_gostate_free(NULL);
	rtd_gotrace_dec_free(d);
}

/* The same PCs under another stack id in a later generation are one stack. */
static void test_stacks_across_generations(void **state)
{
	(void)state;
	static struct tb t;
	memset(&t, 0, sizeof(t));
	header(&t);
	for (uint64_t gen = 1; gen <= 2; gen++) {
		batch(&t, gen, 0, 100 * gen);
		ev(&t, PROC_STATUS, 3, U(0), U(0), U(1));
		if (gen == 1) { /* G1 blocks at stack 1 */
			ev(&t, GO_STATUS, 4, U(1), U(1), U(0), U(2));
			ev(&t, GO_BLOCK, 3, U(10), U(4), U(1));
		} else { /* and is unblocked at stack 2: the same PCs */
			ev(&t, GO_STATUS, 4, U(1), U(1), U(-1), U(4));
			ev(&t, GO_UNBLOCK, 4, U(10), U(1), U(1), U(2));
		}
		batch(&t, gen, U(-1), 0);
		ev(&t, FREQ, 1, U(1000000000));
		batch(&t, gen, U(-1), 0);
		ev(&t, STACKS, 0);
		ev(&t, STACK, 6, U(gen), U(1), U(0x2000), U(3), U(2), U(20));
		batch(&t, gen, U(-1), 0);
		ev(&t, STRINGS, 0);
		str(&t, 2, "main.go");
		str(&t, 3, "main.recv");
		str(&t, 4, "chan receive");
	}
	close_batch(&t);
	rtd_gotrace_dec *d = open_dec(t.b, t.n);
	rtd_gostate *s = rtd_gostate_new(d);
	struct rtd_gotrace_event e;
	struct rtd_goev g;
	uint32_t ids[2];
	int nb = 0;
	while (rtd_gotrace_dec_next(d, &e) > 0) {
		assert_int_equal(rtd_gostate_feed(s, &e), 0);
		while (rtd_gostate_next(s, &g) > 0)
			if (g.kind == RTD_GOEV_STATE && g.stack) {
				assert_true(nb < 2);
				ids[nb++] = g.stack;
			}
	}
	assert_int_equal(nb, 2);
	assert_true(ids[0] != 0);
	assert_int_equal(ids[0], ids[1]);
	const struct rtd_goframe *f;
	assert_int_equal(rtd_gostate_stack(s, ids[0], &f), 1);
	assert_string_equal(f[0].fn, "main.recv");
	assert_int_equal(f[0].pc, 0x2000);
	assert_int_equal(f[0].line, 20);
	rtd_gostate_free(s);
	rtd_gotrace_dec_free(d);
}

/* A GC that begins in one generation and ends in the next (GCActive at
 * the second's start): one cycle from its GCBegin, not one "begun before
 * the trace". */
struct gcs {
	int n;
	int64_t start, end;
};

static void on_gc_cycle(const struct rtd_goan_gc *gc, void *ctx)
{
	struct gcs *s = ctx;
	if (gc->stw)
		return;
	s->n++;
	s->start = gc->start;
	s->end = gc->end;
}

static void test_gc_across_generations(void **state)
{
	(void)state;
	static struct tb t;
	memset(&t, 0, sizeof(t));
	header(&t);
	for (uint64_t gen = 1; gen <= 2; gen++) {
		batch(&t, gen, 0, 100 * gen);
		ev(&t, PROC_STATUS, 3, U(0), U(0), U(1));
		ev(&t, GO_STATUS, 4, U(1), U(1), U(0), U(2));
		if (gen == 1) {
			ev(&t, PROCS_CHANGE, 3, U(1), U(1), U(0));
			ev(&t, GC_BEGIN, 3, U(10), U(1), U(1)); /* t=112 */
		} else {
			ev(&t, GC_ACTIVE, 2, U(10), U(2));      /* t=211 */
			ev(&t, GC_END, 2, U(40), U(3));         /* t=251 */
		}
		tables(&t, gen);
	}
	close_batch(&t);
	rtd_gotrace_dec *d = open_dec(t.b, t.n);
	struct gcs s = {0};
	struct rtd_goan_opts o = {.sz = sizeof(o), .what = RTD_GOAN_GC,
				  .on_gc = on_gc_cycle, .ctx = &s};
	rtd_goan *a = analyse(d, &o);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.start, 112);
	assert_int_equal(s.end, 251);
	rtd_goan_free(a);
	rtd_gotrace_dec_free(d);
}

/* ---- invariants on real traces ---------------------------------------------- */

/* A profile's records in order, hashed: frames (PC, function, file,
 * line), count and nanoseconds of each. */
struct prof_sum {
	uint64_t h, n;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = mix(h, (unsigned char)*s);
	return mix(h, 0);
}

static int sum_rec(const struct rtd_goframe *f, size_t n, uint64_t count, int64_t ns, void *ctx)
{
	struct prof_sum *p = ctx;
	p->n++;
	p->h = mix(mix(mix(p->h, n), count), (uint64_t)ns);
	for (size_t i = 0; i < n; i++)
		p->h = mix(mix_str(mix_str(mix(p->h, f[i].pc), f[i].fn), f[i].file), f[i].line);
	return 0;
}

static void prof_sums(const rtd_goan *a, struct prof_sum out[RTD_GOAN_PROF_COUNT])
{
	for (unsigned w = 0; w < RTD_GOAN_PROF_COUNT; w++) {
		out[w] = (struct prof_sum){0, 0};
		assert_int_equal(rtd_goan_profile_foreach(a, w, sum_rec, &out[w]), 0);
		uint64_t count;
		int64_t ns;
		assert_int_equal(rtd_goan_profile_total(a, w, &count, &ns), 0);
		out[w].h = mix(mix(out[w].h, count), (uint64_t)ns);
	}
}

/* The profiles alone (a Go 1.22+ trace's goroutine transitions handed
 * straight to them) equal the profiles computed beside the other analyses
 * (the tracker's queued events and the Summarizer's StartTime). */
static void check_profiles_alone(const uint8_t *b, size_t n, const char *name, unsigned sem)
{
	struct prof_sum all[RTD_GOAN_PROF_COUNT], alone[RTD_GOAN_PROF_COUNT];
	for (int k = 0; k < 2; k++) {
		rtd_gotrace_dec *d = open_dec(b, n);
		struct rtd_goan_opts o = {.sz = sizeof(o), .what = k ? RTD_GOAN_PPROF : 15,
					  .profiles = 31, .semantics = sem};
		rtd_goan *a = analyse(d, &o);
		prof_sums(a, k ? alone : all);
		rtd_goan_free(a);
		rtd_gotrace_dec_free(d);
	}
	for (unsigned w = 0; w < RTD_GOAN_PROF_COUNT; w++) {
		if (all[w].h != alone[w].h || all[w].n != alone[w].n)
			print_message("%s: profile %u: %llu records alone, %llu beside the others\n",
				      name, w, (unsigned long long)alone[w].n,
				      (unsigned long long)all[w].n);
		assert_true(all[w].h == alone[w].h && all[w].n == alone[w].n);
	}
}

/* Every goroutine transition starts from the state the last one left it
 * in; the tracker's table agrees. Runs the analyses too (no error). */
static void check_trace(const uint8_t *b, size_t n, const char *name)
{
	rtd_gotrace_dec *d = open_dec(b, n);
	rtd_gostate *s = rtd_gostate_new(d);
	assert_non_null(s);
	struct {
		uint64_t id;
		uint8_t st;
	} *last = calloc(1 << 16, sizeof(*last));
	assert_non_null(last);
	struct rtd_gotrace_event e;
	struct rtd_goev g;
	int rc;
	size_t transitions = 0, old = 0;
	bool v1 = false;
	while ((rc = rtd_gotrace_dec_next(d, &e)) > 0) {
		v1 = rtd_gotrace_dec_version(d) < 1022;
		assert_int_equal(rtd_gostate_feed(s, &e), 0);
		while (rtd_gostate_next(s, &g) > 0) {
			if (g.kind != RTD_GOEV_STATE || g.resource != RTD_GOEV_RES_GOROUTINE)
				continue;
			transitions++;
			size_t h = (size_t)(g.id * 0x9e3779b97f4a7c15ULL >> 48);
			while (last[h].id && last[h].id != g.id + 1)
				h = (h + 1) & 0xffff;
			if (last[h].id && last[h].st != g.from) {
				print_message("%s: goroutine %llu goes %s -> %s at %lld after %s\n", name,
					      (unsigned long long)g.id, rtd_go_gstate_name(g.from),
					      rtd_go_gstate_name(g.to), (long long)g.ts,
					      rtd_go_gstate_name(last[h].st));
				old++;
			}
			last[h].id = g.id + 1;
			last[h].st = g.to;
			/* the table is as of the end of the fed event; an old
			 * syscall's transitions (no src) come with the next
			 * event of the goroutine, which may end it */
			struct rtd_goroutine_info gi;
			if (g.to != RTD_GO_G_NOTEXIST && g.src &&
			    rtd_gostate_goroutine(s, g.id, &gi) != 0) {
				print_message("%s: goroutine %llu (%s -> %s at %lld) not in the table\n",
					      name, (unsigned long long)g.id, rtd_go_gstate_name(g.from),
					      rtd_go_gstate_name(g.to), (long long)g.ts);
				old++;
			}
		}
	}
	assert_true(rc == 0 || v1); /* stress_1_5_unordered fails ordering */
	assert_int_equal(old, 0);
	assert_int_equal(rtd_gostate_finish(s), 0);
	free(last);
	rtd_gostate_free(s);
	rtd_gotrace_dec_free(d);
	if (rc < 0)
		return;
	/* every analysis, and Go 1.23's semantics too on the smaller traces
	 * (the sanitizer build runs this on every vector) */
	for (int k = 0; k < (n < 65536 ? 2 : 1); k++) {
		d = open_dec(b, n);
		struct rtd_goan_opts o = {.sz = sizeof(o), .what = 15, .profiles = 31,
					  .semantics = k ? RTD_GOAN_GO123 : 0};
		rtd_goan *a = analyse(d, &o);
		rtd_goan_free(a);
		rtd_gotrace_dec_free(d);
	}
	if (!v1) {
		check_profiles_alone(b, n, name, RTD_GOAN_GO123);
		check_profiles_alone(b, n, name, RTD_GOAN_GO122);
	}
	print_message("%s: %zu transitions\n", name, transitions);
}

/*
 * A goroutine whose tracker entry goes while a profile still tracks it
 * (the profiles keep its interval, as Go's map by goroutine id does) and
 * whose id comes back (a crafted Go 1.23 trace; Go never reuses an id):
 *   t=100 P0 running, G1 running, G3 and G4 runnable
 *   t=120 G1 blocks ("chan receive", stack 2)       -> sync tracks G1
 *   t=125 G1 unblocked without a stack, t=130 starts -> still tracked
 *   t=140 G1 destroyed (no stack)                    -> entry gone
 *   t=150 G3 starts, t=160 G3 creates G1 blocked (stack 1)
 *   t=200 G3 unblocks G1 (stack 1)                   -> 80 ns of sync
 * and one the Summarizer drops while a profile tracks it:
 *   t=210 G3 blocks (chan receive, stack 2)          -> sync tracks G3
 *   t=215 G4 starts, t=220 unblocks G3 without a stack
 *   t=225 G4 blocks (chan receive, stack 1), t=230 G3 starts
 *   t=235 G3 blocks "forever" (stack 2)              -> no StartTime now
 *   t=240 G1 starts, t=250 unblocks G3 (stack 1)     -> not counted
 */
static void test_profile_outlives_goroutine(void **state)
{
	(void)state;
	enum { GO_CREATE_BLOCKED = 47 };
	static struct tb t;
	memset(&t, 0, sizeof(t));
	header(&t);
	t.b[6] = '3'; /* go 1.23 trace */
	batch(&t, 1, 0, 100);
	ev(&t, PROC_STATUS, 3, U(0), U(0), U(1));
	ev(&t, GO_STATUS, 4, U(0), U(1), U(0), U(2));
	ev(&t, GO_STATUS, 4, U(0), U(3), U(-1), U(1));
	ev(&t, GO_STATUS, 4, U(0), U(4), U(-1), U(1));
	ev(&t, GO_BLOCK, 3, U(20), U(4), U(2));
	ev(&t, GO_UNBLOCK, 4, U(5), U(1), U(1), U(0));
	ev(&t, GO_START, 3, U(5), U(1), U(2));
	ev(&t, GO_DESTROY, 1, U(10));
	ev(&t, GO_START, 3, U(10), U(3), U(1));
	ev(&t, GO_CREATE_BLOCKED, 4, U(10), U(1), U(1), U(1));
	ev(&t, GO_UNBLOCK, 4, U(40), U(1), U(1), U(1));
	ev(&t, GO_BLOCK, 3, U(10), U(4), U(2));
	ev(&t, GO_START, 3, U(5), U(4), U(1));
	ev(&t, GO_UNBLOCK, 4, U(5), U(3), U(2), U(0));
	ev(&t, GO_BLOCK, 3, U(5), U(4), U(1));
	ev(&t, GO_START, 3, U(5), U(3), U(3));
	ev(&t, GO_BLOCK, 3, U(5), U(8), U(2));
	ev(&t, GO_START, 3, U(5), U(1), U(2));
	ev(&t, GO_UNBLOCK, 4, U(10), U(3), U(4), U(1));
	tables(&t, 1);
	close_batch(&t);
	check_profiles_alone(t.b, t.n, "outlives", RTD_GOAN_GO123);
	rtd_gotrace_dec *d = open_dec(t.b, t.n);
	struct rtd_goan_opts o = {.sz = sizeof(o), .what = RTD_GOAN_PPROF,
				  .profiles = 1u << RTD_GOAN_PROF_SYNC};
	rtd_goan *a = analyse(d, &o);
	struct recs r = {0};
	assert_int_equal(rtd_goan_profile_foreach(a, RTD_GOAN_PROF_SYNC, rec, &r), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.ns, 80);
	assert_string_equal(r.leaf, "main.recv");
	rtd_goan_free(a);
	rtd_gotrace_dec_free(d);
}

static void test_shared_vectors(void **state)
{
	(void)state;
	const char *dir = rtd_test_vector("testdata/gotrace/v1");
	if (!dir)
		skip();
	DIR *dd = opendir(dir);
	assert_non_null(dd);
	struct dirent *de;
	int n = 0;
	while ((de = readdir(dd))) {
		if (de->d_name[0] == '.' || strstr(de->d_name, "_1_5_"))
			continue; /* Go 1.5 traces order by a global sequence only */
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		size_t len = 0;
		uint8_t *b = rtd_test_slurp(path, &len);
		assert_non_null(b);
		check_trace(b, len, de->d_name);
		free(b);
		n++;
	}
	closedir(dd);
	assert_true(n >= 10);
}

/* golang/exp's Go 1.22+ vectors that decode (the failing ones are the
 * decoder's tests) */
static void test_v2_vectors(void **state)
{
	(void)state;
	const char *dir = rtd_test_vector("testdata/gotrace/v2");
	if (!dir)
		skip();
	assert_true(rtd_test_each_go_vector(dir, true, check_trace) >= 10);
}

/* capture: hosts that are refused before any request (a request that
 * reaches a server is the capture integration test's) */
static void test_capture_bad_hosts(void **state)
{
	(void)state;
	char err[256];
	struct rtd_gocapture_result res;
	const char *bad[] = {"", "ftp://127.0.0.1:1/", "user@127.0.0.1:1", "127.0.0.1 :1", "file:///etc/passwd"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rtd_gocapture_opts o = {.sz = sizeof(o), .host = bad[i], .seconds = 0.1};
		assert_int_equal(rtd_gocapture_run(&o, &res, err, sizeof(err)), -EINVAL);
		assert_true(err[0] != 0);
	}
	struct rtd_gocapture_opts o = {.sz = 8, .host = "127.0.0.1:1"};
	assert_int_equal(rtd_gocapture_run(&o, NULL, err, sizeof(err)), -EINVAL);
	/* the URL: the default path, fractional seconds */
	o = (struct rtd_gocapture_opts){.sz = sizeof(o), .host = "127.0.0.1:1", .seconds = 0.25,
					.connect_timeout = 0.5};
	int rc = rtd_gocapture_run(&o, &res, err, sizeof(err));
	assert_true(rc == -ECONNREFUSED || rc == -ETIMEDOUT);
	assert_string_equal(res.url, "http://127.0.0.1:1/debug/pprof/trace?seconds=0.25");
	assert_int_equal(res.bytes, 0);
	char host[64];
	assert_int_equal(rtd_gocapture_find(-1, host, sizeof(host), err, sizeof(err)), -ESRCH);
}

/* Durations as Go's time.Duration.String() writes them (the values of
 * Go's own tests of it, src/time/time_test.go), and cut to a small buffer
 * as snprintf() cuts. */
static void test_duration_str(void **state)
{
	(void)state;
	static const struct {
		int64_t ns;
		const char *s;
	} cases[] = {
		{0, "0s"},
		{1, "1ns"},
		{1100, "1.1\xc2\xb5s"},
		{2200000, "2.2ms"},
		{3300000000, "3.3s"},
		{4 * 60000000000ll + 5000000000, "4m5s"},
		{4 * 60000000000ll + 5001000000, "4m5.001s"},
		{5 * 3600000000000ll + 6 * 60000000000ll + 7001000000, "5h6m7.001s"},
		{8 * 60000000000ll + 1, "8m0.000000001s"},
		{-1, "-1ns"},
		{INT64_MAX, "2562047h47m16.854775807s"},
		{INT64_MIN, "-2562047h47m16.854775808s"},
	};
	char b[32];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(rtd_goan_duration_str(cases[i].ns, b, sizeof(b)),
				 (int)strlen(cases[i].s));
		assert_string_equal(b, cases[i].s);
	}
	char small[4];
	assert_int_equal(rtd_goan_duration_str(3300000000, small, sizeof(small)), 4);
	assert_string_equal(small, "3.3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracker_transitions),
		cmocka_unit_test(test_analyses),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_duration_str),
		cmocka_unit_test(test_stacks_across_generations),
		cmocka_unit_test(test_gc_across_generations),
		cmocka_unit_test(test_profile_outlives_goroutine),
		cmocka_unit_test(test_shared_vectors),
		cmocka_unit_test(test_v2_vectors),
		cmocka_unit_test(test_capture_bad_hosts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
