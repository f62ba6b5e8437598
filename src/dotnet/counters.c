/* SPDX-License-Identifier: MIT */
/*
 * counters.c - EventCounters and System.Diagnostics.Metrics values from an
 * EventPipe session, as typed records (rtdiag/counters.h).
 *
 * EventCounters: each EventSource enabled with EventCounterIntervalSec=N
 * writes an "EventCounters" event per counter and interval whose payload is
 * one struct "Payload" {Name, DisplayName, Mean, StandardDeviation, Count,
 * Min, Max, IntervalSec, Series, CounterType ("Mean"), Metadata,
 * DisplayUnits} or, for incrementing counters, {Name, DisplayName,
 * DisplayRateTimeScale, Increment, IntervalSec, Metadata, Series,
 * CounterType ("Sum"), DisplayUnits}.
 *
 * Meters: the "System.Diagnostics.Metrics" EventSource (in
 * System.Diagnostics.DiagnosticSource), enabled with the arguments
 * SessionId, Metrics (meter[\instrument] separated by ','), RefreshInterval,
 * MaxTimeSeries, MaxHistograms, writes per instrument and time series:
 * CounterRateValuePublished / UpDownCounterRateValuePublished (rate = the
 * change, value = the total), GaugeValuePublished (lastValue),
 * HistogramValuePublished (quantiles "0.5=1;0.95=2;0.99=3", count, sum),
 * each with sessionId, meterName, instrumentName, unit and tags
 * ("k=v,k2=v2"); numbers are carried as text. Errors arrive as Error,
 * TimeSeriesLimitReached, HistogramLimitReached,
 * ObservableInstrumentCallbackError and MultipleSessionsNotSupportedError.
 * Field names are read from the events' own metadata, not assumed
 * positions.
 *
 * System.Runtime is read from its EventCounters (RuntimeEventSource, every
 * .NET Core 3+), never from the Meter of the same name (.NET 9+), and a spec
 * that names no other meter enables no Metrics session at all: a Metrics
 * session can hang the target for good when it ends. Ending it (the
 * runtime's shutdown after Main returns disables every session; so does a
 * stop) runs MetricsEventSource's disable command while holding
 * EventListener.EventListenersLock, and that command joins the
 * aggregation thread (AggregationManager.Dispose -> Thread.Join). If that
 * thread is in its first collection, the System.Runtime meter's observable
 * callbacks run class constructors that create EventSources
 * (ThreadPool..cctor -> FrameworkEventSource, TplEventSource), and an
 * EventSource's creation takes EventListenersLock: each waits for the
 * other (seen with gdb and dotnet-dump on .NET 10.0.12, also with the
 * EventCounters poller holding the ThreadPool class lock in between; the
 * runtime's bug, dotnet/runtime#119014 is its startup twin). The first
 * collection comes one interval after the session starts, so a program
 * that ends about then hangs; load widens the window. EventCounters are
 * disabled without waiting for their polling thread, so they cannot close
 * that cycle. A meter named in the spec is still asked for: its own
 * callbacks are the user's choice.
 */
#include <math.h>
#include <stdbool.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "rtdiag/counters.h"
#include "rtdiag/ipc_providers.h"
#include "rtdiag/nettrace_decoder.h"
#include "rtdiag/source.h"

#define METRICS "System.Diagnostics.Metrics"
#define RUNTIME "System.Runtime"
#define MAX_PROVIDERS 64
#define MAX_INSTRUMENTS 4096 /* instruments whose own tags are kept */
#define STR 512

struct cprov {
	char *name;
	bool seen; /* a record came */
	char **names; /* counters to keep; NULL: all */
	size_t nnames;
	bool ec_only;    /* "EventCounters\Name": no meter asked for */
	bool meter_seen; /* a meter of this name published a value */
	bool ec_started; /* its first EventCounters value came, at ec_first */
	uint64_t ec_first;
};

/* An EventCounters record held while a meter of its name may still
 * publish (rtd_counters_prefer_meters()), with its own strings. */
struct held {
	struct rtd_counter_record r;
	char *provider, *name, *display, *unit;
};

#define EC_PREFIX "EventCounters\\"
#define MAX_HELD 4096

/* An instrument's and its meter's own tags (BeginInstrumentReporting). */
struct itags {
	char *meter, *inst, *meter_tags, *inst_tags;
};

struct rtd_counters {
	struct cprov prov[MAX_PROVIDERS];
	size_t nprov;
	struct itags *itags;
	size_t nitags;
	bool prefer;       /* rtd_counters_prefer_meters() */
	double hold_sec;
	uint64_t freq;     /* the trace's ticks per second */
	struct held *held;
	size_t nheld;
	rtd_counter_fn fn;
	void *ctx;
	char session[64];
	char error[512];
	bool have_error;
};

