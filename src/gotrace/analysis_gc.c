/* SPDX-License-Identifier: MIT */
/*
 * analysis_gc.c - GC cycles, stop-the-world pauses, mutator utilization
 * and its minimum (MMU) over windows of given sizes.
 *
 * The utilization functions are Go's: MutatorUtilization (Go 1.19,
 * internal/trace/gc.go) over the old-format events, MutatorUtilizationV2
 * (Go 1.22+) over the state tracker's events, with the same flags; one
 * function for the whole program, or one per P.
 *
 * The MMU is what Go's MMUCurve.MMU gives: the lowest mean utilization of
 * any window of the size inside the function's time span (the span when
 * the window is longer). Go keeps every function whole and searches it in
 * bands; here each function streams through one evaluator per window
 * size. The windowed mean is piecewise linear in the window's start, so
 * its minimum is at a start where either edge meets a change of the
 * function; the evaluator looks at exactly those starts, keeping only
 * the changes of the last window, and integrates as Go does (cumulative
 * float64 sums of utilization times nanoseconds from the function's
 * start, a partial step at each edge), so the values are Go's to its
 * rounding.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gotrace/analysis_int.h"
#include "gotrace/gotrace_int.h"

/* ---- one utilization function and its MMU evaluators --------------------- */

struct cpt {
	int64_t t;
	double u, F; /* utilization from t on; integral from the start to t */
};

struct mwin {
	int64_t w;
	double mmu;
	uint64_t li; /* next point to try as the window's left edge */
	uint64_t lp; /* the non-strict predecessor of that edge's right end */
	uint64_t rp; /* the non-strict predecessor of the last right edge's start */
};

struct series {
	bool started, done;
	/* Go's util slice until the first sync (Go 1.22+ may still change it) */
	struct util_pt {
		int64_t t;
		double u;
	} *hold;
	size_t nhold, caphold;
	bool has_pend;
	struct util_pt pend; /* the last point: addUtil may still lower it */
	/* committed points still needed: absolute indices [base, base + n) */
	struct cpt *ring;
	size_t cap, head, n;
	uint64_t base;
	uint64_t npoints; /* Go's len(util) */
	int64_t t0;
	struct mwin *w;
};

static struct cpt *at(struct series *s, uint64_t i)
{
	return &s->ring[(s->head + (size_t)(i - s->base)) & (s->cap - 1)];
}

/* F at time x, from its non-strict predecessor, as Go's integrator */
static double integ(struct series *s, uint64_t *pred, int64_t x)
{
	uint64_t end = s->base + s->n;
	while (*pred + 1 < end && at(s, *pred + 1)->t <= x)
		(*pred)++;
	struct cpt *p = at(s, *pred);
	return x != p->t ? p->F + p->u * (double)(x - p->t) : p->F;
}

static int commit(struct series *s, size_t nwin, int64_t t, double u)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 64;
		if (nc > RTD_GOAN_MAX_WINDOW_POINTS)
			return -RTD_E_CAP;
		struct cpt *r = malloc(nc * sizeof(*r));
		if (!r)
			return -ENOMEM;
		for (size_t i = 0; i < s->n; i++)
			r[i] = s->ring[(s->head + i) & (s->cap - 1)];
		free(s->ring);
		s->ring = r;
		s->cap = nc;
		s->head = 0;
	}
	double F = 0;
	if (s->n) {
		struct cpt *p = at(s, s->base + s->n - 1);
		F = p->F + p->u * (double)(t - p->t);
	} else {
		s->t0 = t;
	}
	s->ring[(s->head + s->n) & (s->cap - 1)] = (struct cpt){t, u, F};
	s->n++;
	s->npoints++;
	uint64_t j = s->base + s->n - 1;
	uint64_t keep = j;
	for (size_t k = 0; k < nwin; k++) {
		struct mwin *m = &s->w[k];
		int64_t w = m->w;
		if (w <= 0)
			continue;
		/* the window ending at this change */
		if (t - w >= s->t0) {
			double mu = (F - integ(s, &m->rp, t - w)) / (double)w;
			if (mu < m->mmu)
				m->mmu = mu;
		}
		/* windows starting at earlier changes that now end */
		while (m->li <= j && at(s, m->li)->t + w <= t) {
			struct cpt *l = at(s, m->li);
			if (m->lp < m->li)
				m->lp = m->li;
			double mu = (integ(s, &m->lp, l->t + w) - l->F) / (double)w;
			if (mu < m->mmu)
				m->mmu = mu;
			m->li++;
		}
		if (m->li < keep)
			keep = m->li;
		if (m->rp < keep)
			keep = m->rp;
	}
	while (s->base < keep) {
		s->head = (s->head + 1) & (s->cap - 1);
		s->base++;
		s->n--;
	}
	return 0;
}

