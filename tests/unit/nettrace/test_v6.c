/* SPDX-License-Identifier: MIT */
/*
 * test_v6 - a NetTrace V6 stream written by the test encoder (nt_encode.h)
 * decodes to the same events as its V4 twin: same names, fields, values,
 * threads, timestamps, stacks (ids restarting after a sequence point) and
 * dropped-event counts. V6's new field types decode to the values written.
 */
#include "test_util.h"

#include <stdio.h>

#include "nt_encode.h"
#include "rtdiag/nettrace.h"

#define TID 4242

static void meta_v4(struct enc *e, uint32_t id)
{
	rtd_buf p;
	rtd_buf_init(&p, 0);
	e_u32(&p, id);
	e_utf16z(&p, "Twin-Test");
	e_u32(&p, id);
	e_utf16z(&p, id == 1 ? "Values" : "Arrays");
	e_u64(&p, 0);
	e_u32(&p, 0);
	e_u32(&p, 4);
	if (id == 1) {
		e_u32(&p, 6);
		e_u32(&p, 9); e_utf16z(&p, "a");
		e_u32(&p, 11); e_utf16z(&p, "b");
		e_u32(&p, 18); e_utf16z(&p, "s");
		e_u32(&p, 14); e_utf16z(&p, "d");
		e_u32(&p, 17); e_utf16z(&p, "g");
		e_u32(&p, 1);
		e_u32(&p, 2);
		e_u32(&p, 8); e_utf16z(&p, "x");
		e_u32(&p, 6); e_utf16z(&p, "y");
		e_utf16z(&p, "o");
	} else {
		e_u32(&p, 0); /* V1 fields: none, V2Params follow */
		e_u32(&p, 1); e_u8(&p, 1); e_u8(&p, 1); /* OpCode tag: Start */
		rtd_buf t;
		rtd_buf_init(&t, 0);
		e_u32(&t, 2);
		e_u32(&t, 4 + 8 + 4 + 4); e_utf16z(&t, "arr"); e_u32(&t, 19); e_u32(&t, 8);
		e_u32(&t, 4 + 4 + 4); e_utf16z(&t, "n"); e_u32(&t, 9);
		e_u32(&p, (uint32_t)t.len);
		e_u8(&p, 2);
		rtd_buf_append(&p, t.data, t.len);
		rtd_buf_free(&t);
	}
	/* an uncompressed event blob with metadata id 0 */
	e_u32(&e->b, (uint32_t)(4 + 4 + 8 + 8 + 4 + 4 + 8 + 32 + 4 + p.len));
	e_u32(&e->b, 0);
	e_u32(&e->b, 0);
	e_u64(&e->b, 0);
	e_u64(&e->b, 0);
	e_u32(&e->b, 0);
	e_u32(&e->b, 0);
	e_u64(&e->b, 0);
	for (int i = 0; i < 32; i++)
		e_u8(&e->b, 0);
	e_u32(&e->b, (uint32_t)p.len);
	rtd_buf_append(&e->b, p.data, p.len);
	while (e->b.len % 4)
		e_u8(&e->b, 0);
	rtd_buf_free(&p);
}

static void field6(rtd_buf *b, const char *name, const uint8_t *type,
		   size_t tlen)
{
	rtd_buf f;
	rtd_buf_init(&f, 0);
	e_str8(&f, name);
	rtd_buf_append(&f, type, tlen);
	e_u16(b, (uint16_t)f.len);
	rtd_buf_append(b, f.data, f.len);
	rtd_buf_free(&f);
}

