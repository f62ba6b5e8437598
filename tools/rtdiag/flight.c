/* SPDX-License-Identifier: MIT */
/*
 * flight.c - 'rtdiag record -p PID --ring DURATION': the flight recorder
 * (issue #31). Wiring only: the live recorder's merged stream
 * (rtdiag/recorder.h) feeds the ring (rtdiag/flight.h) and the triggers
 * (rtdiag/trigger.h); a snapshot of the ring is written through the
 * timeline's record consumer (rtdiag/timeline_records.h) on SIGUSR1, a
 * trigger (after --post, spaced by --cooldown), Ctrl-C, or the target's
 * end; the recording goes on after each.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_format.h"
#include "flight_cli.h"
#include "opt.h"
#include "rtdiag/flight.h"
#include "rtdiag/recorder.h"
#include "rtdiag/timeline_records.h"
#include "rtdiag/trigger.h"

enum {
	O_PID = 1, O_RING, O_DIR, O_FORMAT, O_TRIGGER, O_POST, O_COOLDOWN, O_MAXSNAP,
	O_PROVIDERS, O_FREQ, O_NODOTNET, O_MAXMEM, O_INTERVAL,
};

#define FL_MAX_TRIGGERS 16

static const struct cli_opt flight_opts[] = {
	{O_PID, "pid", 'p', CLI_ARG_PIDS, 0, "PID", "the process to record", 0, 0},
	{O_RING, "ring", 0, CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "keep only the last TIME of everything (8s, 1m), in bounded memory", 0, 0},
	{O_DIR, "snapshot-dir", 0, CLI_ARG_STR, 0, "DIR",
	 "write snapshots into DIR (default: the current folder)", 0, 0},
	{O_FORMAT, "format", 0, CLI_ARG_CHOICE, 0, "perfetto|chrome-json",
	 "the snapshots' format (default perfetto, .pftrace; chrome-json: .json)", 0, 0},
	{O_TRIGGER, "trigger", 0, CLI_ARG_STR, CLI_OPT_REPEAT, "EXPR",
	 "take a snapshot when EXPR holds: Provider/counter>N [for TIME], cpu>90%, "
	 "rss>2GB, gc-pause>100ms, exception=Type (up to 16)", 0, 0},
	{O_POST, "post", 0, CLI_ARG_DURATION, 0, "TIME",
	 "after a trigger, record TIME more before writing (default 0)", 0, 0},
	{O_COOLDOWN, "cooldown", 0, CLI_ARG_DURATION, 0, "TIME",
	 "no snapshot by a trigger within TIME of the last one's trigger (default 0)", 0, 0},
	{O_MAXSNAP, "max-snapshots", 0, CLI_ARG_INT, CLI_OPT_POSITIVE, "N",
	 "stop after N snapshots (default: no limit)", 1, 1000000},
	{O_PROVIDERS, "providers", 0, CLI_ARG_STR, 0, "SPEC",
	 ".NET: EventPipe providers added to the default ones (dotnet-trace's syntax)", 0, 0},
	{O_FREQ, "freq", 'F', CLI_ARG_INT, CLI_OPT_POSITIVE, "HZ",
	 "CPU samples per second per thread (default 99)", 1, 100000},
	{O_NODOTNET, "no-dotnet", 0, CLI_ARG_NONE, 0, NULL,
	 "no EventPipe session even when the target is .NET: the kernel's side only", 0, 0},
	{O_MAXMEM, "max-memory", 0, CLI_ARG_SIZE, CLI_OPT_POSITIVE, "SIZE",
	 "the ring's hard cap (default 256M): past it the oldest go first", 0, 0},
	{O_INTERVAL, "interval", 0, CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "how often counters are published and cpu/rss read for triggers (default 1s)", 0, 0},
	{O_RING + 100, "duration", 'd', CLI_ARG_DURATION, CLI_OPT_HIDDEN, "TIME", "", 0, 0},
	{0},
};

static int flight_run(int argc, char **argv);

static const struct cli_cmd flight_cmd = {
	"record", NULL,
	"The flight recorder: record a process continuously - its runtime and the\n"
	"kernel, as 'rtdiag record' does - keep only the last --ring of it in\n"
	"bounded memory, and write that as a timeline when something goes wrong:\n"
	"on SIGUSR1, when a --trigger holds, and at Ctrl-C (a last one, then exit\n"
	"0). The recording goes on after each snapshot.",
	flight_opts, 0, 0, 0, flight_run,
	"Snapshots are named rtdiag-flight-TIME-pPID-CAUSE.pftrace (or .json):\n"
	"TIME in UTC, CAUSE 'signal', 'interrupt', 'exit' or what a trigger\n"
	"watches (-2, -3 after it for more in one millisecond); each is written to a temporary file and renamed into place, and\n"
	"holds an instant rtdiag/snapshot with its cause. When the target ends a\n"
	"last snapshot is written, marked -incomplete, and the exit code is 3.\n"
	"Memory: 152 bytes a CPU sample (each distinct stack once), about 300 a\n"
	"runtime event or off-CPU wait (docs/flight.md).\n"
	"\n"
	"examples:\n"
	"  rtdiag record -p 4242 --ring 30s --snapshot-dir /var/tmp/flight\n"
	"  kill -USR1 $(pgrep -f 'rtdiag record')      # a snapshot now\n"
	"  rtdiag record -p 4242 --ring 1m --trigger 'cpu>90% for 10s' --post 5s\n"
	"  rtdiag record -p 4242 --ring 8s --trigger 'Bars.Meter/bars.queue.length>=40' \\\n"
	"      --cooldown 1m --max-snapshots 5 --format chrome-json\n",
};

struct fl_args {
	pid_t pid;
	int64_t ring, post, cooldown, interval;
	const char *dir;
	int format; /* 0 perfetto, 1 chrome-json */
	long max_snapshots;
	const char *providers;
	unsigned freq;
	bool no_dotnet;
	size_t max_memory;
	rtd_trigger *trig[FL_MAX_TRIGGERS];
	const char *trig_text[FL_MAX_TRIGGERS];
	size_t ntrig;
};

