/* SPDX-License-Identifier: MIT */
/*
 * test_gcdump - the .gcdump writer (rtd_gcheap_write_gcdump()) on a heap
 * built from hand-made heap-dump events (labelled: the runtime's own walk
 * and dotnet-gcdump report reading the file are
 * tests/integration/record/test_flight_gcdump.sh). The file is read back
 * here by the layout src/dotnet/gcdump.c documents (PerfView's
 * FastSerialization and MemoryGraph): signature, objects and their types,
 * every node's size and children, the roots, the addresses, the trailer.
 */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>

#include "rtdiag/gcheap.h"

#define PROVIDER "Microsoft-Windows-DotNETRuntime"

/* ---- events, as the runtime sends them (64-bit pointers) ---- */

struct pl {
	uint8_t b[512];
	size_t n;
};

static void put(struct pl *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p->b[p->n++] = (uint8_t)(v >> (8 * i));
}

static void put_name(struct pl *p, const char *s)
{
	for (; *s; s++)
		put(p, (uint8_t)*s, 2);
	put(p, 0, 2);
}

static void feed(rtd_gcheap *h, rtd_nettrace *dec, uint32_t id, const struct pl *p)
{
	struct rtd_nettrace_metadata m = {.provider = PROVIDER, .event_id = id};
	struct rtd_nettrace_event ev = {.meta = &m, .payload = p->b, .payload_len = p->n};
	assert_true(rtd_gcheap_event(h, dec, &ev) >= 0);
}

enum { GC_START = 1, GC_STOP = 2, BULK_TYPE = 15, BULK_ROOT_EDGE = 16, BULK_NODE = 18,
       BULK_EDGE = 19 };

/* Types 0xA "Foo" and 0xB "Bar" (0xC never named); objects:
 *   0x1000 Foo 24 B -> 0x2000, 0x9999 (no object: dropped), 0x3000
 *   0x2000 Bar 4000 B
 *   0x3000 Foo 32 B (another size than the first Foo) -> 0x1000
 *   0x4000 type 0xC, 16 B, unreachable
 * root: 0x1000. */
static rtd_gcheap *heap(void)
{
	rtd_gcheap *h = rtd_gcheap_new(NULL);
	struct rtd_nettrace_opts no = {.sz = sizeof(no)};
	rtd_nettrace *dec = rtd_nettrace_new(&no);
	assert_non_null(h);
	assert_non_null(dec);
	struct pl p = {0};
	put(&p, 2, 4), put(&p, 2, 4), put(&p, 0, 4), put(&p, 1, 4); /* GC 2, gen 2 */
	feed(h, dec, GC_START, &p);
	p.n = 0;
	put(&p, 2, 4), put(&p, 0, 2);
	const char *names[] = {"Foo", "Bar"};
	for (int i = 0; i < 2; i++) {
		put(&p, 0xA + (uint64_t)i, 8), put(&p, 0, 8), put(&p, 0, 4), put(&p, 0, 4);
		put(&p, 0, 1), put_name(&p, names[i]), put(&p, 0, 4);
	}
	feed(h, dec, BULK_TYPE, &p);
	static const uint64_t node[][4] = {
		{0x1000, 24, 0xA, 3}, {0x2000, 4000, 0xB, 0}, {0x3000, 32, 0xA, 1}, {0x4000, 16, 0xC, 0}};
	p.n = 0;
	put(&p, 0, 4), put(&p, 4, 4), put(&p, 0, 2);
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 4; k++)
			put(&p, node[i][k], 8);
	feed(h, dec, BULK_NODE, &p);
	static const uint64_t edge[] = {0x2000, 0x9999, 0x3000, 0x1000};
	p.n = 0;
	put(&p, 0, 4), put(&p, 4, 4), put(&p, 0, 2);
	for (int i = 0; i < 4; i++)
		put(&p, edge[i], 8), put(&p, 0, 4);
	feed(h, dec, BULK_EDGE, &p);
	p.n = 0;
	put(&p, 0, 4), put(&p, 1, 4), put(&p, 0, 2);
	put(&p, 0x1000, 8), put(&p, 0, 1), put(&p, 0, 4), put(&p, 0, 8);
	feed(h, dec, BULK_ROOT_EDGE, &p);
	rtd_nettrace_free(dec);
	return h;
}