static void meta_v6(struct enc *e, uint32_t id)
{
	rtd_buf r;
	rtd_buf_init(&r, 0);
	e_var(&r, id);
	e_str8(&r, "Twin-Test");
	e_var(&r, id);
	e_str8(&r, id == 1 ? "Values" : id == 2 ? "Arrays" : "V6Only");
	if (id == 1) {
		e_u16(&r, 6);
		field6(&r, "a", (const uint8_t[]){9}, 1);
		field6(&r, "b", (const uint8_t[]){11}, 1);
		field6(&r, "s", (const uint8_t[]){18}, 1);
		field6(&r, "d", (const uint8_t[]){14}, 1);
		field6(&r, "g", (const uint8_t[]){17}, 1);
		/* struct: type 1, u16 count 2, then two field descriptions */
		rtd_buf o;
		rtd_buf_init(&o, 0);
		e_u8(&o, 1);
		e_u16(&o, 2);
		field6(&o, "x", (const uint8_t[]){8}, 1);
		field6(&o, "y", (const uint8_t[]){6}, 1);
		field6(&r, "o", o.data, o.len);
		rtd_buf_free(&o);
		e_u16(&r, 2);
		e_u8(&r, 8); e_u8(&r, 4); /* level */
	} else if (id == 2) {
		e_u16(&r, 2);
		field6(&r, "arr", (const uint8_t[]){19, 8}, 2);
		field6(&r, "n", (const uint8_t[]){9}, 1);
		e_u16(&r, 4);
		e_u8(&r, 1); e_u8(&r, 1); /* opcode Start */
		e_u8(&r, 8); e_u8(&r, 4);
	} else {
		e_u16(&r, 7);
		field6(&r, "vi", (const uint8_t[]){20}, 1);
		field6(&r, "vu", (const uint8_t[]){21}, 1);
		field6(&r, "fa", (const uint8_t[]){22, 7, 3, 0}, 4);
		field6(&r, "b8", (const uint8_t[]){26}, 1);
		field6(&r, "c8", (const uint8_t[]){23}, 1);
		field6(&r, "rl", (const uint8_t[]){24, 8}, 2);
		field6(&r, "dl", (const uint8_t[]){25, 10}, 2);
		e_u16(&r, 0);
	}
	e_u16(&e->b, (uint16_t)r.len);
	rtd_buf_append(&e->b, r.data, r.len);
	rtd_buf_free(&r);
}

static void payload_values(rtd_buf *p, int32_t a)
{
	e_u32(p, (uint32_t)a);
	e_u64(p, (uint64_t)-1234567890123LL);
	e_utf16z(p, "twin");
	double d = 2.5;
	uint64_t u;
	memcpy(&u, &d, 8);
	e_u64(p, u);
	for (int i = 0; i < 16; i++)
		e_u8(p, (uint8_t)(i * 17));
	e_u16(p, 65000);
	e_u8(p, 7);
}

static void payload_arrays(rtd_buf *p, int n)
{
	e_u16(p, 3);
	e_u16(p, 10);
	e_u16(p, 20);
	e_u16(p, 30);
	e_u32(p, (uint32_t)n);
}

/* The same logical trace in either format. */
static void build(struct enc *e, bool v6, uint32_t psz)
{
	memset(e, 0, sizeof(*e));
	rtd_buf_init(&e->b, 0);
	e->v6 = v6;
	e->psz = psz;
	enc_header(e);
	enc_trace(e);
	uint64_t tid = TID;
	if (v6) {
		/* thread index 1 is OS thread 4242 */
		size_t body = enc_begin(e, NULL, 6);
		rtd_buf row;
		rtd_buf_init(&row, 0);
		e_var(&row, 1);
		e_u8(&row, 3);
		e_var(&row, TID);
		e_u16(&e->b, (uint16_t)row.len);
		rtd_buf_append(&e->b, row.data, row.len);
		rtd_buf_free(&row);
		enc_end(e, body);
		tid = 1;
	}
	size_t body = enc_begin(e, "MetadataBlock", 3);
	if (v6) {
		e_u16(&e->b, 0);
		meta_v6(e, 1);
		meta_v6(e, 2);
		meta_v6(e, 3);
	} else {
		enc_block_header(e, false);
		meta_v4(e, 1);
		meta_v4(e, 2);
	}
	enc_end(e, body);
	static const uint64_t s1[] = {0x1000, 0x2000, 0x3000};
	static const uint64_t s2[] = {0x4000};
	static const uint64_t s3[] = {0x5000, 0x6000};
	const uint64_t *fr[] = {s1, s2};
	const uint32_t nf[] = {3, 1};
	enc_stacks(e, 1, 2, fr, nf);

	rtd_buf p;
	rtd_buf_init(&p, 0);
	body = enc_begin(e, "EventBlock", 2);
	enc_block_header(e, true);
	payload_values(&p, -42);
	enc_event(e, 1, 1, tid, 1, 2000000, p.data, (uint32_t)p.len);
	rtd_buf_reset(&p);
	payload_arrays(&p, 5);
	enc_event(e, 2, 2, tid, 2, 2000500, p.data, (uint32_t)p.len);
	rtd_buf_reset(&p);
	payload_values(&p, 7);
	/* sequence 5 after 2: two events dropped */
	enc_event(e, 1, 5, tid, 0, 2001000, p.data, (uint32_t)p.len);
	enc_end(e, body);
	/* the sequence point says the thread reached 8: three more drops;
	 * stack ids restart after it */
	enc_seqpoint(e, 3000000, tid, 8);
	const uint64_t *fr2[] = {s3};
	const uint32_t nf2[] = {2};
	enc_stacks(e, 1, 1, fr2, nf2);
	body = enc_begin(e, "EventBlock", 2);
	enc_block_header(e, true);
	rtd_buf_reset(&p);
	payload_arrays(&p, 9);
	enc_event(e, 2, 9, tid, 1, 3000100, p.data, (uint32_t)p.len);
	if (v6) {
		rtd_buf_reset(&p);
		e_var(&p, 599);          /* zigzag(-300) */
		e_var(&p, 300);
		e_u16(&p, 1); e_u16(&p, (uint16_t)-2); e_u16(&p, 3);
		e_u8(&p, 1);
		e_u8(&p, 'Q');
		/* RelLoc: 4 bytes, 4 bytes after itself (past the DataLoc) */
		e_u32(&p, 4u << 16 | 4u);
		/* DataLoc: 4 bytes at payload offset 22 (after the RelLoc
		 * data: 2+2+6+1+1+4+4+4 = 24 -> see below) */
		size_t dl_at = p.len;
		e_u32(&p, 0);
		e_u16(&p, 7); e_u16(&p, 8);
		uint32_t dl_off = (uint32_t)p.len;
		e_u32(&p, 99999);
		e_patch32(&p, dl_at, 4u << 16 | dl_off);
		enc_event(e, 3, 10, tid, 0, 3000200, p.data, (uint32_t)p.len);
	}
	enc_end(e, body);
	enc_finish(e);
	rtd_buf_free(&p);
}

