/* SPDX-License-Identifier: MIT */
/*
 * target.c - one profiled process: its sources, its current window, its
 * cumulative profiles and the pprof requests waiting on it.
 *
 * Every tick the loop cuts each source (target_take): what the cut yields
 * is merged into the window (pushed when it closes), into the cumulative
 * profile of kinds Go serves as totals (allocs, mutex, block), and into
 * every waiting ?seconds=N request. So a request gets exactly the samples
 * taken between its arrival and its deadline, whatever the window length.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"
#include "common/buf.h"
#include "common/log.h"

static const char *const kind_paths[PK_COUNT] = {
	[PK_CPU] = "profile",   [PK_ALLOC] = "allocs", [PK_MUTEX] = "mutex",
	[PK_BLOCK] = "block",   [PK_EXCEPTIONS] = "exceptions",
};
static const char *const kind_names[PK_COUNT] = {
	[PK_CPU] = "cpu",     [PK_ALLOC] = "alloc", [PK_MUTEX] = "mutex",
	[PK_BLOCK] = "block", [PK_EXCEPTIONS] = "exceptions",
};

const char *prof_kind_path(enum prof_kind k)
{
	return k < PK_COUNT ? kind_paths[k] : "?";
}

const char *prof_kind_name(enum prof_kind k)
{
	return k < PK_COUNT ? kind_names[k] : "?";
}

int prof_kind_from_path(const char *path)
{
	for (int k = 0; k < PK_COUNT; k++)
		if (!strcmp(path, kind_paths[k]))
			return k;
	return -1;
}

/* A new empty profile with the sample types of src. */
rtd_profile *profile_like(const rtd_profile *src, int64_t period)
{
	struct rtd_profile_type types[RTD_PROFILE_MAX_TYPES];
	size_t n = rtd_profile_ntypes(src);
	if (n > RTD_PROFILE_MAX_TYPES)
		n = RTD_PROFILE_MAX_TYPES;
	for (size_t i = 0; i < n; i++)
		types[i] = *rtd_profile_get_type(src, i);
	struct rtd_profile_opts o = {
		.sz = sizeof(o),
		.types = types,
		.ntypes = n,
		.default_type = rtd_profile_default_type(src),
		.period = period,
	};
	/* /mutex and /block: Go writes PeriodType contentions count */
	if (n && !strcmp(types[0].type, "contentions"))
		o.period_type = types[0];
	return rtd_profile_new2(&o);
}

rtd_profile *profile_clone(const rtd_profile *src)
{
	rtd_profile *p = profile_like(src, 0);
	if (p && rtd_profile_merge(p, src)) {
		rtd_profile_free(p);
		p = NULL;
	}
	return p;
}

rtd_profile *kind_profile_new(enum prof_kind k)
{
	static const struct rtd_profile_type cpu[] = {{"cpu", "nanoseconds"}};
	static const struct rtd_profile_type alloc[] = {
		{"alloc_objects", "count"}, {"alloc_space", "bytes"}};
	static const struct rtd_profile_type lock[] = {
		{"contentions", "count"}, {"delay", "nanoseconds"}};
	static const struct rtd_profile_type exc[] = {{"exceptions", "count"}};
	struct rtd_profile_opts o = {.sz = sizeof(o)};
	switch (k) {
	case PK_CPU:
		o.types = cpu, o.ntypes = 1;
		break;
	case PK_ALLOC:
		o.types = alloc, o.ntypes = 2, o.default_type = 1;
		break;
	case PK_MUTEX:
	case PK_BLOCK:
		o.types = lock, o.ntypes = 2, o.default_type = 1;
		break;
	case PK_EXCEPTIONS:
	default:
		o.types = exc, o.ntypes = 1;
		break;
	}
	return rtd_profile_new2(&o);
}

/* Merge src into *dst, making *dst first when there is none. */
static int merge_into(rtd_profile **dst, const rtd_profile *src,
		      int64_t period)
{
	if (!*dst && !(*dst = profile_like(src, period)))
		return -ENOMEM;
	return rtd_profile_merge(*dst, src);
}

void target_free(struct target *t)
{
	if (!t)
		return;
	/* the last started stops first: a .NET target's EventPipe session
	 * (and any rundown in flight) is closed before its perf source
	 * switches the runtime's perf map off over the IPC */
	for (size_t i = t->nsrc; i-- > 0;)
		if (t->src[i]) {
			t->src[i]->ops->free(t->src[i]);
			free(t->src[i]);
		}
	for (int k = 0; k < PK_COUNT; k++) {
		rtd_profile_free(t->win[k]);
		rtd_profile_free(t->cum[k]);
	}
	series_free(t);
	free(t);
}

