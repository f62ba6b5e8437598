/* SPDX-License-Identifier: MIT */
/*
 * trigger.c - the flight recorder's triggers (rtdiag/trigger.h): one
 * expression parsed into a subject, an operator, a threshold and a time
 * it must hold, then evaluated on what a recording sees.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "rtdiag/common.h"
#include "rtdiag/trigger.h"

enum op { OP_GT, OP_GE, OP_LT, OP_LE, OP_EQ };

static const char *const op_text[] = {">", ">=", "<", "<=", "="};

/* The suspensions being timed, keyed by their track. */
#define PAUSE_TRACKS 8

struct pause {
	uint32_t pid;
	uint64_t tid, lane;
	int64_t begin;
	unsigned depth; /* slices open on the track, the suspension the first */
};

struct rtd_trigger {
	unsigned kind;
	enum op op;
	double threshold;
	int64_t for_ns;
	char *provider, *name; /* a counter's; an exception's type in @name */
	char cause[64];
	char value_text[64]; /* the threshold as written */
	bool holding;
	int64_t since;
	struct pause pauses[PAUSE_TRACKS];
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf(err, errlen, -RTD_E_FORMAT, fmt, ap);
	va_end(ap);
	return -RTD_E_FORMAT;
}

/* A number at the start of @s; *end after it. */
static bool number(const char *s, double *v, const char **end)
{
	if (!isdigit((unsigned char)*s) && *s != '.' && *s != '-')
		return false;
	char *e;
	errno = 0;
	*v = strtod(s, &e);
	if (e == s || errno || !isfinite(*v))
		return false;
	*end = e;
	return true;
}

struct unit {
	const char *name;
	double scale;
};

static const struct unit time_units[] = {
	{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}, {NULL, 0},
};

static const struct unit byte_units[] = {
	{"B", 1},
	{"KB", 1024.0}, {"KiB", 1024.0}, {"K", 1024.0},
	{"MB", 1048576.0}, {"MiB", 1048576.0}, {"M", 1048576.0},
	{"GB", 1073741824.0}, {"GiB", 1073741824.0}, {"G", 1073741824.0},
	{"TB", 1099511627776.0}, {"TiB", 1099511627776.0}, {"T", 1099511627776.0},
	{"", 1}, {NULL, 0},
};