bool flight_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--ring") || !strncmp(argv[i], "--ring=", 7))
			return true;
	return false;
}

static int parse(struct fl_args *a, int argc, char **argv)
{
	struct cli_parser ps;
	struct cli_val v;
	int id;
	cli_opt_init(&ps, &flight_cmd, argc, argv);
	while ((id = cli_opt_next(&ps, &v)) > 0) {
		switch (id) {
		case O_PID:
			if (v.npids != 1)
				return cli_cmd_usage(&flight_cmd, "-p: one process");
			a->pid = v.pids[0];
			break;
		case O_RING: a->ring = v.ns; break;
		case O_DIR: a->dir = v.str; break;
		case O_FORMAT: a->format = (int)v.i; break;
		case O_TRIGGER: {
			if (a->ntrig == FL_MAX_TRIGGERS)
				return cli_cmd_usage(&flight_cmd, "at most %d --trigger",
						     FL_MAX_TRIGGERS);
			char err[256];
			int rc = rtd_trigger_parse(v.str, &a->trig[a->ntrig], err, sizeof(err));
			if (rc)
				return cli_cmd_usage(&flight_cmd, "--trigger '%s': %s", v.str,
						     err[0] ? err : rtd_strerror(rc));
			a->trig_text[a->ntrig++] = v.str;
			break;
		}
		case O_POST: a->post = v.ns; break;
		case O_COOLDOWN: a->cooldown = v.ns; break;
		case O_MAXSNAP: a->max_snapshots = (long)v.i; break;
		case O_PROVIDERS: a->providers = v.str; break;
		case O_FREQ: a->freq = (unsigned)v.i; break;
		case O_NODOTNET: a->no_dotnet = true; break;
		case O_MAXMEM: a->max_memory = (size_t)v.u; break;
		case O_INTERVAL: a->interval = v.ns; break;
		case O_RING + 100:
			return cli_cmd_usage(&flight_cmd, "--ring records until Ctrl-C or the "
							  "target's end: no --duration");
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	if (ps.rest)
		return cli_cmd_usage(&flight_cmd, "--ring records a running process: -p PID");
	if (a->pid <= 0)
		return cli_cmd_usage(&flight_cmd, "give the process: -p PID");
	if (a->max_memory && a->max_memory < RTD_FLIGHT_MIN_MAX_BYTES)
		return cli_cmd_usage(&flight_cmd, "--max-memory: at least 1M");
	if (!a->interval)
		a->interval = 1000000000;
	if (!a->dir)
		a->dir = ".";
	return -1;
}

/* The EventPipe providers the counter triggers need, after the user's: a
 * provider's EventCounters, and its meter through the Metrics EventSource
 * (System.Runtime: its EventCounters only; see src/dotnet/counters.c for
 * why no System.Runtime meter session). */
static char *providers_for(const struct fl_args *a)
{
	size_t cap = 8192;
	char *s = calloc(1, cap), metrics[4096] = "";
	if (!s)
		return NULL;
	snprintf(s, cap, "%s", a->providers ? a->providers : "");
	double sec = (double)a->interval / 1e9;
	for (size_t i = 0; i < a->ntrig; i++) {
		const char *prov, *name;
		if (rtd_trigger_counter_name(a->trig[i], &prov, &name))
			continue;
		size_t l = strlen(s);
		snprintf(s + l, cap - l, "%s%s:0xFFFFFFFF:5:EventCounterIntervalSec=%g", l ? "," : "",
			 prov, sec);
		if (!strcmp(prov, "System.Runtime"))
			continue;
		l = strlen(metrics);
		snprintf(metrics + l, sizeof(metrics) - l, "%s%s\\%s", l ? "," : "", prov, name);
	}
	if (metrics[0]) {
		size_t l = strlen(s);
		snprintf(s + l, cap - l,
			 "%sSystem.Diagnostics.Metrics:0x3:5:\"SessionId=rtd-flight-%d;Metrics=%s;"
			 "RefreshInterval=%g;MaxTimeSeries=1000;MaxHistograms=100\"",
			 l ? "," : "", (int)getpid(), metrics, sec);
	}
	return s;
}

static volatile sig_atomic_t g_stop, g_usr1;

static void on_stop(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	g_usr1 = 1;
}

static int64_t mono_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

struct fl {
	struct fl_args *a;
	rtd_recorder *rec;
	rtd_flight *ring;
	struct cli_format fmt;
	long taken;
	bool pending;       /* a trigger fired: a snapshot at @due */
	int64_t due, last_fire, hit_mono;
	bool fired_once;
	char cause[64], why[1024];
};

/* The snapshot's file: DIR/rtdiag-flight-TIME-pPID-CAUSE[-incomplete][-N].EXT */
static void snapshot_path(const struct fl *F, const char *cause, bool incomplete, char *out,
			  size_t len)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char stamp[32];
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	/* two snapshots in one millisecond (hits handed over in a burst) get
	 * -2, -3...: no snapshot replaces another */
	for (int n = 1; n < 1000; n++) {
		char seq[16] = "";
		if (n > 1)
			snprintf(seq, sizeof(seq), "-%d", n);
		snprintf(out, len, "%s/rtdiag-flight-%s.%03ldZ-p%d-%s%s%s%s", F->a->dir, stamp,
			 ts.tv_nsec / 1000000, (int)F->a->pid, cause,
			 incomplete ? "-incomplete" : "", seq, F->a->format ? ".json" : ".pftrace");
		if (access(out, F_OK) != 0)
			break;
	}
}

/* Write the ring as it is now; the ring and the recording go on. */
static int snapshot(struct fl *F, const char *cause, const char *why, bool incomplete,
		    int64_t fired, int64_t hit)
{
	char path[PATH_MAX];
	snapshot_path(F, cause, incomplete, path, sizeof(path));
	rtd_source *snap = NULL;
	int rc = rtd_flight_snapshot(F->ring, &snap);
	if (rc)
		return cli_fail("snapshot: %s", rtd_strerror(rc));
	struct rtd_flight_stats st;
	rtd_flight_stats(F->ring, &st);
	struct cli_timeline t;
	if (cli_timeline_open(&t, &F->fmt, path)) {
		rtd_source_free(snap);
		return CLI_FAIL;
	}
	RTD_OPTS(rtd_timeline_records_opts, ro,
		 .runtime_sources = rtd_recorder_runtime_sources(F->rec));
	rtd_timeline_records *c = rtd_timeline_records_new(t.tl, &ro, &rc);
	if (c)
		rc = rtd_timeline_records_pull(c, snap);
	if (c && rc == 0) {
		/* what took it, on the process's track, at the ring's end */
		/* fired_ns: when rtdiag took the decision (CLOCK_MONOTONIC);
		 * hit_ns: the time of the record or reading that fired */
		struct rtd_field fl[5] = {
			{.name = "cause", .type = RTD_FIELD_STR, .s = cause},
			{.name = "why", .type = RTD_FIELD_STR, .s = why},
			{.name = "incomplete", .type = RTD_FIELD_U64, .u = incomplete},
			{.name = "fired_ns", .type = RTD_FIELD_I64, .i = fired},
			{.name = "hit_ns", .type = RTD_FIELD_I64, .i = hit},
		};
		struct rtd_record r = {.kind = RTD_REC_INSTANT, .pid = (uint32_t)F->a->pid,
				       .name = "rtdiag/snapshot", .category = "rtdiag",
				       .nfields = 5, .fields = fl};
		r.mono = r.ts = st.last_mono;
		rc = rtd_timeline_records_add(c, &r);
	}
	rtd_timeline_records_free(c);
	rtd_source_free(snap);
	if (rc)
		cli_fail("snapshot %s: %s", path, rtd_strerror(rc));
	if (cli_timeline_close(&t, rc == 0) || rc)
		return CLI_FAIL;
	F->taken++;
	fprintf(stderr, "rtdiag: snapshot %s: %s; %llu records, %.1f s, ring %.1f MB\n", path,
		why, (unsigned long long)st.records,
		st.records ? (double)(st.last_mono - st.first_mono) / 1e9 : 0.0,
		(double)st.bytes / 1048576.0);
	return CLI_OK;
}

/* A trigger fired at @hit: a snapshot after --post, unless one is
 * pending or the last trigger's was within --cooldown. */
static void fire(struct fl *F, size_t i, const struct rtd_trigger_hit *hit)
{
	int64_t now = mono_now();
	if (F->pending)
		return;
	if (F->fired_once && now - F->last_fire < F->a->cooldown) {
		fprintf(stderr, "rtdiag: %s: within --cooldown of the last snapshot, none taken\n",
			hit->text);
		return;
	}
	F->pending = true;
	F->fired_once = true;
	F->last_fire = now;
	F->due = now + F->a->post;
	F->hit_mono = hit->mono;
	snprintf(F->cause, sizeof(F->cause), "%s", rtd_trigger_cause(F->a->trig[i]));
	snprintf(F->why, sizeof(F->why), "--trigger '%s': %s", F->a->trig_text[i], hit->text);
	fprintf(stderr, "rtdiag: %s%s\n", F->why, F->a->post ? "; writing after --post" : "");
}

static void feed_triggers(struct fl *F, const struct rtd_record *r)
{
	struct rtd_trigger_hit hit;
	for (size_t i = 0; i < F->a->ntrig; i++)
		if (rtd_trigger_record(F->a->trig[i], r, &hit))
			fire(F, i, &hit);
}

static bool proc_triggers(const struct fl_args *a)
{
	for (size_t i = 0; i < a->ntrig; i++) {
		unsigned k = rtd_trigger_kind(a->trig[i]);
		if (k == RTD_TRIGGER_CPU || k == RTD_TRIGGER_RSS)
			return true;
	}
	return false;
}

static int flight_main_args(struct fl_args *a)
{
	struct stat sb;
	if (stat(a->dir, &sb) || !S_ISDIR(sb.st_mode) || access(a->dir, W_OK))
		return cli_fail("--snapshot-dir %s: not a folder this user can write", a->dir);
	struct fl F = {.a = a};
	if (cli_format_pick("record", a->format ? "chrome-json" : "perfetto", NULL,
			    CLI_FMT_TIMELINE, NULL, &F.fmt) < 0)
		return CLI_USAGE;
	char *prov = providers_for(a);
	if (!prov)
		return cli_fail("out of memory");
	RTD_OPTS(rtd_recorder_opts, ro, .pid = a->pid, .freq = a->freq,
		 .providers = prov[0] ? prov : NULL,
		 .flags = (a->no_dotnet ? RTD_RECORDER_NO_DOTNET : 0) | RTD_RECORDER_COPIED);
	int rc = rtd_recorder_new(&ro, &F.rec);
	if (rc) {
		free(prov);
		return cli_fail("pid %d: %s", (int)a->pid, rtd_recorder_errmsg(NULL));
	}
	RTD_OPTS(rtd_flight_opts, fo, .window_ns = a->ring, .max_bytes = a->max_memory);
	F.ring = rtd_flight_new(&fo, &rc);
	struct sigaction sa = {.sa_handler = on_stop}, su = {.sa_handler = on_usr1};
	struct sigaction old_int, old_term, old_usr1;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGUSR1, &su, &old_usr1);
	if (F.ring)
		rc = rtd_recorder_start(F.rec);
	if (rc) {
		rc = cli_fail("pid %d: %s", (int)a->pid,
			      F.ring ? rtd_recorder_errmsg(F.rec) : rtd_strerror(rc));
		goto out;
	}
	const char *warn = rtd_recorder_warnings(F.rec);
	if (warn[0])
		fprintf(stderr, "%s", warn);
	fprintf(stderr, "rtdiag: recording pid %d into a %.3g s ring; a snapshot on SIGUSR1 "
			"(kill -USR1 %d)%s, and at Ctrl-C\n",
		(int)a->pid, (double)a->ring / 1e9, (int)getpid(),
		a->ntrig ? ", on a trigger" : "");
	rtd_source *src = rtd_recorder_source(F.rec);
	bool want_proc = proc_triggers(a), stopping = false, add_failed = false;
	struct rtd_proc_usage prev = {0}, now_u;
	bool have_prev = want_proc && rtd_proc_usage_read(a->pid, &prev) == 0;
	int64_t next_proc = mono_now() + a->interval, last_mono = 0;
	int got;
	const struct rtd_record *r;
	for (;;) {
		got = rtd_source_next(src, &r);
		if (got == 1) {
			int e = rtd_flight_add(F.ring, r);
			if (e && !add_failed) {
				add_failed = true;
				fprintf(stderr, "rtdiag: the ring: %s (going on; such records are "
						"not kept)\n", rtd_strerror(e));
			}
			last_mono = r->mono;
			feed_triggers(&F, r);
		} else if (got == RTD_SOURCE_IDLE) {
			/* nothing before the watermark will come: a quiet target's
			 * ring still drops what is older than the window */
			if (r->mono != INT64_MIN && r->mono > last_mono)
				last_mono = r->mono;
			rtd_source_wait(src, 100);
		} else {
			break; /* the end (the target's, or ours), or an error */
		}
		rtd_flight_trim(F.ring, last_mono);
		int64_t now = mono_now();
		if (want_proc && now >= next_proc) {
			next_proc = now + a->interval;
			if (rtd_proc_usage_read(a->pid, &now_u) == 0) {
				struct rtd_trigger_hit hit;
				for (size_t i = 0; i < a->ntrig; i++)
					if (rtd_trigger_proc(a->trig[i], have_prev ? &prev : NULL,
							     &now_u, &hit))
						fire(&F, i, &hit);
				prev = now_u;
				have_prev = true;
			}
		}
		if (stopping)
			continue; /* drain what the sources still had */
		if (g_usr1) {
			g_usr1 = 0;
			rc = snapshot(&F, "signal", "SIGUSR1", false, now, now);
		}
		if (F.pending && now >= F.due) {
			F.pending = false;
			rc = snapshot(&F, F.cause, F.why, false, F.last_fire, F.hit_mono);
		}
		if (a->max_snapshots && F.taken >= a->max_snapshots) {
			fprintf(stderr, "rtdiag: %ld snapshots taken (--max-snapshots): stopping\n",
				F.taken);
			rtd_recorder_stop(F.rec);
			stopping = true;
		} else if (g_stop) {
			rtd_recorder_stop(F.rec);
			stopping = true;
		}
	}
	if (got < 0)
		cli_fail("the recording: %s (a last snapshot of what came)",
			 r->message && r->message[0] ? r->message : rtd_strerror(r->code));
	bool ended = rtd_recorder_target_ended(F.rec) && !g_stop;
	if (a->max_snapshots && F.taken >= a->max_snapshots)
		rc = CLI_OK;
	else if (g_stop)
		rc = snapshot(&F, "interrupt", "Ctrl-C", false, mono_now(), mono_now());
	else {
		rc = snapshot(&F, got < 0 ? "error" : "exit",
			      got < 0 ? "the recording failed" : "the target ended", true,
			      mono_now(), mono_now());
		if (rc == CLI_OK)
			rc = CLI_PARTIAL;
	}
	if (ended)
		fprintf(stderr, "rtdiag: pid %d ended; the last snapshot is marked incomplete\n",
			(int)a->pid);
	struct rtd_flight_stats st;
	rtd_flight_stats(F.ring, &st);
	fprintf(stderr, "rtdiag: %ld snapshots; %llu records kept of %llu, %.1f bytes a record; "
			"ring %.1f MB (%.1f MB of names and stacks)\n",
		F.taken, (unsigned long long)st.records, (unsigned long long)st.added,
		st.added ? (double)st.record_bytes / (double)st.added : 0.0,
		(double)st.bytes / 1048576.0, (double)st.intern_bytes / 1048576.0);
out:
	rtd_recorder_free(F.rec);
	rtd_flight_free(F.ring);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGUSR1, &old_usr1, NULL);
	free(prov);
	return rc;
}

static int flight_run(int argc, char **argv)
{
	struct fl_args a = {0};
	int rc = parse(&a, argc, argv);
	if (rc < 0)
		rc = flight_main_args(&a);
	for (size_t i = 0; i < a.ntrig; i++)
		rtd_trigger_free(a.trig[i]);
	return rc;
}

void flight_help(FILE *f)
{
	fprintf(f, "\nrtdiag record -p PID --ring TIME ... (the flight recorder)\n\n");
	cli_cmd_help(f, &flight_cmd);
}

int flight_main(int argc, char **argv)
{
	return flight_run(argc, argv);
}