/*
 * A failed source is tried again soon, then less often: a runtime found
 * early in its start may refuse or not answer yet, and a short-lived
 * program is gone before a long first delay ends; one that keeps failing
 * (no diagnostics, another tool's session) costs a connection a minute.
 */
#define RETRY_FIRST_NS 500000000ull  /* 0.5 s, doubling */
#define RETRY_MAX_NS 60000000000ull  /* up to 1 min */

uint64_t source_retry_gap(unsigned failures)
{
	uint64_t gap = RETRY_FIRST_NS;
	for (unsigned i = 1; i < failures && gap < RETRY_MAX_NS; i++)
		gap *= 2;
	return gap < RETRY_MAX_NS ? gap : RETRY_MAX_NS;
}

void source_failed(struct source *s, uint64_t now)
{
	s->ended = true;
	s->failures++;
	s->retry_ns = now + source_retry_gap(s->failures);
}

void source_start_failed(struct agent *a, struct source *s, int rc)
{
	struct target *t = s->t;
	const char *why = s->err[0] ? s->err : rtd_strerror(rc);
	source_failed(s, mono_ns());
	s->starting = false;
	pthread_mutex_lock(&a->lock);
	snprintf(t->errmsg, sizeof(t->errmsg), "%s: %.200s", s->ops->name, why);
	if (s->failures == 1)
		a->st.target_errors++;
	pthread_mutex_unlock(&a->lock);
	/* once a run of failures: a runtime that refuses keeps refusing */
	if (s->failures == 1)
		rtd_warn("target %s pid %d: %s source failed: %s (retrying in "
			 "%.1f s)", t->service, (int)t->pid, s->ops->name, why,
			 source_retry_gap(s->failures) / 1e9);
	else
		rtd_debug("target %s pid %d: %s source: %s (failure %u)",
			  t->service, (int)t->pid, s->ops->name, why,
			  s->failures);
}

/*
 * The target's kinds: those of its sources, but for a start tried again
 * whose answer is still to come. That one's kinds come back when it
 * answers (source_restarted()); counted before, a pull of a target the
 * kernel keeps refusing got an empty profile instead of why, whenever
 * another source's answer came while its retry was in flight (CI's agent
 * test_perf_perm under ASan).
 */
void target_kinds_update(struct agent *a, struct target *t)
{
	unsigned k = 0;
	for (size_t i = 0; i < t->nsrc; i++)
		if (!(t->src[i]->starting && t->src[i]->failures))
			k |= t->src[i]->kinds;
	pthread_mutex_lock(&a->lock); /* /targets reads it */
	t->kinds = k;
	pthread_mutex_unlock(&a->lock);
}

int target_add_source(struct agent *a, struct target *t,
		      const struct source_ops *ops)
{
	if (t->nsrc >= AGENT_MAX_SOURCES)
		return -RTD_E_CAP;
	struct source *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ops = ops;
	s->t = t;
	s->a = a;
	t->src[t->nsrc++] = s;
	int rc = ops->start(s);
	if (rc) {
		source_start_failed(a, s, rc);
		return rc;
	}
	pthread_mutex_lock(&a->lock); /* /targets reads it */
	t->kinds |= s->kinds;
	pthread_mutex_unlock(&a->lock);
	return 0;
}

/* Give what one cut yielded of kind k to the pulls, the cumulative profile
 * and the window. Takes ownership of p. */
static void absorb(struct agent *a, struct target *t, enum prof_kind k,
		   rtd_profile *p, int64_t period)
{
	int rc = 0;
	for (struct pull *q = t->pulls; q; q = q->next)
		if (q->kind == k)
			rc |= merge_into(&q->p, p, period);
	if (k != PK_CPU)
		rc |= merge_into(&t->cum[k], p, period);
	int64_t total = rtd_profile_total(p);
	if (total > 0)
		t->samples_ns[k] += (uint64_t)total;
	rc |= merge_into(&t->win[k], p, period);
	rtd_profile_free(p);
	if (rc)
		rtd_debug("target %s pid %d: %s profile: %s", t->service,
			  (int)t->pid, prof_kind_name(k), rtd_strerror(rc));
	(void)a;
}

