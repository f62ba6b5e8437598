/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/agent.h - a continuous profiling agent that feeds the backends
 * people already run (Grafana Pyroscope, Parca, Prometheus), out of
 * process, for .NET and native programs alike.
 *
 * The agent finds its targets (a pid, a process name, a cgroup, every .NET
 * process) and follows them as they start, exit and restart. For each it
 * runs profile sources continuously (EventPipe CPU samples for .NET; perf
 * sampling for the others when the perf profiler is built in) and cuts
 * their output into windows (15 s by default) held in bounded memory.
 *
 * It serves, over HTTP (libmicrohttpd; loopback unless told otherwise):
 * - per target, Go-compatible pprof endpoints under a prefix
 *   ("/targets/{service}" by default): PREFIX/debug/pprof/profile?seconds=N
 *   (a delta CPU profile of the next N seconds, as Go's net/http/pprof),
 *   PREFIX/debug/pprof/allocs, /mutex, /block (cumulative since the agent
 *   attached, or a delta with ?seconds=N) where the target's runtime
 *   gives them;
 * - /metrics in the Prometheus text format: each target's CPU and memory,
 *   labelled service, pid and container, and the agent's own health;
 * - /targets: a JSON array, one object per live target with at least
 *   "pid", "service", "runtime" and "pprof" (its pprof path prefix).
 * It pushes every window to Pyroscope's /ingest (pprof, multipart), with
 * retries and backoff, through a bounded queue that drops the oldest
 * windows when the backend is away (and counts them).
 *
 * Options: one table (rtd_agent_options()) names every option. A config
 * is filled from a YAML file (rtd_agent_config_load()) and from
 * command-line flags of the same names (rtd_agent_config_set()), so every
 * option is both.
 *
 * Threads: rtd_agent_run() runs the agent's loop on the calling thread;
 * the HTTP server and the uploader have threads of their own.
 * rtd_agent_stop() may be called from any thread or a signal handler.
 * Messages (a target that exited, a refused session, an unreachable
 * backend) go to the library's log callback (rtd_set_log()), each kind
 * once per target or once per outage, never once per window.
 */
#ifndef RTDIAG_AGENT_H
#define RTDIAG_AGENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Caps, each named for what it bounds. */
#define RTD_AGENT_MAX_TARGETS 1024   /* largest max-targets */
#define RTD_AGENT_MAX_SPECS 256      /* target specs in one config */
#define RTD_AGENT_MAX_LABELS 32      /* static labels in one config */
#define RTD_AGENT_MAX_HEADERS 16     /* extra push headers */
#define RTD_AGENT_MAX_PULLS 32       /* pull requests waiting at once */
#define RTD_AGENT_MAX_CONFIG (1u << 20) /* bytes of one config file */

/* ---- options and config ------------------------------------------------ */

/**
 * enum rtd_agent_opt_kind - what an option's value is
 * @RTD_AGENT_OPT_STR: text
 * @RTD_AGENT_OPT_BOOL: a flag ("true"/"false" in a file)
 * @RTD_AGENT_OPT_INT: a non-negative integer
 * @RTD_AGENT_OPT_DURATION: "15s", "500ms", "2m", or seconds
 * @RTD_AGENT_OPT_SIZE: "256M", "64k", or bytes
 * @RTD_AGENT_OPT_PERCENT: "5%" or "5" (percent of one CPU)
 * @RTD_AGENT_OPT_LIST: repeatable text; a file gives a sequence
 * @RTD_AGENT_OPT_CHOICE: one of the words of the option's meta ("a|b")
 */
enum rtd_agent_opt_kind {
	RTD_AGENT_OPT_STR,
	RTD_AGENT_OPT_BOOL,
	RTD_AGENT_OPT_INT,
	RTD_AGENT_OPT_DURATION,
	RTD_AGENT_OPT_SIZE,
	RTD_AGENT_OPT_PERCENT,
	RTD_AGENT_OPT_LIST,
	RTD_AGENT_OPT_CHOICE,
};

/**
 * struct rtd_agent_option - one option of the agent
 * @name: its name: the YAML key and, with "--", the flag
 * @kind: what its value is
 * @meta: the value's name in help ("ADDR:PORT"); the words of a choice
 * @def: its default as text, or NULL when it has none
 * @help: one line of help
 */
struct rtd_agent_option {
	const char *name;
	enum rtd_agent_opt_kind kind;
	const char *meta;
	const char *def;
	const char *help;
};

/**
 * rtd_agent_options - the agent's options
 * @n: receives their count
 *
 * Returns: a static array of @n options.
 */
RTD_API const struct rtd_agent_option *rtd_agent_options(size_t *n);

typedef struct rtd_agent_config rtd_agent_config;

/**
 * rtd_agent_config_new - a config holding every option's default
 *
 * Returns: the config, or NULL when out of memory.
 */
RTD_API rtd_agent_config *rtd_agent_config_new(void);

/**
 * rtd_agent_config_free - free a config
 * @c: the config; NULL does nothing
 */
RTD_API void rtd_agent_config_free(rtd_agent_config *c);

/**
 * rtd_agent_config_set - set one option from text, as a flag gives it
 * @c: the config
 * @name: the option's name ("listen", "target", ...); '_' and '-' are
 *        the same
 * @value: its value; for a flag NULL means true. A list option appends.
 *
 * Returns: 0, -RTD_E_NOTFOUND for an unknown option, -RTD_E_INVAL for a
 * bad value (rtd_agent_config_errmsg() says what and where), or -ENOMEM.
 */
RTD_API int rtd_agent_config_set(rtd_agent_config *c, const char *name,
				 const char *value);

/**
 * rtd_agent_config_load - read options from a YAML file
 * @c: the config
 * @path: the file: a mapping of option names to values; "target",
 *        "label" and "push-header" take a sequence (or one value);
 *        "label" also a mapping; a target also a mapping such as
 *        {name: "^api$", service: checkout}
 *
 * Options set before keep their values unless the file sets them (list
 * options append). Returns: 0, or an error with a message naming the file,
 * line and column (rtd_agent_config_errmsg()).
 */
RTD_API int rtd_agent_config_load(rtd_agent_config *c, const char *path);

/**
 * rtd_agent_config_load_text - rtd_agent_config_load() from memory
 * @c: the config
 * @text: the YAML text
 * @len: its length (at most RTD_AGENT_MAX_CONFIG)
 * @origin: the name messages give it ("agent.yaml")
 *
 * Returns: as rtd_agent_config_load().
 */
RTD_API int rtd_agent_config_load_text(rtd_agent_config *c, const char *text,
				       size_t len, const char *origin);

/**
 * rtd_agent_config_check - check the options together
 * @c: the config
 *
 * A listen address that is not loopback needs allow-remote; a push URL
 * must be http(s); at least one target; caps in range.
 * Returns: 0 or -RTD_E_INVAL (rtd_agent_config_errmsg() says why).
 */
RTD_API int rtd_agent_config_check(rtd_agent_config *c);

/**
 * rtd_agent_config_errmsg - what the last failed config call found
 * @c: the config
 *
 * Returns: a message ("" when none), valid until the next call on @c.
 */
RTD_API const char *rtd_agent_config_errmsg(const rtd_agent_config *c);

/**
 * rtd_agent_config_log_level - the log-level option
 * @c: the config
 *
 * Returns: the level the agent's messages should be shown down to.
 */
RTD_API enum rtd_log_level
rtd_agent_config_log_level(const rtd_agent_config *c);

/**
 * rtd_agent_config_write - write the effective options as YAML
 * @c: the config
 * @f: where
 *
 * The output reads back with rtd_agent_config_load() to the same config.
 * Returns: 0 or -EIO.
 */
RTD_API int rtd_agent_config_write(const rtd_agent_config *c, FILE *f);

/* ---- the agent ------------------------------------------------------------ */

typedef struct rtd_agent rtd_agent;

/**
 * rtd_agent_new - set up an agent: bind its HTTP address, start no target yet
 * @c: a checked config (copied: the caller may free it afterwards)
 * @out: receives the agent
 *
 * Returns: 0; -RTD_E_INVAL for a config that fails rtd_agent_config_check();
 * a negative errno when the address cannot be bound (-EADDRINUSE, ...);
 * rtd_agent_errmsg_last() says more.
 */
RTD_API int rtd_agent_new(const rtd_agent_config *c, rtd_agent **out);

/**
 * rtd_agent_errmsg_last - why the last rtd_agent_new() on this thread failed
 *
 * Returns: a thread-local message, "" when none.
 */
RTD_API const char *rtd_agent_errmsg_last(void);

/**
 * rtd_agent_url - the address the agent serves, as a URL
 * @a: the agent
 *
 * Returns: "http://127.0.0.1:4040" (the port really bound when the config
 * asked for port 0); owned by @a.
 */
RTD_API const char *rtd_agent_url(const rtd_agent *a);

/**
 * rtd_agent_run - run until rtd_agent_stop()
 * @a: the agent
 *
 * Finds targets, runs their sources, cuts windows, serves requests and
 * pushes. On stop, the current window of every target is closed early
 * and pushed (the uploader gets a few seconds to deliver the queue), and
 * waiting pull requests are answered with what they have.
 * Returns: 0, or a negative error that made the agent unable to go on.
 */
RTD_API int rtd_agent_run(rtd_agent *a);

/**
 * rtd_agent_reload - read the TLS certificate, key and token files again
 * @a: the agent
 *
 * Safe from a signal handler (SIGHUP) and any thread: the loop reloads
 * them; a file that fails to load is logged and the credentials in force
 * are kept. New connections use the new certificate; the token is
 * checked against the new one from the next request on.
 */
RTD_API void rtd_agent_reload(rtd_agent *a);

/**
 * rtd_agent_stop - make rtd_agent_run() flush and return
 * @a: the agent
 *
 * Async-signal-safe (writes an eventfd).
 */
RTD_API void rtd_agent_stop(rtd_agent *a);

/**
 * rtd_agent_free - stop everything and free the agent
 * @a: the agent; NULL does nothing
 */
RTD_API void rtd_agent_free(rtd_agent *a);

/**
 * struct rtd_agent_stats - the agent's own counters (also in /metrics)
 * @sz: sizeof(struct rtd_agent_stats), set by the caller
 * @targets: live targets
 * @targets_seen: targets found since the start
 * @targets_exited: targets that exited
 * @target_errors: sources that failed (a refused session, no permission)
 * @windows: windows closed (all targets, all kinds)
 * @uploads: uploads the backend accepted
 * @upload_errors: upload attempts that failed
 * @dropped_windows: windows dropped from a full push queue or refused by
 *                   the backend
 * @pulls: pprof requests answered
 * @throttled_ns: time sources were paused to keep under the CPU cap
 * @shed: times memory was shed to keep under the memory cap
 * @otlp_uploads: uploads the OTLP backend accepted
 * @otlp_upload_errors: OTLP upload attempts that failed
 * @otlp_dropped_windows: windows dropped from a full OTLP queue or refused
 * @otlp_rejected_profiles: profiles an OTLP backend said it rejected in an
 *                          accepted export (partial success)
 * @dotnet_dropped_bytes: .NET session stream bytes dropped past a session's
 *                        read buffer (dotnet-read-buffer): the agent fell
 *                        that far behind the stream
 * @dotnet_damaged_sessions: .NET sessions that dropped bytes so (each ended
 *                           at the damage, its source tried again later)
 */
struct rtd_agent_stats {
	size_t sz;
	uint64_t targets;
	uint64_t targets_seen;
	uint64_t targets_exited;
	uint64_t target_errors;
	uint64_t windows;
	uint64_t uploads;
	uint64_t upload_errors;
	uint64_t dropped_windows;
	uint64_t pulls;
	uint64_t throttled_ns;
	uint64_t shed;
	uint64_t otlp_uploads;
	uint64_t otlp_upload_errors;
	uint64_t otlp_dropped_windows;
	uint64_t otlp_rejected_profiles;
	uint64_t dotnet_dropped_bytes;
	uint64_t dotnet_damaged_sessions;
};

/**
 * rtd_agent_get_stats - read the agent's counters
 * @a: the agent
 * @st: filled up to @st->sz bytes
 */
RTD_API void rtd_agent_get_stats(rtd_agent *a, struct rtd_agent_stats *st);

/* ---- labels from a cgroup path ---------------------------------------------- */

/**
 * struct rtd_agent_cgroup_ids - what a cgroup path says about a container
 * @container_id: the container's id (64 hex digits for Docker, containerd,
 *                CRI-O and Podman), "" when none
 * @pod_uid: the Kubernetes pod's uid ("0a1b2c3d-..."), "" when none
 */
struct rtd_agent_cgroup_ids {
	char container_id[72];
	char pod_uid[40];
};

/**
 * rtd_agent_cgroup_parse - find a container id and pod uid in a cgroup path
 * @path: a cgroup v2 path as /proc/PID/cgroup gives it
 *        ("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod
 *        0a1b2c3d_....slice/cri-containerd-<64 hex>.scope", "/docker/<id>",
 *        "/system.slice/docker-<id>.scope", ...)
 * @out: filled; fields not found are ""
 *
 * The pod uid is given with dashes whatever the path used (systemd's
 * cgroup driver writes underscores).
 */
RTD_API void rtd_agent_cgroup_parse(const char *path,
				    struct rtd_agent_cgroup_ids *out);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_AGENT_H */
