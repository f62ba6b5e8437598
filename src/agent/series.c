/* SPDX-License-Identifier: MIT */
/*
 * series.c - a target's .NET counters (EventCounters and System.
 * Diagnostics.Metrics instruments, read by src/dotnet's counter reader) as
 * Prometheus series: the latest value of each, named
 * dotnet_<provider>_<counter> in snake case, the instrument's tags as
 * labels.
 *
 * Means, gauges and up-down counters are gauges. Increments per interval
 * (IncrementingEventCounter) and meter counters are counters, made
 * cumulative here (Prometheus counters only grow: rate() does the rest).
 * A histogram is a summary: its last interval's percentiles (quantile
 * label), and the count and sum of every measurement since the agent
 * attached (_count, _sum). Instruments named by OpenTelemetry's
 * conventions ("dotnet.gc.collections") keep their own name
 * (dotnet_gc_collections_total), others get their meter's in front.
 * Each target keeps at most SERIES_MAX series; more are counted, not kept.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"
#include "common/buf.h"
#include "common/log.h"
#include "rtdiag/counters.h"

#define SERIES_MAX 512
#define SERIES_NAME_MAX 200

enum series_type { S_GAUGE, S_COUNTER, S_SUMMARY };

struct series {
	char *family;  /* dotnet_system_runtime_cpu_usage[_total] */
	const char *suffix; /* "", or "_sum" / "_count" of a summary */
	char *labels;  /* rendered tag labels: k="v",k2="v2" ("" none) */
	char *help;
	enum series_type type;
	double value;
};

/* Snake case of s appended to b: lower case, runs of other characters
 * become one '_'. */
static int snake(rtd_buf *b, const char *s)
{
	int rc = 0;
	bool us = b->len > 0 && b->data[b->len - 1] == '_';
	for (; *s && !rc && b->len < SERIES_NAME_MAX; s++) {
		unsigned char ch = (unsigned char)*s;
		if (isalnum(ch)) {
			rc = rtd_buf_putc(b, (char)tolower(ch));
			us = false;
		} else if (!us) {
			rc = rtd_buf_putc(b, '_');
			us = true;
		}
	}
	return rc;
}

static int family_name(rtd_buf *b, const struct rtd_counter_record *r,
		       bool counter)
{
	int rc = 0;
	if (strncmp(r->name, "dotnet.", 7)) {
		rc |= rtd_buf_puts(b, "dotnet_");
		rc |= snake(b, r->provider);
		if (b->len && b->data[b->len - 1] != '_')
			rc |= rtd_buf_putc(b, '_');
	}
	rc |= snake(b, r->name);
	while (b->len && b->data[b->len - 1] == '_')
		b->data[--b->len] = 0;
	if (counter && (b->len < 6 || strcmp((char *)b->data + b->len - 6,
					     "_total")))
		rc |= rtd_buf_puts(b, "_total");
	/* a gauge may not end as a histogram's, a summary's or a counter's
	 * series do (promtool's lint): "active-timer-count" */
	static const char *const taken[] = {"_count", "_sum", "_bucket",
					    "_total"};
	for (size_t i = 0; !counter && i < 4; i++) {
		size_t n = strlen(taken[i]);
		if (b->len > n && !strcmp((char *)b->data + b->len - n, taken[i])) {
			rc |= rtd_buf_puts(b, "_value");
			break;
		}
	}
	return rc;
}

