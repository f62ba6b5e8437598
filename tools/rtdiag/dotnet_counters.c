/* SPDX-License-Identifier: MIT */
/*
 * dotnet_counters.c - 'rtdiag dotnet counters monitor|collect|list': the
 * counter records of librtdiag (rtdiag/counters.h) as a table, lines, CSV
 * or JSON.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dotnet_cli.h"
#include "dotnet_session.h"
#include "out.h"
#include "rtdiag/format.h"

/* ---- counters ---------------------------------------------------------------- */

static const struct cli_opt counters_opts[] = {
	DN_TARGET_OPTS,
	{O_COUNTERS, "counters", 0, CLI_ARG_STR, CLI_OPT_REPEAT,
	 "P[,P[names]]", "providers and meters, dotnet-counters' syntax "
	 "(default System.Runtime; a meter wins over EventCounters of its "
	 "name, 'EventCounters\\P' asks for those)", 0, 0},
	{O_REFRESH, "refresh-interval", 0, CLI_ARG_DURATION, CLI_OPT_POSITIVE,
	 "TIME", "how often values are published (default 1 s)", 0, 0},
	{O_DURATION, "duration", 'd', CLI_ARG_DURATION, CLI_OPT_POSITIVE,
	 "TIME", "stop after TIME", 0, 0},
	{O_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "collect: the file (default counter.csv / counter.json)", 0, 0},
	{O_CFORMAT, "format", 'f', CLI_ARG_CHOICE, 0, "csv|json",
	 "collect: dotnet-counters' CSV or JSON layout (default csv)", 0, 0},
	{0},
};

/* What 'counters' prints or writes, fed by the record stream. */
struct cview {
	bool tty;      /* monitor on a terminal: a table redrawn in place */
	bool json;     /* collect --format json */
	bool csv;      /* collect --format csv */
	bool monitor;  /* monitor: Counters by their totals */
	FILE *out;     /* collect's file, or stdout for monitor's lines */
	uint64_t t0;   /* the trace's start tick */
	uint64_t freq;
	double epoch0; /* wall clock (s since 1970) at tick t0 */
	unsigned series; /* the refresh interval asked for, whole seconds */
	rtd_nettrace *dec;
	size_t nrec;   /* records written (json: comma placement) */
	/* the table: one row per provider/name/tags, latest value */
	struct crow {
		char *provider, *label, *tags, *unit;
		double value;
	} *rows;
	size_t nrows;
	uint64_t last_draw;
};

/*
 * A double as .NET's double.ToString(InvariantCulture) writes it: the
 * shortest text that reads back the same, fixed-point for decimal
 * exponents -5 < e < 15, else d.dddE+XX (two exponent digits at least).
 */
