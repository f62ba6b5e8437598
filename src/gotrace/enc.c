/* SPDX-License-Identifier: MIT */
/*
 * enc.c - the old-format encoder: writes events as the runtime does (a
 * type byte with the argument count in its top two bits, LEB128
 * arguments, length-prefixed when there are too many to count inline),
 * recomputing timestamp and sequence deltas so events can be dropped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotrace/gotrace_int.h"
#include "gotrace/v2.h"

#define ENC_BUF (1u << 16)

struct rtd_gotrace_enc {
	int ver;
	rtd_gotrace_write_fn write;
	void *ctx;
	int err;
	int64_t last_ts, last_seq;
	size_t len;
	uint8_t buf[ENC_BUF];
	uint8_t ev[RTD_GOTRACE_MAX_EVENT_BYTES + 32];
};

int rtd_gotrace_enc_flush(rtd_gotrace_enc *e)
{
	if (e->err)
		return e->err;
	if (e->len) {
		int rc = e->write(e->buf, e->len, e->ctx);
		e->len = 0;
		if (rc < 0)
			return e->err = rc;
	}
	return 0;
}

static int put(rtd_gotrace_enc *e, const void *p, size_t n)
{
	if (e->err)
		return e->err;
	if (e->len + n > sizeof(e->buf)) {
		int rc = rtd_gotrace_enc_flush(e);
		if (rc < 0)
			return rc;
		if (n > sizeof(e->buf)) {
			rc = e->write(p, n, e->ctx);
			return rc < 0 ? (e->err = rc) : 0;
		}
	}
	memcpy(e->buf + e->len, p, n);
	e->len += n;
	return 0;
}


rtd_gotrace_enc *rtd_gotrace_enc_new(int version, rtd_gotrace_write_fn write,
				     void *ctx)
{
	if (!gtd_version_known(version) || !write)
		return NULL;
	rtd_gotrace_enc *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->ver = version;
	e->write = write;
	e->ctx = ctx;
	char hdr[32];
	memset(hdr, 0, sizeof(hdr));
	snprintf(hdr, sizeof(hdr), "go %d.%d trace", version / 1000, version % 1000);
	put(e, hdr, 16);
	return e;
}

void rtd_gotrace_enc_free(rtd_gotrace_enc *e)
{
	if (!e)
		return;
	rtd_gotrace_enc_flush(e);
	free(e);
}

/* Type byte, arguments, and (UserLog) the inline message. */
static int put_event(rtd_gotrace_enc *e, unsigned type, const uint64_t *args,
		     unsigned n, const char *s, size_t slen, bool force_len)
{
	uint8_t *o = e->ev;
	size_t k = 0;
	unsigned inline_max = e->ver < 1007 ? 4 : 3; /* counted in 2 bits */
	unsigned bias = e->ver < 1007 ? 2 : 1;
	if (n < bias)
		return -RTD_E_INVAL;
	if (n <= inline_max && !force_len) {
		o[k++] = (uint8_t)(type | (n - bias) << 6);
		for (unsigned i = 0; i < n; i++)
			k += v2_put_uvarint(o + k, args[i]);
		int rc = put(e, o, k);
		if (rc < 0)
			return rc;
	} else {
		uint8_t tmp[16];
		size_t body = 0;
		for (unsigned i = 0; i < n; i++)
			body += v2_put_uvarint(tmp, args[i]);
		if (body > RTD_GOTRACE_MAX_EVENT_BYTES)
			return -RTD_E_CAP;
		o[k++] = (uint8_t)(type | 3u << 6);
		k += v2_put_uvarint(o + k, body);
		for (unsigned i = 0; i < n; i++)
			k += v2_put_uvarint(o + k, args[i]);
		int rc = put(e, o, k);
		if (rc < 0)
			return rc;
	}
	if (type == RTD_GO_EV_USER_LOG) {
		uint8_t tmp[16];
		int rc = put(e, tmp, v2_put_uvarint(tmp, slen));
		if (rc == 0 && slen)
			rc = put(e, s, slen);
		return rc;
	}
	return 0;
}

