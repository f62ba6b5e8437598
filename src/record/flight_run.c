/* SPDX-License-Identifier: MIT */
/*
 * flight_run.c - the flight recorder wired whole (rtdiag/flight_recorder.h):
 * the live recorder's merged stream feeds the ring and the triggers; a
 * snapshot of the ring is written through the timeline's record consumer
 * on a request, a trigger (after the post time, spaced by the cooldown),
 * the stop, or the target's end; the actions' files beside it; the
 * snapshots kept under a size cap. 'rtdiag record --ring' and the agent
 * both run this.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "rtdiag/flight_recorder.h"
#include "rtdiag/gcheap.h"
#include "rtdiag/ipc.h"
#include "rtdiag/ipc_source.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/profile.h"
#include "rtdiag/profile_records.h"
#include "rtdiag/timeline_records.h"
#include "rtdiag/trigger.h"

#define PROVIDERS_CAP 8192
#define TAKE_TIMEOUT_MS 60000
#define DUMP_TIMEOUT_MS 120000

struct rtd_flight_recorder {
	struct rtd_flight_recorder_opts o;
	struct rtd_recorder_opts ro;
	char *dir;
	char *providers;
	rtd_recorder *rec;
	rtd_flight *ring;
	rtd_trigger *trig[RTD_FLIGHT_MAX_TRIGGERS];
	char *trig_text[RTD_FLIGHT_MAX_TRIGGERS];
	size_t ntrig;
	/* the run's own state */
	uint64_t taken;
	bool pending; /* a trigger fired: a snapshot at @due */
	int64_t due, last_fire, hit_mono;
	bool fired_once;
	uint64_t cooled; /* hits dropped by the current cooldown */
	char cause[64], why[1024];
	/* asked from outside */
	atomic_int want_signal, want_stop, want_last;
	pthread_mutex_t lock; /* what follows */
	pthread_cond_t cond;
	bool running, ended;
	uint64_t asked, answered; /* take() tickets */
	char ask_cause[64], ask_why[256];
	int answer_rc;
	struct rtd_flight_snapshot_info answer;
	struct rtd_flight_snapshot_info *list;
	size_t nlist;
	struct rtd_flight_recorder_stats st;
};

static const char *const action_names[RTD_FLIGHT_ACT_COUNT] = {"folded", "pprof", "dump",
								 "stacks", "gcdump"};
static const char *const action_ext[RTD_FLIGHT_ACT_COUNT] = {".folded", ".pb.gz", ".dmp",
							       ".stacks.txt", ".gcdump"};

RTD_API unsigned rtd_flight_action_from_name(const char *name)
{
	for (unsigned i = 0; name && i < RTD_FLIGHT_ACT_COUNT; i++)
		if (!strcmp(name, action_names[i]))
			return 1u << i;
	return 0;
}

RTD_API const char *rtd_flight_action_name(unsigned action)
{
	for (unsigned i = 0; i < RTD_FLIGHT_ACT_COUNT; i++)
		if (action == 1u << i)
			return action_names[i];
	return NULL;
}