static void seterr(char *err, size_t len, const char *msg, const char *at)
{
	rtd_errf(err, len, 0, "%s at '%s'", msg, at);
}

/* Parse "Prov[a,b],Prov2" into c->prov. */
static int parse_spec(rtd_counters *c, const char *spec, char *err, size_t len)
{
	const char *p = spec && *spec ? spec : RUNTIME;
	while (*p) {
		while (*p == ',' || *p == ' ')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, ",[");
		while (n && p[n - 1] == ' ')
			n--;
		if (!n || c->nprov == MAX_PROVIDERS) {
			seterr(err, len, n ? "too many providers" : "an empty "
			       "provider name", p);
			return -RTD_E_INVAL;
		}
		struct cprov *cp = &c->prov[c->nprov++];
		if (n > strlen(EC_PREFIX) &&
		    !strncmp(p, EC_PREFIX, strlen(EC_PREFIX))) {
			cp->ec_only = true;
			p += strlen(EC_PREFIX);
			n -= strlen(EC_PREFIX);
		}
		cp->name = strndup(p, n);
		if (!cp->name)
			return -ENOMEM;
		/* System.Runtime: its EventCounters only, never its meter
		 * (a Metrics session can hang the target at its exit: see
		 * the top of this file), whether or not the prefix says so */
		if (!strcmp(cp->name, RUNTIME))
			cp->ec_only = true;
		p += n;
		while (*p == ' ')
			p++;
		if (*p == '[') {
			const char *end = strchr(p, ']');
			if (!end) {
				seterr(err, len, "'[' without ']'", p);
				return -RTD_E_INVAL;
			}
			p++;
			while (p < end) {
				size_t k = strcspn(p, ",]");
				const char *s = p;
				while (k && *s == ' ') {
					s++;
					k--;
				}
				while (k && s[k - 1] == ' ')
					k--;
				if (k) {
					char **nn = realloc(cp->names, (cp->nnames + 1) *
								   sizeof(*nn));
					if (!nn)
						return -ENOMEM;
					cp->names = nn;
					if (!(cp->names[cp->nnames++] = strndup(s, k)))
						return -ENOMEM;
				}
				p += strcspn(p, ",]");
				if (*p == ',')
					p++;
			}
			p = end + 1;
		}
		while (*p == ' ')
			p++;
		if (*p && *p != ',') {
			seterr(err, len, "expected ',' after a provider", p);
			return -RTD_E_INVAL;
		}
	}
	if (!c->nprov) {
		seterr(err, len, "no provider", spec ? spec : "");
		return -RTD_E_INVAL;
	}
	return 0;
}

RTD_API void rtd_counters_free(rtd_counters *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nprov; i++) {
		for (size_t k = 0; k < c->prov[i].nnames; k++)
			free(c->prov[i].names[k]);
		free(c->prov[i].names);
		free(c->prov[i].name);
	}
	for (size_t i = 0; i < c->nitags; i++) {
		free(c->itags[i].meter);
		free(c->itags[i].inst);
		free(c->itags[i].meter_tags);
		free(c->itags[i].inst_tags);
	}
	free(c->itags);
	for (size_t i = 0; i < c->nheld; i++) {
		free(c->held[i].provider);
		free(c->held[i].name);
		free(c->held[i].display);
		free(c->held[i].unit);
	}
	free(c->held);
	free(c);
}

RTD_API rtd_counters *rtd_counters_new(const char *spec, rtd_counter_fn fn,
				       void *ctx, char *err, size_t errlen)
{
	rtd_counters *c = calloc(1, sizeof(*c));
	if (!c || !fn) {
		free(c);
		return NULL;
	}
	c->fn = fn;
	c->ctx = ctx;
	if (parse_spec(c, spec, err, errlen)) {
		rtd_counters_free(c);
		return NULL;
	}
	return c;
}

/* Is provider/name asked for? */
static bool wanted(rtd_counters *c, const char *provider, const char *name)
{
	for (size_t i = 0; i < c->nprov; i++) {
		struct cprov *p = &c->prov[i];
		if (strcmp(p->name, provider) != 0)
			continue;
		bool hit = !p->nnames;
		for (size_t k = 0; !hit && k < p->nnames; k++)
			hit = !strcmp(p->names[k], name);
		if (hit) {
			p->seen = true;
			return true;
		}
	}
	return false;
}

RTD_API const char *rtd_counters_silent(const rtd_counters *c, size_t i)
{
	for (size_t k = 0; k < c->nprov; k++)
		if (!c->prov[k].seen && i-- == 0)
			return c->prov[k].name;
	return NULL;
}