struct lines {
	rtd_nettrace *dec;
	char *text[16];
	int n;
};

static int on_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct lines *l = ctx;
	/* rtd_nettrace_get: one field by name, typed */
	struct rtd_nettrace_value v;
	if (!strcmp(ev->meta->event_name, "Values")) {
		assert_int_equal(rtd_nettrace_get(l->dec, ev, "s", &v), 0);
		assert_string_equal(v.str, "twin");
		assert_int_equal(rtd_nettrace_get(l->dec, ev, "b", &v), 0);
		assert_true(v.i == -1234567890123LL);
		assert_int_equal(rtd_nettrace_get(l->dec, ev, "nope", &v),
				 -RTD_E_NOTFOUND);
	} else if (!strcmp(ev->meta->event_name, "V6Only")) {
		assert_int_equal(rtd_nettrace_get(l->dec, ev, "vi", &v), 0);
		assert_true(v.i == -300);
	}
	const char *s = rtd_nettrace_format(l->dec, ev,
					    RTD_NT_FMT_TEXT | RTD_NT_FMT_STACK,
					    NULL);
	assert_non_null(s);
	if (l->n < 16)
		l->text[l->n++] = strdup(s);
	return 0;
}

static void decode(const rtd_buf *b, struct lines *l, size_t chunk)
{
	memset(l, 0, sizeof(*l));
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = l,
				      .on_event = on_event};
	l->dec = rtd_nettrace_new(&o);
	int rc = 0;
	for (size_t off = 0; off < b->len && rc == 0; off += chunk)
		rc = rtd_nettrace_feed(l->dec, b->data + off,
				       b->len - off < chunk ? b->len - off
							    : chunk);
	if (rc < 0)
		fail_msg("decode: %s", rtd_nettrace_error(l->dec, NULL));
	assert_int_equal(rc, 1);
	assert_int_equal(rtd_nettrace_finish(l->dec), 0);
}

