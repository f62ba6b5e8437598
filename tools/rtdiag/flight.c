/* SPDX-License-Identifier: MIT */
/*
 * flight.c - 'rtdiag record -p PID --ring DURATION': the flight recorder
 * (issue #31). Options only: the wiring (recorder -> ring -> triggers ->
 * snapshots) is the library's rtd_flight_recorder (rtdiag/flight_recorder.h),
 * which the agent's flight: section runs too; SIGUSR1 asks it for a
 * snapshot, Ctrl-C stops it after a last one.
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
#include "rtdiag/flight_recorder.h"
#include "rtdiag/trigger.h"

enum {
	O_PID = 1, O_RING, O_DIR, O_FORMAT, O_TRIGGER, O_POST, O_COOLDOWN, O_MAXSNAP,
	O_PROVIDERS, O_FREQ, O_NODOTNET, O_MAXMEM, O_INTERVAL, O_GOTRACE, O_GOPIECE,
	O_ACTION,
};

#define FL_MAX_TRIGGERS RTD_FLIGHT_MAX_TRIGGERS

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
	{O_GOTRACE, "go-trace", 0, CLI_ARG_STR, 0, "URL",
	 "Go: the program's runtime side from its net/http/pprof (http://HOST:PORT), "
	 "captured in pieces back to back (as rtdiag record --go-trace)", 0, 0},
	{O_GOPIECE, "go-piece", 0, CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "Go: the length of each piece of --go-trace (default 3s)", 0, 0},
	{O_ACTION, "action", 0, CLI_ARG_STR, CLI_OPT_REPEAT, "NAME[,NAME]",
	 "write beside each snapshot: folded, pprof (the ring's CPU samples), dump, "
	 "stacks, gcdump (.NET: core dump, managed stacks, GC heap as a .gcdump)", 0, 0},
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
	const char *gotrace;
	double gopiece;
	rtd_trigger *trig[FL_MAX_TRIGGERS];
	const char *trig_text[FL_MAX_TRIGGERS];
	size_t ntrig;
	unsigned actions; /* enum rtd_flight_action bits */
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
		case O_GOTRACE: a->gotrace = v.str; break;
		case O_GOPIECE: a->gopiece = v.d; break;
		case O_ACTION: {
			char buf[256];
			snprintf(buf, sizeof(buf), "%s", v.str);
			for (char *sv, *w = strtok_r(buf, ",", &sv); w;
			     w = strtok_r(NULL, ",", &sv)) {
				unsigned act = rtd_flight_action_from_name(w);
				if (!act)
					return cli_cmd_usage(&flight_cmd, "--action '%s': want "
							     "folded, pprof, dump, stacks or gcdump", w);
				a->actions |= act;
			}
			break;
		}
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
	if (a->gopiece > 0 && !a->gotrace)
		return cli_cmd_usage(&flight_cmd, "--go-piece without --go-trace URL");
	if (!a->interval)
		a->interval = 1000000000;
	if (!a->dir)
		a->dir = ".";
	return -1;
}

static volatile sig_atomic_t g_stop;
static rtd_flight_recorder *g_fr;

static void on_stop(int sig)
{
	(void)sig;
	g_stop = 1;
	if (g_fr)
		rtd_flight_recorder_stop(g_fr, true);
}

static void on_usr1(int sig)
{
	(void)sig;
	if (g_fr)
		rtd_flight_recorder_signal(g_fr);
}

static void say(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "rtdiag: %s\n", msg);
}

/* The ring's bytes a record of one kind (0 when none came). */
static double per_kind(const struct rtd_flight_stats *st, unsigned kind)
{
	return st->kind_added[kind] ? (double)st->kind_bytes[kind] / (double)st->kind_added[kind] : 0;
}

static int flight_main_args(struct fl_args *a)
{
	struct stat sb;
	if (stat(a->dir, &sb) || !S_ISDIR(sb.st_mode) || access(a->dir, W_OK))
		return cli_fail("--snapshot-dir %s: not a folder this user can write", a->dir);
	RTD_OPTS(rtd_recorder_opts, ro, .pid = a->pid, .freq = a->freq,
		 .providers = a->providers,
		 .flags = a->no_dotnet ? RTD_RECORDER_NO_DOTNET : 0,
		 .go_trace_url = a->gotrace, .go_trace_piece = a->gopiece);
	RTD_OPTS(rtd_flight_recorder_opts, fo, .recorder = &ro, .ring_ns = a->ring,
		 .max_bytes = a->max_memory, .dir = a->dir,
		 .format = a->format ? RTD_TIMELINE_FMT_CHROME_JSON : RTD_TIMELINE_FMT_PERFETTO,
		 .triggers = a->trig_text, .ntriggers = a->ntrig, .post_ns = a->post,
		 .cooldown_ns = a->cooldown, .interval_ns = a->interval,
		 .max_snapshots = (uint64_t)a->max_snapshots, .note = say,
		 .actions = a->actions);
	rtd_flight_recorder *fr;
	char err[512];
	int rc = rtd_flight_recorder_new(&fo, &fr, err, sizeof(err));
	if (rc)
		return cli_fail("%s", err[0] ? err : rtd_strerror(rc));
	struct sigaction sa = {.sa_handler = on_stop}, su = {.sa_handler = on_usr1};
	struct sigaction old_int, old_term, old_usr1;
	g_fr = fr;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGUSR1, &su, &old_usr1);
	rtd_recorder *rec = rtd_flight_recorder_recorder(fr);
	rc = rtd_flight_recorder_start(fr);
	if (rc) {
		rc = cli_fail("pid %d: %s", (int)a->pid, rtd_recorder_errmsg(rec));
		goto out;
	}
	const char *warn = rtd_recorder_warnings(rec);
	if (warn[0])
		fprintf(stderr, "%s", warn);
	fprintf(stderr, "rtdiag: recording pid %d into a %.3g s ring; a snapshot on SIGUSR1 "
			"(kill -USR1 %d)%s, and at Ctrl-C\n",
		(int)a->pid, (double)a->ring / 1e9, (int)getpid(),
		a->ntrig ? ", on a trigger" : "");
	if (g_stop)
		rtd_flight_recorder_stop(fr, true);
	rc = rtd_flight_recorder_run(fr);
	bool ended = rtd_recorder_target_ended(rec) && !g_stop;
	if (ended)
		fprintf(stderr, "rtdiag: pid %d ended; the last snapshot is marked incomplete\n",
			(int)a->pid);
	rc = rc == 0 ? CLI_OK : rc == RTD_FLIGHT_RUN_ENDED ? CLI_PARTIAL : CLI_FAIL;
	struct rtd_flight_recorder_stats fs;
	rtd_flight_recorder_stats(fr, &fs);
	const struct rtd_flight_stats *st = &fs.ring;
	fprintf(stderr, "rtdiag: %llu snapshots; %llu records kept of %llu, %.1f bytes a record; "
			"ring %.1f MB (%.1f MB of names and stacks)\n",
		(unsigned long long)fs.taken, (unsigned long long)st->records,
		(unsigned long long)st->added,
		st->added ? (double)st->record_bytes / (double)st->added : 0.0,
		(double)st->bytes / 1048576.0, (double)st->intern_bytes / 1048576.0);
	fprintf(stderr, "rtdiag: bytes a record in the ring: sample %.0f, slice %.0f, instant %.0f\n",
		per_kind(st, RTD_REC_SAMPLE), per_kind(st, RTD_REC_SLICE), per_kind(st, RTD_REC_INSTANT));
out:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGUSR1, &old_usr1, NULL);
	g_fr = NULL;
	rtd_flight_recorder_free(fr);
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