/* "k=v,k2=v2" as labels; a key the target's own labels use gets "tag_". */
static int tag_labels(rtd_buf *b, const char *tags, const char *quantile)
{
	int rc = 0;
	bool first = true;
	for (const char *p = tags; p && *p && !rc;) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(end - p));
		if (eq && eq > p) {
			char key[128];
			size_t kl = (size_t)(eq - p);
			if (kl >= sizeof(key))
				kl = sizeof(key) - 1;
			memcpy(key, p, kl);
			key[kl] = 0;
			rtd_buf k;
			rtd_buf_init(&k, 160);
			if (!strcmp(key, "service") || !strcmp(key, "pid") ||
			    !strcmp(key, "container") || !strcmp(key, "pod") ||
			    !strcmp(key, "quantile"))
				rtd_buf_puts(&k, "tag_");
			if (isdigit((unsigned char)key[0]))
				rtd_buf_putc(&k, '_');
			snake(&k, key);
			rc |= rtd_buf_printf(b, "%s%s=\"", first ? "" : ",",
					     rtd_buf_cstr(&k));
			rtd_buf_free(&k);
			char val[512];
			size_t vl = (size_t)(end - eq - 1);
			if (vl >= sizeof(val))
				vl = sizeof(val) - 1;
			memcpy(val, eq + 1, vl);
			val[vl] = 0;
			rc |= prom_escape(b, val);
			rc |= rtd_buf_putc(b, '"');
			first = false;
		}
		p = comma ? comma + 1 : NULL;
	}
	if (quantile)
		rc |= rtd_buf_printf(b, "%squantile=\"%s\"", first ? "" : ",",
				     quantile);
	return rc;
}

static struct series *find(struct target *t, const char *family,
			   const char *suffix, const char *labels)
{
	for (size_t i = 0; i < t->nseries; i++)
		if (!strcmp(t->series[i].family, family) &&
		    !strcmp(t->series[i].suffix, suffix) &&
		    !strcmp(t->series[i].labels, labels))
			return &t->series[i];
	return NULL;
}

/* Set (or add to) one series; caller holds a->lock. */
static void put(struct target *t, const char *family, const char *suffix,
		const char *labels, const struct rtd_counter_record *r,
		enum series_type type, double v, bool add)
{
	struct series *s = find(t, family, suffix, labels);
	if (!s) {
		if (t->nseries >= SERIES_MAX) {
			t->series_dropped++;
			return;
		}
		if (t->nseries == t->series_cap) {
			size_t nc = t->series_cap ? t->series_cap * 2 : 32;
			struct series *ns = realloc(t->series, nc * sizeof(*ns));
			if (!ns)
				return;
			t->series = ns;
			t->series_cap = nc;
		}
		s = &t->series[t->nseries];
		memset(s, 0, sizeof(*s));
		rtd_buf h;
		rtd_buf_init(&h, 1024);
		rtd_buf_printf(&h, "%s %s", r->provider,
			       r->display_name && r->display_name[0]
				       ? r->display_name
				       : r->name);
		if (r->unit && r->unit[0])
			rtd_buf_printf(&h, " (%s)", r->unit);
		s->family = strdup(family);
		s->labels = strdup(labels);
		s->help = strdup(rtd_buf_cstr(&h));
		rtd_buf_free(&h);
		if (!s->family || !s->labels || !s->help) {
			free(s->family);
			free(s->labels);
			free(s->help);
			return;
		}
		s->suffix = suffix;
		s->type = type;
		t->nseries++;
	}
	if (add)
		s->value += v;
	else
		s->value = v;
}