RTD_API int rtd_counters_request(rtd_counters *c, double interval_sec,
				 const char *session_id,
				 struct rtd_ipc_providers *out)
{
	if (!c || !out || !(interval_sec > 0) || !session_id ||
	    strlen(session_id) >= sizeof(c->session))
		return -RTD_E_INVAL;
	snprintf(c->session, sizeof(c->session), "%s", session_id);
	char spec[1024], err[256];
	/* meters: "Meter" or "Meter\instrument", separated by ',' */
	char metrics[4096] = "";
	for (size_t i = 0; i < c->nprov; i++) {
		const struct cprov *p = &c->prov[i];
		if (strcmp(p->name, METRICS) == 0)
			continue;
		snprintf(spec, sizeof(spec), "%s:0xFFFFFFFF:5:"
			 "EventCounterIntervalSec=%g", p->name, interval_sec);
		int rc = rtd_ipc_providers_parse(spec, out, err, sizeof(err));
		if (rc)
			return rc;
		size_t n = p->ec_only ? 0 : p->nnames ? p->nnames : 1;
		for (size_t k = 0; k < n; k++) {
			size_t l = strlen(metrics);
			snprintf(metrics + l, sizeof(metrics) - l, "%s%s%s%s",
				 l ? "," : "", p->name, p->nnames ? "\\" : "",
				 p->nnames ? p->names[k] : "");
		}
	}
	if (!metrics[0])
		return 0; /* no meter asked for: no Metrics session at all */
	/* the Metrics EventSource: values (0x2) and errors (0x1), quoted
	 * as a whole so its ',' and ';' stay in */
	snprintf(spec, sizeof(spec), METRICS ":0x3:5:\"SessionId=%s;Metrics=%s;"
		 "RefreshInterval=%g;MaxTimeSeries=1000;MaxHistograms=100\"",
		 session_id, metrics, interval_sec);
	if (strlen(metrics) >= sizeof(metrics) - 1 ||
	    strlen(spec) >= sizeof(spec) - 1)
		return -RTD_E_CAP;
	return rtd_ipc_providers_parse(spec, out, err, sizeof(err));
}

/* ---- one event as the handlers read it: a decoder's event or a record --- */

/*
 * The handlers below read an event's provider, name, time and named
 * fields, from either of its two forms: the decoder's event
 * (rtd_counters_event()) or a nettrace source's INSTANT record
 * (rtd_counters_record()). Every value is first made a struct rtd_field
 * as the source makes it (signed integers @i, other integers @u, floats
 * @f, anything with text @s), so both forms give the same numbers.
 */
struct cev {
	const char *provider;
	const char *name; /* its display name: "EventCounters" */
	uint64_t ts;
	/* an event... */
	rtd_nettrace *dec;
	const struct rtd_nettrace_event *ev;
	/* ...or a record, and its source's clock */
	const struct rtd_record *rec;
	const struct rtd_clock *clock;
};

/* A decoder's scalar as a record's field (src/nettrace/source.c). */
static struct rtd_field field_of(const struct rtd_nettrace_value *v)
{
	unsigned t;
	switch (v->type) {
	case RTD_NT_T_I8:
	case RTD_NT_T_I16:
	case RTD_NT_T_I32:
	case RTD_NT_T_I64:
	case RTD_NT_T_VARINT:
		t = RTD_FIELD_I64;
		break;
	case RTD_NT_T_F32:
	case RTD_NT_T_F64:
		t = RTD_FIELD_F64;
		break;
	default:
		t = RTD_FIELD_U64;
		break;
	}
	return (struct rtd_field){.name = v->name, .type = v->str ? RTD_FIELD_STR : t,
				  .i = v->i, .u = v->u, .f = v->f, .s = v->str};
}

/* A top-level field by name into *out; false when there is none. */
static bool get(const struct cev *e, const char *name, struct rtd_field *out)
{
	if (e->rec) {
		for (size_t i = 0; i < e->rec->nfields; i++)
			if (e->rec->fields[i].name && !strcmp(e->rec->fields[i].name, name)) {
				*out = e->rec->fields[i];
				return true;
			}
		return false;
	}
	struct rtd_nettrace_value v;
	if (rtd_nettrace_get(e->dec, e->ev, name, &v) != 0 || v.kind != RTD_NT_V_SCALAR)
		return false;
	*out = field_of(&v);
	return true;
}

static double num_of(const struct rtd_field *f)
{
	switch (f->type) {
	case RTD_FIELD_F64:
		return f->f;
	case RTD_FIELD_STR:
		return f->s ? strtod(f->s, NULL) : 0;
	case RTD_FIELD_I64:
		return (double)f->i;
	default:
		return (double)f->u;
	}
}

static void copy_str(char *dst, size_t len, const struct rtd_field *f)
{
	snprintf(dst, len, "%s", f->s ? f->s : "");
}

