/* SPDX-License-Identifier: MIT */
/*
 * agent_int.h - the agent's insides: targets, their profile sources,
 * windows, pull requests, the HTTP server, the uploader.
 *
 * Ownership and threads:
 * - the loop thread (rtd_agent_run) owns the targets, their sources and
 *   every profile they hold; it alone adds to or cuts them;
 * - the HTTP threads (libmicrohttpd, one per connection) read the target
 *   list and counters under a->lock, and ask the loop for profiles through
 *   struct pull requests; a finished request's profile is the HTTP
 *   thread's to encode and free;
 * - the uploader thread owns the queued windows it was handed.
 */
#ifndef RTD_AGENT_INT_H
#define RTD_AGENT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/config.h"
#include "agent/proc.h"
#include "common/map.h"
#include "rtdiag/agent.h"
#include "rtdiag/profile.h"

/* The profile kinds a target may have, each one Go pprof path. */
enum prof_kind {
	PK_CPU = 0,     /* /debug/pprof/profile: delta, ?seconds=N */
	PK_ALLOC,       /* /debug/pprof/allocs */
	PK_MUTEX,       /* /debug/pprof/mutex */
	PK_BLOCK,       /* /debug/pprof/block */
	PK_EXCEPTIONS,  /* /debug/pprof/exceptions (not a Go path) */
	PK_COUNT
};

/* "profile", "allocs", ... (the pprof path) and "cpu", "alloc", ... (the
 * name in /targets and uploads) */
const char *prof_kind_path(enum prof_kind k);
const char *prof_kind_name(enum prof_kind k);
int prof_kind_from_path(const char *path);

struct agent;
struct target;
struct source;

/*
 * struct take - what a source hands over when it is cut
 * @p: one profile per kind, or NULL; the receiver owns them
 * @period: each kind's pprof period (1000000 for 1 ms per sample), or 0
 */
struct take {
	rtd_profile *p[PK_COUNT];
	int64_t period[PK_COUNT]; /* pprof period of the default type, 0 */
};

/*
 * struct source_ops - one kind of profile source
 * @name: "eventpipe", "perf"
 * @start: set up for target t; 0 or a negative error with s->err set.
 *         A start whose answer comes later returns 0 with s->starting
 *         set and gives the fd its answer comes on (EventPipe's session
 *         reply; a perf source's start thread, src_perf.c)
 * @fds: the descriptors the loop should poll for it (up to max) into fds;
 *       returns how many (0 for a source with a thread of its own)
 * @readable: fd is readable: consume what is there; 0 to go on, 1 when
 *            the source ended (target exited), <0 on error (s->err)
 * @take: cut: profiles since the last take into t; 0 or an error
 * @pause: stop collecting (true) or start again (false), for the CPU cap
 * @close: after @readable failed: close the streams to the target at once
 *         (a stream left unread can hold its exit), keeping what was
 *         collected for one more @take (may be NULL)
 * @free: release everything
 */
struct source_ops {
	const char *name;
	int (*start)(struct source *s);
	int (*fds)(struct source *s, int *fds, int max);
	int (*readable)(struct source *s, int fd);
	int (*take)(struct source *s, struct take *t);
	int (*pause)(struct source *s, bool pause);
	void (*close)(struct source *s);
	void (*free)(struct source *s);
};

/*
 * struct source - one running source of one target
 * @ops: its kind
 * @t: its target
 * @a: the agent
 * @priv: the kind's own state
 * @kinds: bit mask of the profile kinds it yields (1u << PK_*)
 * @ended: the source is done (target gone, or failed)
 * @paused: stopped by the CPU cap
 * @err: why it failed, for the log and /targets
 */
struct source {
	const struct source_ops *ops;
	struct target *t;
	struct agent *a;
	void *priv;
	unsigned kinds;
	bool ended;
	bool paused;
	unsigned failures;      /* starts that failed in a row */
	bool starting;          /* its start's answer still to come */
	uint64_t retry_ns;      /* monotonic: when to start it again */
	uint64_t cpu_ns; /* CPU the loop spent on it (readable + take) */
	char err[256];
};

/* A pprof request waiting for its profile. */
struct pull {
	struct pull *next;      /* in the agent's queue, then the target's */
	uint64_t target_id;
	enum prof_kind kind;
	uint64_t seconds_ns;    /* 0: a snapshot (cumulative kinds) */
	uint64_t deadline_ns;   /* monotonic */
	int64_t start_unix_ns;
	rtd_profile *p;         /* handed to the requester when done */
	int status;             /* HTTP status to answer */
	char msg[512];          /* the answer's text when not 200 */
	bool done;
	pthread_cond_t cond;
};