/*
 * Go's MMUCurve searches the function in bands (1000, or one per change
 * when fewer) and evaluates the window at the start of each band it
 * refines, also where that window runs past the function's end, which
 * Go integrates as utilization 0 (the function's last value). Those
 * bands hold the function's final 0, so Go always refines them, and for
 * windows that reach the last bands (1 ns windows; short traces) Go's
 * MMU is that value. Reproduce it: the band starts after the last window
 * inside the function, with Go's band arithmetic (mmuSeries, mkBandUtil).
 */
static void go_band_starts(struct series *s, struct mwin *m, int64_t dur)
{
	int64_t w = m->w < dur ? m->w : dur;
	if (w <= 0 || s->n == 0)
		return;
	int64_t nb = s->npoints < 1000 ? (int64_t)s->npoints : 1000;
	int64_t bd = (dur + nb - 1) / nb;
	if (bd < 1)
		bd = 1;
	int64_t max_bands = (w + 2 * (bd - 1)) / bd;
	int64_t n_util = nb + 1 - max_bands + 1;
	struct cpt *last = at(s, s->base + s->n - 1);
	int64_t util_end = last->t - w;
	/* the first band starting past util_end */
	int64_t i0 = (util_end - s->t0) / bd + 1;
	if (i0 < 0)
		i0 = 0;
	uint64_t pred = s->base;
	for (int64_t i = i0; i < n_util; i++) {
		int64_t x = s->t0 + i * bd;
		if (x <= util_end)
			continue;
		double fx = x >= last->t ? last->F : integ(s, &pred, x);
		double mu = (last->F - fx) / (double)w;
		if (mu < m->mmu)
			m->mmu = mu;
	}
}

/* ---- GC state -------------------------------------------------------------- */

struct gcp {
	int gc;      /* > 0: the P is doing GC work */
	size_t series;
};

struct ga_gc {
	struct ga_ctx *c;
	bool v2, perproc;
	unsigned flags;
	size_t nwin;
	int64_t *win;
	/* series */
	struct series *s;
	size_t ns, caps;
	/* Ps, as Go's ps slice */
	struct gcp *ps;
	size_t nps, capps;
	int stw;
	size_t last_gcps, last_nps; /* record(): the last utilization's */
	double last_u;
	bool hold;       /* Go 1.22+: util may still be fixed up (before a sync) */
	bool seen_sync;
	struct procs {
		int64_t t;
		size_t n;
	} *procs;        /* gomaxprocs changes, while holding */
	size_t nprocs, capprocs;
	struct rtd_vmap assists; /* Go 1.19: goroutines in mark assist */
	struct rtd_vmap bgmark;  /* goroutines that are background mark workers */
	struct rtd_vmap running; /* Go 1.19: goroutines started (their next block is the Link) */
	struct rtd_vmap states;  /* Go 1.22+: goroutine -> its state (Executing) */
	struct rtd_vmap in_gc;   /* Go 1.22+: goroutines in mark assist */
	int64_t last_ts;
	bool any;
	/* GC cycles and pauses */
	uint64_t ncycles, npauses;
	int64_t gc_start;
	bool gc_open;
	const char *gc_reason;
	struct stwopen {
		int64_t start;
		const char *reason;
		bool gc;
		int64_t p;
		uint64_t g;
	} *stws;
	size_t nstws, capstws;
	bool done;
};