int rtd_gotrace_enc_event(rtd_gotrace_enc *e, const struct rtd_gotrace_event *ev)
{
	if (e->err)
		return e->err;
	unsigned t = ev->type;
	if (e->ver >= 1022) {
		/* New format: the event as it was read (Go's raw writer). */
		const struct v2_spec *sp = v2_spec_for(t, e->ver);
		if (!sp || !ev->raw)
			return -RTD_E_INVAL;
		size_t want = sp->nargs;
		if (sp->flags & V2_STACK)
			want = ev->nraw >= 2 ? 2 + 4 * (size_t)ev->raw[1] : 2;
		if (ev->nraw != want)
			return -RTD_E_INVAL;
		uint8_t tmp[16];
		tmp[0] = (uint8_t)t;
		int rc = put(e, tmp, 1);
		for (unsigned i = 0; i < ev->nraw && rc == 0; i++)
			rc = put(e, tmp, v2_put_uvarint(tmp, ev->raw[i]));
		if (rc == 0 && (sp->flags & V2_DATA)) {
			rc = put(e, tmp, v2_put_uvarint(tmp, ev->str_len));
			if (rc == 0 && ev->str_len)
				rc = put(e, ev->str, ev->str_len);
		}
		return rc;
	}
	if (t == RTD_GO_EV_NONE || t >= RTD_GO_EV_COUNT ||
	    v1_descs[t].minver > e->ver)
		return -RTD_E_INVAL;
	if (t == RTD_GO_EV_STRING) {
		if (ev->str_len == 0 || ev->str_len > RTD_GOTRACE_MAX_STRING)
			return -RTD_E_INVAL;
		uint8_t tmp[24];
		size_t k = 0;
		tmp[k++] = RTD_GO_EV_STRING;
		k += v2_put_uvarint(tmp + k, ev->str_id);
		k += v2_put_uvarint(tmp + k, ev->str_len);
		int rc = put(e, tmp, k);
		return rc < 0 ? rc : put(e, ev->str, ev->str_len);
	}
	if (t == RTD_GO_EV_STACK) {
		/* Rebuilt from the frames, so a stack can come from a table. */
		size_t per = e->ver < 1007 ? 1 : 4;
		size_t n = 2 + per * ev->nframes;
		if (ev->nframes > RTD_GOTRACE_MAX_FRAMES)
			return -RTD_E_CAP;
		uint64_t *a = malloc(n * sizeof(*a));
		if (!a)
			return -ENOMEM;
		a[0] = ev->args[0];
		a[1] = ev->nframes;
		for (size_t i = 0; i < ev->nframes; i++) {
			const struct rtd_gotrace_frame *f = &ev->frames[i];
			if (per == 1) {
				a[2 + i] = f->pc;
			} else {
				a[2 + 4 * i] = f->pc;
				a[3 + 4 * i] = f->fn_id;
				a[4 + 4 * i] = f->file_id;
				a[5 + 4 * i] = f->line;
			}
		}
		/* the runtime always writes stacks length-prefixed */
		int rc = put_event(e, t, a, (unsigned)n, NULL, 0, true);
		free(a);
		return rc;
	}
	if (!ev->raw || ev->nraw > RTD_GOTRACE_MAX_ARGS)
		return -RTD_E_INVAL;
	uint64_t a[RTD_GOTRACE_MAX_ARGS];
	memcpy(a, ev->raw, ev->nraw * sizeof(*a));
	switch (t) {
	case RTD_GO_EV_BATCH:
		e->last_ts = ev->ticks;
		e->last_seq = ev->seq;
		break;
	case RTD_GO_EV_FREQUENCY:
	case RTD_GO_EV_TIMER_GOROUTINE:
		break;
	default:
		if (e->ver < 1007) {
			if (ev->nraw < 2)
				return -RTD_E_INVAL;
			a[0] = (uint64_t)(ev->seq - e->last_seq);
			a[1] = (uint64_t)(ev->ticks - e->last_ts);
			e->last_seq = ev->seq;
		} else {
			if (ev->nraw < 1)
				return -RTD_E_INVAL;
			a[0] = (uint64_t)(ev->ticks - e->last_ts);
		}
		e->last_ts = ev->ticks;
	}
	return put_event(e, t, a, ev->nraw,
			 t == RTD_GO_EV_USER_LOG ? ev->sargs[1] : NULL,
			 t == RTD_GO_EV_USER_LOG ? ev->sarg_lens[1] : 0, false);
}
