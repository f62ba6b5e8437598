/* SPDX-License-Identifier: MIT */
/*
 * dotnet_session.h - what the EventPipe commands of 'rtdiag dotnet' share
 * (collect, profile, stack, replay in dotnet_collect.c; counters in
 * dotnet_counters.c; gcdump in dotnet_gcdump.c, whose session is the
 * library's): their arguments, the
 * sink that writes and decodes a session's stream, and one session's run.
 */
#ifndef RTD_DOTNET_SESSION_H
#define RTD_DOTNET_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dotnet_cli.h"
#include "rtdiag/counters.h"
#include "rtdiag/gcheap.h"
#include "rtdiag/ipc.h"
#include "rtdiag/ipc_source.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/profile.h"

enum {
	O_OUT = 1, O_PROVIDERS, O_PROFILE, O_CLREVENTS, O_CLREVENTLEVEL,
	O_DURATION, O_BUFFER, O_NO_RUNDOWN, O_RUNDOWN_WAIT, O_RECORD, O_TOP,
	O_DRY_RUN, O_NO_STACKWALK, O_TYPE, O_CPU, O_FORMAT, O_MANAGED_ONLY,
	O_COUNTERS, O_REFRESH, O_CFORMAT, O_HFORMAT, O_MAX_OBJECTS, O_SAMPLER,
};

struct collect_args {
	struct dn_target t;
	const char *out;
	char outbuf[512]; /* a default output name */
	const char *record;
	double duration;
	double rundown_wait;
	unsigned buffer_mb;
	bool no_rundown;
	bool dry_run;
	bool no_stackwalk;
	uint64_t rundown_keyword; /* 0: the library's default */
	bool filters_optional;
	char **command; /* after "--" */
	struct rtd_ipc_providers prov;
	/* profile */
	unsigned kinds;
	bool cpu;          /* running managed code only */
	bool managed_only; /* dotnetdiag's */
	bool eventpipe_cpu; /* --sampler eventpipe: no perf_event for --cpu */
	size_t top;        /* rows of the table; 0: none */
	enum rtd_profile_format format;
};

/*
 * Everything read from the session goes to the output file (all of it,
 * whatever the decoder thinks) and through the nettrace decoder, which
 * gives the live event and drop counts and tells whether the stream ended
 * with its end marker. profile (every kind) and stack read the session as
 * a record source instead (ipc_source.h), pulled by the profile builder.
 */
struct sink_state {
	FILE *out;
	const char *path;
	int werr; /* writing the output failed: errno */
	uint64_t bytes;
	rtd_nettrace *dec;
	int dec_rc; /* first decoder error, or 1 at the end marker */
	/* profile and stack: the profile builder, pulling the stream as the
	 * live record source (no decoder of the sink's) */
	rtd_nettrace_profiler *prof;
	int prof_rc;
	rtd_source *src;
	int src_rc; /* the source's error record: a cut or damaged stream */
	uint64_t src_off;
	char src_msg[256];
	rtd_nettrace *names; /* a rundown taken at the start, for names */
	uint64_t names_methods; /* methods that rundown named */
	rtd_counters *counters;
	int counters_rc;
	/* profile --cpu: the target's threads' CPU time at the session's
	 * start (read when cpu_pid > 0), for the kernel's CPU figures */
	int cpu_pid;
	struct rtd_thread_cpu *cpu0;
	size_t ncpu0;
	int cpu0_rc; /* 0 once read, else why not */
	double cpu_t0; /* CLOCK_MONOTONIC seconds of that read */
};

/* How a session ended, for the messages and the exit code. */
struct session_end {
	struct rtd_ipc_pump_result res;
	char target[128];
	pid_t pid;         /* the target's, for the pictures' titles */
	bool launched;
	bool child_ended;  /* the program we started ended by itself */
	int child_status;
};

/* A sink for a session, or with @profile a profile builder for the
 * session's records. */
int sink_init(struct sink_state *st, const struct collect_args *a,
	      bool profile);
void sink_free(struct sink_state *st);
/* The rtd_ipc_sink_fn: into st->out, through the decoder. */
int stream_sink(const void *data, size_t len, void *ctx);
/* After the stream: did it decode to its end marker? Else why not. */
bool sink_complete(struct sink_state *st, char *why, size_t len);
/*
 * Run one session to its end: connect (or start -- COMMAND suspended),
 * start the session, call @opened (the session is on) and @started (a
 * target we did not start), resume, pump into @st. Returns CLI_OK or an
 * exit code after printing the error.
 */
int run_session(struct collect_args *a, struct sink_state *st,
		int (*started)(rtd_ipc_client *, void *),
		int (*opened)(struct sink_state *), struct session_end *end);
/*
 * profile --cpu through perf_event (dotnet_perfcpu.c): an exit code, or -1
 * with why in @why when this path is not taken (EventPipe's sampler then).
 */
int dn_profile_perf(const struct collect_args *a, char *why, size_t n);
/* The program's own exit code when rtdiag started it and it ended. */
int child_code(const struct session_end *e);
/* Say the stream ended early and what was kept; returns CLI_PARTIAL. */
int incomplete(const struct session_end *e, const char *what,
	       const char *why, const struct collect_args *a);

#endif