void series_record(struct agent *a, struct target *t,
		   const struct rtd_counter_record *r)
{
	bool counter = r->kind == RTD_COUNTER_SUM || r->kind == RTD_COUNTER_RATE;
	rtd_buf fam, lab;
	rtd_buf_init(&fam, 512);
	rtd_buf_init(&lab, 4096);
	if (family_name(&fam, r, counter))
		goto out;
	const char *f = rtd_buf_cstr(&fam);
	pthread_mutex_lock(&a->lock);
	if (r->kind == RTD_COUNTER_HISTOGRAM) {
		for (size_t i = 0; i < r->nquantiles && i < RTD_COUNTER_MAX_QUANTILES; i++) {
			char q[32];
			snprintf(q, sizeof(q), "%g", r->quantile[i]);
			rtd_buf_reset(&lab);
			if (!tag_labels(&lab, r->tags, q))
				put(t, f, "", rtd_buf_cstr(&lab), r, S_SUMMARY,
				    r->qvalue[i], false);
		}
		rtd_buf_reset(&lab);
		if (!tag_labels(&lab, r->tags, NULL)) {
			put(t, f, "_sum", rtd_buf_cstr(&lab), r, S_SUMMARY,
			    r->sum, true);
			put(t, f, "_count", rtd_buf_cstr(&lab), r, S_SUMMARY,
			    r->count, true);
		}
	} else if (!tag_labels(&lab, r->tags, NULL)) {
		if (r->kind == RTD_COUNTER_RATE && r->total > 0)
			put(t, f, "", rtd_buf_cstr(&lab), r, S_COUNTER, r->total,
			    false);
		else
			put(t, f, "", rtd_buf_cstr(&lab), r,
			    counter ? S_COUNTER : S_GAUGE, r->value, counter);
	}
	pthread_mutex_unlock(&a->lock);
out:
	rtd_buf_free(&fam);
	rtd_buf_free(&lab);
}

void series_free(struct target *t)
{
	for (size_t i = 0; i < t->nseries; i++) {
		free(t->series[i].family);
		free(t->series[i].labels);
		free(t->series[i].help);
	}
	free(t->series);
	t->series = NULL;
	t->nseries = t->series_cap = 0;
}

struct row {
	const struct target *t;
	const struct series *s;
};

static int cmp_row(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	int c = strcmp(a->s->family, b->s->family);
	if (c)
		return c;
	c = strcmp(a->s->suffix, b->s->suffix);
	if (c)
		return c;
	return a->t->id < b->t->id ? -1 : a->t->id > b->t->id;
}

/* One family per name (HELP and TYPE once), every target's series under
 * it; caller holds a->lock. label_fn writes a target's own labels,
 * without braces. */
int series_write(struct agent *a, rtd_buf *b,
		 int (*label_fn)(struct agent *, const struct target *,
				 rtd_buf *))
{
	size_t n = 0;
	for (const struct target *t = a->targets; t; t = t->next)
		n += t->nseries;
	if (!n)
		return 0;
	struct row *rows = malloc(n * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	size_t k = 0;
	for (const struct target *t = a->targets; t; t = t->next)
		for (size_t i = 0; i < t->nseries; i++)
			rows[k++] = (struct row){t, &t->series[i]};
	qsort(rows, n, sizeof(*rows), cmp_row);
	int rc = 0;
	static const char *const type_names[] = {"gauge", "counter", "summary"};
	const char *cur = NULL;
	enum series_type cur_type = S_GAUGE;
	for (size_t i = 0; i < n && !rc; i++) {
		const struct series *s = rows[i].s;
		if (!cur || strcmp(cur, s->family)) {
			cur = s->family;
			cur_type = s->type;
			rc |= rtd_buf_printf(b, "# HELP %s ", s->family);
			/* HELP escapes only backslash and newline */
			for (const char *h = s->help; *h; h++)
				rc |= *h == '\\'  ? rtd_buf_puts(b, "\\\\")
				      : *h == '\n' ? rtd_buf_puts(b, "\\n")
						   : rtd_buf_putc(b, *h);
			rc |= rtd_buf_printf(b, "\n# TYPE %s %s\n", s->family,
					     type_names[s->type]);
		}
		if (s->type != cur_type)
			continue; /* one type per family: the first one's */
		rc |= rtd_buf_printf(b, "%s%s{", s->family, s->suffix);
		rc |= label_fn(a, rows[i].t, b);
		if (s->labels[0])
			rc |= rtd_buf_printf(b, ",%s", s->labels);
		rc |= rtd_buf_printf(b, "} %.15g\n", s->value);
	}
	free(rows);
	return rc ? -ENOMEM : 0;
}