/* ---- a reader of the file ---- */

struct rd {
	const uint8_t *p, *end, *start;
};

static uint8_t u8(struct rd *r)
{
	assert_true(r->p < r->end);
	return *r->p++;
}

static int32_t i32(struct rd *r)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)u8(r) << (8 * i);
	return (int32_t)v;
}

static int64_t i64(struct rd *r)
{
	uint64_t lo = (uint32_t)i32(r);
	return (int64_t)(lo | (uint64_t)(uint32_t)i32(r) << 32);
}

/* A string into buf ("(null)" for null). */
static const char *str(struct rd *r, char *buf, size_t len)
{
	int32_t n = i32(r);
	if (n < 0)
		return "(null)";
	assert_true((size_t)n < len);
	for (int32_t i = 0; i < n; i++)
		buf[i] = (char)u8(r); /* ASCII here */
	buf[n] = 0;
	return buf;
}

/* PerfView's Node.ReadCompressedInt. */
static int32_t cint(struct rd *r)
{
	uint8_t b = u8(r);
	int32_t v = (int32_t)((uint32_t)b << 25) >> 25;
	for (int i = 0; i < 4 && (b & 0x80); i++) {
		b = u8(r);
		v = (int32_t)((uint32_t)v << 7) + (b & 0x7F);
	}
	return v;
}

/* BeginObject, its type's object; returns the type's name in buf. */
static const char *begin(struct rd *r, int version, int min_reader, char *buf, size_t len)
{
	assert_int_equal(u8(r), 4);
	assert_int_equal(u8(r), 4);
	assert_int_equal(u8(r), 1); /* SerializationType's type: null */
	assert_int_equal(i32(r), version);
	assert_int_equal(i32(r), min_reader);
	str(r, buf, len);
	assert_int_equal(u8(r), 6);
	return buf;
}

