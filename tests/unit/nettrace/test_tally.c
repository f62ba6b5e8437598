/* SPDX-License-Identifier: MIT */
/*
 * test_tally - rtd_nettrace_tally (what `rtdiag nettrace stats` prints)
 * over every shared vector, against a plain count of the same decoder's
 * events kept beside it: each type's events and payload bytes, the types
 * with no event left out, each provider's sums, both lists in byte order;
 * and the tally's count of events is the decoder's.
 */
#include "test_util.h"

#include <stdio.h>

#include "nt_test.h"
#include "rtdiag/nettrace_tally.h"

/* The plain count: one slot per distinct "Provider/Name", found by a
 * linear search (the vectors have at most a few hundred types). */
#define MAXT 4096
struct plain {
	rtd_nettrace_tally *t;
	char *name[MAXT];
	uint64_t events[MAXT], bytes[MAXT];
	size_t n;
	uint64_t total;
};

static size_t slot_of(struct plain *p, const char *provider, const char *name)
{
	char k[2048];
	snprintf(k, sizeof(k), "%s/%s", provider, name);
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->name[i], k))
			return i;
	assert_true(p->n < MAXT);
	p->name[p->n] = strdup(k);
	assert_non_null(p->name[p->n]);
	return p->n++;
}

static int on_meta(void *ctx, struct rtd_nettrace_metadata *m)
{
	struct plain *p = ctx;
	slot_of(p, m->provider, m->name);
	int rc = rtd_nettrace_tally_metadata(p->t, m);
	assert_non_null(m->user);
	return rc;
}

static int on_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct plain *p = ctx;
	size_t i = slot_of(p, ev->meta->provider, ev->meta->name);
	p->events[i]++;
	p->bytes[i] += ev->payload_len;
	p->total++;
	rtd_nettrace_tally_event(p->t, ev);
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_types(struct plain *p)
{
	const struct rtd_nettrace_tally_entry *e;
	size_t n;
	assert_int_equal(rtd_nettrace_tally_types(p->t, &e, &n), 0);
	size_t want = 0;
	uint64_t sum = 0;
	for (size_t i = 0; i < p->n; i++)
		want += p->events[i] > 0;
	assert_int_equal(n, want);
	for (size_t i = 0; i < n; i++) {
		if (i)
			assert_true(strcmp(e[i - 1].name, e[i].name) < 0);
		size_t k = 0;
		while (k < p->n && strcmp(p->name[k], e[i].name))
			k++;
		assert_true(k < p->n);
		assert_int_equal(e[i].events, p->events[k]);
		assert_int_equal(e[i].bytes, p->bytes[k]);
		assert_true(e[i].events > 0);
		sum += e[i].events;
	}
	assert_int_equal(sum, p->total);
}

static void check_providers(struct plain *p)
{
	/* the providers, each once, sorted: names up to their first '/' */
	char *prov[MAXT];
	size_t np = 0;
	for (size_t i = 0; i < p->n; i++) {
		size_t l = strcspn(p->name[i], "/");
		char *x = strndup(p->name[i], l);
		assert_non_null(x);
		size_t k = 0;
		while (k < np && strcmp(prov[k], x))
			k++;
		if (k < np)
			free(x);
		else
			prov[np++] = x;
	}
	qsort(prov, np, sizeof(*prov), cmp_name);
	const struct rtd_nettrace_tally_entry *e;
	size_t n;
	assert_int_equal(rtd_nettrace_tally_providers(p->t, &e, &n), 0);
	assert_int_equal(n, np);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(e[i].name, prov[i]);
		uint64_t ev = 0, by = 0;
		size_t l = strlen(prov[i]);
		for (size_t k = 0; k < p->n; k++)
			if (!strncmp(p->name[k], prov[i], l) && p->name[k][l] == '/') {
				ev += p->events[k];
				by += p->bytes[k];
			}
		assert_int_equal(e[i].events, ev);
		assert_int_equal(e[i].bytes, by);
		free(prov[i]);
	}
	/* asked again: the same sums, not twice them */
	const struct rtd_nettrace_tally_entry *e2;
	size_t n2;
	assert_int_equal(rtd_nettrace_tally_providers(p->t, &e2, &n2), 0);
	assert_int_equal(n2, n);
	uint64_t a = 0;
	for (size_t i = 0; i < n2; i++)
		a += e2[i].events;
	assert_int_equal(a, p->total);
}

static void test_vectors(void **state)
{
	(void)state;
	size_t done = 0;
	for (size_t v = 0; nt_vectors[v]; v++) {
		size_t len;
		uint8_t *buf = nt_vector_read(nt_vectors[v], &len);
		if (!buf)
			continue;
		struct plain *p = calloc(1, sizeof(*p));
		assert_non_null(p);
		assert_int_equal(rtd_nettrace_tally_new(&p->t), 0);
		struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = p, .on_event = on_event,
					      .on_metadata = on_meta};
		rtd_nettrace *dec = rtd_nettrace_new(&o);
		assert_non_null(dec);
		int rc = rtd_nettrace_feed(dec, buf, len);
		assert_true(rc >= 0);
		assert_int_equal(rtd_nettrace_finish(dec), 0);
		struct rtd_nettrace_stats st;
		rtd_nettrace_stats(dec, &st);
		assert_int_equal(st.events, p->total);
		assert_true(p->total > 0);
		check_types(p);
		check_providers(p);
		printf("%s: %zu types, %llu events\n", nt_vectors[v], p->n,
		       (unsigned long long)p->total);
		rtd_nettrace_free(dec);
		rtd_nettrace_tally_free(p->t);
		for (size_t i = 0; i < p->n; i++)
			free(p->name[i]);
		free(p);
		free(buf);
		done++;
	}
	if (!done)
		skip();
}

static void test_args(void **state)
{
	(void)state;
	assert_int_equal(rtd_nettrace_tally_new(NULL), -RTD_E_INVAL);
	rtd_nettrace_tally_free(NULL);
	rtd_nettrace_tally *t;
	assert_int_equal(rtd_nettrace_tally_new(&t), 0);
	const struct rtd_nettrace_tally_entry *e;
	size_t n = 99;
	assert_int_equal(rtd_nettrace_tally_types(t, &e, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(rtd_nettrace_tally_providers(t, &e, &n), 0);
	assert_int_equal(n, 0);
	rtd_nettrace_tally_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