#define AGENT_MAX_SOURCES 4

/* One process being profiled. */
struct target {
	struct target *next;
	uint64_t id;
	pid_t pid;
	uint64_t start_ticks;
	int64_t start_unix;     /* process start, seconds since the epoch */
	size_t spec;
	char service[130];
	char runtime[16];       /* "dotnet", "native" */
	char exe[PROC_NAME_MAX];
	char cgroup[PROC_CGROUP_MAX];
	struct rtd_agent_cgroup_ids ids;
	char prefix[512];       /* pprof path prefix, "" for none */
	struct source *src[AGENT_MAX_SOURCES];
	size_t nsrc;
	unsigned kinds;         /* kinds some live source yields */
	rtd_profile *win[PK_COUNT];
	rtd_profile *cum[PK_COUNT];
	int64_t win_start_unix_ns;
	struct pull *pulls;
	bool gone;
	uint64_t recheck_until; /* monotonic: look for a .NET runtime until */
	/* for /metrics, refreshed every tick */
	struct proc_stat st;
	bool have_st;
	uint64_t samples_ns[PK_COUNT]; /* CPU ns / counts taken so far */
	uint64_t windows;
	char errmsg[256];       /* the last source failure, for /targets */
	/* perf sources whose first start (on a thread, src_perf.c) is still
	 * to answer: the HTTP side does not list the target until they have,
	 * as when they started on the loop; once listed, never hidden again
	 * (both under a->lock; target_listed()) */
	unsigned unlisted;
	bool listed;
	/* why a kind has no source (loop thread only), "" when not said */
	char nokind[PK_COUNT][192];
	/* .NET counters as Prometheus series (series.c), under a->lock */
	struct series *series;
	size_t nseries, series_cap;
	uint64_t series_dropped;
};

/* One window on its way to the backend (uploader's queue). */
struct upload {
	struct upload *next;
	rtd_profile *p;         /* until encoded */
	uint8_t *body;          /* multipart body, once encoded */
	size_t body_len;
	char *name;             /* Pyroscope's name: "service{k=v,...}" */
	char *res;              /* OTLP: the resource (otlp_resource()) */
	char boundary[48];
	uint64_t target_id;
	enum prof_kind kind;
	int64_t from_unix, until_unix;
	unsigned attempts;
};

struct pusher;
struct http_server;

struct agent {
	rtd_agent_config *c;
	char url[300];
	char host[256];          /* gethostname() */
	struct http_server *http;
	struct pusher *push;     /* Pyroscope */
	struct pusher *otlp;     /* OTLP */

	pthread_mutex_t lock;   /* targets list, stats, requests */
	struct target *targets;
	size_t ntargets;
	uint64_t next_id;
	struct pull *requests;  /* from HTTP threads, for the loop */
	size_t npulls;          /* requests alive (queued or waiting) */
	int wake_fd;            /* eventfd: a request, or stop */
	/* reads every .NET session's stream on a thread of its own into a
	 * buffer of c->dotnet_read_buffer (NULL: read by the loop itself) */
	struct rtd_ipc_spool *spool;
	/* RTDIAG_AGENT_TEST_STALL=MS[,N]: the loop leaves the first N (all)
	 * .NET sessions' streams undecoded for MS ms after each opens */
	uint64_t stall_ns;
	unsigned stall_left;
	atomic_int stop;
	atomic_int reload;      /* rtd_agent_reload() asked */
	bool stopping;
	bool draining;          /* in agent_drain(): not again from within */

	struct rtd_agent_stats st;
	uint64_t boot_time;
	/* own CPU and memory, for the caps */
	uint64_t cpu_ns_last, cpu_mono_last;
	double cpu_pct;          /* over the last cap interval */
	uint64_t rss_bytes;
	uint64_t paused_until;   /* monotonic ns; sources paused until then */
	uint64_t pause_ns;       /* the current pause length */
	/* once-only log lines */
	bool logged_max_targets;
	bool logged_mem;
	uint64_t next_scan_ns;
	bool scan_soon;         /* a young process waits for its next look */
	/* the kernel's process events (procev.c), read at each scan: the
	 * processes to look at instead of walking /proc every scan */
	int procev_fd;           /* -1: none, walk /proc every scan */
	pid_t *changed;          /* forked, exec'd or renamed since the last
				  * scan (AGENT_MAX_CHANGED at most) */
	size_t nchanged;
	bool changed_all;        /* more, or events lost: walk /proc once */
	uint64_t next_walk_ns;   /* the walk of /proc at the latest */
	rtd_map seen;            /* pid -> struct seen: selected by no spec */
	uint64_t scan_gen;
	uint64_t next_tick_ns;
	int64_t next_window_unix_ns;
	struct aflight *flights; /* flight recorders (flight.c), under lock */
};

