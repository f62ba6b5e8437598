/* SPDX-License-Identifier: MIT */
/*
 * test_netperf12 - NetPerf object versions 1 and 2 (.NET Core 2.0): the
 * EventPipeFile entry object, unframed events keyed by the offset of
 * their metadata event, provider GUIDs (V1) or names (V2), inline stacks,
 * and the serializer's forward reference table and trailer as the end.
 *
 * These streams are made by the encoder below, a labelled fake: no .NET
 * Core 2.0 runtime runs here, and the shared vectors start at 2.1 (V3).
 * Its layout follows the 2.0 runtime's writer (dotnet/coreclr v2.0.0,
 * src/vm/eventpipefile.cpp, fastserializer.cpp, eventpipeeventinstance.cpp)
 * and TraceEvent's old EventPipeEventSourceV1 reader.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/buf.h"
#include "rtdiag/nettrace.h"

static void u8(rtd_buf *b, uint8_t v) { rtd_buf_append(b, &v, 1); }
static void u16(rtd_buf *b, uint16_t v) { u8(b, (uint8_t)v); u8(b, (uint8_t)(v >> 8)); }
static void u32(rtd_buf *b, uint32_t v) { u16(b, (uint16_t)v); u16(b, (uint16_t)(v >> 16)); }
static void u64(rtd_buf *b, uint64_t v) { u32(b, (uint32_t)v); u32(b, (uint32_t)(v >> 32)); }
static void str16(rtd_buf *b, const char *s)
{
	for (; *s; s++)
		u16(b, (uint8_t)*s);
	u16(b, 0);
}
static void patch32(rtd_buf *b, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b->data[at + i] = (uint8_t)(v >> (8 * i));
}

static const uint8_t runtime_guid[16] = {0x23, 0x0d, 0x3c, 0xe1, 0xbc, 0xcc,
					 0x12, 0x4e, 0x93, 0x1b, 0xd9, 0xcc,
					 0x2e, 0xee, 0x27, 0xe4};

/* One event: size, label, thread, time, ids, payload, stack. */
static size_t ev(rtd_buf *b, uint32_t label, uint32_t tid, uint64_t ts,
		 const rtd_buf *payload, const uint64_t *stack, size_t nframes)
{
	size_t at = b->len;
	u32(b, 0);
	u32(b, label);
	u32(b, tid);
	u64(b, ts);
	for (int i = 0; i < 32; i++)
		u8(b, 0);
	u32(b, (uint32_t)payload->len);
	rtd_buf_append(b, payload->data, payload->len);
	u32(b, (uint32_t)(nframes * 8));
	for (size_t i = 0; i < nframes; i++)
		u64(b, stack[i]);
	patch32(b, at, (uint32_t)(b->len - at - 4));
	return at;
}

/* A version-v stream: a runtime GC/Start (no EventSource metadata) and an
 * EventSource event with fields, each after its metadata event. */
static void make(rtd_buf *b, int v)
{
	rtd_buf_init(b, 0);
	u32(b, 20);
	rtd_buf_append(b, "!FastSerialization.1", 20);
	u8(b, 4); /* BeginObject */
	u8(b, 4); /* its type */
	u8(b, 1);
	u32(b, (uint32_t)v);
	u32(b, 0);
	const char *tn = "Microsoft.DotNet.Runtime.EventPipeFile";
	u32(b, (uint32_t)strlen(tn));
	rtd_buf_append(b, tn, strlen(tn));
	u8(b, 6);
	u32(b, 0); /* forward reference index */
	uint16_t st[8] = {2017, 8, 1, 14, 9, 30, 15, 250};
	for (int i = 0; i < 8; i++)
		u16(b, st[i]);
	u64(b, 1000000);    /* start timestamp */
	u64(b, 1000000000); /* ticks per second */

	rtd_buf p;
	rtd_buf_init(&p, 0);
	/* runtime provider metadata: id 1 (GC/Start) version 1, no fields */
	if (v == 1)
		rtd_buf_append(&p, runtime_guid, 16);
	else
		str16(&p, "Microsoft-Windows-DotNETRuntime");
	u32(&p, 1);
	u32(&p, 1);
	u32(&p, 0);
	uint32_t m1 = (uint32_t)ev(b, 0, 42, 1000500, &p, NULL, 0);
	/* GC/Start V1: Count Depth Reason Type ClrInstanceID */
	rtd_buf_reset(&p);
	u32(&p, 7);
	u32(&p, 2);
	u32(&p, 1);
	u32(&p, 0);
	u16(&p, 9);
	uint64_t frames[2] = {0x7f0000001000, 0x7f0000002000};
	ev(b, m1, 42, 1001000, &p, frames, 2);
	/* an EventSource event with its own metadata */
	rtd_buf_reset(&p);
	if (v == 1) {
		for (int i = 0; i < 16; i++)
			u8(&p, (uint8_t)(0xa0 + i));
	} else {
		str16(&p, "My-Source");
	}
	u32(&p, 5);
	u32(&p, 0);
	size_t lenat = p.len;
	u32(&p, 0);
	size_t mstart = p.len;
	u32(&p, 5);
	str16(&p, "Hello");
	u64(&p, 0xff);
	u32(&p, 0);
	u32(&p, 4);
	u32(&p, 2);     /* two parameters: type, name */
	u32(&p, 9);     /* Int32 */
	str16(&p, "n");
	u32(&p, 18);    /* String */
	str16(&p, "s");
	patch32(&p, lenat, (uint32_t)(p.len - mstart));
	uint32_t m2 = (uint32_t)ev(b, 0, 43, 1001500, &p, NULL, 0);
	rtd_buf_reset(&p);
	u32(&p, (uint32_t)-5);
	str16(&p, "two");
	ev(b, m2, 43, 1002000, &p, NULL, 0);
	rtd_buf_free(&p);
	/* end: EndObject, forward reference table (1 entry: this tag), trailer */
	uint32_t end = (uint32_t)b->len;
	u8(b, 6);
	u32(b, 1);
	u32(b, end);
	u32(b, end + 1);
	u32(b, end + 1 + 8);
}

