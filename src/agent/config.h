/* SPDX-License-Identifier: MIT */
/*
 * config.h - the agent's options as the library holds them, and the small
 * text parsers they share (durations, sizes, percentages, target specs).
 */
#ifndef RTD_AGENT_CONFIG_H
#define RTD_AGENT_CONFIG_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "rtdiag/agent.h"

/* What a target spec selects. */
enum spec_kind {
	SPEC_PID = 1, /* pid=PID: that process */
	SPEC_NAME,    /* name=REGEX: process name, executable or command */
	SPEC_CGROUP,  /* cgroup=PATH: every process in it or below it */
	SPEC_DOTNET,  /* dotnet: every process with a diagnostic socket */
};

/*
 * struct agent_flight - a target's flight: section (the config file only):
 * the flight recorder (rtdiag/flight_recorder.h) run on each process the
 * target selects
 * @ring_ns: what the ring keeps
 * @max_memory: the ring's cap (0: the library's default)
 * @post_ns, @cooldown_ns, @interval_ns: as the recorder's options
 * @max_snapshots: per process (0: no limit)
 * @keep_bytes: a process's snapshots kept under this (0: no cap)
 * @dir: where they are written
 * @providers: EventPipe providers added to the recording's, or NULL
 * @format: enum rtd_timeline_format
 * @actions: enum rtd_flight_action bits
 * @triggers: trigger expressions, checked
 */
struct agent_flight {
	uint64_t ring_ns, max_memory, post_ns, cooldown_ns, interval_ns;
	uint64_t max_snapshots, keep_bytes;
	char *dir, *providers;
	int format;
	unsigned actions;
	char **triggers;
	size_t ntriggers;
};
void agent_flight_free(struct agent_flight *f);
struct agent_flight *agent_flight_dup(const struct agent_flight *f);

/*
 * struct agent_spec - one parsed --target
 * @kind: what it selects
 * @pid: SPEC_PID
 * @arg: SPEC_NAME's regex text, SPEC_CGROUP's path ("/a/b", no trailing /)
 * @re: SPEC_NAME's compiled regex (POSIX extended)
 * @service: the service name given with it, or NULL (then the process's)
 */
struct agent_spec {
	enum spec_kind kind;
	pid_t pid;
	char *arg;
	regex_t re;
	bool has_re;
	char *service;
	struct agent_flight *flight; /* or NULL */
};

/* auto: perf where perf_event is allowed (resolved by rtd_agent_new()) */
enum dotnet_cpu_source {
	DOTNET_CPU_AUTO = 0,
	DOTNET_CPU_EVENTPIPE = 1,
	DOTNET_CPU_PERF = 2
};

struct label {
	char *key;
	char *val;
};

struct rtd_agent_config {
	char *listen;             /* "127.0.0.1:4040" */
	bool allow_remote;
	char *tls_cert;           /* PEM files, or NULL */
	char *tls_key;
	char *tls_client_ca;
	char *auth_token_file;
	bool insecure;            /* allow_remote with neither TLS nor token */
	struct agent_spec *specs;
	size_t nspecs;
	uint64_t window_ns;
	uint64_t scan_ns;
	uint64_t tick_ns;         /* how often sources are cut (1 s) */
	char *pprof_prefix;       /* "/targets/{service}" */
	char *push;               /* base URL, or NULL */
	unsigned push_queue;      /* uploads waiting at most */
	uint64_t push_timeout_ns;
	char **push_headers;      /* "Name: value" */
	size_t npush_headers;
	char *push_tenant;
	char *otlp;
	struct label *labels;
	size_t nlabels;
	unsigned cpu_hz;
	enum dotnet_cpu_source dotnet_cpu;
	bool dotnet_cpu_external; /* count native (External) time too */
	unsigned dotnet_kinds;    /* RTD_NETTRACE_PROFILE_* bits */
	bool native_dwarf;        /* perf sources read DWARF (inlines, lines) */
	bool native_block;        /* native targets get an off-CPU source */
	char *dotnet_counters;    /* counters spec, or NULL for none */
	uint64_t counters_interval_ns;
	uint64_t dotnet_read_buffer; /* each session's spool cap, bytes */
	unsigned max_targets;
	uint64_t max_memory;      /* bytes of RSS */
	double max_cpu;           /* percent of one CPU */
	uint64_t max_pull_ns;     /* longest ?seconds= */
	int log_level;            /* enum rtd_log_level */
	char *proc_dir;           /* "/proc" (tests point it elsewhere) */
	char errmsg[512];
};

/* "1.5", "1.5s", "200ms", "10us", "5ns", "2m", "1h" -> ns; -1 when bad. */
int agent_parse_duration(const char *s, uint64_t *ns);
/* "4096", "64k", "8M", "1G" (powers of 1024, optional B/iB) -> bytes. */
int agent_parse_size(const char *s, uint64_t *bytes);
/* "5", "5%", "0.5%" -> percent; -1 when bad. */
int agent_parse_percent(const char *s, double *pct);

/*
 * Parse "pid=PID", "name=REGEX", "cgroup=PATH" or "dotnet", each with an
 * optional trailing ",service=NAME". Fills *sp (free with spec_clear);
 * on error writes a message to err and returns -RTD_E_INVAL.
 */
int spec_parse(const char *text, struct agent_spec *sp, char *err,
	       size_t errlen);
int spec_init(struct agent_spec *sp, enum spec_kind kind, const char *arg,
	      const char *service, char *err, size_t errlen);
void spec_clear(struct agent_spec *sp);
/* The spec as text ("name=^api$"), for messages. */
const char *spec_text(const struct agent_spec *sp, char *buf, size_t len);
/* Is s a usable service name: 1-128 of [A-Za-z0-9_.-]? */
bool service_name_ok(const char *s);
/* Is s a label name: [A-Za-z_][A-Za-z0-9_]*, at most 128? */
bool label_name_ok(const char *s);

/* Split "host:port" or "[v6]:port" (host without brackets into h). */
int agent_split_hostport(const char *s, char *h, size_t hlen, unsigned *port);
/* Is host a loopback name or address? */
bool agent_host_is_loopback(const char *host);

/* Deep copy (the agent keeps its own). Returns NULL when out of memory. */
rtd_agent_config *agent_config_dup(const rtd_agent_config *c);

#endif /* RTD_AGENT_CONFIG_H */