static const char *dn_number(double x, char *buf, size_t len)
{
	if (isnan(x))
		return "NaN";
	if (isinf(x))
		return x > 0 ? "Infinity" : "-Infinity";
	char e[40];
	int prec = 0;
	for (prec = 0; prec < 17; prec++) {
		snprintf(e, sizeof(e), "%.*e", prec, x);
		if (strtod(e, NULL) == x)
			break;
	}
	/* e: [-]d[.ddd]e[+-]XX */
	const char *m = e;
	bool neg = *m == '-';
	if (neg)
		m++;
	char digits[24];
	size_t nd = 0;
	const char *q = m;
	for (; *q && *q != 'e'; q++)
		if (*q >= '0' && *q <= '9' && nd < sizeof(digits) - 1)
			digits[nd++] = *q;
	digits[nd] = 0;
	while (nd > 1 && digits[nd - 1] == '0')
		digits[--nd] = 0;
	int exp10 = atoi(q + 1);
	if (nd == 1 && digits[0] == '0')
		exp10 = 0;
	char *o = buf;
	size_t left = len;
#define PUT(...)                                                              \
	do {                                                                  \
		int w_ = snprintf(o, left, __VA_ARGS__);                      \
		if (w_ < 0 || (size_t)w_ >= left)                             \
			return buf;                                           \
		o += w_;                                                      \
		left -= (size_t)w_;                                           \
	} while (0)
	buf[0] = 0;
	if (neg)
		PUT("-");
	if (exp10 >= 15 || exp10 < -4) {
		PUT("%c", digits[0]);
		if (nd > 1)
			PUT(".%s", digits + 1);
		PUT("E%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
	} else if (exp10 < 0) {
		PUT("0.");
		for (int i = -1; i > exp10; i--)
			PUT("0");
		PUT("%s", digits);
	} else {
		for (int i = 0; i <= exp10; i++)
			PUT("%c", (size_t)i < nd ? digits[i] : '0');
		if ((size_t)exp10 + 1 < nd)
			PUT(".%s", digits + exp10 + 1);
	}
#undef PUT
	return buf;
}

/* The record's wall-clock time, local: CSV "MM/dd/yyyy HH:mm:ss" (.NET's
 * DateTime.ToString() in the invariant culture), JSON .NET's round-trip
 * "O" (2026-11-24T13:08:27.1234567+00:00). */
static void rec_time(const struct cview *v, uint64_t ts, bool iso, char *buf,
		     size_t len)
{
	double t = v->epoch0;
	if (v->freq && ts >= v->t0)
		t += (double)(ts - v->t0) / (double)v->freq;
	if (t <= 0) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		t = (double)now.tv_sec + now.tv_nsec / 1e9;
	}
	time_t sec = (time_t)t;
	long frac = (long)((t - (double)sec) * 1e7);
	if (frac > 9999999)
		frac = 9999999;
	struct tm tm;
	localtime_r(&sec, &tm);
	if (!iso) {
		strftime(buf, len, "%m/%d/%Y %H:%M:%S", &tm);
		return;
	}
	char d[32];
	strftime(d, sizeof(d), "%Y-%m-%dT%H:%M:%S", &tm);
	int off = (int)(tm.tm_gmtoff / 60);
	snprintf(buf, len, "%.20s.%07d%c%02d:%02d", d, (int)frac,
		 off < 0 ? '-' : '+', abs(off) / 60 % 100, abs(off) % 60);
}

/* A string as dotnet-counters' JsonEscape leaves it. */
static void json_str(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		default: fputc(*s, f);
		}
	}
}

static double rec_seconds(const struct cview *v, uint64_t ts)
{
	return v->freq ? (double)(ts - v->t0) / (double)v->freq : 0;
}

static void table_set(struct cview *v, const char *prov, const char *label,
		      const char *tags, const char *unit, double value)
{
	for (size_t i = 0; i < v->nrows; i++) {
		struct crow *r = &v->rows[i];
		if (!strcmp(r->provider, prov) && !strcmp(r->label, label) &&
		    !strcmp(r->tags, tags)) {
			r->value = value;
			return;
		}
	}
	struct crow *nr = realloc(v->rows, (v->nrows + 1) * sizeof(*nr));
	if (!nr)
		return;
	v->rows = nr;
	struct crow *r = &v->rows[v->nrows];
	r->provider = strdup(prov);
	r->label = strdup(label);
	r->tags = strdup(tags);
	r->unit = strdup(unit ? unit : "");
	r->value = value;
	if (r->provider && r->label && r->tags && r->unit)
		v->nrows++;
}

static void table_draw(struct cview *v)
{
	printf("\033[H\033[JPress Ctrl-C to quit\n\n%-60s %s\n", "Name",
	       "Current Value");
	const char *prov = NULL;
	for (size_t i = 0; i < v->nrows; i++) {
		struct crow *r = &v->rows[i];
		if (!prov || strcmp(prov, r->provider)) {
			prov = r->provider;
			printf("[%s]\n", prov);
		}
		/* bytes in kB/MB/GB, counts in full: never 2.2154e+09 */
		char num[32];
		rtd_counter_format(r->value, r->unit, num, sizeof(num));
		if (*r->tags)
			printf("    %-56s\n        %-52s %s\n", r->label, r->tags,
			       num);
		else
			printf("    %-56s %s\n", r->label, num);
	}
	fflush(stdout);
}

/*
 * One value out: a table row (terminal), a line (monitor piped), or
 * dotnet-counters' CSV line / JSON object. JSON has the value's tags and
 * the meter's and instrument's apart, the others all three in one.
 */
