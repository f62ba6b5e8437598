/* SPDX-License-Identifier: MIT */
/*
 * test_flat - a nettrace source's record fields read straight
 * (nt_read_flat(): the types whose fields are all numbers, floats or
 * strings) equal what rtd_nettrace_walk() gives: over every shared
 * vector, each SAMPLE and INSTANT record, in stream order, carries the
 * top-level scalars a walk of its event gives (top_fields: up to the
 * first that cannot be read), by name, type and value; with a
 * rtd_nettrace_source_opts.field_want keeping the even-numbered fields
 * of the first five, exactly those. Strings come from the source's cache
 * of converted strings (nt_str_cache) after their first time. With the
 * straight reader reading an F64 as an F32, or a skipped pointer as 4
 * bytes, this fails at the first event of such a type; with the cache
 * giving its first string at every hit, at a rundown's MethodNamespace;
 * the old source refuses field_want.
 */
#include "test_util.h"

#include <stdio.h>

#include "nt_test.h"
#include "rtdiag/nettrace_source.h"

struct rf {
	char *name;
	unsigned type;
	int64_t i;
	uint64_t u;
	double f;
	char *s;
};

struct ref {
	rtd_nettrace *dec;
	struct rf *f;      /* every event's fields, one after another */
	size_t nf, fcap;
	size_t *first;     /* event k's fields start at first[k] */
	size_t nev, evcap;
	size_t upto;       /* fields past this are not kept (the source's opts.fields) */
	bool even;         /* only the even-numbered (field_want) */
	size_t at;         /* the current event's top-level field index */
	const struct rtd_nettrace_metadata *meta;
};

/* A record field's type for a decoder value, as rtdiag/nettrace_source.h
 * says: @i, @u and @f as the decoder read them, @s its text */
static unsigned ftype(const struct rtd_nettrace_value *v)
{
	if (v->str)
		return RTD_FIELD_STR;
	switch (v->type) {
	case RTD_NT_T_I8: case RTD_NT_T_I16: case RTD_NT_T_I32: case RTD_NT_T_I64:
	case RTD_NT_T_VARINT:
		return RTD_FIELD_I64;
	case RTD_NT_T_F32: case RTD_NT_T_F64:
		return RTD_FIELD_F64;
	default:
		return RTD_FIELD_U64;
	}
}

static int ref_value(void *ctx, const struct rtd_nettrace_value *v)
{
	struct ref *r = ctx;
	if (v->depth != 0 || v->kind == RTD_NT_V_TRAILING)
		return 0;
	size_t at = (size_t)(v->field - r->meta->fields);
	if (at >= r->upto)
		return 1;
	if (v->kind != RTD_NT_V_SCALAR || !v->name || (r->even && at % 2))
		return 0;
	if (r->nf == r->fcap) {
		r->fcap = r->fcap ? 2 * r->fcap : 4096;
		r->f = realloc(r->f, r->fcap * sizeof(*r->f));
		assert_non_null(r->f);
	}
	r->f[r->nf++] = (struct rf){.name = strdup(v->name), .type = ftype(v), .i = v->i,
				    .u = v->u, .f = v->f, .s = v->str ? strdup(v->str) : NULL};
	return 0;
}

static int ref_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct ref *r = ctx;
	if (r->nev + 1 >= r->evcap) {
		r->evcap = r->evcap ? 2 * r->evcap : 4096;
		r->first = realloc(r->first, r->evcap * sizeof(*r->first));
		assert_non_null(r->first);
	}
	r->first[r->nev++] = r->nf;
	r->meta = ev->meta;
	(void)rtd_nettrace_walk(r->dec, ev, ref_value, r); /* what came before an error */
	r->first[r->nev] = r->nf;
	return 0;
}

static bool want_even(void *ctx, const struct rtd_nettrace_metadata *m, size_t i)
{
	(void)ctx;
	(void)m;
	return i % 2 == 0;
}

static size_t first_five(void *ctx, const struct rtd_nettrace_metadata *m)
{
	(void)ctx;
	(void)m;
	return 5;
}

static void check_vector(const uint8_t *b, size_t len, const char *rel, bool even)
{
	struct ref r = {.upto = even ? 5 : SIZE_MAX, .even = even};
	RTD_OPTS(rtd_nettrace_opts, o, .ctx = &r, .on_event = ref_event);
	r.dec = rtd_nettrace_new(&o);
	assert_non_null(r.dec);
	(void)rtd_nettrace_feed(r.dec, b, len);
	(void)rtd_nettrace_finish(r.dec);

	RTD_OPTS(rtd_nettrace_source_opts, so, .stream_order = true, .top_fields = true,
		 .no_prepass = true, .fields = even ? first_five : NULL,
		 .field_want = even ? want_even : NULL);
	int err = 0;
	rtd_source *s = rtd_nettrace_source_mem(b, len, &so, &err);
	if (!s)
		fail_msg("%s: no source: %s", rel, rtd_strerror(err));
	const struct rtd_record *rec;
	size_t k = 0, fields = 0;
	while (rtd_source_next(s, &rec) == 1) {
		if (rec->kind != RTD_REC_SAMPLE && rec->kind != RTD_REC_INSTANT)
			continue;
		if (k >= r.nev)
			fail_msg("%s: more records than events", rel);
		size_t n = r.first[k + 1] - r.first[k];
		if (rec->nfields != n)
			fail_msg("%s: record %zu (%s): %zu fields, the walk %zu", rel, k,
				 rec->name, rec->nfields, n);
		for (size_t j = 0; j < n; j++) {
			const struct rf *w = &r.f[r.first[k] + j];
			const struct rtd_field *g = &rec->fields[j];
			if (strcmp(g->name, w->name) || g->type != w->type || g->i != w->i ||
			    g->u != w->u || memcmp(&g->f, &w->f, sizeof(g->f)) ||
			    (w->s ? !g->s || strcmp(g->s, w->s) : g->s != NULL))
				fail_msg("%s: record %zu (%s) field %zu (%s) differs", rel, k,
					 rec->name, j, w->name);
		}
		fields += n;
		k++;
	}
	assert_int_equal(k, r.nev);
	printf("# %s%s: %zu events, %zu fields alike\n", rel, even ? " (even of 5)" : "", k,
	       fields);
	rtd_source_free(s);
	for (size_t j = 0; j < r.nf; j++) {
		free(r.f[j].name);
		free(r.f[j].s);
	}
	free(r.f);
	free(r.first);
	rtd_nettrace_free(r.dec);
}

static void test_flat(void **state)
{
	(void)state;
	int seen = 0;
	for (const char *const *v = nt_vectors; *v; v++) {
		size_t len = 0;
		uint8_t *b = nt_vector_read(*v, &len);
		if (!b)
			continue;
		seen++;
		check_vector(b, len, *v, false);
		check_vector(b, len, *v, true);
		free(b);
	}
	if (!seen)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flat),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
