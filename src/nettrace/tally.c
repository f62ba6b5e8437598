/* SPDX-License-Identifier: MIT */
/*
 * tally.c - events and payload bytes per event type and per provider
 * (rtdiag/nettrace_tally.h), what `rtdiag nettrace stats` prints. Was the
 * CLI's, over a map of its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "rtdiag/nettrace_tally.h"

struct rtd_nettrace_tally {
	rtd_strmap types;     /* "Provider/Name" -> struct rtd_nettrace_tally_entry */
	rtd_strmap providers; /* provider -> struct rtd_nettrace_tally_entry */
	struct rtd_nettrace_tally_entry *out; /* the last list given */
	char key[RTD_NETTRACE_TALLY_NAME_MAX + 1];
};

int rtd_nettrace_tally_new(rtd_nettrace_tally **out)
{
	if (!out)
		return -RTD_E_INVAL;
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	rtd_strmap_init(&(*out)->types, RTD_NETTRACE_TALLY_MAX_TYPES);
	/* a provider comes with a type: no more providers than types */
	rtd_strmap_init(&(*out)->providers, RTD_NETTRACE_TALLY_MAX_TYPES);
	return 0;
}

static void free_entries(rtd_strmap *m)
{
	size_t b = 0;
	rtd_strmap_entry *e = NULL;
	while ((e = rtd_strmap_next(m, &b, e)))
		free(e->val);
	rtd_strmap_free(m);
}

void rtd_nettrace_tally_free(rtd_nettrace_tally *t)
{
	if (!t)
		return;
	free_entries(&t->types);
	free_entries(&t->providers);
	free(t->out);
	free(t);
}

/* The entry of @key in @m, made at zero when new; NULL with *err set. */
static struct rtd_nettrace_tally_entry *entry_for(rtd_strmap *m, const char *key, int *err)
{
	rtd_strmap_entry *f = rtd_strmap_find(m, key, strlen(key));
	if (f)
		return f->val;
	struct rtd_nettrace_tally_entry *c = calloc(1, sizeof(*c));
	if (!c) {
		*err = -ENOMEM;
		return NULL;
	}
	int e = rtd_strmap_put(m, key, strlen(key), c);
	if (e) {
		free(c);
		*err = e;
		return NULL;
	}
	/* the name is the map's copy of the key, stable while it is there */
	c->name = rtd_strmap_find(m, key, strlen(key))->key;
	return c;
}

int rtd_nettrace_tally_metadata(rtd_nettrace_tally *t, struct rtd_nettrace_metadata *m)
{
	if (!t || !m)
		return -RTD_E_INVAL;
	snprintf(t->key, sizeof(t->key), "%s/%s", m->provider, m->name);
	int err = 0;
	struct rtd_nettrace_tally_entry *c = entry_for(&t->types, t->key, &err);
	if (!c)
		return err;
	m->user = c;
	return 0;
}

void rtd_nettrace_tally_event(rtd_nettrace_tally *t, const struct rtd_nettrace_event *ev)
{
	struct rtd_nettrace_tally_entry *c = ev && ev->meta ? ev->meta->user : NULL;
	(void)t;
	if (!c)
		return;
	c->events++;
	c->bytes += ev->payload_len;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct rtd_nettrace_tally_entry *x = a, *y = b;
	return strcmp(x->name, y->name);
}

/* @m's entries (with an event when @nonzero) as a sorted list in t->out. */
static int list(rtd_nettrace_tally *t, rtd_strmap *m, bool nonzero,
		const struct rtd_nettrace_tally_entry **out, size_t *n)
{
	free(t->out);
	t->out = calloc(m->count ? m->count : 1, sizeof(*t->out));
	*out = t->out;
	*n = 0;
	if (!t->out)
		return -ENOMEM;
	size_t b = 0, i = 0;
	rtd_strmap_entry *e = NULL;
	while ((e = rtd_strmap_next(m, &b, e))) {
		const struct rtd_nettrace_tally_entry *c = e->val;
		if (!nonzero || c->events)
			t->out[i++] = *c;
	}
	qsort(t->out, i, sizeof(*t->out), cmp_entry);
	*n = i;
	return 0;
}

int rtd_nettrace_tally_types(rtd_nettrace_tally *t, const struct rtd_nettrace_tally_entry **out,
			     size_t *n)
{
	if (!t || !out || !n)
		return -RTD_E_INVAL;
	return list(t, &t->types, true, out, n);
}

int rtd_nettrace_tally_providers(rtd_nettrace_tally *t,
				 const struct rtd_nettrace_tally_entry **out, size_t *n)
{
	if (!t || !out || !n)
		return -RTD_E_INVAL;
	size_t b = 0;
	rtd_strmap_entry *e = NULL;
	while ((e = rtd_strmap_next(&t->providers, &b, e))) {
		struct rtd_nettrace_tally_entry *p = e->val;
		p->events = p->bytes = 0;
	}
	int err = 0;
	b = 0;
	e = NULL;
	while ((e = rtd_strmap_next(&t->types, &b, e))) {
		const struct rtd_nettrace_tally_entry *c = e->val;
		/* the provider is the name up to its first '/': event names
		 * may hold '/', provider names do not */
		const char *slash = strchr(e->key, '/');
		size_t plen = slash ? (size_t)(slash - e->key) : e->klen;
		char pk[RTD_NETTRACE_TALLY_PROVIDER_MAX + 1];
		snprintf(pk, sizeof(pk), "%.*s", (int)plen, e->key);
		struct rtd_nettrace_tally_entry *p = entry_for(&t->providers, pk, &err);
		if (!p)
			break;
		p->events += c->events;
		p->bytes += c->bytes;
	}
	int lr = list(t, &t->providers, false, out, n);
	return err ? err : lr;
}
