/* SPDX-License-Identifier: MIT */
/*
 * flight.c - the agent's flight recorders: a target whose spec has a
 * flight: section gets the library's flight recorder
 * (rtdiag/flight_recorder.h, the same wiring as 'rtdiag record --ring'),
 * run on a thread of its own; POST .../snapshot takes one now, GET
 * /snapshots lists what every recorder wrote and kept.
 *
 * Ownership: the loop thread makes and ends the recorders (a target found,
 * dropped, the agent freed); the HTTP threads find one under a->lock and
 * hold it with @users while they wait for a snapshot, so the loop frees a
 * recorder only once nobody waits on it. A recorder whose process is gone
 * stays listed (its snapshots, copied) until AGENT_FLIGHTS_GONE later
 * ones have gone too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent_int.h"
#include "common/buf.h"
#include "common/log.h"
#include "rtdiag/flight_recorder.h"

#define AGENT_FLIGHTS_GONE 64 /* recorders of gone processes still listed */

struct aflight {
	struct aflight *next;
	struct agent *a;
	const struct agent_flight *cfg; /* in a->c, as long as the agent */
	uint64_t target_id;
	pid_t pid;
	char service[130];
	pthread_t th;
	bool thread;
	/* under a->lock */
	rtd_flight_recorder *fr; /* NULL before it is made, after it is freed */
	bool running;            /* its run goes on */
	bool stop;               /* the loop asked it to end */
	bool gone;               /* its process is gone: @kept lists what it kept */
	unsigned users;          /* HTTP threads waiting on @fr */
	pthread_cond_t idle;     /* @users went to 0 */
	char err[256];
	struct rtd_flight_snapshot_info *kept;
	size_t nkept;
};

static void flight_note(void *ctx, const char *msg)
{
	struct aflight *f = ctx;
	rtd_info("target %s pid %d: flight: %s", f->service, (int)f->pid, msg);
}