/* The ticks per second of the event's clock (0: not known). */
static uint64_t freq_of(const struct cev *e)
{
	if (e->rec)
		return e->clock ? e->clock->freq : 0;
	const struct rtd_nettrace_info *in = rtd_nettrace_info(e->dec);
	return in ? in->tick_freq : 0;
}

/* ---- EventCounters ---------------------------------------------------------- */

struct ec {
	char name[STR], display[STR], unit[STR], type[32];
	double mean, increment, min, max, count, interval;
	bool have_mean, have_increment;
};

/* One value of the Payload struct, at any depth (the last of a name wins) */
static void ec_field(struct ec *e, const struct rtd_field *f)
{
	const char *n = f->name;
	if (!strcmp(n, "Name"))
		copy_str(e->name, sizeof(e->name), f);
	else if (!strcmp(n, "DisplayName"))
		copy_str(e->display, sizeof(e->display), f);
	else if (!strcmp(n, "DisplayUnits"))
		copy_str(e->unit, sizeof(e->unit), f);
	else if (!strcmp(n, "CounterType"))
		copy_str(e->type, sizeof(e->type), f);
	else if (!strcmp(n, "Mean")) {
		e->mean = num_of(f);
		e->have_mean = true;
	} else if (!strcmp(n, "Increment")) {
		e->increment = num_of(f);
		e->have_increment = true;
	} else if (!strcmp(n, "Min"))
		e->min = num_of(f);
	else if (!strcmp(n, "Max"))
		e->max = num_of(f);
	else if (!strcmp(n, "Count"))
		e->count = num_of(f);
	else if (!strcmp(n, "IntervalSec"))
		e->interval = num_of(f);
}

static int ec_value(void *ctx, const struct rtd_nettrace_value *v)
{
	if (v->kind == RTD_NT_V_SCALAR && v->name) {
		struct rtd_field f = field_of(v);
		ec_field(ctx, &f);
	}
	return 0;
}

/* Every scalar of the payload, nested ones too (a record of a source
 * without top_fields carries them all, in the walk's order); false when
 * the payload cannot be read whole */
static bool ec_read(const struct cev *e, struct ec *out)
{
	if (!e->rec)
		return rtd_nettrace_walk(e->dec, e->ev, ec_value, out) >= 0;
	for (size_t i = 0; i < e->rec->nfields; i++)
		if (e->rec->fields[i].name)
			ec_field(out, &e->rec->fields[i]);
	return true;
}

static struct cprov *prov_of(rtd_counters *c, const char *name)
{
	for (size_t i = 0; i < c->nprov; i++)
		if (!strcmp(c->prov[i].name, name))
			return &c->prov[i];
	return NULL;
}

static void held_free(struct held *h)
{
	free(h->provider);
	free(h->name);
	free(h->display);
	free(h->unit);
}