static void test_v6_equals_v4_twin(void **state)
{
	(void)state;
	struct enc e4, e6;
	build(&e4, false, 8);
	build(&e6, true, 8);
	/* RTD_NT_WRITE_CORPUS=DIR refreshes the fuzz seeds made from these */
	const char *dir = getenv("RTD_NT_WRITE_CORPUS");
	for (int v = 0; dir && v < 2; v++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir,
			 v ? "v6-twin" : "v4-twin");
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		const rtd_buf *b = v ? &e6.b : &e4.b;
		fwrite(b->data, 1, b->len, f);
		fclose(f);
	}
	struct lines l4, l6;
	decode(&e4.b, &l4, e4.b.len);
	decode(&e6.b, &l6, 1); /* and V6 one byte at a time */
	assert_int_equal(rtd_nettrace_info(l4.dec)->format, 4);
	assert_int_equal(rtd_nettrace_info(l6.dec)->format, 6);
	assert_int_equal(rtd_nettrace_info(l6.dec)->pid, 1234);
	assert_int_equal(l4.n, 4);
	assert_int_equal(l6.n, 5);
	for (int i = 0; i < l4.n; i++) {
		printf("V4: %s\nV6: %s\n", l4.text[i], l6.text[i]);
		assert_string_equal(l4.text[i], l6.text[i]);
	}
	/* the decoded values are the written ones */
	assert_string_equal(l4.text[0],
			    "0.001000 4242 Twin-Test/Values a=-42 "
			    "b=-1234567890123 s=\"twin\" d=2.5 "
			    "g=\"33221100-5544-7766-8899-aabbccddeeff\" "
			    "o={x=65000, y=7} stack=0x1000,0x2000,0x3000");
	assert_string_equal(l4.text[1], "0.001000 4242 Twin-Test/Arrays/Start "
					"arr=[10, 20, 30] n=5 stack=0x4000");
	/* stack id 1 after the sequence point is the new stack */
	assert_string_equal(l4.text[3], "0.002000 4242 Twin-Test/Arrays/Start "
					"arr=[10, 20, 30] n=9 "
					"stack=0x5000,0x6000");
	assert_string_equal(l6.text[4],
			    "0.002000 4242 Twin-Test/V6Only vi=-300 vu=300 "
			    "fa=[1, -2, 3] b8=true c8=\"Q\" rl=[7, 8] "
			    "dl=[99999]");
	struct rtd_nettrace_stats s4, s6;
	rtd_nettrace_stats(l4.dec, &s4);
	rtd_nettrace_stats(l6.dec, &s6);
	assert_int_equal(s4.dropped, 5);
	assert_int_equal(s6.dropped, 5);
	assert_int_equal(s4.seqpoints, 1);
	assert_int_equal(s6.seqpoints, 1);
	for (int i = 0; i < l4.n; i++)
		free(l4.text[i]);
	for (int i = 0; i < l6.n; i++)
		free(l6.text[i]);
	rtd_nettrace_free(l4.dec);
	rtd_nettrace_free(l6.dec);
	rtd_buf_free(&e4.b);
	rtd_buf_free(&e6.b);
}

/* Unknown V6 block kinds are skipped; a newer major version is refused. */
static void test_v6_unknown_block_and_version(void **state)
{
	(void)state;
	struct enc e;
	build(&e, true, 8);
	/* insert an unknown block (kind 77, 3 bytes) after the trace block */
	size_t at = 24 + (e.b.data[20] | (size_t)e.b.data[21] << 8);
	rtd_buf b;
	rtd_buf_init(&b, 0);
	rtd_buf_append(&b, e.b.data, at);
	e_u32(&b, 3u | 77u << 24);
	e_u8(&b, 1); e_u8(&b, 2); e_u8(&b, 3);
	rtd_buf_append(&b, e.b.data + at, e.b.len - at);
	struct lines l;
	decode(&b, &l, 4096);
	assert_int_equal(l.n, 5);
	struct rtd_nettrace_stats st;
	rtd_nettrace_stats(l.dec, &st);
	assert_int_equal(st.skipped_blocks, 1);
	for (int i = 0; i < l.n; i++)
		free(l.text[i]);
	rtd_nettrace_free(l.dec);
	/* major version 7 */
	b.data[12] = 7;
	rtd_nettrace *dec = rtd_nettrace_new(NULL);
	assert_int_equal(rtd_nettrace_feed(dec, b.data, b.len),
			 -RTD_E_UNSUPPORTED);
	assert_non_null(strstr(rtd_nettrace_error(dec, NULL), "version 7"));
	rtd_nettrace_free(dec);
	rtd_buf_free(&b);
	rtd_buf_free(&e.b);
}

/* A 32-bit trace: 4-byte stack entries, in both formats. */
static void test_32bit_pointers(void **state)
{
	(void)state;
	for (int v6 = 0; v6 < 2; v6++) {
		struct enc e;
		build(&e, v6, 4);
		struct lines l;
		decode(&e.b, &l, 3);
		assert_int_equal(rtd_nettrace_info(l.dec)->pointer_size, 4);
		assert_string_equal(l.text[0],
				    "0.001000 4242 Twin-Test/Values a=-42 "
				    "b=-1234567890123 s=\"twin\" d=2.5 "
				    "g=\"33221100-5544-7766-8899-aabbccddeeff\" "
				    "o={x=65000, y=7} stack=0x1000,0x2000,0x3000");
		for (int i = 0; i < l.n; i++)
			free(l.text[i]);
		rtd_nettrace_free(l.dec);
		rtd_buf_free(&e.b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v6_equals_v4_twin),
		cmocka_unit_test(test_v6_unknown_block_and_version),
		cmocka_unit_test(test_32bit_pointers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