struct got {
	rtd_nettrace *dec;
	char lines[8][512];
	int n;
};

static int on_event(void *c, const struct rtd_nettrace_event *e)
{
	struct got *g = c;
	const char *s = rtd_nettrace_format(g->dec, e, RTD_NT_FMT_STACK, NULL);
	if (g->n < 8)
		snprintf(g->lines[g->n++], sizeof(g->lines[0]), "%s", s);
	return 0;
}

static void decode(const rtd_buf *b, size_t split, struct got *g, int *fmt)
{
	memset(g, 0, sizeof(*g));
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = g,
				      .on_event = on_event};
	g->dec = rtd_nettrace_new(&o);
	assert_non_null(g->dec);
	int rc = 0;
	for (size_t at = 0; at < b->len && rc == 0; at += split) {
		size_t n = b->len - at < split ? b->len - at : split;
		rc = rtd_nettrace_feed(g->dec, b->data + at, n);
	}
	assert_int_equal(rc, 1); /* the end was recognised */
	assert_int_equal(rtd_nettrace_finish(g->dec), 0);
	*fmt = rtd_nettrace_info(g->dec)->format;
	rtd_nettrace_free(g->dec);
}

static void check(int v)
{
	rtd_buf b;
	make(&b, v);
	size_t splits[] = {1, 7, 64, 1 << 20};
	for (size_t k = 0; k < 4; k++) {
		struct got g;
		int fmt;
		decode(&b, splits[k], &g, &fmt);
		assert_int_equal(fmt, v);
		assert_int_equal(g.n, 2);
		assert_string_equal(g.lines[0],
				    "0.000001 42 Microsoft-Windows-DotNETRuntime/"
				    "GC/Start Count=7 Depth=2 Reason=Induced "
				    "Type=NonConcurrentGC ClrInstanceID=9 "
				    "stack=0x7f0000001000,0x7f0000002000");
		assert_string_equal(g.lines[1],
				    v == 2 ? "0.000002 43 My-Source/Hello n=-5 s=\"two\""
					   : "0.000002 43 a3a2a1a0-a5a4-a7a6-a8a9-"
					     "aaabacadaeaf/Hello n=-5 s=\"two\"");
	}
	/* cut anywhere before the end: everything complete, then an error */
	for (size_t cut = 1; cut < b.len; cut += 13) {
		struct rtd_nettrace_opts o = {.sz = sizeof(o)};
		rtd_nettrace *d = rtd_nettrace_new(&o);
		int rc = rtd_nettrace_feed(d, b.data, cut);
		assert_true(rc == 0 || rc == -RTD_E_NT_MAGIC);
		assert_int_not_equal(rtd_nettrace_finish(d), 0);
		rtd_nettrace_free(d);
	}
	rtd_buf_free(&b);
}

static void test_v1(void **state)
{
	(void)state;
	check(1);
}

static void test_v2(void **state)
{
	(void)state;
	check(2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1),
		cmocka_unit_test(test_v2),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