static void put_value(struct cview *v, const struct rtd_counter_record *r,
		      const struct rtd_counter_value *cv)
{
	char num[48], ts[48];
	const char *tags = cv->all_tags;
	if (v->tty) {
		table_set(v, r->provider, cv->name, tags, r->unit, cv->value);
		return;
	}
	if (v->json) {
		rec_time(v, r->timestamp, true, ts, sizeof(ts));
		/* byte for byte as dotnet-counters' JSONExporter */
		fprintf(v->out, "%s{ \"timestamp\": \"%s\",  \"provider\": \"",
			v->nrec++ ? "," : "", ts);
		json_str(v->out, r->provider);
		fputs("\",  \"name\": \"", v->out);
		json_str(v->out, cv->name);
		fputs("\",  \"tags\": \"", v->out);
		json_str(v->out, cv->tags);
		fprintf(v->out, "\",  \"counterType\": \"%s\",  \"meterTags\": \"",
			cv->type);
		json_str(v->out, cv->meter_tags);
		fputs("\",  \"instrumentTags\": \"", v->out);
		json_str(v->out, cv->instrument_tags);
		fprintf(v->out, "\",  \"value\": %s }",
			dn_number(cv->value, num, sizeof(num)));
		return;
	}
	if (v->csv) {
		/* Name[tags with ';' for ','] as dotnet-counters' CSVExporter */
		rec_time(v, r->timestamp, false, ts, sizeof(ts));
		fprintf(v->out, "%s,%s,%s", ts, r->provider, cv->name);
		if (*tags) {
			fputc('[', v->out);
			for (const char *c = tags; *c; c++)
				fputc(*c == ',' ? ';' : *c, v->out);
			fputc(']', v->out);
		}
		fprintf(v->out, ",%s,%s\n", cv->type,
			dn_number(cv->value, num, sizeof(num)));
		return;
	}
	/* monitor, piped: seconds from the session's start */
	fprintf(v->out, "%.3f,%s,%s%s%s,%s,%s\n", rec_seconds(v, r->timestamp),
		r->provider, cv->name, *tags ? ";" : "", tags, cv->type,
		dn_number(cv->value, num, sizeof(num)));
}

static int on_counter(void *ctx, const struct rtd_counter_record *r)
{
	struct cview *v = ctx;
	if (!v->freq) {
		const struct rtd_nettrace_info *info = rtd_nettrace_info(v->dec);
		if (info) {
			struct tm tm = {.tm_year = info->sync_year - 1900,
					.tm_mon = info->sync_month - 1,
					.tm_mday = info->sync_day,
					.tm_hour = info->sync_hour,
					.tm_min = info->sync_minute,
					.tm_sec = info->sync_second};
			v->t0 = info->sync_ticks;
			v->freq = info->tick_freq;
			v->epoch0 = (double)timegm(&tm) + info->sync_ms / 1e3;
		}
	}
	/* collect: Counters by their rate, as dotnet-counters collect
	 * writes them; monitor: by their total, as its table shows them */
	struct rtd_counter_value cv[RTD_COUNTER_MAX_QUANTILES];
	int n = rtd_counter_values(r, v->monitor ? RTD_COUNTER_VIEW_MONITOR
						 : RTD_COUNTER_VIEW_COLLECT,
				   v->series, cv, RTD_COUNTER_MAX_QUANTILES);
	for (int i = 0; i < n; i++)
		put_value(v, r, &cv[i]);
	if (v->tty) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
		if (now - v->last_draw >= 250) {
			/* values of one interval arrive together: draw once */
			v->last_draw = now;
			table_draw(v);
		}
		return 0;
	}
	return ferror(v->out) ? -EIO : 0;
}

