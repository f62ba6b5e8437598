/* SPDX-License-Identifier: MIT */
/* The OTLP profiles writer (opentelemetry-proto v1.11.0, profiles
 * v1development). The output is read back here by a small protobuf reader
 * of the test's own, following the field numbers of the .proto files (not
 * the writer's tables): every stack is resolved through the dictionary
 * into function names and compared with what was added. The agent's
 * integration test (test_otlp.sh) has protoc decode real uploads too. */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "rtdiag/profile.h"

/* ---- a protobuf reader for the test --------------------------------------- */

struct msg {
	const uint8_t *p;
	size_t n;
};

struct fld {
	unsigned num, wt;
	uint64_t v;      /* varint, fixed64 */
	struct msg b;    /* length-delimited */
};

static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64 && *p < end; s += 7) {
		uint8_t c = *(*p)++;
		*v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/* The next field of m at *off; false at the end. Fails the test on a
 * malformed message. */
static bool next_field(struct msg m, size_t *off, struct fld *f)
{
	const uint8_t *p = m.p + *off, *end = m.p + m.n;
	if (p >= end)
		return false;
	uint64_t key;
	assert_true(varint(&p, end, &key));
	f->num = (unsigned)(key >> 3);
	f->wt = (unsigned)(key & 7);
	assert_true(f->num > 0);
	switch (f->wt) {
	case 0:
		assert_true(varint(&p, end, &f->v));
		break;
	case 1:
		assert_true(end - p >= 8);
		f->v = 0;
		for (int i = 0; i < 8; i++)
			f->v |= (uint64_t)p[i] << (8 * i);
		p += 8;
		break;
	case 2: {
		uint64_t n;
		assert_true(varint(&p, end, &n));
		assert_true(n <= (uint64_t)(end - p));
		f->b.p = p;
		f->b.n = (size_t)n;
		p += n;
		break;
	}
	default:
		fail_msg("wire type %u", f->wt);
	}
	*off = (size_t)(p - m.p);
	return true;
}

static size_t count(struct msg m, unsigned num)
{
	size_t off = 0, n = 0;
	struct fld f;
	while (next_field(m, &off, &f))
		n += f.num == num;
	return n;
}

/* The idx-th occurrence of field num (a zero field when absent). */
static struct fld get(struct msg m, unsigned num, size_t idx)
{
	size_t off = 0;
	struct fld f;
	while (next_field(m, &off, &f))
		if (f.num == num && idx-- == 0)
			return f;
	struct fld z = {num, 0, 0, {NULL, 0}};
	return z;
}

static uint64_t uintf(struct msg m, unsigned num)
{
	return get(m, num, 0).v;
}

static struct msg sub(struct msg m, unsigned num, size_t idx)
{
	struct fld f = get(m, num, idx);
	return f.b;
}

/* A packed repeated varint field into out (max n); returns the count. */
static size_t packed(struct msg m, unsigned num, uint64_t *out, size_t max)
{
	struct msg b = sub(m, num, 0);
	const uint8_t *p = b.p, *end = b.p + b.n;
	size_t k = 0;
	while (p && p < end) {
		assert_true(k < max);
		assert_true(varint(&p, end, &out[k++]));
	}
	return k;
}

/* ---- the dictionary -------------------------------------------------------- */

struct dict {
	struct msg d;
};

static char *dstr(struct dict *d, uint64_t i)
{
	struct msg s = sub(d->d, 5, (size_t)i);
	assert_true(i < count(d->d, 5));
	char *t = malloc(s.n + 1);
	memcpy(t, s.p, s.n);
	t[s.n] = 0;
	return t;
}

/* "name@line" of each line of location i, root-most last, joined by ";"
 * toward the root, appended to out. */
static void location_text(struct dict *d, uint64_t i, char *out, size_t len)
{
	assert_true(i > 0 && i < count(d->d, 2));
	struct msg loc = sub(d->d, 2, (size_t)i);
	size_t nl = count(loc, 3);
	for (size_t l = 0; l < nl; l++) {
		struct msg line = sub(loc, 3, l);
		uint64_t fi = uintf(line, 1);
		assert_true(fi > 0 && fi < count(d->d, 3));
		struct msg fn = sub(d->d, 3, (size_t)fi);
		char *name = dstr(d, uintf(fn, 1));
		if (*out)
			strncat(out, ";", len - strlen(out) - 1);
		strncat(out, name, len - strlen(out) - 1);
		free(name);
	}
}

/* The stack of a sample as "leaf;...;root". */
static void stack_text(struct dict *d, uint64_t si, char *out, size_t len)
{
	out[0] = 0;
	assert_true(si > 0 && si < count(d->d, 7));
	uint64_t locs[64];
	size_t n = packed(sub(d->d, 7, (size_t)si), 1, locs, 64);
	for (size_t i = 0; i < n; i++)
		location_text(d, locs[i], out, len);
}

/* ---- the profile under test ------------------------------------------------- */

static rtd_profile *two_type_profile(void)
{
	struct rtd_profile_type types[2] = {{"alloc_objects", "count"},
					    {"alloc_space", "bytes"}};
	struct rtd_profile_opts o = {.sz = sizeof(o), .types = types,
				     .ntypes = 2};
	rtd_profile *p = rtd_profile_new2(&o);
	assert_non_null(p);
	int m = rtd_profile_add_mapping(p, 0x400000, 0x500000, 0x1000,
					"/usr/bin/app", "abcdef01");
	assert_true(m > 0);
	/* leaf first: inl was inlined into work */
	struct rtd_frame f1[] = {
		{.name = "inl", .addr = 0x401010, .mapping = (uint32_t)m,
		 .kind = RTD_FRAME_NATIVE, .inlined = true, .line = 7},
		{.name = "work", .addr = 0x401010, .mapping = (uint32_t)m,
		 .kind = RTD_FRAME_NATIVE, .line = 20},
		{.name = "main", .addr = 0x400500, .mapping = (uint32_t)m,
		 .kind = RTD_FRAME_NATIVE},
	};
	int64_t v1[2] = {3, 3000};
	struct rtd_label lb = {.key = "span", .str = "s1"};
	struct rtd_sample s = {.sz = sizeof(s), .frames = f1, .nframes = 3,
			       .leaf_first = true, .values = v1, .nvalues = 2,
			       .pid = 42, .tid = 43, .thread = "worker",
			       .labels = &lb, .nlabels = 1};
	assert_int_equal(rtd_profile_add_sample(p, &s), 0);
	struct rtd_frame f2[] = {
		{.name = "Alloc", .module = "App.dll", .kind = RTD_FRAME_MANAGED},
		{.name = "main", .addr = 0x400500, .mapping = (uint32_t)m,
		 .kind = RTD_FRAME_NATIVE},
	};
	int64_t v2[2] = {0, 512}; /* a zero value: no sample of that type */
	struct rtd_sample s2 = {.sz = sizeof(s2), .frames = f2, .nframes = 2,
				.leaf_first = true, .values = v2, .nvalues = 2,
				.pid = 42, .tid = 44};
	assert_int_equal(rtd_profile_add_sample(p, &s2), 0);
	struct rtd_profile_meta meta = {.sz = sizeof(meta), .pid = 42,
					.time_nanos = 1700000000123456789,
					.duration_nanos = 15000000000};
	assert_int_equal(rtd_profile_set_meta(p, &meta), 0);
	return p;
}

static uint8_t *encode(const struct rtd_otlp_resource *r, size_t nr,
		       size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	assert_non_null(f);
	struct rtd_otlp_opts o = {.sz = sizeof(o), .scope_name = "test",
				  .scope_version = "9"};
	assert_int_equal(rtd_profile_write_otlp(r, nr, &o, f), 0);
	fclose(f);
	return (uint8_t *)buf;
}

static bool attr_is(struct dict *d, uint64_t ai, const char *key,
		    const char *str, int64_t num)
{
	struct msg kv = sub(d->d, 6, (size_t)ai);
	char *k = dstr(d, uintf(kv, 1));
	bool ok = !strcmp(k, key);
	free(k);
	struct msg v = sub(kv, 2, 0);
	if (str) {
		struct msg s = sub(v, 1, 0);
		ok = ok && s.n == strlen(str) && !memcmp(s.p, str, s.n);
	} else {
		ok = ok && count(v, 3) == 1 && (int64_t)uintf(v, 3) == num;
	}
	return ok;
}

static void dictionary_and_samples(void **state)
{
	(void)state;
	rtd_profile *p = two_type_profile();
	const rtd_profile *ps[] = {p};
	struct rtd_otlp_attr ra[] = {{"service.name", "checkout", 0},
				     {"process.pid", NULL, 42}};
	struct rtd_otlp_resource r = {ra, 2, ps, 1};
	size_t len;
	uint8_t *buf = encode(&r, 1, &len);
	struct msg data = {buf, len};
	assert_int_equal(count(data, 1), 1);
	assert_int_equal(count(data, 2), 1);
	struct dict d = {sub(data, 2, 0)};

	/* index 0 of every table is its zero value */
	for (unsigned t = 1; t <= 7; t++) {
		assert_true(count(d.d, t) >= 1);
		struct msg z = sub(d.d, t, 0);
		if (t == 4) { /* Link: 16 and 8 zero bytes */
			assert_int_equal(sub(z, 1, 0).n, 16);
			assert_int_equal(sub(z, 2, 0).n, 8);
		} else {
			assert_int_equal(z.n, 0);
		}
	}
	/* no string twice */
	size_t ns = count(d.d, 5);
	for (size_t i = 0; i < ns; i++)
		for (size_t j = i + 1; j < ns; j++) {
			struct msg a = sub(d.d, 5, i), b = sub(d.d, 5, j);
			assert_false(a.n == b.n && !memcmp(a.p, b.p, a.n));
		}

	/* the resource */
	struct msg rp = sub(data, 1, 0);
	struct msg res = sub(rp, 1, 0);
	assert_int_equal(count(res, 1), 2);
	struct msg kv = sub(res, 1, 1);
	struct msg k = sub(kv, 1, 0);
	assert_int_equal(k.n, 11);
	assert_memory_equal(k.p, "process.pid", 11);
	assert_int_equal(uintf(sub(kv, 2, 0), 3), 42);
	struct msg sp = sub(rp, 2, 0);
	struct msg scope = sub(sp, 1, 0);
	assert_int_equal(sub(scope, 1, 0).n, 4);
	assert_memory_equal(sub(scope, 1, 0).p, "test", 4);

	/* one Profile per sample type */
	assert_int_equal(count(sp, 2), 2);
	static const char *const want_type[2] = {"alloc_objects",
						 "alloc_space"};
	static const int64_t want_sum[2] = {3, 3512};
	for (size_t t = 0; t < 2; t++) {
		struct msg pr = sub(sp, 2, t);
		struct msg st = sub(pr, 1, 0);
		char *ty = dstr(&d, uintf(st, 1));
		assert_string_equal(ty, want_type[t]);
		free(ty);
		assert_int_equal(uintf(pr, 3), 1700000000123456789ull);
		assert_int_equal(get(pr, 3, 0).wt, 1); /* fixed64 */
		assert_int_equal(uintf(pr, 4), 15000000000ull);
		size_t nsm = count(pr, 2);
		assert_int_equal(nsm, t == 0 ? 1 : 2);
		int64_t sum = 0;
		bool saw_inl = false, saw_alloc = false;
		for (size_t i = 0; i < nsm; i++) {
			struct msg s = sub(pr, 2, i);
			uint64_t vals[4];
			assert_int_equal(packed(s, 4, vals, 4), 1);
			sum += (int64_t)vals[0];
			char text[512];
			stack_text(&d, uintf(s, 1), text, sizeof(text));
			uint64_t at[8];
			size_t na = packed(s, 2, at, 8);
			bool tid = false, name = false, span = false;
			for (size_t a = 0; a < na; a++) {
				tid = tid || attr_is(&d, at[a], "thread.id", NULL,
						     strstr(text, "inl") ? 43
									 : 44);
				name = name || attr_is(&d, at[a], "thread.name",
						       "worker", 0);
				span = span ||
				       attr_is(&d, at[a], "span", "s1", 0);
			}
			assert_true(tid);
			if (!strcmp(text, "inl;work;main")) {
				/* the inlined frame and its caller: one
				 * location, two lines */
				saw_inl = true;
				assert_true(name && span);
				uint64_t locs[8];
				assert_int_equal(
					packed(sub(d.d, 7, (size_t)uintf(s, 1)),
					       1, locs, 8),
					2);
				struct msg loc = sub(d.d, 2, (size_t)locs[0]);
				assert_int_equal(count(loc, 3), 2);
				assert_int_equal(uintf(loc, 2), 0x401010);
				assert_int_equal(uintf(sub(loc, 3, 0), 2), 7);
				/* its mapping, with the build id */
				struct msg mp =
					sub(d.d, 1, (size_t)uintf(loc, 1));
				assert_int_equal(uintf(mp, 1), 0x400000);
				assert_int_equal(uintf(mp, 2), 0x500000);
				char *file = dstr(&d, uintf(mp, 4));
				assert_string_equal(file, "/usr/bin/app");
				free(file);
				uint64_t ma[2];
				assert_int_equal(packed(mp, 5, ma, 2), 1);
				assert_true(attr_is(&d, ma[0],
						    "process.executable.build_id.gnu",
						    "abcdef01", 0));
				uint64_t la[2];
				assert_int_equal(packed(loc, 4, la, 2), 1);
				assert_true(attr_is(&d, la[0], "profile.frame.type",
						    "native", 0));
			} else {
				assert_string_equal(text, "Alloc;main");
				saw_alloc = true;
				assert_false(name);
			}
		}
		assert_true(saw_inl);
		assert_true(saw_alloc == (t == 1));
		assert_int_equal(sum, want_sum[t]);
	}
	free(buf);
	rtd_profile_free(p);
}

/* Two resources share one dictionary: the second's stacks and strings
 * are the first's, not written again. */
static void shared_dictionary(void **state)
{
	(void)state;
	rtd_profile *a = two_type_profile(), *b = two_type_profile();
	const rtd_profile *pa[] = {a}, *pb[] = {b};
	struct rtd_otlp_attr ra[] = {{"service.name", "a", 0}};
	struct rtd_otlp_attr rb[] = {{"service.name", "b", 0}};
	struct rtd_otlp_resource one = {ra, 1, pa, 1};
	struct rtd_otlp_resource two[2] = {{ra, 1, pa, 1}, {rb, 1, pb, 1}};
	size_t l1, l2;
	uint8_t *b1 = encode(&one, 1, &l1), *b2 = encode(two, 2, &l2);
	struct msg d1 = sub((struct msg){b1, l1}, 2, 0);
	struct msg d2 = sub((struct msg){b2, l2}, 2, 0);
	for (unsigned t = 1; t <= 7; t++)
		assert_int_equal(count(d1, t), count(d2, t));
	assert_int_equal(count((struct msg){b2, l2}, 1), 2);
	free(b1);
	free(b2);
	rtd_profile_free(a);
	rtd_profile_free(b);
}

static void empty_and_invalid(void **state)
{
	(void)state;
	size_t len;
	uint8_t *buf = encode(NULL, 0, &len);
	struct msg data = {buf, len};
	assert_int_equal(count(data, 1), 0);
	struct msg d = sub(data, 2, 0);
	assert_int_equal(count(d, 5), 1); /* "" alone */
	free(buf);
	FILE *f = fopen("/dev/null", "w");
	assert_non_null(f);
	assert_int_equal(rtd_profile_write_otlp(NULL, 1, NULL, f), -RTD_E_INVAL);
	struct rtd_otlp_opts o = {.sz = 1};
	assert_int_equal(rtd_profile_write_otlp(NULL, 0, &o, f), -RTD_E_INVAL);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dictionary_and_samples),
		cmocka_unit_test(shared_dictionary),
		cmocka_unit_test(empty_and_invalid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