#define NOMEM(g) ga_fail((g)->c, -ENOMEM, "out of memory")

static const int64_t default_windows[] = {1000000, 10000000, 100000000, 1000000000};

struct ga_gc *ga_gc_new(struct ga_ctx *c)
{
	struct ga_gc *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->c = c;
	g->v2 = c->sem != RTD_GOAN_GO119;
	g->flags = c->o.mmu_flags ? c->o.mmu_flags : RTD_GOAN_UTIL_DEFAULT;
	g->perproc = g->flags & RTD_GOAN_UTIL_PERPROC;
	const int64_t *w = c->o.mmu_windows ? c->o.mmu_windows : default_windows;
	g->nwin = c->o.mmu_windows ? c->o.n_mmu_windows : 4;
	g->win = malloc((g->nwin ? g->nwin : 1) * sizeof(*g->win));
	if (!g->win) {
		free(g);
		return NULL;
	}
	memcpy(g->win, w, g->nwin * sizeof(*w));
	g->hold = g->v2 && c->ver >= 1022;
	rtd_vmap_init(&g->assists, 0, RTD_GOAN_MAX_GOROUTINES);
	rtd_vmap_init(&g->bgmark, 0, RTD_GOAN_MAX_GOROUTINES);
	rtd_vmap_init(&g->running, 0, RTD_GOAN_MAX_GOROUTINES);
	rtd_vmap_init(&g->states, 1, RTD_GOAN_MAX_GOROUTINES);
	rtd_vmap_init(&g->in_gc, 0, RTD_GOAN_MAX_GOROUTINES);
	return g;
}

static void series_free(struct series *s)
{
	free(s->hold);
	free(s->ring);
	free(s->w);
}

void ga_gc_free(struct ga_gc *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->ns; i++)
		series_free(&g->s[i]);
	free(g->s);
	free(g->ps);
	free(g->procs);
	free(g->win);
	free(g->stws);
	rtd_vmap_free(&g->assists);
	rtd_vmap_free(&g->bgmark);
	rtd_vmap_free(&g->running);
	rtd_vmap_free(&g->states);
	rtd_vmap_free(&g->in_gc);
	free(g);
}

static int new_series(struct ga_gc *g, size_t *idx)
{
	if (g->ns == g->caps) {
		size_t nc = g->caps ? g->caps * 2 : 8;
		struct series *s = realloc(g->s, nc * sizeof(*s));
		if (!s)
			return NOMEM(g);
		g->s = s;
		g->caps = nc;
	}
	struct series *s = &g->s[g->ns];
	memset(s, 0, sizeof(*s));
	s->w = calloc(g->nwin ? g->nwin : 1, sizeof(*s->w));
	if (!s->w)
		return NOMEM(g);
	for (size_t k = 0; k < g->nwin; k++) {
		s->w[k].w = g->win[k];
		s->w[k].mmu = 1.0;
		if (g->win[k] <= 0) /* never evaluated: keeps no point */
			s->w[k].li = s->w[k].rp = UINT64_MAX;
	}
	*idx = g->ns++;
	return 0;
}

static int commit_or_fail(struct ga_gc *g, struct series *s, int64_t t, double u)
{
	int rc = commit(s, g->nwin, t, u);
	if (rc == -RTD_E_CAP)
		return ga_fail(g->c, rc, "more than %u utilization changes inside one MMU window",
			       RTD_GOAN_MAX_WINDOW_POINTS);
	return rc < 0 ? NOMEM(g) : 0;
}