/* @s (all of it) as a number with one of @units; false when not. */
static bool with_unit(const char *s, const struct unit *units, double *out)
{
	double v;
	const char *e;
	if (!number(s, &v, &e))
		return false;
	while (isspace((unsigned char)*e))
		e++;
	for (const struct unit *u = units; u->name; u++)
		if (!strcmp(e, u->name)) {
			*out = v * u->scale;
			return true;
		}
	return false;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

static bool type_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._+`[],", *s))
			return false;
	return true;
}

static int parse_subject(rtd_trigger *t, char *subj, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		unsigned kind;
	} fixed[] = {
		{"cpu", RTD_TRIGGER_CPU},
		{"rss", RTD_TRIGGER_RSS},
		{"gc-pause", RTD_TRIGGER_GC_PAUSE},
		{"exception", RTD_TRIGGER_EXCEPTION},
	};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strcmp(subj, fixed[i].name)) {
			t->kind = fixed[i].kind;
			snprintf(t->cause, sizeof(t->cause), "%s", subj);
			return 0;
		}
	char *slash = strrchr(subj, '/');
	if (!slash || slash == subj || !slash[1])
		return fail(err, errlen,
			    "\"%s\": not something a trigger watches (cpu, rss, gc-pause, "
			    "exception, or a counter as Provider/name)",
			    subj);
	*slash = 0;
	t->kind = RTD_TRIGGER_COUNTER;
	t->provider = strdup(subj);
	t->name = strdup(slash + 1);
	if (!t->provider || !t->name)
		return -ENOMEM;
	/* the counter's name, for a file name */
	size_t j = 0;
	for (const char *p = t->name; *p && j + 1 < sizeof(t->cause); p++)
		t->cause[j++] = isalnum((unsigned char)*p) || strchr("._-", *p) ? *p : '_';
	t->cause[j] = 0;
	return 0;
}

static int parse_value(rtd_trigger *t, const char *v, char *err, size_t errlen)
{
	snprintf(t->value_text, sizeof(t->value_text), "%s", v);
	bool ok = false;
	const char *want = "";
	switch (t->kind) {
	case RTD_TRIGGER_COUNTER:
		ok = with_unit(v, (const struct unit[]){{"", 1}, {NULL, 0}}, &t->threshold);
		want = "a number";
		break;
	case RTD_TRIGGER_CPU:
		ok = with_unit(v, (const struct unit[]){{"%", 1}, {"", 1}, {NULL, 0}},
			       &t->threshold);
		want = "a percentage of one core (90%)";
		break;
	case RTD_TRIGGER_RSS:
		ok = with_unit(v, byte_units, &t->threshold);
		want = "a size (2GB, 512MB, 100KiB)";
		break;
	case RTD_TRIGGER_GC_PAUSE:
		ok = with_unit(v, time_units, &t->threshold) && t->threshold >= 0;
		want = "a duration with its unit (100ms, 1s)";
		break;
	case RTD_TRIGGER_EXCEPTION:
		ok = type_name(v);
		want = "an exception type (System.TimeoutException)";
		if (ok && !(t->name = strdup(v)))
			return -ENOMEM;
		break;
	}
	if (!ok)
		return fail(err, errlen, "\"%s\": not %s", v, want);
	return 0;
}

int rtd_trigger_parse(const char *expr, rtd_trigger **out, char *err, size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	if (!expr)
		return fail(err, errlen, "no expression");
	if (strlen(expr) > RTD_TRIGGER_MAX_EXPR) {
		fail(err, errlen, "longer than %u bytes", RTD_TRIGGER_MAX_EXPR);
		return -RTD_E_CAP;
	}
	char buf[RTD_TRIGGER_MAX_EXPR + 1];
	snprintf(buf, sizeof(buf), "%s", expr);
	rtd_trigger *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	int rc = 0;
	char *opp = strpbrk(buf, "<>=");
	if (!opp) {
		rc = fail(err, errlen, "\"%s\": no comparison (>, >=, <, <=, =)", expr);
		goto out;
	}
	size_t oplen = opp[1] == '=' && opp[0] != '=' ? 2 : 1;
	t->op = opp[0] == '=' ? OP_EQ
		: opp[0] == '>' ? (oplen == 2 ? OP_GE : OP_GT)
				: (oplen == 2 ? OP_LE : OP_LT);
	char *rest = opp + oplen;
	*opp = 0;
	char *subj = trim(buf);
	if ((rc = parse_subject(t, subj, err, errlen)) < 0)
		goto out;
	if ((t->kind == RTD_TRIGGER_EXCEPTION) != (t->op == OP_EQ)) {
		rc = t->op == OP_EQ
			     ? fail(err, errlen, "\"%s=\": a threshold needs >, >=, < or <=", subj)
			     : fail(err, errlen, "\"exception%s\": an exception is matched with "
						 "= (exception=System.TimeoutException)",
				    op_text[t->op]);
		goto out;
	}
	/* "VALUE [for DURATION]" */
	char *forp = NULL;
	for (char *p = rest; (p = strstr(p, "for")); p += 3)
		if (p > rest && isspace((unsigned char)p[-1]) &&
		    (!p[3] || isspace((unsigned char)p[3])))
			forp = p;
	if (forp) {
		forp[-1] = 0;
		char *d = trim(forp + 3);
		double ns;
		if (t->kind == RTD_TRIGGER_GC_PAUSE || t->kind == RTD_TRIGGER_EXCEPTION) {
			rc = fail(err, errlen, "\"for %s\": only a threshold holds for a time "
					       "(a GC pause or an exception is one event)", d);
			goto out;
		}
		if (!with_unit(d, time_units, &ns) || ns <= 0 || ns > 1e18) {
			rc = fail(err, errlen, "\"for %s\": not a duration with its unit "
					       "(10s, 500ms, 1m)", d);
			goto out;
		}
		t->for_ns = (int64_t)ns;
	}
	char *v = trim(rest);
	if ((rc = parse_value(t, v, err, errlen)) < 0)
		goto out;
out:
	if (rc < 0) {
		rtd_trigger_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void rtd_trigger_free(rtd_trigger *t)
{
	if (!t)
		return;
	free(t->provider);
	free(t->name);
	free(t);
}

unsigned rtd_trigger_kind(const rtd_trigger *t)
{
	return t->kind;
}

int rtd_trigger_counter_name(const rtd_trigger *t, const char **provider, const char **name)
{
	if (t->kind != RTD_TRIGGER_COUNTER)
		return -RTD_E_INVAL;
	*provider = t->provider;
	*name = t->name;
	return 0;
}

const char *rtd_trigger_cause(const rtd_trigger *t)
{
	return t->cause;
}

/* ---- evaluation ------------------------------------------------------------- */

static bool holds(const rtd_trigger *t, double v)
{
	switch (t->op) {
	case OP_GT: return v > t->threshold;
	case OP_GE: return v >= t->threshold;
	case OP_LT: return v < t->threshold;
	case OP_LE: return v <= t->threshold;
	case OP_EQ: return false;
	}
	return false;
}

/* One value of the watched quantity at @mono: fires when it has held for
 * the trigger's time; the count restarts after each firing. */
static int sample(rtd_trigger *t, int64_t mono, double v, const char *what, const char *shown,
		  struct rtd_trigger_hit *hit)
{
	if (!holds(t, v)) {
		t->holding = false;
		return 0;
	}
	if (!t->holding) {
		t->holding = true;
		t->since = mono;
	}
	if (mono - t->since < t->for_ns)
		return 0;
	if (hit) {
		hit->mono = mono;
		hit->value = v;
		char dur[48] = "";
		if (t->for_ns)
			snprintf(dur, sizeof(dur), " for %.3gs", (double)t->for_ns / 1e9);
		snprintf(hit->text, sizeof(hit->text), "%s %s %s %s%s", what, shown,
			 op_text[t->op], t->value_text, dur);
	}
	t->since = mono; /* held on, it fires again after as long again */
	return 1;
}

int rtd_trigger_counter(rtd_trigger *t, int64_t mono, const char *provider, const char *name,
			double value, struct rtd_trigger_hit *hit)
{
	if (t->kind != RTD_TRIGGER_COUNTER || !provider || !name || strcmp(provider, t->provider) ||
	    strcmp(name, t->name))
		return 0;
	char what[192], shown[32];
	snprintf(what, sizeof(what), "%s/%s", provider, name);
	snprintf(shown, sizeof(shown), "%g", value);
	return sample(t, mono, value, what, shown, hit);
}

static bool suspension(const struct rtd_record *r)
{
	return r->name && !strcmp(r->name, "EE suspended");
}

static int record_pause(rtd_trigger *t, const struct rtd_record *r, struct rtd_trigger_hit *hit)
{
	struct pause *free_slot = NULL;
	for (size_t i = 0; i < PAUSE_TRACKS; i++) {
		struct pause *p = &t->pauses[i];
		if (!p->depth) {
			free_slot = free_slot ? free_slot : p;
			continue;
		}
		if (p->pid != r->pid || p->tid != r->tid || p->lane != r->lane)
			continue;
		if (r->kind == RTD_REC_SLICE_BEGIN) {
			p->depth++;
			return 0;
		}
		if (--p->depth)
			return 0;
		double ns = (double)(r->mono - p->begin);
		if (!holds(t, ns))
			return 0;
		if (hit) {
			hit->mono = r->mono;
			hit->value = ns;
			snprintf(hit->text, sizeof(hit->text), "gc-pause %.3gms %s %s",
				 ns / 1e6, op_text[t->op], t->value_text);
		}
		return 1;
	}
	if (r->kind == RTD_REC_SLICE_BEGIN && suspension(r) && free_slot)
		*free_slot = (struct pause){.pid = r->pid, .tid = r->tid, .lane = r->lane,
					    .begin = r->mono, .depth = 1};
	return 0;
}

static const char *field_str(const struct rtd_record *r, const char *name)
{
	for (size_t i = 0; i < r->nfields; i++)
		if (r->fields[i].type == RTD_FIELD_STR && r->fields[i].name &&
		    !strcmp(r->fields[i].name, name))
			return r->fields[i].s;
	return NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* The value dotnet-counters shows for each of the Metrics EventSource's
 * value events (src/dotnet/counters.c has the whole story): a counter's
 * rate, an up-down counter's value, a gauge's last value; histograms have
 * no one value. */
static const struct {
	const char *event, *field;
} metrics_values[] = {
	{"System.Diagnostics.Metrics/CounterRateValuePublished", "rate"},
	{"System.Diagnostics.Metrics/UpDownCounterRateValuePublished", "value"},
	{"System.Diagnostics.Metrics/GaugeValuePublished", "lastValue"},
};

static bool field_num(const struct rtd_record *r, const char *name, double *v)
{
	for (size_t i = 0; i < r->nfields; i++) {
		const struct rtd_field *f = &r->fields[i];
		if (!f->name || strcmp(f->name, name))
			continue;
		switch (f->type) {
		case RTD_FIELD_F64: *v = f->f; return true;
		case RTD_FIELD_I64: *v = (double)f->i; return true;
		case RTD_FIELD_U64: *v = (double)f->u; return true;
		case RTD_FIELD_STR: {
			/* the Metrics EventSource carries numbers as text */
			char *e;
			*v = f->s ? strtod(f->s, &e) : 0;
			return f->s && e != f->s && !*e;
		}
		}
	}
	return false;
}

static const char *field_str(const struct rtd_record *r, const char *name);

/* A meter's value event of the record stream (an instant), fed as a
 * counter value. */
static int metrics_instant(rtd_trigger *t, const struct rtd_record *rec,
			   struct rtd_trigger_hit *hit)
{
	for (size_t i = 0; i < sizeof(metrics_values) / sizeof(metrics_values[0]); i++) {
		if (strcmp(rec->name, metrics_values[i].event))
			continue;
		double v;
		const char *meter = field_str(rec, "meterName");
		const char *inst = field_str(rec, "instrumentName");
		if (!meter || !inst || !field_num(rec, metrics_values[i].field, &v))
			return 0;
		return rtd_trigger_counter(t, rec->mono, meter, inst, v, hit);
	}
	return 0;
}

/* An EventSource's counter value (an instant "Provider/EventCounters"
 * with its Payload's fields): a mean counter's Mean, an incrementing
 * one's Increment, as dotnet-counters shows them. */
static int eventcounters_instant(rtd_trigger *t, const struct rtd_record *rec,
				 struct rtd_trigger_hit *hit)
{
	const char *slash = strrchr(rec->name, '/');
	size_t plen = strlen(t->provider);
	if (!slash || strcmp(slash, "/EventCounters") || (size_t)(slash - rec->name) != plen ||
	    strncmp(rec->name, t->provider, plen))
		return 0;
	const char *name = field_str(rec, "Name");
	double v;
	if (!name || (!field_num(rec, "Mean", &v) && !field_num(rec, "Increment", &v)))
		return 0;
	return rtd_trigger_counter(t, rec->mono, t->provider, name, v, hit);
}

int rtd_trigger_record(rtd_trigger *t, const struct rtd_record *rec, struct rtd_trigger_hit *hit)
{
	switch (t->kind) {
	case RTD_TRIGGER_COUNTER: {
		if (rec->kind == RTD_REC_INSTANT && rec->name)
			return metrics_instant(t, rec, hit) || eventcounters_instant(t, rec, hit);
		if (rec->kind != RTD_REC_COUNTER || !rec->name)
			return 0;
		const char *slash = strrchr(rec->name, '/');
		size_t plen = strlen(t->provider);
		if (!slash || (size_t)(slash - rec->name) != plen ||
		    strncmp(rec->name, t->provider, plen))
			return 0;
		return rtd_trigger_counter(t, rec->mono, t->provider, slash + 1, rec->value, hit);
	}
	case RTD_TRIGGER_GC_PAUSE:
		if (rec->kind == RTD_REC_SLICE_BEGIN || rec->kind == RTD_REC_SLICE_END)
			return record_pause(t, rec, hit);
		return 0;
	case RTD_TRIGGER_EXCEPTION: {
		if (rec->kind != RTD_REC_INSTANT || !rec->name ||
		    !ends_with(rec->name, "Exception/Start"))
			return 0;
		const char *type = field_str(rec, "ExceptionType");
		if (!type || strcmp(type, t->name))
			return 0;
		if (hit) {
			hit->mono = rec->mono;
			hit->value = 0;
			snprintf(hit->text, sizeof(hit->text), "exception %s on thread %" PRIu64,
				 type, rec->tid);
		}
		return 1;
	}
	default:
		return 0;
	}
}

int rtd_proc_usage_read(int pid, struct rtd_proc_usage *out)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	out->mono = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	struct rtd_pstat st;
	int rc = rtd_pstat_read(NULL, pid ? pid : (int)getpid(), 0, &st);
	if (rc < 0)
		return rc == -ENOENT ? -ESRCH : rc;
	long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	if (hz <= 0 || page <= 0)
		return -EINVAL;
	out->cpu_ns = (st.utime_ticks + st.stime_ticks) * (1000000000ull / (unsigned long long)hz);
	out->rss = (int64_t)st.rss_pages > 0 ? st.rss_pages * (uint64_t)page : 0;
	return 0;
}

int rtd_trigger_proc(rtd_trigger *t, const struct rtd_proc_usage *prev,
		     const struct rtd_proc_usage *now, struct rtd_trigger_hit *hit)
{
	char shown[48];
	if (t->kind == RTD_TRIGGER_RSS) {
		snprintf(shown, sizeof(shown), "%.1fMB", (double)now->rss / 1048576.0);
		return sample(t, now->mono, (double)now->rss, "rss", shown, hit);
	}
	if (t->kind != RTD_TRIGGER_CPU || !prev || now->mono <= prev->mono)
		return 0;
	double used = now->cpu_ns >= prev->cpu_ns ? (double)(now->cpu_ns - prev->cpu_ns) : 0;
	double pct = 100.0 * used / (double)(now->mono - prev->mono);
	snprintf(shown, sizeof(shown), "%.1f%%", pct);
	return sample(t, now->mono, pct, "cpu", shown, hit);
}