static const char *const well_known[][3] = {
	{"System.Runtime", "cpu-usage", "% of the machine's CPU the process used"},
	{"System.Runtime", "working-set", "working set (MB)"},
	{"System.Runtime", "gc-heap-size", "GC heap size (MB)"},
	{"System.Runtime", "gen-0-gc-count", "gen 0 GCs in the interval"},
	{"System.Runtime", "gen-1-gc-count", "gen 1 GCs in the interval"},
	{"System.Runtime", "gen-2-gc-count", "gen 2 GCs in the interval"},
	{"System.Runtime", "threadpool-thread-count", "thread pool threads"},
	{"System.Runtime", "monitor-lock-contention-count", "lock contentions in the interval"},
	{"System.Runtime", "threadpool-queue-length", "work items queued"},
	{"System.Runtime", "threadpool-completed-items-count", "work items completed in the interval"},
	{"System.Runtime", "alloc-rate", "bytes allocated in the interval"},
	{"System.Runtime", "active-timer-count", "timers"},
	{"System.Runtime", "gc-fragmentation", "GC heap fragmentation (%)"},
	{"System.Runtime", "gc-committed", "GC committed bytes (MB)"},
	{"System.Runtime", "exception-count", "exceptions thrown in the interval"},
	{"System.Runtime", "time-in-gc", "% time in GC since the last GC"},
	{"System.Runtime", "gen-0-size", "gen 0 size (B)"},
	{"System.Runtime", "gen-1-size", "gen 1 size (B)"},
	{"System.Runtime", "gen-2-size", "gen 2 size (B)"},
	{"System.Runtime", "loh-size", "large object heap size (B)"},
	{"System.Runtime", "poh-size", "pinned object heap size (B)"},
	{"System.Runtime", "assembly-count", "assemblies loaded"},
	{"System.Runtime", "il-bytes-jitted", "IL bytes jitted (B)"},
	{"System.Runtime", "methods-jitted-count", "methods jitted"},
	{"System.Runtime", "time-in-jit", "time in JIT in the interval (ms)"},
	{"Microsoft.AspNetCore.Hosting", "requests-per-second", "requests in the interval"},
	{"Microsoft.AspNetCore.Hosting", "total-requests", "requests since start"},
	{"Microsoft.AspNetCore.Hosting", "current-requests", "requests being served"},
	{"Microsoft.AspNetCore.Hosting", "failed-requests", "failed requests"},
	{"System.Net.Http", "requests-started", "HTTP requests started"},
	{"System.Net.Http", "requests-failed", "HTTP requests failed"},
	{"System.Net.Http", "current-requests", "HTTP requests in flight"},
	{"System.Net.Sockets", "outgoing-connections-established", "connections made"},
	{"System.Net.Sockets", "bytes-received", "bytes received"},
	{"System.Net.Sockets", "bytes-sent", "bytes sent"},
};

/* `dotnet counters list`: the well-known counters by provider */
static int counters_list(void)
{
	const char *prov = NULL;
	for (size_t i = 0; i < sizeof(well_known) / sizeof(well_known[0]); i++) {
		if (!prov || strcmp(prov, well_known[i][0])) {
			printf("%s%s\n", prov ? "\n" : "", well_known[i][0]);
			prov = well_known[i][0];
		}
		printf("    %-36s %s\n", well_known[i][1], well_known[i][2]);
	}
	printf("\nA program's own EventSources and Meters are named the "
	       "same way: --counters\nMyEventSource,MyMeter[instrument]\n");
	return CLI_OK;
}

/* dotnet-counters' JSONExporter: the process name, its own start time,
 * then the events */
static void json_start(struct cview *view, const struct collect_args *a)
{
	char pname[64] = "", start[48];
	if (a->command) {
		const char *b = strrchr(a->command[0], '/');
		snprintf(pname, sizeof(pname), "%s", b ? b + 1 : a->command[0]);
	} else if (a->t.pid > 0 &&
		   rtd_ipc_thread_name(a->t.pid, (uint64_t)a->t.pid, pname, sizeof(pname))) {
		pname[0] = 0; /* its main thread's name is the process's comm */
	}
	rec_time(view, 0, true, start, sizeof(start));
	fputs("{ \"TargetProcess\": \"", view->out);
	json_str(view->out, pname);
	fprintf(view->out, "\", \"StartTime\": \"%s\", \"Events\": [", start);
}

/* collect's -o (default counter.csv, or .json) and its layout: the
 * extension names it (.csv, .json: dotnet-counters' own; rtdiag/format.h's
 * table); a picture's extension is refused. Returns -1, or the usage
 * error's exit code. */
