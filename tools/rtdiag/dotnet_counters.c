/* SPDX-License-Identifier: MIT */
/*
 * dotnet_counters.c - 'rtdiag dotnet counters monitor|collect|list': the
 * counter records of librtdiag (rtdiag/counters.h) as a table, lines, CSV
 * or JSON.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dotnet_cli.h"
#include "dotnet_session.h"
#include "out.h"

/* ---- counters ---------------------------------------------------------------- */

static const struct cli_opt counters_opts[] = {
	DN_TARGET_OPTS,
	{O_COUNTERS, "counters", 0, CLI_ARG_STR, CLI_OPT_REPEAT,
	 "P[,P[names]]", "providers and meters, dotnet-counters' syntax "
	 "(default System.Runtime)", 0, 0},
	{O_REFRESH, "refresh-interval", 0, CLI_ARG_DURATION, CLI_OPT_POSITIVE,
	 "TIME", "how often values are published (default 1 s)", 0, 0},
	{O_DURATION, "duration", 'd', CLI_ARG_DURATION, CLI_OPT_POSITIVE,
	 "TIME", "stop after TIME", 0, 0},
	{O_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "collect: the file (default counter.csv / counter.json)", 0, 0},
	{O_CFORMAT, "format", 0, CLI_ARG_CHOICE, 0, "csv|json",
	 "collect: dotnet-counters' CSV or JSON layout (default csv)", 0, 0},
	{0},
};

/* What 'counters' prints or writes, fed by the record stream. */
struct cview {
	bool tty;      /* monitor on a terminal: a table redrawn in place */
	bool json;     /* collect --format json */
	FILE *out;     /* collect's file, or stdout for monitor's lines */
	uint64_t t0;   /* the trace's start tick */
	uint64_t freq;
	const struct rtd_nettrace_info *info;
	rtd_nettrace *dec;
	size_t nrec;   /* records written (json: comma placement) */
	/* the table: one row per provider/name/tags, latest value */
	struct crow {
		char *provider, *label, *tags;
		double value;
	} *rows;
	size_t nrows;
	uint64_t last_draw;
};

/* "Working Set (MB)" / "requests ({request})" as dotnet-counters labels
 * them; a rate says per how long. */
static void counter_label(const struct rtd_counter_record *r, char *buf,
			  size_t len)
{
	const char *n = r->display_name && *r->display_name ? r->display_name
							      : r->name;
	if (r->kind == RTD_COUNTER_SUM || r->kind == RTD_COUNTER_RATE)
		snprintf(buf, len, "%s%s%s%s (Count / %g sec)", n,
			 *r->unit ? " (" : "", r->unit, *r->unit ? ")" : "",
			 r->interval_sec > 0 ? (double)(long)(r->interval_sec + 0.5)
					     : 1.0);
	else if (r->kind == RTD_COUNTER_HISTOGRAM)
		snprintf(buf, len, "%s%s%s%s", n, *r->unit ? " (" : "",
			 r->unit, *r->unit ? ")" : "");
	else
		snprintf(buf, len, "%s%s%s%s", n, *r->unit ? " (" : "", r->unit,
			 *r->unit ? ")" : "");
}

static double rec_seconds(const struct cview *v, uint64_t ts)
{
	return v->freq ? (double)(ts - v->t0) / (double)v->freq : 0;
}

static void table_set(struct cview *v, const char *prov, const char *label,
		      const char *tags, double value)
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
	r->value = value;
	if (r->provider && r->label && r->tags)
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
		if (*r->tags)
			printf("    %-56s\n        %-52s %.6g\n", r->label, r->tags,
			       r->value);
		else
			printf("    %-56s %.6g\n", r->label, r->value);
	}
	fflush(stdout);
}