/* The spool's counters into @st (dotnet_dropped_bytes, ...). */
void agent_spool_stats(struct agent *a, struct rtd_agent_stats *st);

/* ---- targets (target.c) ---- */
struct target *target_new(struct agent *a, pid_t pid, size_t spec,
			  const struct proc_info *pi,
			  const struct proc_stat *st);
void target_free(struct target *t);
/* Cut every source into the window, the cumulative profiles and the
 * waiting pulls. */
void target_take(struct agent *a, struct target *t);
/* Close the window (at until_ns, wall clock) and hand it to the uploader. */
void target_close_window(struct agent *a, struct target *t, int64_t until_ns);
/* Answer waiting pulls whose time has come (all when force). */
void target_finish_pulls(struct agent *a, struct target *t, uint64_t now,
			 bool force);
/* A source's start (or its stream) failed at now: it is tried again after
 * a delay that grows with its failures in a row (source_retry_gap()). */
void source_failed(struct source *s, uint64_t now);
uint64_t source_retry_gap(unsigned failures);
/* Its start failed, at once or in its answer (rc): source_failed(), said
 * once a run of failures (log, /targets, the errors counter). */
void source_start_failed(struct agent *a, struct source *s, int rc);
/* t->kinds again from its sources' (one learnt it yields fewer). */
void target_kinds_update(struct agent *a, struct target *t);
/* The HTTP side lists t (a->lock held): not while the first start of one
 * of its perf sources is still to answer (struct target's unlisted). */
static inline bool target_listed(const struct target *t)
{
	return t->listed || !t->unlisted;
}
/* Add one source of ops to t and start it; failures are logged once. */
int target_add_source(struct agent *a, struct target *t,
		      const struct source_ops *ops);

/* An empty profile with src's sample types; a copy of src; an empty
 * profile of kind k's usual types (NULL when out of memory). */
rtd_profile *profile_like(const rtd_profile *src, int64_t period);
rtd_profile *profile_clone(const rtd_profile *src);
rtd_profile *kind_profile_new(enum prof_kind k);

/* ---- sources ---- */
extern const struct source_ops source_eventpipe;
extern const struct source_ops source_perf;
extern const struct source_ops source_perf_offcpu;

/* ---- discovery (discover.c) ---- */
void agent_scan(struct agent *a);
void agent_drain(struct agent *a);
void agent_seen_free(struct agent *a);
/* Listen to the kernel's process events (agent_scan() reads them); a
 * failure leaves the /proc walk every scan, and is logged. */
void agent_procev_start(struct agent *a);

/* ---- pull requests (loop side, agent.c) ---- */
void agent_handle_requests(struct agent *a);
/* HTTP side: queue a request and wait for it. Returns the pull (caller
 * frees with pull_free) or NULL when out of memory. */
struct pull *agent_pull(struct agent *a, uint64_t target_id,
			enum prof_kind kind, uint64_t seconds_ns);
void pull_free(struct pull *p);

/* ---- HTTP (http.c) ---- */
/* A pprof request's parameters, as Go's net/http/pprof reads them: the
 * delta's length (CPU: 30 s unless ?seconds= is a positive base-10
 * integer) and, without ?seconds=, the ?debug= text form (a
 * RTD_PROFILE_GO_* form, 0: protobuf). */
struct pull_params {
	uint64_t ns;
	int text_form;
};
/* Parse ?seconds= and ?debug= (NULL when absent) for kind k: 0, or the
 * HTTP status Go answers with and its message in *msg (static). */
int pull_params_parse(enum prof_kind k, const char *seconds,
		      const char *debug, struct pull_params *out,
		      const char **msg);
/* strconv.ParseInt(s, 10, 64): 0, -EINVAL (syntax: *v 0) or -ERANGE
 * (*v the nearest int64, as Go returns it). */