static void test_layout(void **state)
{
	(void)state;
	rtd_gcheap *h = heap();
	char *data = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&data, &size);
	assert_int_equal(rtd_gcheap_write_gcdump(h, f, NULL), -RTD_E_STATE);
	assert_int_equal(rtd_gcheap_finish(h), 0);
	struct rtd_gcheap_gcdump_info in = {.sz = sizeof(in), .pid = 4242,
					    .process_name = "app", .time_ns = 1};
	assert_int_equal(rtd_gcheap_write_gcdump(h, f, &in), 0);
	fclose(f);
	struct rd r = {(const uint8_t *)data, (const uint8_t *)data + size, (const uint8_t *)data};
	char s[64];
	assert_string_equal(str(&r, s, sizeof(s)), "!FastSerialization.1");
	assert_string_equal(begin(&r, 10, 8, s, sizeof(s)), "GCHeapDump");
	assert_string_equal(begin(&r, 1, 0, s, sizeof(s)), "Graphs.MemoryGraph");
	assert_int_equal(i64(&r), 24 + 4000 + 32 + 16);
	assert_int_equal(i32(&r), 4); /* the root node: after the 4 objects */
	/* types: UNDEFINED, Foo, Bar, "?", the two roots' */
	int32_t nt = i32(&r);
	assert_int_equal(nt, 6);
	char tn[6][32];
	int32_t ts[6];
	for (int32_t t = 0; t < nt; t++) {
		str(&r, tn[t], sizeof(tn[t]));
		ts[t] = i32(&r);
		assert_int_equal(i32(&r), -1); /* no module */
	}
	assert_string_equal(tn[0], "UNDEFINED");
	assert_string_equal(tn[1], "Foo");
	assert_int_equal(ts[1], 24); /* its first object's */
	assert_string_equal(tn[2], "Bar");
	assert_string_equal(tn[3], "?");
	assert_string_equal(tn[4], "[.NET Roots]");
	assert_string_equal(tn[5], "[other roots]");
	int32_t nn = i32(&r);
	assert_int_equal(nn, 6);
	int32_t off[6];
	for (int i = 0; i < nn; i++)
		off[i] = i32(&r);
	int32_t blen = i32(&r);
	struct rd blob = {r.p, r.p + blen, r.p};
	r.p += blen;
	/* UNDEFINED's node at offset 0 */
	assert_int_equal(cint(&blob), 0);
	assert_int_equal(cint(&blob), 0);
	static const struct {
		int32_t type, size, nchild, child[3];
	} want[6] = {
		{1, 24, 2, {1, 2}}, {2, 4000, 0, {0}}, {1, 32, 1, {0}},
		{3, 16, 0, {0}},    {4, 0, 1, {5}},    {5, 0, 1, {0}},
	};
	for (int i = 0; i < nn; i++) {
		blob.p = blob.start + off[i];
		int32_t ta = cint(&blob);
		assert_int_equal(ta >> 1, want[i].type);
		int32_t sz = ta & 1 ? cint(&blob) : ts[ta >> 1];
		assert_int_equal(sz, want[i].size);
		assert_int_equal(cint(&blob), want[i].nchild);
		for (int k = 0; k < want[i].nchild; k++)
			assert_int_equal(cint(&blob) + i, want[i].child[k]);
	}
	assert_int_equal(i32(&r), nn);
	static const int64_t addr[] = {0x1000, 0x2000, 0x3000, 0x4000, 0, 0};
	for (int i = 0; i < nn; i++)
		assert_int_equal(i64(&r), addr[i]);
	assert_int_equal(u8(&r), 8); /* tagged Is64Bit */
	assert_int_equal(u8(&r), 1);
	assert_int_equal(u8(&r), 6);
	assert_int_equal(u8(&r), 1); /* Is64Bit */
	i32(&r), i32(&r);            /* the multipliers */
	assert_int_equal(u8(&r), 1); /* no JSHeapInfo */
	assert_string_equal(begin(&r, 0, 0, s, sizeof(s)), "DotNetHeapInfo");
	i64(&r), i32(&r);
	assert_int_equal(u8(&r), 6);
	str(&r, s, sizeof(s));
	assert_int_equal(i64(&r), 621355968000000000ll); /* 1 ns past the epoch */
	char host[256];
	str(&r, host, sizeof(host));
	assert_string_equal(str(&r, s, sizeof(s)), "app");
	assert_int_equal(i32(&r), 4242);
	i64(&r), i64(&r);
	assert_int_equal(i32(&r), 0);
	assert_int_equal(u8(&r), 12); /* a skip region: forward reference 0 */
	assert_int_equal(i32(&r), 0);
	assert_int_equal(u8(&r), 1);
	const uint8_t *skip_end = r.p;
	assert_int_equal(u8(&r), 13);
	assert_string_equal(str(&r, s, sizeof(s)), "rtdiag");
	assert_int_equal(u8(&r), 6);
	assert_int_equal(u8(&r), 6);
	/* the trailer: its offset last; it holds the forward references' */
	struct rd t = {r.end - 4, r.end, r.start};
	t.p = r.start + i32(&t);
	struct rd fw = {r.start + i32(&t), r.end, r.start};
	assert_int_equal(i32(&fw), 1);
	assert_ptr_equal(r.start + i32(&fw), skip_end);
	free(data);
	rtd_gcheap_free(h);
}

static void test_args(void **state)
{
	(void)state;
	assert_int_equal(rtd_gcheap_write_gcdump(NULL, stdout, NULL), -RTD_E_INVAL);
	struct rtd_gcheap_collect_result res;
	assert_int_equal(rtd_gcheap_collect(NULL, NULL, NULL, &res), -RTD_E_INVAL);
	/* a longer struct with bytes this version does not know: refused */
	struct {
		struct rtd_gcheap_collect_opts o;
		uint64_t future;
	} big = {.o = {.sz = sizeof(big)}, .future = 1};
	FILE *f = tmpfile();
	assert_int_equal(rtd_gcheap_gcdump(1, f, &big.o, &res), -RTD_E_INVAL);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