static int collect_layout(const struct cli_cmd *cmd, const char **out,
			  bool *json, bool json_set)
{
	if (!*out)
		*out = *json ? "counter.json" : "counter.csv";
	const struct rtd_format_ext *x = rtd_format_ext_of(*out);
	if (x && !json_set) {
		if (strcmp(x->ext, ".csv") && strcmp(x->ext, ".json"))
			return cli_cmd_usage(cmd, "%s: collect writes counter "
					     "readings as .csv or .json (or give "
					     "--format)", *out);
		*json = !strcmp(x->ext, ".json");
	}
	return -1;
}

/* The view's output and what starts it: CSV's header, JSON's preamble. */
static void view_start(struct cview *view, FILE *out, const struct collect_args *a)
{
	view->out = out;
	view->tty = view->monitor && isatty(STDOUT_FILENO);
	/* monitor into a pipe: each value as it comes (a block-buffered
	 * stdout held the first values ~1 s, until 4 KiB had gathered) */
	if (view->monitor && !view->tty)
		setvbuf(stdout, NULL, _IOLBF, 0);
	if (!view->monitor && !view->json)
		fprintf(view->out, "Timestamp,Provider,Counter Name,Counter Type,"
			"Mean/Increment\n");
	if (view->json)
		json_start(view, a);
}

/* After the session (@r its result): the last values, what the runtime
 * and the counters said, -o kept (collect) when it holds readings; the
 * view's rows freed. Returns the command's result. */
static int counters_finish(struct cview *view, rtd_counters *c, int counters_rc,
			   int r, const char *out, struct cli_out *o)
{
	bool monitor = view->monitor, json = view->json;
	int frc = rtd_counters_flush(c);
	/* the view's output failed (on_counter's -EIO): mid-session (which
	 * stopped there and said nothing) or at the last values */
	if (counters_rc == -EIO || (frc && r == CLI_OK))
		r = cli_fail("%s: write error", monitor ? "stdout" : out);
	else if (counters_rc)
		r = cli_fail("the counters: %s", rtd_strerror(counters_rc));
	if (json)
		fputs("]}", view->out);
	if (view->tty)
		table_draw(view);
	const char *e = rtd_counters_errors(c);
	if (e)
		fprintf(stderr, "rtdiag: the Metrics EventSource reported: %s\n", e);
	for (size_t i = 0; r == CLI_OK && rtd_counters_silent(c, i); i++)
		fprintf(stderr, "rtdiag: %s published no value (no EventSource "
			"or Meter of that name in the process, or none of the "
			"names asked for)\n", rtd_counters_silent(c, i));
	if (!monitor) {
		if (r == CLI_OK && (view->nrec || !json)) {
			if (cli_out_commit(o))
				r = CLI_FAIL;
			else
				fprintf(stderr, "rtdiag: wrote %s\n", out);
		} else {
			cli_out_abort(o);
		}
	}
	for (size_t i = 0; i < view->nrows; i++) {
		free(view->rows[i].provider);
		free(view->rows[i].label);
		free(view->rows[i].tags);
		free(view->rows[i].unit);
	}
	free(view->rows);
	return r;
}