int go_parse_int(const char *s, int64_t *v);
int http_start(struct agent *a, char *err, size_t errlen);
void http_stop(struct agent *a);
/* Read the token and TLS credentials again (the loop, after SIGHUP). */
void http_reload(struct agent *a);
/* Refusals by reason (connections and requests the server turned away):
 * up to max counts into out, with their reason names; returns nothing,
 * fills max entries (http_admit.h's RTD_HTTP_REFUSE_COUNT of them). */
#define HTTP_REFUSALS 8
void http_refusals(struct agent *a, uint64_t *out, const char **names,
		   size_t max);

/* ---- .NET counters as series (series.c) ---- */
struct rtd_buf;
struct rtd_counter_record;
struct series;
void series_record(struct agent *a, struct target *t,
		   const struct rtd_counter_record *r);
void series_free(struct target *t);
int series_write(struct agent *a, struct rtd_buf *b,
		 int (*label_fn)(struct agent *, const struct target *,
				 struct rtd_buf *));

/* ---- flight recorders (flight.c) ---- */
struct rtd_flight_snapshot_info;
struct aflight;
/* t's spec has a flight: section: start its recorder (on a thread). */
void agent_flight_start(struct agent *a, struct target *t);
/* t is dropped: end its recorder (its list stays for /snapshots). */
void agent_flight_drop(struct agent *a, struct target *t);
void agent_flight_free_all(struct agent *a);
/* HTTP side: a snapshot of target_id now. Returns the HTTP status (200,
 * or 404/500/503 with msg). */
int agent_flight_take(struct agent *a, uint64_t target_id, const char *why,
		      struct rtd_flight_snapshot_info *out, char *msg, size_t msglen);
/* One snapshot as a JSON object; every listed one as a JSON array. */
int agent_flight_json(struct rtd_buf *b, const char *service,
		      const struct rtd_flight_snapshot_info *s);
int agent_flight_list_json(struct agent *a, struct rtd_buf *b);

/* ---- Prometheus text (metrics.c) ---- */
int metrics_write(struct agent *a, struct rtd_buf *b);
/* Append a label value escaped for the text format (\\ \" \n). */
int prom_escape(struct rtd_buf *b, const char *s);

/* ---- /targets JSON (http.c) ---- */
/* full: with exe paths, cgroups, container and pod ids */
int targets_json(struct agent *a, struct rtd_buf *b, bool full);

/* ---- push (push.c) ---- */
int push_start(struct agent *a, char *err, size_t errlen);
/* Queue one window for one backend (a->push or a->otlp); the uploader
 * owns u afterwards. */
void push_enqueue(struct agent *a, struct pusher *ps, struct upload *u);
/* Windows waiting for one backend (0 for NULL). */
size_t push_queue_len(struct pusher *ps);
/* Over the memory cap: every backend drops the older half of its queue. */
void push_shed(struct agent *a);
/* OTLP: the resource attributes of t's uploads (malloc'd into *out). */
int otlp_resource(struct agent *a, const struct target *t, char **out);
/* OTLP: an ExportProfilesServiceResponse's partial_success (rejected
 * profiles, the message into msg). Returns 0 or a negative RTD_E_*. */
int otlp_parse_response(const uint8_t *p, size_t n, int64_t *rejected,
			char *msg, size_t msglen);
/* Stop every backend: deliver what is queued for at most wait_ns, then
 * give up. */
void push_stop(struct agent *a, uint64_t wait_ns);
void upload_free(struct upload *u);
/* Pyroscope's name parameter: "service{k=v,...}" into b. */
int push_app_name(struct agent *a, const struct target *t,
		  enum prof_kind kind, struct rtd_buf *b);
/* The multipart body of one upload (profile + sample_type_config). */
int push_body(const uint8_t *pprof, size_t len, enum prof_kind kind,
	      const char *boundary, struct rtd_buf *b);
/* Serialize a profile as gzip pprof into malloc'd bytes. */
int profile_to_pprof(const rtd_profile *p, uint8_t **out, size_t *len);
/* The same as Go's text form (rtd_profile_write_go_text(); form 0: pprof). */
int profile_encode(const rtd_profile *p, int go_text_form, uint8_t **out,
		   size_t *len);

/* Monotonic and wall clocks in ns. */
uint64_t mono_ns(void);
int64_t unix_ns(void);

#endif /* RTD_AGENT_INT_H */