void target_take(struct agent *a, struct target *t)
{
	for (size_t i = 0; i < t->nsrc; i++) {
		struct source *s = t->src[i];
		if (s->ended || s->paused)
			continue;
		struct take tk;
		memset(&tk, 0, sizeof(tk));
		uint64_t t0 = mono_ns();
		int rc = s->ops->take(s, &tk);
		s->cpu_ns += mono_ns() - t0;
		for (int k = 0; k < PK_COUNT; k++)
			if (tk.p[k])
				absorb(a, t, (enum prof_kind)k, tk.p[k],
				       tk.period[k]);
		if (rc < 0)
			rtd_debug("target %s pid %d: %s: cut: %s", t->service,
				  (int)t->pid, s->ops->name, rtd_strerror(rc));
	}
}

void target_close_window(struct agent *a, struct target *t, int64_t until_ns)
{
	int64_t from_ns = t->win_start_unix_ns;
	t->win_start_unix_ns = until_ns;
	for (int k = 0; k < PK_COUNT; k++) {
		rtd_profile *p = t->win[k];
		if (!p)
			continue;
		t->win[k] = NULL;
		struct rtd_profile_stats ps;
		rtd_profile_get_stats(p, &ps);
		if (ps.samples == 0 || until_ns <= from_ns) {
			rtd_profile_free(p);
			continue;
		}
		struct rtd_profile_meta m = {
			.sz = sizeof(m),
			.source = "rtdiag agent",
			.process = t->service,
			.pid = t->pid,
			.time_nanos = from_ns,
			.duration_nanos = until_ns - from_ns,
		};
		rtd_profile_set_meta(p, &m);
		pthread_mutex_lock(&a->lock);
		a->st.windows++;
		pthread_mutex_unlock(&a->lock);
		t->windows++;
		if (!a->push && !a->otlp) {
			rtd_profile_free(p);
			continue;
		}
		rtd_buf nb;
		rtd_buf_init(&nb, 8192);
		char *name = NULL;
		if (push_app_name(a, t, (enum prof_kind)k, &nb) == 0)
			name = strdup(rtd_buf_cstr(&nb));
		rtd_buf_free(&nb);
		/* one upload per backend: OTLP's gets a copy when both run */
		struct pusher *to[2] = {a->push, a->otlp};
		for (int b = 0; b < 2; b++) {
			if (!to[b])
				continue;
			rtd_profile *q = p;
			if (b == 0 && a->otlp)
				q = profile_clone(p);
			struct upload *u = calloc(1, sizeof(*u));
			if (!u || !q || !name) {
				free(u);
				if (q != p)
					rtd_profile_free(q);
				continue;
			}
			if (q == p)
				p = NULL;
			u->p = q;
			u->target_id = t->id;
			u->kind = (enum prof_kind)k;
			/* Pyroscope's from/until are whole seconds: a window
			 * that does not end on a second is rounded outward
			 * (OTLP's times are the profile's own, in ns) */
			u->from_unix = from_ns / 1000000000;
			u->until_unix = (until_ns + 999999999) / 1000000000;
			u->name = strdup(name);
			if (!u->name || (b == 1 && otlp_resource(a, t, &u->res))) {
				upload_free(u);
				continue;
			}
			push_enqueue(a, to[b], u);
		}
		free(name);
		rtd_profile_free(p); /* when an upload could not take it */
	}
}

static void pull_done(struct agent *a, struct target *t, struct pull *q)
{
	(void)t;
	pthread_mutex_lock(&a->lock);
	q->done = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&a->lock);
}

void target_finish_pulls(struct agent *a, struct target *t, uint64_t now,
			 bool force)
{
	struct pull **pp = &t->pulls;
	while (*pp) {
		struct pull *q = *pp;
		if (!force && q->deadline_ns > now) {
			pp = &q->next;
			continue;
		}
		*pp = q->next;
		q->next = NULL;
		if (q->p) {
			struct rtd_profile_meta m = {
				.sz = sizeof(m),
				.source = "rtdiag agent",
				.process = t->service,
				.pid = t->pid,
				.time_nanos = q->start_unix_ns,
				.duration_nanos = unix_ns() - q->start_unix_ns,
			};
			rtd_profile_set_meta(q->p, &m);
		}
		q->status = 200;
		pull_done(a, t, q);
	}
}