static int cmd_counters(int argc, char **argv)
{
	const struct cli_cmd *cmd = &dn_cmd_counters;
	struct collect_args a;
	struct cli_parser p;
	struct cli_val v;
	int id, r;
	char spec[2048] = "";
	double refresh = 1;
	bool json = false, json_set = false;
	memset(&a, 0, sizeof(a));
	a.rundown_wait = 30;
	a.no_rundown = true;
	cli_opt_init(&p, cmd, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		if (dn_target_opt(id, &v, &a.t))
			continue;
		switch (id) {
		case O_COUNTERS: {
			size_t l = strlen(spec);
			snprintf(spec + l, sizeof(spec) - l, "%s%s", l ? "," : "",
				 v.str);
			break;
		}
		case O_REFRESH: refresh = v.d; break;
		case O_DURATION: a.duration = v.d; break;
		case O_OUT: a.out = v.str; break;
		case O_CFORMAT: json = v.i == 1, json_set = true; break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	const char *verb = p.pos[0];
	if (!strcmp(verb, "list"))
		return counters_list();
	bool monitor = !strcmp(verb, "monitor");
	if (!monitor && strcmp(verb, "collect"))
		return cli_cmd_usage(cmd, "want monitor, collect or list, not "
				     "'%s'", verb);
	if (monitor && a.out)
		return cli_cmd_usage(cmd, "monitor prints; collect writes -o FILE");
	if (p.rest)
		a.command = p.rest;
	if (a.command && (a.t.pid || a.t.name || a.t.socket))
		return cli_cmd_usage(cmd, "give -p PID, -n NAME or -- COMMAND, "
				     "not both");
	if (!a.command && (r = dn_target_resolve(cmd, &a.t, true)) >= 0)
		return r;
	if (!monitor && (r = collect_layout(cmd, &a.out, &json, json_set)) >= 0)
		return r;
	struct cview view = {.json = json, .csv = !monitor && !json,
			     .monitor = monitor,
			     .series = refresh >= 1 ? (unsigned)refresh : 1};
	char err[256] = "";
	rtd_counters *c = rtd_counters_new(spec, on_counter, &view, err, sizeof(err));
	if (!c)
		return cli_cmd_usage(cmd, "--counters: %s", err[0] ? err : "out of memory");
	/* a provider that is a meter too (System.Runtime on .NET 9+): its
	 * instruments, as dotnet-counters shows them, not both */
	rtd_counters_prefer_meters(c, 1);
	char sid[32];
	snprintf(sid, sizeof(sid), "rtdiag-%d", (int)getpid());
	int rc = rtd_counters_request(c, refresh, sid, &a.prov);
	if (rc) {
		rtd_counters_free(c);
		rtd_ipc_providers_clear(&a.prov);
		return cli_fail("%s", rtd_strerror(rc));
	}
	struct cli_out o = {0};
	if (!monitor && (cli_out_check(a.out) || cli_out_open(&o, a.out))) {
		rtd_counters_free(c);
		rtd_ipc_providers_clear(&a.prov);
		return CLI_FAIL;
	}
	view_start(&view, monitor ? stdout : o.f, &a);
	struct sink_state st;
	if (sink_init(&st, &a, false)) {
		sink_free(&st);
		rtd_counters_free(c);
		rtd_ipc_providers_clear(&a.prov);
		return cli_fail("out of memory");
	}
	view.dec = st.dec;
	st.counters = c;
	struct session_end end;
	r = run_session(&a, &st, NULL, NULL, &end);
	r = counters_finish(&view, c, st.counters_rc, r, a.out, &o);
	sink_free(&st);
	rtd_counters_free(c);
	rtd_ipc_providers_clear(&a.prov);
	return r;
}

const struct cli_cmd dn_cmd_counters = {
	"dotnet counters", "monitor|collect|list",
	"live counter values: EventCounters and System.Diagnostics.Metrics "
	"meters", counters_opts, 1, 1, CLI_CMD_COMMAND, cmd_counters,
	"monitor: a table redrawn in place on a terminal, else one line per "
	"value\n(seconds from the session's start,provider,name;tags,type,value)."
	"\ncollect: dotnet-counters' own layouts into FILE. CSV: the header "
	"\nTimestamp,Provider,Counter Name,Counter Type,Mean/Increment, the "
	"local time\nas .NET prints it in the invariant culture (MM/dd/yyyy "
	"HH:mm:ss), tags as\nName[k=v;k2=v2]; JSON: { \"TargetProcess\", "
	"\"StartTime\", \"Events\": [ {timestamp,\nprovider, name, tags, "
	"counterType, meterTags, instrumentTags, value} ] } on\none line, "
	"times in .NET's round-trip format. Names as dotnet-counters shows\n"
	"them: \"Working Set (MB)\", EventCounter increments \"(Count / 1 sec)\""
	" (type Rate),\nmeter Counters and ObservableCounters by their change "
	"over the interval in\ncollect, \"requests ({request} / 1 sec)\" (Rate), "
	"and by their total in monitor,\n\"requests ({request})\" (Metric), "
	"as dotnet-counters does; histograms one\nvalue per percentile (tag "
	"Percentile=50, "
	"95, 99). list: the well-known counters.\n"};