static void note(rtd_flight_recorder *fr, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(rtd_flight_recorder *fr, const char *fmt, ...)
{
	if (!fr->o.note)
		return;
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fr->o.note(fr->o.note_ctx, msg);
}

static int64_t mono_now(void)
{
	return (int64_t)rtd_now_ns();
}

/* The EventPipe providers the counter triggers need, after the caller's:
 * a provider's EventCounters, and its meter through the Metrics
 * EventSource (System.Runtime: its EventCounters only; see
 * src/dotnet/counters.c for why no System.Runtime meter session). */
static char *providers_for(const rtd_flight_recorder *fr, const char *user)
{
	char *s = calloc(1, PROVIDERS_CAP), metrics[4096] = "";
	if (!s)
		return NULL;
	snprintf(s, PROVIDERS_CAP, "%s", user ? user : "");
	double sec = (double)fr->o.interval_ns / 1e9;
	for (size_t i = 0; i < fr->ntrig; i++) {
		const char *prov, *name;
		if (rtd_trigger_counter_name(fr->trig[i], &prov, &name))
			continue;
		size_t l = strlen(s);
		snprintf(s + l, PROVIDERS_CAP - l, "%s%s:0xFFFFFFFF:5:EventCounterIntervalSec=%g",
			 l ? "," : "", prov, sec);
		if (!strcmp(prov, "System.Runtime"))
			continue;
		l = strlen(metrics);
		snprintf(metrics + l, sizeof(metrics) - l, "%s%s\\%s", l ? "," : "", prov, name);
	}
	if (metrics[0]) {
		size_t l = strlen(s);
		snprintf(s + l, PROVIDERS_CAP - l,
			 "%sSystem.Diagnostics.Metrics:0x3:5:\"SessionId=rtd-flight-%d;Metrics=%s;"
			 "RefreshInterval=%g;MaxTimeSeries=1000;MaxHistograms=100\"",
			 l ? "," : "", (int)getpid(), metrics, sec);
	}
	return s;
}

static int flight_recorder_new(const struct rtd_flight_recorder_opts *opts,
			       rtd_flight_recorder **out, char *err, size_t errlen);

RTD_API int rtd_flight_recorder_new(const struct rtd_flight_recorder_opts *opts,
				    rtd_flight_recorder **out, char *err, size_t errlen)
{
	char e[512] = "";
	*out = NULL;
	int rc = flight_recorder_new(opts, out, e, sizeof(e));
	if (err && errlen)
		snprintf(err, errlen, "%s", e);
	return rc;
}

static int flight_recorder_new(const struct rtd_flight_recorder_opts *opts,
			       rtd_flight_recorder **out, char *err, size_t errlen)
{
	struct rtd_flight_recorder_opts o;
	int rc = opts ? rtd_opts_copy(&o, sizeof(o), opts,
				      RTD_OPTS_END(rtd_flight_recorder_opts, note_ctx))
		      : -RTD_E_INVAL;
	if (rc)
		return rc;
	if (!o.recorder || o.ring_ns <= 0 || !o.dir || o.post_ns < 0 || o.cooldown_ns < 0 ||
	    o.interval_ns < 0 || (o.ntriggers && !o.triggers) ||
	    o.actions >= 1u << RTD_FLIGHT_ACT_COUNT) {
		snprintf(err, errlen, "flight recorder: a ring, a folder and a recording are needed");
		return -RTD_E_INVAL;
	}
	if (strlen(o.dir) > RTD_FLIGHT_PATH_MAX - 128) {
		snprintf(err, errlen, "the snapshots' folder: a path of at most %u bytes",
		       RTD_FLIGHT_PATH_MAX - 128);
		return -RTD_E_INVAL;
	}
	if (o.ntriggers > RTD_FLIGHT_MAX_TRIGGERS) {
		snprintf(err, errlen, "at most %u triggers", RTD_FLIGHT_MAX_TRIGGERS);
		return -RTD_E_CAP;
	}
	if (!o.format)
		o.format = RTD_TIMELINE_FMT_PERFETTO;
	if (o.format != RTD_TIMELINE_FMT_PERFETTO && o.format != RTD_TIMELINE_FMT_CHROME_JSON)
		return -RTD_E_INVAL;
	if (!o.interval_ns)
		o.interval_ns = 1000000000;
	rtd_flight_recorder *fr = calloc(1, sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	pthread_mutex_init(&fr->lock, NULL);
	pthread_cond_init(&fr->cond, NULL);
	fr->o = o;
	fr->ro = *o.recorder;
	fr->o.recorder = NULL;
	fr->o.triggers = NULL;
	rc = -ENOMEM;
	if (!(fr->dir = strdup(o.dir)))
		goto fail;
	fr->o.dir = fr->dir;
	for (size_t i = 0; i < o.ntriggers; i++) {
		char te[256] = "";
		rc = rtd_trigger_parse(o.triggers[i], &fr->trig[i], te, sizeof(te));
		if (rc) {
			snprintf(err, errlen, "trigger '%s': %s", o.triggers[i],
				 te[0] ? te : rtd_strerror(rc));
			goto fail;
		}
		fr->ntrig = i + 1;
		rc = -ENOMEM;
		if (!(fr->trig_text[i] = strdup(o.triggers[i])))
			goto fail;
	}
	if (!(fr->providers = providers_for(fr, fr->ro.providers)))
		goto fail;
	fr->ro.providers = fr->providers[0] ? fr->providers : NULL;
	/* the ring copies every record: the live perf source may free its
	 * names and stacks a generation at a time, and the profilers each
	 * window (bounded memory) */
	fr->ro.flags |= RTD_RECORDER_COPIED | RTD_RECORDER_NO_PROFILE | RTD_RECORDER_ALL_SYMBOLS;
	rc = rtd_recorder_new(&fr->ro, &fr->rec);
	if (rc) {
		snprintf(err, errlen, "pid %d: %s", (int)fr->ro.pid, rtd_recorder_errmsg(NULL));
		goto fail;
	}
	RTD_OPTS(rtd_flight_opts, fo, .window_ns = o.ring_ns, .max_bytes = o.max_bytes);
	fr->ring = rtd_flight_new(&fo, &rc);
	if (!fr->ring) {
		snprintf(err, errlen, "the ring: %s", rtd_strerror(rc));
		goto fail;
	}
	*out = fr;
	return 0;
fail:
	rtd_flight_recorder_free(fr);
	return rc;
}

RTD_API rtd_recorder *rtd_flight_recorder_recorder(rtd_flight_recorder *fr)
{
	return fr->rec;
}

RTD_API int rtd_flight_recorder_start(rtd_flight_recorder *fr)
{
	int rc = rtd_recorder_start(fr->rec);
	if (rc == 0) {
		pthread_mutex_lock(&fr->lock);
		fr->running = true;
		pthread_mutex_unlock(&fr->lock);
	}
	return rc;
}

RTD_API void rtd_flight_recorder_signal(rtd_flight_recorder *fr)
{
	atomic_store(&fr->want_signal, 1);
}

RTD_API void rtd_flight_recorder_stop(rtd_flight_recorder *fr, bool last_snapshot)
{
	atomic_store(&fr->want_last, last_snapshot ? 1 : 0);
	atomic_store(&fr->want_stop, 1);
}

/* ---- writing a snapshot ------------------------------------------------------ */

/* A file written to DIR/.NAME.rtdiag-XXXXXX, renamed into place when whole. */
struct tmpfile {
	char tmp[RTD_FLIGHT_PATH_MAX + 32];
	const char *path;
	FILE *f;
};

static int tmp_open(struct tmpfile *t, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path + 1) : 0;
	snprintf(t->tmp, sizeof(t->tmp), "%.*s.%s.rtdiag-XXXXXX", (int)dl, path,
		 path + dl);
	t->path = path;
	int fd = mkstemp(t->tmp);
	if (fd < 0)
		return -errno;
	fchmod(fd, 0644);
	t->f = fdopen(fd, "wb");
	if (!t->f) {
		int e = -errno;
		close(fd);
		unlink(t->tmp);
		return e;
	}
	return 0;
}

/* Close; keep (rename into place) when @ok. Returns 0 or a write error. */
static int tmp_close(struct tmpfile *t, bool ok)
{
	int rc = 0;
	if (fflush(t->f) || ferror(t->f))
		rc = errno > 0 ? -errno : -EIO;
	if (fclose(t->f) && !rc)
		rc = errno > 0 ? -errno : -EIO;
	t->f = NULL;
	if (ok && !rc && rename(t->tmp, t->path))
		rc = -errno;
	if (!ok || rc)
		unlink(t->tmp);
	return rc;
}

static uint64_t file_bytes(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* DIR/rtdiag-flight-TIME-pPID-CAUSE[-incomplete][-N]; EXT comes after */
static void snapshot_stem(const rtd_flight_recorder *fr, const char *cause, bool incomplete,
			  char *out, size_t len, int64_t *unix_ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	*unix_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char stamp[32];
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	const char *ext = fr->o.format == RTD_TIMELINE_FMT_CHROME_JSON ? ".json" : ".pftrace";
	/* two snapshots in one millisecond (hits handed over in a burst) get
	 * -2, -3...: no snapshot replaces another */
	for (int n = 1; n < 1000; n++) {
		char seq[16] = "", probe[RTD_FLIGHT_PATH_MAX + 16];
		if (n > 1)
			snprintf(seq, sizeof(seq), "-%d", n);
		snprintf(out, len, "%s/rtdiag-flight-%s.%03ldZ-p%d-%s%s%s", fr->dir, stamp,
			 ts.tv_nsec / 1000000, (int)fr->ro.pid, cause,
			 incomplete ? "-incomplete" : "", seq);
		snprintf(probe, sizeof(probe), "%s%s", out, ext);
		if (access(probe, F_OK) != 0)
			break;
	}
}

/* The ring's timeline, with an rtdiag/snapshot instant at its end. */
static int write_timeline(rtd_flight_recorder *fr, const char *path, const char *cause,
			  const char *why, bool incomplete, int64_t fired, int64_t hit,
			  const struct rtd_flight_stats *st)
{
	rtd_source *snap = NULL;
	int rc = rtd_flight_snapshot(fr->ring, &snap);
	if (rc)
		return rc;
	struct tmpfile t;
	rc = tmp_open(&t, path);
	if (rc) {
		rtd_source_free(snap);
		return rc;
	}
	struct rtd_timeline_opts to = {.sz = sizeof(to), .format = fr->o.format, .out = t.f};
	rtd_timeline *tl = rtd_timeline_new(&to);
	RTD_OPTS(rtd_timeline_records_opts, ro,
		 .runtime_sources = rtd_recorder_runtime_sources(fr->rec));
	rtd_timeline_records *c = tl ? rtd_timeline_records_new(tl, &ro, &rc) : NULL;
	if (!tl)
		rc = -ENOMEM;
	if (c)
		rc = rtd_timeline_records_pull(c, snap);
	if (c && rc == 0) {
		/* what took it, on the process's track, at the ring's end;
		 * fired_ns: when the decision was taken (CLOCK_MONOTONIC);
		 * hit_ns: the time of the record or reading that fired */
		struct rtd_field fl[5] = {
			{.name = "cause", .type = RTD_FIELD_STR, .s = cause},
			{.name = "why", .type = RTD_FIELD_STR, .s = why},
			{.name = "incomplete", .type = RTD_FIELD_U64, .u = incomplete},
			{.name = "fired_ns", .type = RTD_FIELD_I64, .i = fired},
			{.name = "hit_ns", .type = RTD_FIELD_I64, .i = hit},
		};
		struct rtd_record r = {.kind = RTD_REC_INSTANT, .pid = (uint32_t)fr->ro.pid,
				       .name = "rtdiag/snapshot", .category = "rtdiag",
				       .nfields = 5, .fields = fl};
		r.mono = r.ts = st->last_mono;
		rc = rtd_timeline_records_add(c, &r);
	}
	rtd_timeline_records_free(c);
	rtd_source_free(snap);
	if (tl) {
		int e = rtd_timeline_finish(tl);
		if (!rc)
			rc = e;
		rtd_timeline_free(tl);
	}
	int e = tmp_close(&t, rc == 0);
	return rc ? rc : e;
}

/* The ring's CPU samples as a profile. */
static int ring_profile(rtd_flight_recorder *fr, rtd_profile **out)
{
	/* the ring's samples carry no period: a count each */
	rtd_profile *p = rtd_profile_new("samples", "count");
	if (!p)
		return -ENOMEM;
	rtd_source *snap = NULL;
	int rc = rtd_flight_snapshot(fr->ring, &snap);
	RTD_OPTS(rtd_profile_records_opts, ro, .name = "cpu"); /* perf's CPU samples */
	rtd_profile_records *c = rc ? NULL : rtd_profile_records_new(p, &ro, &rc);
	if (c)
		rc = rtd_profile_records_pull(c, snap);
	rtd_profile_records_free(c);
	rtd_source_free(snap);
	if (rc) {
		rtd_profile_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

static int write_profile(const rtd_profile *p, const char *path, bool pprof)
{
	struct tmpfile t;
	int rc = tmp_open(&t, path);
	if (rc)
		return rc;
	rc = pprof ? rtd_profile_write_pprof(p, t.f) : rtd_profile_write_folded(p, t.f);
	int e = tmp_close(&t, rc == 0);
	return rc ? rc : e;
}

/* A .NET target's dump, by its runtime (createdump) through the IPC. */
static int write_dump(rtd_flight_recorder *fr, const char *path, char *msg, size_t len)
{
	RTD_OPTS(rtd_ipc_client_opts, co, .timeout_ms = DUMP_TIMEOUT_MS);
	int rc = 0;
	rtd_ipc_client *c = rtd_ipc_client_new(fr->ro.pid, &co, &rc);
	if (!c)
		return rc ? rc : -ENOMEM;
	/* the runtime writes it: under a temporary name beside it, renamed
	 * once whole, as every file of a snapshot (a target in a container
	 * sees another file system: the rename then fails, and says so) */
	struct tmpfile t;
	rc = tmp_open(&t, path);
	if (rc) {
		rtd_ipc_client_free(c);
		return rc;
	}
	tmp_close(&t, false);
	rc = rtd_ipc_dump(c, t.tmp, RTD_IPC_DUMP_HEAP, 0, msg, len);
	rtd_ipc_client_free(c);
	if (!rc && rename(t.tmp, path))
		rc = -errno;
	if (rc)
		unlink(t.tmp);
	return rc;
}

/* ---- thread stacks: a short SampleProfiler session, as 'rtdiag dotnet
 * stack' takes it (the session's pump as a record source pulled into the
 * profile builder): where each managed thread is, by name ---- */

/* The samples of a quarter of a second's session into @prof, its frames
 * named by the session's rundown through @src's method table (@src must
 * outlive what names them). */
static int sample_stacks(rtd_flight_recorder *fr, rtd_nettrace_profiler *prof,
			 rtd_ipc_client **c, rtd_ipc_session **sess, rtd_source **src)
{
	struct rtd_ipc_providers prov = {0};
	struct rtd_ipc_session_opts so = {.sz = sizeof(so)};
	int rc = rtd_ipc_profile_request(RTD_IPC_PROFILE_CPU, &prov, &so);
	so.providers = prov.v;
	so.n_providers = prov.n;
	if (!rc && !(*c = rtd_ipc_client_new(fr->ro.pid, NULL, &rc)) && !rc)
		rc = -ENOMEM;
	if (!rc && !(*sess = rtd_ipc_session_start(*c, &so, &rc)) && !rc)
		rc = -ENOMEM;
	/* the sampler stops every managed thread about every millisecond: a
	 * quarter of a second, as dotnet-stack; only the builder's records */
	RTD_OPTS(rtd_ipc_pump_opts, pu, .duration_ms = 250, .rundown_wait_ms = 30000);
	RTD_OPTS(rtd_nettrace_source_opts, no, .kinds = 1u << RTD_REC_SAMPLE,
		 .address_frames = true, .stream_order = true,
		 .want = rtd_nettrace_profiler_want, .want_ctx = prof);
	if (!rc && !(*src = rtd_ipc_session_pump_source(*sess, &pu, NULL, &no, &rc)) && !rc)
		rc = -ENOMEM;
	if (!rc) {
		rc = rtd_nettrace_profiler_pull(prof, *src);
		/* stopped early (the builder's error): the session still ends
		 * as it would have */
		int e = rtd_ipc_session_pump_drain(*sess);
		if (!rc && e)
			rc = e;
	}
	rtd_ipc_providers_clear(&prov);
	return rc;
}

static int write_stacks(rtd_flight_recorder *fr, const char *path)
{
	RTD_OPTS(rtd_nettrace_profiler_opts, po, .kinds = RTD_NETTRACE_PROFILE_CPU);
	rtd_nettrace_profiler *prof = rtd_nettrace_profiler_new(&po);
	rtd_ipc_client *c = NULL;
	rtd_ipc_session *sess = NULL;
	rtd_source *src = NULL;
	int rc = prof ? sample_stacks(fr, prof, &c, &sess, &src) : -ENOMEM;
	if (!rc && rtd_nettrace_profiler_samples(prof) == 0)
		rc = -RTD_E_NOTFOUND; /* no managed thread was sampled */
	struct tmpfile t;
	if (!rc && !(rc = tmp_open(&t, path))) {
		rc = rtd_ipc_stack_report(prof, fr->ro.pid, t.f);
		int e = tmp_close(&t, rc == 0);
		if (!rc)
			rc = e;
	}
	rtd_nettrace_profiler_free(prof);
	rtd_source_free(src);
	rtd_ipc_session_free(sess);
	rtd_ipc_client_free(c);
	return rc;
}

/* A .NET target's GC heap as a .gcdump (the runtime's heap walk); one
 * whose walk did not end or lost events is kept and said in @msg. */
static int write_gcdump(rtd_flight_recorder *fr, const char *path, char *msg, size_t len)
{
	struct tmpfile t;
	int rc = tmp_open(&t, path);
	if (rc)
		return rc;
	struct rtd_gcheap_collect_result res;
	rc = rtd_gcheap_gcdump(fr->ro.pid, t.f, NULL, &res);
	int e = tmp_close(&t, rc == 0);
	if (!rc && (!res.walk_ended || res.dropped))
		snprintf(msg, len, "partial: %s%llu events dropped",
			 res.walk_ended ? "" : "the heap walk did not end in 60 s, ",
			 (unsigned long long)res.dropped);
	return rc ? rc : e;
}

/* The actions asked for, beside the timeline STEM.EXT; a failure is said
 * in @info and does not undo the snapshot. */
static void run_actions(rtd_flight_recorder *fr, const char *stem,
			struct rtd_flight_snapshot_info *info)
{
	rtd_profile *p = NULL;
	int prc = 0;
	for (unsigned i = 0; i < RTD_FLIGHT_ACT_COUNT; i++) {
		unsigned a = 1u << i;
		if (!(fr->o.actions & a))
			continue;
		char path[RTD_FLIGHT_PATH_MAX + 16], msg[256] = "";
		snprintf(path, sizeof(path), "%s%s", stem, action_ext[i]);
		int rc;
		if (a == RTD_FLIGHT_ACT_DUMP) {
			rc = write_dump(fr, path, msg, sizeof(msg));
		} else if (a == RTD_FLIGHT_ACT_STACKS) {
			rc = write_stacks(fr, path);
		} else if (a == RTD_FLIGHT_ACT_GCDUMP) {
			rc = write_gcdump(fr, path, msg, sizeof(msg));
			if (!rc && msg[0] && !info->action_err[0]) /* kept, said */
				snprintf(info->action_err, sizeof(info->action_err),
					 "gcdump: %s", msg);
		} else {
			if (!p && !prc)
				prc = ring_profile(fr, &p);
			rc = prc ? prc : write_profile(p, path, a == RTD_FLIGHT_ACT_PPROF);
		}
		if (rc == 0) {
			info->actions |= a;
			info->bytes += file_bytes(path);
		} else if (!info->action_err[0]) {
			snprintf(info->action_err, sizeof(info->action_err), "%s: %s%s%s",
				 action_names[i], rtd_strerror(rc), msg[0] ? ": " : "", msg);
		}
	}
	rtd_profile_free(p);
}

static void remove_files(const struct rtd_flight_snapshot_info *s)
{
	unlink(s->path);
	char stem[RTD_FLIGHT_PATH_MAX], path[RTD_FLIGHT_PATH_MAX + 16];
	snprintf(stem, sizeof(stem), "%s", s->path);
	char *dot = strrchr(stem, '.');
	if (dot && !strchr(dot, '/'))
		*dot = 0;
	for (unsigned i = 0; i < RTD_FLIGHT_ACT_COUNT; i++)
		if (s->actions & (1u << i)) {
			snprintf(path, sizeof(path), "%s%s", stem, action_ext[i]);
			unlink(path);
		}
}

/* List a new snapshot; remove the oldest while the kept bytes pass the
 * cap (the newest stays). Under fr->lock. */
static void keep(rtd_flight_recorder *fr, const struct rtd_flight_snapshot_info *s)
{
	if (!fr->list) {
		fr->list = calloc(RTD_FLIGHT_MAX_LISTED, sizeof(*fr->list));
		if (!fr->list)
			return;
	}
	if (fr->nlist == RTD_FLIGHT_MAX_LISTED) {
		fr->st.kept_bytes -= fr->list[0].bytes;
		memmove(fr->list, fr->list + 1, (fr->nlist - 1) * sizeof(*fr->list));
		fr->nlist--;
	}
	fr->list[fr->nlist++] = *s;
	fr->st.kept_bytes += s->bytes;
	size_t drop = 0;
	while (fr->o.keep_bytes && fr->st.kept_bytes > fr->o.keep_bytes &&
	       fr->nlist - drop > 1) {
		remove_files(&fr->list[drop]);
		fr->st.kept_bytes -= fr->list[drop].bytes;
		fr->st.removed++;
		drop++;
	}
	if (drop) {
		memmove(fr->list, fr->list + drop, (fr->nlist - drop) * sizeof(*fr->list));
		fr->nlist -= drop;
	}
}

/* Write the ring as it is now; the ring and the recording go on.
 * Returns 0 or the error (said through the note). */
static int snapshot(rtd_flight_recorder *fr, const char *cause, const char *why, bool incomplete,
		    int64_t fired, int64_t hit, struct rtd_flight_snapshot_info *out)
{
	struct rtd_flight_snapshot_info info = {.pid = (int)fr->ro.pid, .incomplete = incomplete};
	char stem[RTD_FLIGHT_PATH_MAX - 16];
	snapshot_stem(fr, cause, incomplete, stem, sizeof(stem), &info.unix_ns);
	snprintf(info.path, sizeof(info.path), "%s%s", stem,
		 fr->o.format == RTD_TIMELINE_FMT_CHROME_JSON ? ".json" : ".pftrace");
	snprintf(info.cause, sizeof(info.cause), "%s", cause);
	snprintf(info.why, sizeof(info.why), "%s", why);
	struct rtd_flight_stats st;
	rtd_flight_stats(fr->ring, &st);
	info.records = st.records;
	info.span_ns = st.records ? st.last_mono - st.first_mono : 0;
	int rc = write_timeline(fr, info.path, cause, why, incomplete, fired, hit, &st);
	if (rc) {
		note(fr, "snapshot %s: %s", info.path, rtd_strerror(rc));
		pthread_mutex_lock(&fr->lock);
		fr->st.failed++;
		pthread_mutex_unlock(&fr->lock);
		return rc;
	}
	info.bytes = file_bytes(info.path);
	run_actions(fr, stem, &info);
	fr->taken++;
	char acts[64] = "";
	for (unsigned i = 0, n = 0; i < RTD_FLIGHT_ACT_COUNT; i++)
		if (info.actions & (1u << i))
			n += (unsigned)snprintf(acts + n, n < sizeof(acts) ? sizeof(acts) - n : 0,
						"%s%s", n ? "," : "; actions ", action_names[i]);
	note(fr, "snapshot %s: %s; %llu records, %.1f s, ring %.1f MB%s%s%s", info.path, why,
	     (unsigned long long)st.records, (double)info.span_ns / 1e9,
	     (double)st.bytes / 1048576.0, acts, info.action_err[0] ? "; " : "",
	     info.action_err);
	pthread_mutex_lock(&fr->lock);
	fr->st.taken++;
	keep(fr, &info);
	pthread_mutex_unlock(&fr->lock);
	if (out)
		*out = info;
	return 0;
}

/* ---- the run ----------------------------------------------------------------- */

/* A trigger fired at @hit: a snapshot after the post time, unless one is
 * pending or the last trigger's was within the cooldown. */
static void fire(rtd_flight_recorder *fr, size_t i, const struct rtd_trigger_hit *hit)
{
	int64_t now = mono_now();
	if (fr->pending)
		return;
	if (fr->fired_once && now - fr->last_fire < fr->o.cooldown_ns) {
		/* said once a cooldown: an exception a round would say it
		 * every round */
		if (!fr->cooled++)
			note(fr, "%s: within --cooldown of the last snapshot, none taken "
				 "(nor for more hits within it)", hit->text);
		return;
	}
	fr->cooled = 0;
	fr->pending = true;
	fr->fired_once = true;
	fr->last_fire = now;
	fr->due = now + fr->o.post_ns;
	fr->hit_mono = hit->mono;
	snprintf(fr->cause, sizeof(fr->cause), "%s", rtd_trigger_cause(fr->trig[i]));
	snprintf(fr->why, sizeof(fr->why), "--trigger '%s': %s", fr->trig_text[i], hit->text);
	note(fr, "%s%s", fr->why, fr->o.post_ns ? "; writing after --post" : "");
}

static void feed_triggers(rtd_flight_recorder *fr, const struct rtd_record *r)
{
	struct rtd_trigger_hit hit;
	for (size_t i = 0; i < fr->ntrig; i++)
		if (rtd_trigger_record(fr->trig[i], r, &hit))
			fire(fr, i, &hit);
}

static bool proc_triggers(const rtd_flight_recorder *fr)
{
	for (size_t i = 0; i < fr->ntrig; i++) {
		unsigned k = rtd_trigger_kind(fr->trig[i]);
		if (k == RTD_TRIGGER_CPU || k == RTD_TRIGGER_RSS)
			return true;
	}
	return false;
}

/* Answer the take() requests waiting, with one snapshot. */
static void answer_takes(rtd_flight_recorder *fr, int64_t now)
{
	pthread_mutex_lock(&fr->lock);
	uint64_t ticket = fr->asked;
	bool want = ticket > fr->answered;
	char cause[64], why[256];
	snprintf(cause, sizeof(cause), "%s", fr->ask_cause);
	snprintf(why, sizeof(why), "%s", fr->ask_why);
	pthread_mutex_unlock(&fr->lock);
	if (!want)
		return;
	struct rtd_flight_snapshot_info info;
	int rc = snapshot(fr, cause, why, false, now, now, &info);
	pthread_mutex_lock(&fr->lock);
	fr->answer_rc = rc;
	if (!rc)
		fr->answer = info;
	fr->answered = ticket;
	pthread_cond_broadcast(&fr->cond);
	pthread_mutex_unlock(&fr->lock);
}

static void ring_stats_publish(rtd_flight_recorder *fr)
{
	struct rtd_flight_stats st;
	rtd_flight_stats(fr->ring, &st);
	pthread_mutex_lock(&fr->lock);
	fr->st.ring = st;
	pthread_mutex_unlock(&fr->lock);
}

RTD_API int rtd_flight_recorder_run(rtd_flight_recorder *fr)
{
	rtd_source *src = rtd_recorder_source(fr->rec);
	if (!src)
		return -RTD_E_STATE;
	bool want_proc = proc_triggers(fr), stopping = false, add_failed = false;
	struct rtd_proc_usage prev = {0}, now_u;
	bool have_prev = want_proc && rtd_proc_usage_read(fr->ro.pid, &prev) == 0;
	int64_t next_proc = mono_now() + fr->o.interval_ns, last_mono = 0, next_pub = 0;
	int got, rc = 0;
	const struct rtd_record *r;
	for (;;) {
		got = rtd_source_next(src, &r);
		if (got == 1) {
			int e = rtd_flight_add(fr->ring, r);
			if (e && !add_failed) {
				add_failed = true;
				note(fr, "the ring: %s (going on; such records are not kept)",
				     rtd_strerror(e));
			}
			last_mono = r->mono;
			feed_triggers(fr, r);
		} else if (got == RTD_SOURCE_IDLE) {
			/* nothing before the watermark will come: a quiet target's
			 * ring still drops what is older than the window */
			if (r->mono != INT64_MIN && r->mono > last_mono)
				last_mono = r->mono;
			rtd_source_wait(src, 100);
		} else {
			break; /* the end (the target's, or ours), or an error */
		}
		rtd_flight_trim(fr->ring, last_mono);
		int64_t now = mono_now();
		if (now >= next_pub) {
			next_pub = now + 1000000000;
			ring_stats_publish(fr);
		}
		if (want_proc && now >= next_proc) {
			next_proc = now + fr->o.interval_ns;
			if (rtd_proc_usage_read(fr->ro.pid, &now_u) == 0) {
				struct rtd_trigger_hit hit;
				for (size_t i = 0; i < fr->ntrig; i++)
					if (rtd_trigger_proc(fr->trig[i], have_prev ? &prev : NULL,
							     &now_u, &hit))
						fire(fr, i, &hit);
				prev = now_u;
				have_prev = true;
			}
		}
		if (stopping)
			continue; /* drain what the sources still had */
		if (atomic_exchange(&fr->want_signal, 0))
			rc = snapshot(fr, "signal", "SIGUSR1", false, now, now, NULL);
		answer_takes(fr, now);
		if (fr->pending && now >= fr->due) {
			fr->pending = false;
			rc = snapshot(fr, fr->cause, fr->why, false, fr->last_fire, fr->hit_mono,
				      NULL);
		}
		if (fr->o.max_snapshots && fr->taken >= fr->o.max_snapshots) {
			note(fr, "%llu snapshots taken (--max-snapshots): stopping",
			     (unsigned long long)fr->taken);
			rtd_recorder_stop(fr->rec);
			stopping = true;
		} else if (atomic_load(&fr->want_stop)) {
			rtd_recorder_stop(fr->rec);
			stopping = true;
		}
	}
	pthread_mutex_lock(&fr->lock);
	fr->running = false;
	fr->ended = true;
	pthread_cond_broadcast(&fr->cond);
	pthread_mutex_unlock(&fr->lock);
	if (got < 0)
		note(fr, "the recording: %s (a last snapshot of what came)",
		     r->message && r->message[0] ? r->message : rtd_strerror(r->code));
	bool stopped = atomic_load(&fr->want_stop);
	if (fr->o.max_snapshots && fr->taken >= fr->o.max_snapshots)
		rc = 0;
	else if (stopped)
		rc = atomic_load(&fr->want_last)
			     ? snapshot(fr, "interrupt", "Ctrl-C", false, mono_now(), mono_now(),
					NULL)
			     : 0;
	else {
		rc = snapshot(fr, got < 0 ? "error" : "exit",
			      got < 0 ? "the recording failed" : "the target ended", true,
			      mono_now(), mono_now(), NULL);
		if (rc == 0)
			rc = RTD_FLIGHT_RUN_ENDED;
	}
	ring_stats_publish(fr);
	return rc;
}

RTD_API int rtd_flight_recorder_take(rtd_flight_recorder *fr, const char *cause,
				     const char *why, int timeout_ms,
				     struct rtd_flight_snapshot_info *out)
{
	size_t n = cause ? strlen(cause) : 0;
	if (!n || n >= 64 || strspn(cause, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					  "0123456789._-") != n)
		return -RTD_E_INVAL;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	int64_t ms = timeout_ms > 0 ? timeout_ms : TAKE_TIMEOUT_MS;
	dl.tv_sec += ms / 1000;
	dl.tv_nsec += (long)(ms % 1000) * 1000000;
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&fr->lock);
	if (!fr->running) {
		pthread_mutex_unlock(&fr->lock);
		return -RTD_E_STATE;
	}
	if (fr->asked == fr->answered) {
		snprintf(fr->ask_cause, sizeof(fr->ask_cause), "%s", cause);
		snprintf(fr->ask_why, sizeof(fr->ask_why), "%s", why ? why : cause);
	}
	uint64_t ticket = ++fr->asked;
	int rc = 0;
	while (fr->answered < ticket && !fr->ended && rc == 0)
		rc = pthread_cond_timedwait(&fr->cond, &fr->lock, &dl);
	if (fr->answered >= ticket) {
		rc = fr->answer_rc;
		if (!rc)
			*out = fr->answer;
	} else {
		rc = fr->ended ? -RTD_E_STATE : -ETIMEDOUT;
	}
	pthread_mutex_unlock(&fr->lock);
	return rc;
}

RTD_API size_t rtd_flight_recorder_snapshots(rtd_flight_recorder *fr,
					     struct rtd_flight_snapshot_info *out, size_t max)
{
	pthread_mutex_lock(&fr->lock);
	size_t n = fr->nlist;
	for (size_t i = 0; i < n && i < max; i++)
		out[i] = fr->list[i];
	pthread_mutex_unlock(&fr->lock);
	return n;
}

RTD_API void rtd_flight_recorder_stats(rtd_flight_recorder *fr,
				       struct rtd_flight_recorder_stats *out)
{
	pthread_mutex_lock(&fr->lock);
	*out = fr->st;
	pthread_mutex_unlock(&fr->lock);
}

RTD_API void rtd_flight_recorder_free(rtd_flight_recorder *fr)
{
	if (!fr)
		return;
	rtd_recorder_free(fr->rec);
	rtd_flight_free(fr->ring);
	for (size_t i = 0; i < fr->ntrig; i++) {
		rtd_trigger_free(fr->trig[i]);
		free(fr->trig_text[i]);
	}
	free(fr->providers);
	free(fr->dir);
	free(fr->list);
	pthread_cond_destroy(&fr->cond);
	pthread_mutex_destroy(&fr->lock);
	free(fr);
}