/* Go's addUtil */
static int add_util(struct ga_gc *g, size_t idx, int64_t t, double u)
{
	struct series *s = &g->s[idx];
	if (g->hold) {
		if (s->nhold) {
			struct util_pt *l = &s->hold[s->nhold - 1];
			if (u == l->u)
				return 0;
			if (t == l->t) {
				if (u < l->u)
					l->u = u;
				return 0;
			}
		}
		if (s->nhold == s->caphold) {
			size_t nc = s->caphold ? s->caphold * 2 : 64;
			struct util_pt *h = realloc(s->hold, nc * sizeof(*h));
			if (!h)
				return NOMEM(g);
			s->hold = h;
			s->caphold = nc;
		}
		s->hold[s->nhold++] = (struct util_pt){t, u};
		return 0;
	}
	if (s->has_pend) {
		if (u == s->pend.u)
			return 0;
		if (t == s->pend.t) {
			if (u < s->pend.u)
				s->pend.u = u;
			return 0;
		}
		int rc = commit_or_fail(g, s, s->pend.t, s->pend.u);
		if (rc < 0)
			return rc;
	}
	s->has_pend = true;
	s->pend = (struct util_pt){t, u};
	return 0;
}

/* The first sync: the functions so far are final; stream them on. */
static int release(struct ga_gc *g)
{
	g->hold = false;
	for (size_t i = 0; i < g->ns; i++) {
		struct series *s = &g->s[i];
		for (size_t k = 0; k < s->nhold; k++) {
			if (s->has_pend) {
				int rc = commit_or_fail(g, s, s->pend.t, s->pend.u);
				if (rc < 0)
					return rc;
			}
			s->has_pend = true;
			s->pend = s->hold[k];
		}
		free(s->hold);
		s->hold = NULL;
		s->nhold = s->caphold = 0;
	}
	free(g->procs);
	g->procs = NULL;
	g->nprocs = g->capprocs = 0;
	return 0;
}

static int set_procs(struct ga_gc *g, int64_t ts, uint64_t n64)
{
	size_t n = n64 > RTD_GOTRACE_MAX_PROCS ? RTD_GOTRACE_MAX_PROCS : (size_t)n64;
	int rc;
	if (g->nps > n) {
		if (g->perproc)
			for (size_t i = n; i < g->nps; i++)
				if ((rc = add_util(g, g->ps[i].series, ts, 0)) < 0)
					return rc;
		g->nps = n;
	}
	if (n > g->capps) {
		struct gcp *p = realloc(g->ps, n * sizeof(*p));
		if (!p)
			return NOMEM(g);
		g->ps = p;
		g->capps = n;
	}
	while (g->nps < n) {
		size_t series = 0;
		if (g->perproc || g->ns == 0) {
			if ((rc = new_series(g, &series)) < 0)
				return rc;
			if ((rc = add_util(g, series, ts, 1)) < 0)
				return rc;
		}
		g->ps[g->nps++] = (struct gcp){0, series};
	}
	if (g->hold && (g->nprocs == 0 || g->procs[g->nprocs - 1].n != n)) {
		if (g->nprocs == g->capprocs) {
			size_t nc = g->capprocs ? g->capprocs * 2 : 8;
			struct procs *p = realloc(g->procs, nc * sizeof(*p));
			if (!p)
				return NOMEM(g);
			g->procs = p;
			g->capprocs = nc;
		}
		g->procs[g->nprocs++] = (struct procs){ts, n};
	}
	return 0;
}

/* ps[p].gc += d, for a P Go's slice has (Go would stop on another) */
static void pgc(struct ga_gc *g, int64_t p, int d)
{
	if (p >= 0 && (uint64_t)p < g->nps)
		g->ps[p].gc += d;
}