static void *flight_thread(void *arg)
{
	struct aflight *f = arg;
	struct agent *a = f->a;
	const struct agent_flight *c = f->cfg;
	RTD_OPTS(rtd_recorder_opts, ro, .pid = f->pid, .freq = a->c->cpu_hz,
		 .providers = c->providers);
	RTD_OPTS(rtd_flight_recorder_opts, o, .recorder = &ro, .ring_ns = (int64_t)c->ring_ns,
		 .max_bytes = c->max_memory, .dir = c->dir,
		 .format = (enum rtd_timeline_format)c->format,
		 .triggers = (const char *const *)c->triggers, .ntriggers = c->ntriggers,
		 .post_ns = (int64_t)c->post_ns, .cooldown_ns = (int64_t)c->cooldown_ns,
		 .interval_ns = (int64_t)c->interval_ns, .max_snapshots = c->max_snapshots,
		 .keep_bytes = c->keep_bytes, .actions = c->actions, .note = flight_note,
		 .note_ctx = f);
	rtd_flight_recorder *fr = NULL;
	char err[256] = "";
	int rc = rtd_flight_recorder_new(&o, &fr, err, sizeof(err));
	pthread_mutex_lock(&a->lock);
	f->fr = fr;
	bool stop = f->stop;
	pthread_mutex_unlock(&a->lock);
	if (!rc && !stop) {
		rc = rtd_flight_recorder_start(fr);
		if (rc)
			snprintf(err, sizeof(err), "%s",
				 rtd_recorder_errmsg(rtd_flight_recorder_recorder(fr)));
	}
	if (rc) {
		rtd_warn("target %s pid %d: flight: %s", f->service, (int)f->pid,
			 err[0] ? err : rtd_strerror(rc));
		pthread_mutex_lock(&a->lock);
		snprintf(f->err, sizeof(f->err), "%s", err[0] ? err : rtd_strerror(rc));
		pthread_mutex_unlock(&a->lock);
		return NULL;
	}
	if (stop)
		return NULL;
	const char *warn = rtd_recorder_warnings(rtd_flight_recorder_recorder(fr));
	if (warn[0])
		rtd_info("target %s pid %d: flight: %s", f->service, (int)f->pid, warn);
	pthread_mutex_lock(&a->lock);
	f->running = true;
	stop = f->stop;
	pthread_mutex_unlock(&a->lock);
	if (stop)
		rtd_flight_recorder_stop(fr, false);
	rtd_info("target %s pid %d: flight: recording into a %.3g s ring, snapshots in %s",
		 f->service, (int)f->pid, (double)c->ring_ns / 1e9, c->dir);
	rtd_flight_recorder_run(fr);
	pthread_mutex_lock(&a->lock);
	f->running = false;
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

void agent_flight_start(struct agent *a, struct target *t)
{
	const struct agent_flight *c = a->c->specs[t->spec].flight;
	if (!c)
		return;
	struct aflight *f = calloc(1, sizeof(*f));
	if (!f)
		return;
	f->a = a;
	f->cfg = c;
	f->target_id = t->id;
	f->pid = t->pid;
	snprintf(f->service, sizeof(f->service), "%s", t->service);
	pthread_cond_init(&f->idle, NULL);
	f->thread = pthread_create(&f->th, NULL, flight_thread, f) == 0;
	if (!f->thread)
		snprintf(f->err, sizeof(f->err), "no thread for the flight recorder");
	pthread_mutex_lock(&a->lock);
	f->next = a->flights;
	a->flights = f;
	pthread_mutex_unlock(&a->lock);
}

static void flight_free(struct aflight *f)
{
	pthread_cond_destroy(&f->idle);
	free(f->kept);
	free(f);
}

/* End a recorder (its run stopped, its thread joined), keep its list. */
static void flight_end(struct agent *a, struct aflight *f)
{
	pthread_mutex_lock(&a->lock);
	f->stop = true;
	if (f->fr)
		rtd_flight_recorder_stop(f->fr, false);
	pthread_mutex_unlock(&a->lock);
	if (f->thread)
		pthread_join(f->th, NULL);
	f->thread = false;
	pthread_mutex_lock(&a->lock);
	while (f->users)
		pthread_cond_wait(&f->idle, &a->lock);
	rtd_flight_recorder *fr = f->fr;
	f->fr = NULL;
	f->gone = true;
	if (fr) {
		size_t n = rtd_flight_recorder_snapshots(fr, NULL, 0);
		f->kept = n ? calloc(n, sizeof(*f->kept)) : NULL;
		f->nkept = f->kept ? rtd_flight_recorder_snapshots(fr, f->kept, n) : 0;
		if (f->nkept > n)
			f->nkept = n;
	}
	pthread_mutex_unlock(&a->lock);
	rtd_flight_recorder_free(fr);
}

void agent_flight_drop(struct agent *a, struct target *t)
{
	struct aflight *f = NULL;
	size_t gone = 0;
	pthread_mutex_lock(&a->lock);
	for (struct aflight *g = a->flights; g; g = g->next)
		if (g->target_id == t->id && !g->gone)
			f = g;
	pthread_mutex_unlock(&a->lock);
	if (!f)
		return;
	flight_end(a, f);
	/* the oldest gone ones leave the list */
	pthread_mutex_lock(&a->lock);
	struct aflight **pp = &a->flights;
	while (*pp) {
		struct aflight *g = *pp;
		if (g->gone && ++gone > AGENT_FLIGHTS_GONE) {
			*pp = g->next;
			flight_free(g);
			continue;
		}
		pp = &g->next;
	}
	pthread_mutex_unlock(&a->lock);
}

void agent_flight_free_all(struct agent *a)
{
	while (a->flights) {
		struct aflight *f = a->flights;
		if (!f->gone)
			flight_end(a, f);
		pthread_mutex_lock(&a->lock);
		a->flights = f->next;
		pthread_mutex_unlock(&a->lock);
		flight_free(f);
	}
}

int agent_flight_take(struct agent *a, uint64_t target_id, const char *why,
		      struct rtd_flight_snapshot_info *out, char *msg, size_t msglen)
{
	pthread_mutex_lock(&a->lock);
	struct aflight *f = NULL;
	for (struct aflight *g = a->flights; g; g = g->next)
		if (g->target_id == target_id && !g->gone)
			f = g;
	if (!f || !f->fr || !f->running) {
		snprintf(msg, msglen, "%s", !f ? "this target has no flight: section"
					    : f->err[0] ? f->err
							: "its flight recorder is not recording");
		pthread_mutex_unlock(&a->lock);
		return f ? 503 : 404;
	}
	f->users++;
	rtd_flight_recorder *fr = f->fr;
	pthread_mutex_unlock(&a->lock);
	int rc = rtd_flight_recorder_take(fr, "request", why, 0, out);
	pthread_mutex_lock(&a->lock);
	if (--f->users == 0)
		pthread_cond_broadcast(&f->idle);
	pthread_mutex_unlock(&a->lock);
	if (rc) {
		snprintf(msg, msglen, "the snapshot: %s", rtd_strerror(rc));
		return rc == -RTD_E_STATE || rc == -ETIMEDOUT ? 503 : 500;
	}
	return 200;
}

/* RFC 3339 UTC with milliseconds */
static void rfc3339(int64_t unix_ns, char *buf, size_t len)
{
	time_t s = (time_t)(unix_ns / 1000000000);
	struct tm tm;
	gmtime_r(&s, &tm);
	char d[32];
	strftime(d, sizeof(d), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03dZ", d, (int)(unix_ns / 1000000 % 1000));
}

int agent_flight_json(rtd_buf *b, const char *service, const struct rtd_flight_snapshot_info *s)
{
	char when[48];
	rfc3339(s->unix_ns, when, sizeof(when));
	int rc = rtd_buf_puts(b, "{\"file\":");
	rc |= rtd_buf_json_str(b, s->path, strlen(s->path));
	rc |= rtd_buf_printf(b, ",\"time\":\"%s\",\"unix_ns\":%" PRId64 ",\"pid\":%d,\"service\":",
			     when, s->unix_ns, s->pid);
	rc |= rtd_buf_json_str(b, service, strlen(service));
	rc |= rtd_buf_puts(b, ",\"cause\":");
	rc |= rtd_buf_json_str(b, s->cause, strlen(s->cause));
	rc |= rtd_buf_puts(b, ",\"why\":");
	rc |= rtd_buf_json_str(b, s->why, strlen(s->why));
	rc |= rtd_buf_printf(b, ",\"size\":%" PRIu64 ",\"incomplete\":%s,\"records\":%" PRIu64
				",\"span_s\":%.3f,\"actions\":[",
			     s->bytes, s->incomplete ? "true" : "false", s->records,
			     (double)s->span_ns / 1e9);
	for (unsigned i = 0, n = 0; i < RTD_FLIGHT_ACT_COUNT; i++)
		if (s->actions & (1u << i))
			rc |= rtd_buf_printf(b, "%s\"%s\"", n++ ? "," : "",
					     rtd_flight_action_name(1u << i));
	rc |= rtd_buf_putc(b, ']');
	if (s->action_err[0]) {
		rc |= rtd_buf_puts(b, ",\"action_error\":");
		rc |= rtd_buf_json_str(b, s->action_err, strlen(s->action_err));
	}
	rc |= rtd_buf_putc(b, '}');
	return rc ? -ENOMEM : 0;
}

int agent_flight_list_json(struct agent *a, rtd_buf *b)
{
	int rc = rtd_buf_puts(b, "[");
	bool first = true;
	struct rtd_flight_snapshot_info *tmp = calloc(RTD_FLIGHT_MAX_LISTED, sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	pthread_mutex_lock(&a->lock);
	for (struct aflight *f = a->flights; f && !rc; f = f->next) {
		const struct rtd_flight_snapshot_info *s = f->kept;
		size_t n = f->nkept;
		if (f->fr) {
			n = rtd_flight_recorder_snapshots(f->fr, tmp, RTD_FLIGHT_MAX_LISTED);
			if (n > RTD_FLIGHT_MAX_LISTED)
				n = RTD_FLIGHT_MAX_LISTED;
			s = tmp;
		}
		for (size_t i = 0; i < n && !rc; i++) {
			rc |= rtd_buf_puts(b, first ? "\n" : ",\n");
			rc |= agent_flight_json(b, f->service, &s[i]);
			first = false;
		}
	}
	pthread_mutex_unlock(&a->lock);
	free(tmp);
	rc |= rtd_buf_puts(b, "\n]\n");
	return rc ? -ENOMEM : 0;
}