/* Keep a copy of r until a meter of its name publishes or the hold ends. */
static int hold(rtd_counters *c, const struct rtd_counter_record *r)
{
	if (c->nheld == MAX_HELD)
		return c->fn(c->ctx, r); /* no room: not held */
	struct held *n = realloc(c->held, (c->nheld + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	c->held = n;
	struct held *h = &c->held[c->nheld];
	h->r = *r;
	h->provider = strdup(r->provider);
	h->name = strdup(r->name);
	h->display = strdup(r->display_name);
	h->unit = strdup(r->unit);
	if (!h->provider || !h->name || !h->display || !h->unit) {
		held_free(h);
		return -ENOMEM;
	}
	h->r.provider = h->provider;
	h->r.name = h->name;
	h->r.display_name = h->display;
	h->r.unit = h->unit;
	c->nheld++;
	return 0;
}

/* Whether @p's hold is over at @ts: more than the hold after its first
 * EventCounters value. An earlier @ts (another thread's event, read
 * after it in stream order) is within the hold, not a difference
 * wrapped around to a huge one. */
static bool hold_over(const rtd_counters *c, const struct cprov *p, uint64_t ts)
{
	return ts > p->ec_first &&
	       (double)(ts - p->ec_first) > c->hold_sec * (double)c->freq;
}

/* Give out (or drop, when a meter of the name published) the held
 * records whose hold ended at @ts, or all with @all. */
static int release(rtd_counters *c, uint64_t ts, bool all)
{
	size_t k = 0;
	int rc = 0;
	for (size_t i = 0; i < c->nheld; i++) {
		struct held *h = &c->held[i];
		const struct cprov *p = prov_of(c, h->provider);
		bool drop = p && p->meter_seen;
		bool due = all || !p || hold_over(c, p, ts);
		if (!drop && !due) {
			c->held[k++] = *h;
			continue;
		}
		if (!drop && !rc)
			rc = c->fn(c->ctx, &h->r);
		held_free(h);
	}
	c->nheld = k;
	return rc;
}

RTD_API void rtd_counters_prefer_meters(rtd_counters *c, double hold_sec)
{
	c->prefer = true;
	c->hold_sec = hold_sec > 0 ? hold_sec : 0;
}

RTD_API int rtd_counters_flush(rtd_counters *c)
{
	return c ? release(c, 0, true) : 0;
}

static int event_counters(rtd_counters *c, const struct cev *ev)
{
	struct ec e;
	memset(&e, 0, sizeof(e));
	if (!ec_read(ev, &e) || !e.name[0] || (!e.have_mean && !e.have_increment))
		return 0; /* not a counter payload: nothing to report */
	if (!wanted(c, ev->provider, e.name))
		return 0;
	struct rtd_counter_record r = {
		.has_value = true,
		.kind = e.have_increment || !strcmp(e.type, "Sum")
				? RTD_COUNTER_SUM
				: RTD_COUNTER_MEAN,
		.provider = ev->provider,
		.name = e.name,
		.display_name = e.display,
		.unit = e.unit,
		.tags = "",
		.meter_tags = "",
		.instrument_tags = "",
		.min = e.min,
		.max = e.max,
		.count = e.count,
		.interval_sec = e.interval,
		.timestamp = ev->ts,
	};
	r.value = r.kind == RTD_COUNTER_SUM ? e.increment : e.mean;
	struct cprov *p = c->prefer ? prov_of(c, r.provider) : NULL;
	if (!p || p->ec_only)
		return c->fn(c->ctx, &r);
	/* dotnet-counters: a meter of the same name wins; held a while
	 * after the provider's first value in case one comes */
	if (p->meter_seen)
		return 0;
	if (!p->ec_started) {
		p->ec_started = true;
		p->ec_first = r.timestamp;
	}
	c->freq = freq_of(ev);
	if (c->freq && !hold_over(c, p, r.timestamp))
		return hold(c, &r);
	return c->fn(c->ctx, &r);
}

/* ---- meters ------------------------------------------------------------------- */

/* A top-level field's text into buf ("" when absent). */
static const char *field(const struct cev *e, const char *name, char *buf, size_t len)
{
	struct rtd_field f;
	buf[0] = 0;
	if (get(e, name, &f))
		copy_str(buf, len, &f);
	return buf;
}

static double field_num(const struct cev *e, const char *name)
{
	struct rtd_field f;
	return get(e, name, &f) ? num_of(&f) : 0;
}

/* A number carried as text into *out; false when the text is empty or
 * not a number (the Metrics EventSource's "no measurement"). */
static bool field_text_num(const struct cev *e, const char *name, double *out)
{
	struct rtd_field f;
	*out = 0;
	if (!get(e, name, &f))
		return false;
	if (f.type != RTD_FIELD_STR) {
		*out = num_of(&f);
		return true;
	}
	if (!f.s || !*f.s)
		return false;
	char *end;
	*out = strtod(f.s, &end);
	return end != f.s;
}

/* "0.5=51;0.95=96;0.99=100" */
static void quantiles(const char *s, struct rtd_counter_record *r)
{
	while (*s && r->nquantiles < RTD_COUNTER_MAX_QUANTILES) {
		char *end;
		double q = strtod(s, &end);
		if (end == s || *end != '=')
			break;
		s = end + 1;
		double v = strtod(s, &end);
		if (end == s)
			break;
		r->quantile[r->nquantiles] = q;
		r->qvalue[r->nquantiles++] = v;
		s = end;
		if (*s == ';')
			s++;
	}
	for (size_t i = 0; i < r->nquantiles; i++)
		if (r->quantile[i] == 0.5)
			r->value = r->qvalue[i];
}

static struct itags *itags_find(rtd_counters *c, const char *meter,
				const char *inst)
{
	for (size_t i = 0; i < c->nitags; i++)
		if (!strcmp(c->itags[i].meter, meter) &&
		    !strcmp(c->itags[i].inst, inst))
			return &c->itags[i];
	return NULL;
}

/* BeginInstrumentReporting (version 1+): the instrument's own tags and
 * its meter's, which dotnet-counters shows with every value. */
static int begin_instrument(rtd_counters *c, const struct cev *e, unsigned kind)
{
	(void)kind;
	char sess[64], meter[STR], inst[STR], mt[STR], it[STR];
	if (strcmp(field(e, "sessionId", sess, sizeof(sess)), c->session) != 0)
		return 0;
	field(e, "meterName", meter, sizeof(meter));
	field(e, "instrumentName", inst, sizeof(inst));
	field(e, "meterTags", mt, sizeof(mt));
	field(e, "instrumentTags", it, sizeof(it));
	struct itags *t = itags_find(c, meter, inst);
	if (!t) {
		if (!mt[0] && !it[0])
			return 0;
		if (c->nitags == MAX_INSTRUMENTS)
			return 0; /* beyond the cap: values without them */
		struct itags *n = realloc(c->itags, (c->nitags + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->itags = n;
		t = &c->itags[c->nitags];
		memset(t, 0, sizeof(*t));
		if (!(t->meter = strdup(meter)) || !(t->inst = strdup(inst))) {
			free(t->meter);
			free(t->inst);
			return -ENOMEM;
		}
		c->nitags++;
	}
	free(t->meter_tags);
	free(t->inst_tags);
	t->meter_tags = strdup(mt);
	t->inst_tags = strdup(it);
	return t->meter_tags && t->inst_tags ? 0 : -ENOMEM;
}

/* Error, TimeSeriesLimitReached...: the session's latest error */
static int metrics_error(rtd_counters *c, const struct cev *e, unsigned kind)
{
	(void)kind;
	char sess[64], t[STR];
	field(e, "sessionId", sess, sizeof(sess));
	if (sess[0] && strcmp(sess, c->session) != 0 &&
	    strcmp(e->name, "MultipleSessionsNotSupportedError") != 0)
		return 0;
	field(e, "errorMessage", t, sizeof(t));
	snprintf(c->error, sizeof(c->error), "%s%s%s", e->name, t[0] ? ": " : "", t);
	c->have_error = true;
	return 0;
}

/* CounterRateValuePublished, ...: one instrument's value (@kind) */
static int metrics_value(rtd_counters *c, const struct cev *e, unsigned kind)
{
	char sess[64], meter[STR], inst[STR], unit[STR], tags[STR * 2], t[STR];
	field(e, "sessionId", sess, sizeof(sess));
	if (c->session[0] && strcmp(sess, c->session) != 0)
		return 0; /* another tool's session */
	field(e, "meterName", meter, sizeof(meter));
	field(e, "instrumentName", inst, sizeof(inst));
	if (!wanted(c, meter, inst))
		return 0;
	struct cprov *mp = prov_of(c, meter);
	if (mp && !mp->ec_only)
		mp->meter_seen = true;
	struct rtd_counter_record r = {
		.kind = kind,
		.provider = meter,
		.name = inst,
		.display_name = "",
		.unit = field(e, "unit", unit, sizeof(unit)),
		.tags = field(e, "tags", tags, sizeof(tags)),
		.timestamp = e->ts,
	};
	const struct itags *it = itags_find(c, meter, inst);
	r.meter_tags = it ? it->meter_tags : "";
	r.instrument_tags = it ? it->inst_tags : "";
	switch (kind) {
	case RTD_COUNTER_RATE:
		r.has_value = field_text_num(e, "rate", &r.value);
		r.has_total = field_text_num(e, "value", &r.total);
		break;
	case RTD_COUNTER_UPDOWN:
		r.has_value = field_text_num(e, "value", &r.value);
		r.has_total = field_text_num(e, "rate", &r.total);
		if (!r.has_total)
			r.total = r.value; /* the first interval: no change yet */
		break;
	case RTD_COUNTER_GAUGE:
		r.has_value = field_text_num(e, "lastValue", &r.value);
		break;
	default:
		r.has_value = true;
		r.count = field_num(e, "count");
		r.sum = field_num(e, "sum");
		quantiles(field(e, "quantiles", t, sizeof(t)), &r);
		break;
	}
	return c->fn(c->ctx, &r);
}

/* The Metrics EventSource's events the reader reads, by their names */
static const struct {
	const char *name;
	int (*fn)(rtd_counters *c, const struct cev *e, unsigned kind);
	unsigned kind;
} metrics_events[] = {
	{"CounterRateValuePublished", metrics_value, RTD_COUNTER_RATE},
	{"UpDownCounterRateValuePublished", metrics_value, RTD_COUNTER_UPDOWN},
	{"GaugeValuePublished", metrics_value, RTD_COUNTER_GAUGE},
	{"HistogramValuePublished", metrics_value, RTD_COUNTER_HISTOGRAM},
	{"BeginInstrumentReporting", begin_instrument, 0},
	{"Error", metrics_error, 0},
	{"TimeSeriesLimitReached", metrics_error, 0},
	{"HistogramLimitReached", metrics_error, 0},
	{"ObservableInstrumentCallbackError", metrics_error, 0},
	{"MultipleSessionsNotSupportedError", metrics_error, 0},
	{"MultipleSessionsConfiguredIncorrectlyError", metrics_error, 0},
};

#define EVENT_COUNTERS "EventCounters"

/* Which metrics_events[] entry reads an event of this name (-1: none). */
static int metrics_event_of(const char *name)
{
	for (size_t i = 0; i < sizeof(metrics_events) / sizeof(metrics_events[0]); i++)
		if (!strcmp(metrics_events[i].name, name))
			return (int)i;
	return -1;
}

/* Whether the reader reads events of this provider and display name
 * (struct rtd_nettrace_metadata .name, what a record's name carries: the
 * runtime writes these events with no opcode, so it is the name the
 * stream gives) */
static inline bool reads(rtd_counters *c, const char *provider, const char *name)
{
	/* every event of a session asks: the first letters decide most */
	if (name[0] == 'E' && !strcmp(name, EVENT_COUNTERS))
		return prov_of(c, provider) != NULL;
	return provider[0] == 'S' && !strcmp(provider, METRICS) && metrics_event_of(name) >= 0;
}

/* One event the reader reads. Only these pass the hold's time, so a
 * source filtered by rtd_counters_want() gives what the unfiltered
 * events give, in the same order (in stream order the other events'
 * times come from other threads' buffers). */
static int dispatch(rtd_counters *c, const struct cev *e)
{
	if (c->nheld) {
		int rc = release(c, e->ts, false);
		if (rc)
			return rc;
	}
	if (!strcmp(e->name, EVENT_COUNTERS))
		return event_counters(c, e);
	int k = metrics_event_of(e->name);
	return k < 0 ? 0 : metrics_events[k].fn(c, e, metrics_events[k].kind);
}

RTD_API int rtd_counters_event(rtd_counters *c, rtd_nettrace *dec,
			       const struct rtd_nettrace_event *ev)
{
	const struct rtd_nettrace_metadata *m = ev->meta;
	if (!m || !m->provider || !m->name || !reads(c, m->provider, m->name))
		return 0;
	struct cev e = {.provider = m->provider, .name = m->name, .ts = ev->timestamp,
			.dec = dec, .ev = ev};
	return dispatch(c, &e);
}

RTD_API int rtd_counters_record(rtd_counters *c, const struct rtd_clock *clock,
				const struct rtd_record *rec)
{
	if (!c || !rec)
		return -RTD_E_INVAL;
	if (rec->kind != RTD_REC_INSTANT || !rec->category || !rec->name)
		return 0;
	/* most INSTANTs of a session are the runtime's own (a profile's):
	 * told apart by their provider before the name is measured */
	if (!prov_of(c, rec->category) && strcmp(rec->category, METRICS) != 0)
		return 0;
	/* "Provider/Event" */
	size_t lp = strlen(rec->category);
	if (strncmp(rec->name, rec->category, lp) != 0 || rec->name[lp] != '/' ||
	    !reads(c, rec->category, rec->name + lp + 1))
		return 0;
	struct cev e = {.provider = rec->category, .name = rec->name + lp + 1,
			.ts = (uint64_t)rec->ts, .rec = rec, .clock = clock};
	return dispatch(c, &e);
}

RTD_API bool rtd_counters_want(void *ctx, const struct rtd_nettrace_metadata *m)
{
	return ctx && m && m->provider && m->name && reads(ctx, m->provider, m->name);
}

RTD_API size_t rtd_counters_fields(void *ctx, const struct rtd_nettrace_metadata *m)
{
	return rtd_counters_want(ctx, m) ? SIZE_MAX : 0;
}

RTD_API const char *rtd_counters_errors(const rtd_counters *c)
{
	return c->have_error ? c->error : NULL;
}

RTD_API const char *rtd_counter_kind_name(unsigned kind)
{
	return kind == RTD_COUNTER_SUM || kind == RTD_COUNTER_RATE ? "Rate"
								  : "Metric";
}

/* ---- as dotnet-counters shows them ---------------------------------------- */

/* snprintf into a field; false when it did not fit */
static bool put_field(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static bool put_field(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}
#define PUT_FIELD(buf, ...) put_field((buf), sizeof(buf), __VA_ARGS__)

/*
 * The name dotnet-counters shows (its payloads' DisplayName and
 * GetDisplay()): EventCounters "Display Name (unit)", their increments
 * "Display Name (unit / N sec)" with "count" or no unit as "Count";
 * meters "name (unit)" or "name", Counters by their rate "name (unit /
 * N sec)" and by their total "name (unit)", "Count" for no unit.
 */
static bool display_name(const struct rtd_counter_record *r, bool by_rate,
			 unsigned interval, struct rtd_counter_value *v)
{
	const char *n = r->display_name && *r->display_name ? r->display_name
							      : r->name;
	const char *u = r->unit ? r->unit : "";
	switch (r->kind) {
	case RTD_COUNTER_SUM:
		return PUT_FIELD(v->name, "%s (%s / %u sec)", n,
				 !*u || !strcmp(u, "count") ? "Count" : u,
				 interval);
	case RTD_COUNTER_RATE:
		if (by_rate)
			return PUT_FIELD(v->name, "%s (%s / %u sec)", n,
					 *u ? u : "Count", interval);
		return PUT_FIELD(v->name, "%s (%s)", n, *u ? u : "Count");
	case RTD_COUNTER_MEAN:
		if (!strcmp(u, "count"))
			u = "Count";
		break;
	default:
		break;
	}
	return *u ? PUT_FIELD(v->name, "%s (%s)", n, u)
		  : PUT_FIELD(v->name, "%s", n);
}

/* A quantile as a percentage the way .NET prints key * 100: the fewest
 * decimals that read back the same ("50", "99.9"). */
static void percent_text(double q, char *buf, size_t len)
{
	double x = q * 100;
	for (int prec = 0; prec <= 17; prec++) {
		snprintf(buf, len, "%.*f", prec, x);
		if (strtod(buf, NULL) == x)
			return;
	}
}

/* The meter's and instrument's own tags, and all three joined as
 * dotnet-counters' CombineTags() (meter, instrument, value). */
static bool own_tags(struct rtd_counter_value *v, const char *mt,
		     const char *it)
{
	return PUT_FIELD(v->meter_tags, "%s", mt) &&
	       PUT_FIELD(v->instrument_tags, "%s", it) &&
	       PUT_FIELD(v->all_tags, "%s%s%s%s%s", mt, *mt && *it ? "," : "",
			 it, (*mt || *it) && *v->tags ? "," : "", v->tags);
}

RTD_API int rtd_counter_values(const struct rtd_counter_record *r,
			       enum rtd_counter_view view, unsigned interval_sec,
			       struct rtd_counter_value *out, size_t max)
{
	if (!r || !out || r->kind > RTD_COUNTER_HISTOGRAM ||
	    (view != RTD_COUNTER_VIEW_COLLECT && view != RTD_COUNTER_VIEW_MONITOR))
		return -RTD_E_INVAL;
	if (!r->has_value)
		return 0;
	const char *tags = r->tags ? r->tags : "";
	const char *mt = r->meter_tags ? r->meter_tags : "";
	const char *it = r->instrument_tags ? r->instrument_tags : "";
	if (r->kind == RTD_COUNTER_HISTOGRAM) {
		if (r->nquantiles > max)
			return -RTD_E_CAP;
		for (size_t i = 0; i < r->nquantiles; i++) {
			struct rtd_counter_value *v = &out[i];
			char pct[32];
			percent_text(r->quantile[i], pct, sizeof(pct));
			if (!display_name(r, false, interval_sec, v) ||
			    !PUT_FIELD(v->tags, "%s%sPercentile=%s", tags,
				       *tags ? "," : "", pct) ||
			    !own_tags(v, mt, it))
				return -RTD_E_CAP;
			v->type = "Metric";
			v->value = r->qvalue[i];
		}
		return (int)r->nquantiles;
	}
	if (max < 1)
		return -RTD_E_CAP;
	/* monitor asks for totals, and takes the rate when none came */
	bool by_rate = r->kind == RTD_COUNTER_RATE &&
		       (view == RTD_COUNTER_VIEW_COLLECT || !r->has_total);
	if (!display_name(r, by_rate, interval_sec, out) ||
	    !PUT_FIELD(out->tags, "%s", tags) || !own_tags(out, mt, it))
		return -RTD_E_CAP;
	out->type = by_rate || r->kind == RTD_COUNTER_SUM ? "Rate" : "Metric";
	out->value = r->kind == RTD_COUNTER_RATE && !by_rate ? r->total : r->value;
	return 1;
}

/* "By" (UCUM, what System.Diagnostics.Metrics uses), "B", "bytes". */
static bool unit_is_bytes(const char *u)
{
	if (!u)
		return false;
	size_t n = strcspn(u, " /"); /* "By / 1 sec" is a rate of bytes */
	return (n == 2 && strncmp(u, "By", 2) == 0) ||
	       (n == 1 && u[0] == 'B') || (n == 5 && strncmp(u, "bytes", 5) == 0);
}

const char *rtd_counter_format(double value, const char *unit, char *buf,
			       size_t len)
{
	if (!buf || !len)
		return buf;
	if (unit_is_bytes(unit) && isfinite(value)) {
		static const char *const units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
		double v = value;
		unsigned u = 0;
		while (fabs(v) >= 1000 && u < 5) {
			v /= 1000;
			u++;
		}
		snprintf(buf, len, u ? "%.2f %s" : "%.0f %s", v, units[u]);
	} else if (isfinite(value) && value == floor(value) && fabs(value) < 1e15) {
		snprintf(buf, len, "%.0f", value);
	} else {
		snprintf(buf, len, "%.6g", value);
	}
	return buf;
}