static int on_counter(void *ctx, const struct rtd_counter_record *r)
{
	struct cview *v = ctx;
	char label[640];
	if (!v->freq) {
		const struct rtd_nettrace_info *info = rtd_nettrace_info(v->dec);
		if (info) {
			v->t0 = info->sync_ticks;
			v->freq = info->tick_freq;
			v->info = info;
		}
	}
	counter_label(r, label, sizeof(label));
	if (r->kind == RTD_COUNTER_HISTOGRAM) {
		/* one row per percentile, as dotnet-counters shows them */
		for (size_t i = 0; i < r->nquantiles; i++) {
			char ql[700];
			snprintf(ql, sizeof(ql), "%s[P%g]", label, r->quantile[i] * 100);
			if (v->tty) {
				table_set(v, r->provider, ql, r->tags, r->qvalue[i]);
			} else if (v->json) {
				fprintf(v->out, "%s\n    { \"timestamp\": %.3f, "
					"\"provider\": \"%s\", \"name\": \"%s\", "
					"\"tags\": \"%s\", \"counterType\": \"%s\", "
					"\"value\": %.15g }", v->nrec++ ? "," : "",
					rec_seconds(v, r->timestamp), r->provider, ql,
					r->tags, rtd_counter_kind_name(r->kind),
					r->qvalue[i]);
			} else {
				fprintf(v->out, "%.3f,%s,%s%s%s,%s,%.15g\n",
					rec_seconds(v, r->timestamp), r->provider, ql,
					*r->tags ? ";" : "", r->tags,
					rtd_counter_kind_name(r->kind), r->qvalue[i]);
			}
		}
		return ferror(v->out) ? -EIO : 0;
	}
	if (v->tty) {
		table_set(v, r->provider, label, r->tags, r->value);
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
	if (v->json)
		fprintf(v->out, "%s\n    { \"timestamp\": %.3f, \"provider\": "
			"\"%s\", \"name\": \"%s\", \"tags\": \"%s\", "
			"\"counterType\": \"%s\", \"value\": %.15g }",
			v->nrec++ ? "," : "", rec_seconds(v, r->timestamp),
			r->provider, label, r->tags,
			rtd_counter_kind_name(r->kind), r->value);
	else
		fprintf(v->out, "%.3f,%s,%s%s%s,%s,%.15g\n",
			rec_seconds(v, r->timestamp), r->provider, label,
			*r->tags ? ";" : "", r->tags,
			rtd_counter_kind_name(r->kind), r->value);
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

static int cmd_counters(int argc, char **argv)
{
	const struct cli_cmd *cmd = &dn_cmd_counters;
	struct collect_args a;
	struct cli_parser p;
	struct cli_val v;
	int id, r;
	char spec[2048] = "";
	double refresh = 1;
	bool json = false;
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
		case O_CFORMAT: json = v.i == 1; break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	const char *verb = p.pos[0];
	if (!strcmp(verb, "list")) {
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
	if (!monitor && !a.out)
		a.out = json ? "counter.json" : "counter.csv";
	struct cview view = {.json = json};
	char err[256] = "";
	rtd_counters *c = rtd_counters_new(spec, on_counter, &view, err, sizeof(err));
	if (!c)
		return cli_cmd_usage(cmd, "--counters: %s", err[0] ? err : "out of memory");
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
	view.out = monitor ? stdout : o.f;
	view.tty = monitor && isatty(STDOUT_FILENO);
	if (!monitor && !json)
		fprintf(view.out, "Timestamp,Provider,Counter Name,Counter Type,"
			"Mean/Increment\n");
	if (json)
		fprintf(view.out, "{\n  \"TargetProcess\": \"%s\",\n  "
			"\"Events\": [", a.command ? a.command[0] : "pid");
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
	if (st.counters_rc && r != CLI_OK)
		r = cli_fail("%s: write error", monitor ? "stdout" : a.out);
	if (json)
		fprintf(view.out, "\n  ]\n}\n");
	if (view.tty)
		table_draw(&view);
	const char *e = rtd_counters_errors(c);
	if (e)
		fprintf(stderr, "rtdiag: the Metrics EventSource reported: %s\n", e);
	for (size_t i = 0; r == CLI_OK && rtd_counters_silent(c, i); i++)
		fprintf(stderr, "rtdiag: %s published no value (no EventSource "
			"or Meter of that name in the process, or none of the "
			"names asked for)\n", rtd_counters_silent(c, i));
	if (!monitor) {
		if (r == CLI_OK && (view.nrec || !json)) {
			if (cli_out_commit(&o))
				r = CLI_FAIL;
			else
				fprintf(stderr, "rtdiag: wrote %s\n", a.out);
		} else {
			cli_out_abort(&o);
		}
	}
	for (size_t i = 0; i < view.nrows; i++) {
		free(view.rows[i].provider);
		free(view.rows[i].label);
		free(view.rows[i].tags);
	}
	free(view.rows);
	sink_free(&st);
	rtd_counters_free(c);
	rtd_ipc_providers_clear(&a.prov);
	return r;
}

const struct cli_cmd dn_cmd_counters = {
	"dotnet counters", "monitor|collect|list",
	"live counter values: EventCounters and System.Diagnostics.Metrics "
	"meters", counters_opts, 1, 1, CLI_CMD_COMMAND, cmd_counters,
	"monitor: a table redrawn in place on a terminal, else one CSV line "
	"per value.\ncollect: dotnet-counters' CSV (Timestamp,Provider,Counter "
	"Name,Counter Type,\nMean/Increment; the time in seconds from the "
	"session's start, tags after ';'\nin the name) or JSON layout into "
	"FILE. list: the well-known counters.\nHistograms give one value per "
	"percentile (Name[P50], [P95], [P99]); counters\nand EventCounter "
	"increments are Rate (the change per interval), the rest\nMetric.\n"};