/* after each event: the utilization now */
static int record(struct ga_gc *g, int64_t ts)
{
	if (g->nps == 0)
		return 0;
	if (!g->perproc) {
		size_t gcps = 0;
		if (g->stw > 0) {
			gcps = g->nps;
		} else {
			for (size_t i = 0; i < g->nps; i++)
				gcps += g->ps[i].gc > 0;
		}
		/* the same counts give the same value: no division (most events
		 * change neither) */
		if (gcps != g->last_gcps || g->nps != g->last_nps) {
			g->last_gcps = gcps;
			g->last_nps = g->nps;
			g->last_u = 1 - (double)gcps / (double)g->nps;
		}
		return add_util(g, 0, ts, g->last_u);
	}
	for (size_t i = 0; i < g->nps; i++) {
		double u = g->stw > 0 || g->ps[i].gc > 0 ? 0.0 : 1.0;
		int rc = add_util(g, g->ps[i].series, ts, u);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static bool has(struct rtd_vmap *t, uint64_t k)
{
	/* most are empty most of the time (assists, background workers) */
	return t->n && rtd_vmap_get(t, k, false, NULL, NULL) != NULL;
}

static int put(struct ga_gc *g, struct rtd_vmap *t, uint64_t k)
{
	int err = -ENOMEM;
	return rtd_vmap_get(t, k, true, NULL, &err) ? 0 : ga_fail(g->c, err, "out of memory");
}

/* ---- GC cycles and pauses ---------------------------------------------------- */

static void cycle_end(struct ga_gc *g, int64_t start, int64_t end)
{
	struct rtd_goan_gc o = {false, ++g->ncycles, start, end, "", true};
	if (g->c->o.on_gc)
		g->c->o.on_gc(&o, g->c->o.ctx);
}

static int stw_begin(struct ga_gc *g, int64_t ts, const char *reason, bool gc, int64_t p,
		     uint64_t goid)
{
	if (g->nstws == g->capstws) {
		size_t nc = g->capstws ? g->capstws * 2 : 4;
		struct stwopen *s = realloc(g->stws, nc * sizeof(*s));
		if (!s)
			return NOMEM(g);
		g->stws = s;
		g->capstws = nc;
	}
	g->stws[g->nstws++] = (struct stwopen){ts, reason, gc, p, goid};
	return 0;
}

/* The pause an end closes: Go 1.19 before 1.10 pairs them per P, later
 * ones globally; Go 1.22+ per goroutine. */
static void stw_end(struct ga_gc *g, int64_t ts, int64_t p, uint64_t goid, bool by_p, bool by_g)
{
	for (size_t i = g->nstws; i-- > 0;) {
		struct stwopen *s = &g->stws[i];
		if ((by_p && s->p != p) || (by_g && s->g != goid))
			continue;
		struct rtd_goan_gc o = {true, ++g->npauses, s->start, ts, s->reason, s->gc};
		if (g->c->o.on_gc)
			g->c->o.on_gc(&o, g->c->o.ctx);
		g->stws[i] = g->stws[--g->nstws];
		return;
	}
	/* an end whose begin is not in the trace */
	struct rtd_goan_gc o = {true, ++g->npauses, -1, ts, "", true};
	if (g->c->o.on_gc)
		g->c->o.on_gc(&o, g->c->o.ctx);
}

/* ---- Go 1.19: MutatorUtilization --------------------------------------------- */

static bool bg_label(struct ga_gc *g, const char *label)
{
	if (!(g->flags & RTD_GOAN_UTIL_BACKGROUND) || strncmp(label, "GC ", 3) != 0 ||
	    strcmp(label, "GC (idle)") == 0)
		return false;
	return !(g->perproc && strcmp(label, "GC (dedicated)") == 0);
}

int ga_gc_v1(struct ga_gc *g, const struct rtd_gotrace_event *ev)
{
	int rc = 0;
	int64_t ts = ev->ts;
	g->last_ts = ts;
	g->any = true;
	switch (ev->type) {
	case RTD_GO_EV_GOMAXPROCS:
		rc = set_procs(g, ts, ev->args[0]);
		break;
	case RTD_GO_EV_GC_START:
		g->gc_start = ts;
		g->gc_open = true;
		return 0;
	case RTD_GO_EV_GC_DONE:
		cycle_end(g, g->gc_open ? g->gc_start : -1, ts);
		g->gc_open = false;
		return 0;
	case RTD_GO_EV_GC_STW_START:
		if (g->flags & RTD_GOAN_UTIL_STW)
			g->stw++;
		rc = stw_begin(g, ts, ev->nsargs ? ga_intern(&g->c->strs, ev->sargs[0], ev->sarg_lens[0])
				      : ga_intern(&g->c->strs, "", 0), true, ev->p, ev->g);
		break;
	case RTD_GO_EV_GC_STW_DONE:
		if (g->flags & RTD_GOAN_UTIL_STW)
			g->stw--;
		stw_end(g, ts, ev->p, ev->g, g->c->ver < 1010, false);
		break;
	case RTD_GO_EV_GC_MARK_ASSIST_START:
		if (g->flags & RTD_GOAN_UTIL_ASSIST) {
			pgc(g, ev->p, 1);
			rc = put(g, &g->assists, ev->g);
		}
		break;
	case RTD_GO_EV_GC_MARK_ASSIST_DONE:
		if (g->flags & RTD_GOAN_UTIL_ASSIST) {
			pgc(g, ev->p, -1);
			rtd_vmap_del(&g->assists, ev->g);
		}
		break;
	case RTD_GO_EV_GC_SWEEP_START:
		if (g->flags & RTD_GOAN_UTIL_SWEEP)
			pgc(g, ev->p, 1);
		break;
	case RTD_GO_EV_GC_SWEEP_DONE:
		if (g->flags & RTD_GOAN_UTIL_SWEEP)
			pgc(g, ev->p, -1);
		break;
	case RTD_GO_EV_GO_START_LABEL:
		if (ev->nsargs && bg_label(g, ev->sargs[0])) {
			rc = put(g, &g->bgmark, ev->g);
			pgc(g, ev->p, 1);
		}
		/* fallthrough */
	case RTD_GO_EV_GO_START:
		if (has(&g->assists, ev->g))
			pgc(g, ev->p, 1); /* unblocked during an assist */
		if (rc == 0)
			rc = put(g, &g->running, ev->g);
		break;
	default:
		if (!go1_ends_running_g(ev->type))
			return 0;
		/* off its P: the Link of the goroutine's GoStart */
		if (!has(&g->running, ev->g))
			return 0;
		rtd_vmap_del(&g->running, ev->g);
		if (has(&g->assists, ev->g))
			pgc(g, ev->p, -1);
		if (has(&g->bgmark, ev->g)) {
			pgc(g, ev->p, -1);
			rtd_vmap_del(&g->bgmark, ev->g);
		}
		break;
	}
	return rc < 0 ? rc : record(g, ts);
}

/* ---- Go 1.22+: MutatorUtilizationV2 ------------------------------------------ */

static bool executing(unsigned st)
{
	return st == RTD_GO_G_RUNNING || st == RTD_GO_G_SYSCALL;
}

static bool g_executing(struct ga_gc *g, uint64_t id)
{
	uint8_t *st = rtd_vmap_get(&g->states, id, false, NULL, NULL);
	return st && executing(*st);
}

static bool is_gc_stw(const char *name)
{
	return strncmp(name, "stop-the-world", 14) == 0 && strstr(name, "GC") != NULL;
}

int ga_gc_v2(struct ga_gc *g, const struct rtd_goev *ev)
{
	int rc = 0;
	g->last_ts = ev->ts;
	g->any = true;
	bool stw_r = ev->kind >= RTD_GOEV_RANGE_BEGIN && ev->kind <= RTD_GOEV_RANGE_END &&
		     strncmp(ev->name, "stop-the-world", 14) == 0;
	bool sweep_r = ev->kind >= RTD_GOEV_RANGE_BEGIN && ev->kind <= RTD_GOEV_RANGE_END &&
		       strcmp(ev->name, "GC incremental sweep") == 0;
	bool assist_r = ev->kind >= RTD_GOEV_RANGE_BEGIN && ev->kind <= RTD_GOEV_RANGE_END &&
			strcmp(ev->name, "GC mark assist") == 0;
	bool h_stw = (g->flags & RTD_GOAN_UTIL_STW) && stw_r && is_gc_stw(ev->name);
	bool h_sweep = (g->flags & RTD_GOAN_UTIL_SWEEP) && sweep_r;
	bool h_assist = (g->flags & RTD_GOAN_UTIL_ASSIST) && assist_r;
	/* the GC list */
	if (ev->kind >= RTD_GOEV_RANGE_BEGIN && ev->kind <= RTD_GOEV_RANGE_END &&
	    strcmp(ev->name, "GC concurrent mark phase") == 0) {
		if (ev->kind == RTD_GOEV_RANGE_END) {
			cycle_end(g, g->gc_open ? g->gc_start : -1, ev->ts);
			g->gc_open = false;
		} else if (ev->kind == RTD_GOEV_RANGE_BEGIN || !g->gc_open) {
			/* active: at a generation's start, still the cycle begun
			 * in the one before; unknown only when the trace begins
			 * inside it */
			g->gc_open = true;
			g->gc_start = ev->kind == RTD_GOEV_RANGE_ACTIVE ? -1 : ev->ts;
		}
	} else if (stw_r && ev->kind == RTD_GOEV_RANGE_BEGIN) {
		const char *reason = ev->name + 16; /* "stop-the-world (" */
		size_t n = strlen(reason);
		reason = ga_intern(&g->c->strs, reason, n ? n - 1 : 0);
		if (!reason || stw_begin(g, ev->ts, reason, is_gc_stw(ev->name), ev->p,
					 (uint64_t)ev->scope_id) < 0)
			return NOMEM(g);
	} else if (stw_r && ev->kind == RTD_GOEV_RANGE_END) {
		stw_end(g, ev->ts, ev->p, (uint64_t)ev->scope_id, false, true);
	}
	/* the utilization */
	switch (ev->kind) {
	case RTD_GOEV_SYNC:
		if (!g->seen_sync) {
			g->seen_sync = true;
			if (g->hold && (rc = release(g)) < 0)
				return rc;
		}
		break;
	case RTD_GOEV_METRIC:
		if (strcmp(ev->name, "/sched/gomaxprocs:threads") == 0)
			rc = set_procs(g, ev->ts, ev->value);
		break;
	}
	if (rc < 0)
		return rc;
	if (g->nps == 0)
		return 0;
	switch (ev->kind) {
	case RTD_GOEV_RANGE_ACTIVE:
		if (g->seen_sync)
			break;
		/* active since the trace began, known only now: a sweep, or an
		 * assist of a goroutine running (Go looks at the event's
		 * goroutine) */
		if ((h_assist && g_executing(g, ev->g)) || h_sweep) {
			if (!g->perproc && g->ns && g->hold) {
				/* take 1/gomaxprocs off the time before */
				struct series *s = &g->s[0];
				size_t mi = 0, pi = 0;
				while (mi < s->nhold) {
					if (pi + 1 < g->nprocs && g->procs[pi + 1].t < s->hold[mi].t) {
						pi++;
						continue;
					}
					double n = g->nprocs ? (double)g->procs[pi].n : (double)g->nps;
					s->hold[mi].u -= 1.0 / n;
					if (s->hold[mi].u < 0)
						s->hold[mi].u = 0;
					mi++;
				}
			}
		}
		/* fallthrough */
	case RTD_GOEV_RANGE_BEGIN:
		if (h_stw) {
			g->stw++;
		} else if (h_sweep) {
			pgc(g, ev->p, 1);
		} else if (h_assist) {
			pgc(g, ev->p, 1);
			if ((uint64_t)ev->scope_id != RTD_GO_NOG)
				rc = put(g, &g->in_gc, (uint64_t)ev->scope_id);
		}
		break;
	case RTD_GOEV_RANGE_END:
		if (h_stw) {
			g->stw--;
		} else if (h_sweep) {
			pgc(g, ev->p, -1);
		} else if (h_assist) {
			pgc(g, ev->p, -1);
			rtd_vmap_del(&g->in_gc, (uint64_t)ev->scope_id);
		}
		break;
	case RTD_GOEV_STATE: {
		if (ev->resource != RTD_GOEV_RES_GOROUTINE)
			break;
		if (has(&g->in_gc, ev->id) || has(&g->bgmark, ev->id)) {
			if (!executing(ev->from) && executing(ev->to))
				pgc(g, ev->p, 1);
			else if (executing(ev->from) && !executing(ev->to))
				pgc(g, ev->p, -1);
		}
		int err = -ENOMEM;
		uint8_t *st = rtd_vmap_get(&g->states, ev->id, true, NULL, &err);
		if (!st)
			return ga_fail(g->c, err, "out of memory");
		*st = ev->to;
		break;
	}
	case RTD_GOEV_LABEL:
		if (bg_label(g, ev->name)) {
			rc = put(g, &g->bgmark, ev->g);
			pgc(g, ev->p, 1);
		}
		break;
	}
	return rc < 0 ? rc : record(g, ev->ts);
}

/* ---- the end ------------------------------------------------------------------- */

int ga_gc_finish(struct ga_gc *g)
{
	int rc;
	if (g->done)
		return 0;
	g->done = true;
	/* what is still open ends with the trace */
	if (g->gc_open) {
		struct rtd_goan_gc o = {false, ++g->ncycles, g->gc_start, -1, "", true};
		if (g->c->o.on_gc)
			g->c->o.on_gc(&o, g->c->o.ctx);
	}
	for (size_t i = 0; i < g->nstws; i++) {
		struct rtd_goan_gc o = {true, ++g->npauses, g->stws[i].start, -1, g->stws[i].reason,
					g->stws[i].gc};
		if (g->c->o.on_gc)
			g->c->o.on_gc(&o, g->c->o.ctx);
	}
	if (!g->any)
		return 0;
	if (g->hold && (rc = release(g)) < 0)
		return rc;
	/* Go ends every function still going with 0 at the last event */
	for (size_t i = 0; i < g->nps; i++)
		if ((rc = add_util(g, g->ps[i].series, g->last_ts, 0)) < 0)
			return rc;
	for (size_t i = 0; i < g->ns; i++) {
		struct series *s = &g->s[i];
		if (s->has_pend && (rc = commit_or_fail(g, s, s->pend.t, s->pend.u)) < 0)
			return rc;
		s->has_pend = false;
		s->done = true;
		if (!s->n)
			continue;
		/* a window longer than the function is the function */
		struct cpt *last = at(s, s->base + s->n - 1);
		int64_t dur = last->t - s->t0;
		for (size_t k = 0; k < g->nwin; k++) {
			struct mwin *m = &s->w[k];
			if (m->w > dur && dur > 0) {
				double mu = last->F / (double)dur;
				if (mu < m->mmu)
					m->mmu = mu;
			}
			go_band_starts(s, m, dur);
		}
		free(s->ring);
		s->ring = NULL;
		s->n = s->cap = 0;
	}
	return 0;
}

double ga_gc_mmu(const struct ga_gc *g, size_t i, int64_t *window)
{
	if (i >= g->nwin)
		return -1;
	if (window)
		*window = g->win[i];
	if (g->ns == 0)
		return -1;
	if (g->win[i] <= 0)
		return 0;
	double mmu = 1.0;
	for (size_t k = 0; k < g->ns; k++)
		if (g->s[k].w[i].mmu < mmu)
			mmu = g->s[k].w[i].mmu;
	return mmu;
}
