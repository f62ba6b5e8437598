/* SPDX-License-Identifier: MIT */
/*
 * pprof.c - write a profile as pprof's gzip-compressed protobuf
 * (github.com/google/pprof proto/profile.proto).
 *
 * Each distinct frame name is one Function and one Location with the same
 * id (name index + 1); each call-tree node with self weight is one Sample
 * whose location ids run leaf first, as the format requires.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/buf.h"
#include "profile/profile_impl.h"

/* Field numbers from profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_PERIOD_TYPE = 11,
	VALUETYPE_TYPE = 1,
	VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	LOCATION_ID = 1,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
};

static int pb_varint(rtd_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;
	do {
		tmp[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	return rtd_buf_append(b, tmp, n);
}

static int pb_uint(rtd_buf *b, unsigned field, uint64_t v)
{
	int err = pb_varint(b, (uint64_t)field << 3);
	return err ? err : pb_varint(b, v);
}

static int pb_bytes(rtd_buf *b, unsigned field, const void *p, size_t n)
{
	int err = pb_varint(b, (uint64_t)field << 3 | 2);
	if (!err)
		err = pb_varint(b, n);
	return err ? err : rtd_buf_append(b, p, n);
}

/* A nested message: its bytes are built in sub, then appended. */
static int pb_msg(rtd_buf *b, unsigned field, rtd_buf *sub)
{
	int err = pb_bytes(b, field, sub->data ? sub->data : (uint8_t *)"",
			   sub->len);
	rtd_buf_reset(sub);
	return err;
}

struct pprof_ctx {
	rtd_buf *out, sub, packed;
};

static int sample_visit(const rtd_profile *p, uint32_t node, size_t depth,
			const uint32_t *path, void *vctx)
{
	struct pprof_ctx *c = vctx;
	if (p->nodes[node].self == 0)
		return 0;
	int err = 0;
	rtd_buf_reset(&c->packed);
	for (size_t i = depth; i-- > 0 && !err;)
		err = pb_varint(&c->packed, p->nodes[path[i]].name + 1u);
	if (!err)
		err = pb_bytes(&c->sub, SAMPLE_LOCATION_ID, c->packed.data,
			       c->packed.len);
	if (!err)
		err = pb_uint(&c->sub, SAMPLE_VALUE, (uint64_t)p->nodes[node].self);
	if (!err)
		err = pb_msg(c->out, PROFILE_SAMPLE, &c->sub);
	return err;
}

static int value_type(rtd_buf *out, rtd_buf *sub, unsigned field,
		      uint64_t type, uint64_t unit)
{
	int err = pb_uint(sub, VALUETYPE_TYPE, type);
	if (!err)
		err = pb_uint(sub, VALUETYPE_UNIT, unit);
	return err ? err : pb_msg(out, field, sub);
}

static int encode(const rtd_profile *p, rtd_buf *out)
{
	/* string table: "", sample type, unit, then every frame name */
	struct pprof_ctx c = {.out = out};
	rtd_buf_init(&c.sub, 0);
	rtd_buf_init(&c.packed, 0);
	const uint64_t s_type = 1, s_unit = 2, s_names = 3;
	int err = value_type(out, &c.sub, PROFILE_SAMPLE_TYPE, s_type, s_unit);
	if (!err)
		err = prof_walk(p, sample_visit, &c);
	for (size_t i = 0; i < p->nnames && !err; i++) {
		uint64_t id = i + 1;
		rtd_buf_reset(&c.packed);
		err = pb_uint(&c.packed, LINE_FUNCTION_ID, id);
		if (!err)
			err = pb_uint(&c.sub, LOCATION_ID, id);
		if (!err)
			err = pb_msg(&c.sub, LOCATION_LINE, &c.packed);
		if (!err)
			err = pb_msg(out, PROFILE_LOCATION, &c.sub);
		if (!err)
			err = pb_uint(&c.sub, FUNCTION_ID, id);
		if (!err)
			err = pb_uint(&c.sub, FUNCTION_NAME, s_names + i);
		if (!err)
			err = pb_uint(&c.sub, FUNCTION_SYSTEM_NAME, s_names + i);
		if (!err)
			err = pb_msg(out, PROFILE_FUNCTION, &c.sub);
	}
	const char *fixed[] = {"", p->sample_type, p->unit};
	for (size_t i = 0; i < 3 && !err; i++)
		err = pb_bytes(out, PROFILE_STRING_TABLE, fixed[i], strlen(fixed[i]));
	for (size_t i = 0; i < p->nnames && !err; i++)
		err = pb_bytes(out, PROFILE_STRING_TABLE, p->names[i],
			       strlen(p->names[i]));
	if (!err)
		err = value_type(out, &c.sub, PROFILE_PERIOD_TYPE, s_type, s_unit);
	rtd_buf_free(&c.sub);
	rtd_buf_free(&c.packed);
	return err;
}

int rtd_profile_write_pprof(const rtd_profile *p, FILE *f)
{
	rtd_buf raw;
	rtd_buf_init(&raw, 0);
	int err = encode(p, &raw);
	if (err) {
		rtd_buf_free(&raw);
		return err;
	}
	z_stream z = {0};
	/* windowBits 15 + 16: a gzip wrapper, which pprof expects */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		rtd_buf_free(&raw);
		return -ENOMEM;
	}
	z.next_in = raw.data;
	z.avail_in = (uInt)raw.len;
	uint8_t chunk[1 << 16];
	int zr;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, Z_FINISH);
		size_t have = sizeof(chunk) - z.avail_out;
		if (have && fwrite(chunk, 1, have, f) != have) {
			err = -EIO;
			break;
		}
	} while (zr == Z_OK);
	if (!err && zr != Z_STREAM_END)
		err = -EIO;
	deflateEnd(&z);
	rtd_buf_free(&raw);
	return err;
}
