/* SPDX-License-Identifier: MIT */
/*
 * v1.c - the old Go trace format (Go 1.5-1.21): event table, header,
 * wire reading and argument meaning.
 *
 * Facts from Go 1.19's src/internal/trace/parser.go (readTrace, argNum,
 * parseEvents) and golang/exp trace/internal/oldtrace (1.21).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotrace/gotrace_int.h"

#define A(...) (const char *const[]){__VA_ARGS__}
#define N(...) (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))
/* the table's helper words (rtdiag/gotrace_events.h) */
#define RTD_GOTRACE_ARGS(...) N(__VA_ARGS__), A(__VA_ARGS__)
#define RTD_GOTRACE_NOARGS 0, NULL
#define DESC(id, num, name, ver, stack, args, sargs)                                   \
	[RTD_GO_EV_##id] = {name, ver, stack, args, sargs},

const struct v1_desc v1_descs[RTD_GO_EV_COUNT] = {RTD_GOTRACE1_EVENTS(DESC)};

#define K_END(t) [RTD_GO_EV_##t] = V1K_ENDS
#define K_PARK(t) [RTD_GO_EV_##t] = V1K_ENDS | V1K_PARK
#define K_SYNC(t) [RTD_GO_EV_##t] = V1K_ENDS | V1K_PARK | V1K_SYNC
const uint8_t v1_kind[64] = {
	[RTD_GO_EV_GO_START] = V1K_START,
	[RTD_GO_EV_GO_START_LOCAL] = V1K_START,
	[RTD_GO_EV_GO_START_LABEL] = V1K_START,
	[RTD_GO_EV_GC_STW_START] = V1K_G0,
	[RTD_GO_EV_GC_START] = V1K_G0,
	[RTD_GO_EV_GC_DONE] = V1K_G0,
	[RTD_GO_EV_GC_STW_DONE] = V1K_G0,
	[RTD_GO_EV_GO_SYS_EXIT] = V1K_GA0,
	[RTD_GO_EV_GO_WAITING] = V1K_GA0,
	[RTD_GO_EV_GO_IN_SYSCALL] = V1K_GA0,
	[RTD_GO_EV_CPU_SAMPLE] = V1K_CPU,
	/* off the P: ended, or back to the run queue */
	K_END(GO_END), K_END(GO_STOP), K_END(GO_SCHED), K_END(GO_PREEMPT),
	/* off the P to wait */
	K_PARK(GO_SLEEP), K_PARK(GO_BLOCK), K_PARK(GO_BLOCK_NET), K_PARK(GO_SYS_BLOCK),
	/* off the P to wait on a synchronization object */
	K_SYNC(GO_BLOCK_SEND), K_SYNC(GO_BLOCK_RECV), K_SYNC(GO_BLOCK_SELECT),
	K_SYNC(GO_BLOCK_SYNC), K_SYNC(GO_BLOCK_COND), K_SYNC(GO_BLOCK_GC),
	[RTD_GO_EV_BATCH] = V1K_META,
	[RTD_GO_EV_FREQUENCY] = V1K_META,
	[RTD_GO_EV_TIMER_GOROUTINE] = V1K_META,
	[RTD_GO_EV_STRING] = V1K_META,
	[RTD_GO_EV_STACK] = V1K_META,
};
#undef K_END
#undef K_PARK
#undef K_SYNC

static const char *const batch15_args[] = {"p", "seq", "ticks"};
static const char *const freq15_args[] = {"freq", "unused"};
static const char *const timer15_args[] = {"g", "unused"};

/* Go 1.21's stop-the-world reasons (runtime stwReason strings). */
static const char *const stw121[] = {
	"unknown", "GC mark termination", "GC sweep termination",
	"write heap dump", "goroutine profile", "goroutine profile cleanup",
	"all goroutines stack trace", "read mem stats", "AllThreadsSyscall",
	"GOMAXPROCS", "start trace", "stop trace", "CountPagesInUse (test)",
	"ReadMetricsSlow (test)", "ReadMemStatsSlow (test)",
	"PageCachePagesLeaked (test)", "ResetDebugLog (test)",
};

const char *rtd_gotrace_type_name(unsigned type)
{
	return type < RTD_GO_EV_COUNT && type ? v1_descs[type].name : NULL;
}

int rtd_gotrace_type_lookup(const char *name)
{
	for (unsigned i = 1; i < RTD_GO_EV_COUNT; i++)
		if (strcmp(v1_descs[i].name, name) == 0)
			return (int)i;
	return -1;
}

int v1_parse_header(const uint8_t *b)
{
	static const char tail[] = " trace\0\0\0\0";
	if (b[0] != 'g' || b[1] != 'o' || b[2] != ' ' || b[3] < '1' ||
	    b[3] > '9' || b[4] != '.' || b[5] < '1' || b[5] > '9')
		return -1;
	int ver = b[5] - '0';
	int i = 0;
	for (; i < 2 && b[6 + i] >= '0' && b[6 + i] <= '9'; i++)
		ver = ver * 10 + (b[6 + i] - '0');
	ver += (b[3] - '0') * 1000;
	if (memcmp(b + 6 + i, tail, (size_t)(10 - i)) != 0)
		return -1;
	return ver;
}

int v1_argnum(unsigned typ, int ver)
{
	const struct v1_desc *desc = &v1_descs[typ];
	if (typ == RTD_GO_EV_STACK)
		return -1;
	int n = (int)desc->nargs + (desc->stack ? 1 : 0);
	switch (typ) {
	case RTD_GO_EV_BATCH:
	case RTD_GO_EV_FREQUENCY:
	case RTD_GO_EV_TIMER_GOROUTINE:
		return ver < 1007 ? n + 1 : n;
	}
	n++; /* timestamp */
	if (ver < 1007)
		n++; /* sequence */
	switch (typ) {
	case RTD_GO_EV_GC_SWEEP_DONE:
		if (ver < 1009)
			n -= 2;
		break;
	case RTD_GO_EV_GC_START:
	case RTD_GO_EV_GO_START:
	case RTD_GO_EV_GO_UNBLOCK:
		if (ver < 1007)
			n--;
		break;
	case RTD_GO_EV_GC_STW_START:
		if (ver < 1010)
			n--;
		break;
	}
	return n;
}

/* 0: need more input (not at the end), else the error. */
static int incomplete(rtd_gotrace_dec *d, rtd_rd *r, uint64_t off,
		      const char *what)
{
	if (r->err == -RTD_E_TRUNCATED && (!d->finished || d->peek))
		return 0;
	return gtd_fail_read(d, r, off, what);
}

/* Go's argNum for each type of the trace's version; -2 for a type the
 * version does not have. */
static void argn_init(rtd_gotrace_dec *d)
{
	unsigned inline_max = d->ver < 1007 ? 5 : 4;
	for (unsigned t = 0; t < 64; t++) {
		int n = t >= RTD_GO_EV_COUNT || t == RTD_GO_EV_NONE ||
				v1_descs[t].minver > d->ver
			? -2 : v1_argnum(t, d->ver);
		if (t < RTD_GO_EV_COUNT)
			d->argn[t] = (int8_t)n;
		/* v1_fast_event: the inline count this type must have, or -1;
		 * for the length-prefixed form (up to 8 args, no trailing
		 * string) the count it must hold, or -1 */
		d->fastn[t] = (int8_t)(n >= 0 && (unsigned)n < inline_max &&
				       t != RTD_GO_EV_STRING ? n : -1);
		d->fastlong[t] = (int8_t)(n >= 0 && (unsigned)n >= inline_max && n <= 8 &&
					  t != RTD_GO_EV_STRING && t != RTD_GO_EV_USER_LOG ? n : -1);
	}
	d->narg_base = d->ver < 1007 ? 2 : 1;
	d->inline_max = inline_max;
	d->argn_ver = d->ver;
}

static inline int read_fast(rtd_gotrace_dec *d, rtd_rd *r, uint64_t off,
			    struct v1_raw *raw)
{
	if (r->err)
		return 0;
	unsigned typ, narg;
	size_t n = v1_fast_event(d, r->p, (size_t)(r->end - r->p), &typ, &narg, d->args, 0);
	if (!n)
		return 0;
	*raw = (struct v1_raw){.off = off, .typ = typ, .nargs = narg, .args = d->args};
	r->p += n;
	return 1;
}

int v1_read_raw(rtd_gotrace_dec *d, rtd_rd *r, uint64_t off, struct v1_raw *raw)
{
	int ver = d->ver;
	if (read_fast(d, r, off, raw))
		return 1;
	uint8_t b = rd_u8(r);
	if (!rd_ok(r))
		return incomplete(d, r, off, "an event");
	unsigned typ = b & 0x3f;
	unsigned narg = (unsigned)(b >> 6) + 1;
	unsigned inline_args = 4;
	if (ver < 1007) {
		narg++;
		inline_args++;
	}
	if (typ == RTD_GO_EV_NONE || typ >= RTD_GO_EV_COUNT ||
	    v1_descs[typ].minver > ver)
		return gtd_fail(d, -RTD_E_GO_EVENT, off,
				"unknown event type %u at offset %llu", typ,
				(unsigned long long)off);
	raw->off = off;
	raw->typ = typ;
	raw->nargs = 0;
	raw->s = NULL;
	raw->slen = 0;
	if (gtd_args_reserve(d, 8) < 0)
		return gtd_fail(d, -ENOMEM, off, "out of memory");
	raw->args = d->args;
	if (typ == RTD_GO_EV_STRING) {
		uint64_t id = rd_varuint(r);
		uint64_t len = rd_varuint(r);
		if (!rd_ok(r))
			return incomplete(d, r, off, "a string");
		if (id == 0)
			return gtd_fail(d, -RTD_E_GO_EVENT, off,
					"string at offset %llu has invalid id 0",
					(unsigned long long)off);
		if (len == 0)
			return gtd_fail(d, -RTD_E_GO_EVENT, off,
					"string at offset %llu has invalid length 0",
					(unsigned long long)off);
		if (len > RTD_GOTRACE_MAX_STRING)
			return gtd_fail(d, -RTD_E_CAP, off,
					"string at offset %llu has too large length %llu (limit %u)",
					(unsigned long long)off,
					(unsigned long long)len,
					RTD_GOTRACE_MAX_STRING);
		if (!rd_bytes(r, (size_t)len, &raw->s))
			return incomplete(d, r, off, "a string");
		raw->slen = (size_t)len;
		raw->args[0] = id;
		raw->args[1] = len;
		raw->nargs = 2;
		return 1;
	}
	if (narg < inline_args) {
		for (unsigned i = 0; i < narg; i++)
			raw->args[i] = rd_varuint(r);
		if (!rd_ok(r))
			return incomplete(d, r, off, "an event");
		raw->nargs = narg;
	} else {
		uint64_t len = rd_varuint(r);
		if (!rd_ok(r))
			return incomplete(d, r, off, "an event");
		if (len > RTD_GOTRACE_MAX_EVENT_BYTES)
			return gtd_fail(d, -RTD_E_CAP, off,
					"event %u at offset %llu is %llu bytes long (limit %u)",
					typ, (unsigned long long)off,
					(unsigned long long)len,
					RTD_GOTRACE_MAX_EVENT_BYTES);
		rtd_rd sub;
		if (!rd_sub(r, (size_t)len, &sub))
			return incomplete(d, r, off, "an event");
		unsigned n = 0;
		while (rd_left(&sub) > 0) {
			if (n >= d->args_cap && gtd_args_reserve(d, n + 1) < 0)
				return gtd_fail(d, -ENOMEM, off, "out of memory");
			d->args[n++] = rd_varuint(&sub);
			if (!rd_ok(&sub))
				return gtd_fail(d, -RTD_E_GO_EVENT, off,
						"event has wrong length at offset %llu: want %llu, argument runs past it",
						(unsigned long long)off,
						(unsigned long long)len);
		}
		raw->args = d->args;
		raw->nargs = n;
		if (typ == RTD_GO_EV_USER_LOG) {
			uint64_t slen = rd_varuint(r);
			if (!rd_ok(r))
				return incomplete(d, r, off, "a log message");
			if (slen > RTD_GOTRACE_MAX_STRING)
				return gtd_fail(d, -RTD_E_CAP, off,
						"log message at offset %llu is too large (len=%llu, limit %u)",
						(unsigned long long)off,
						(unsigned long long)slen,
						RTD_GOTRACE_MAX_STRING);
			if (!rd_bytes(r, (size_t)slen, &raw->s))
				return incomplete(d, r, off, "a log message");
			raw->slen = (size_t)slen;
		}
	}
	/* Check the argument count now: Go's parseEvents does the same. */
	if (d->argn_ver != ver)
		argn_init(d);
	int want = d->argn[typ];
	if (typ == RTD_GO_EV_STACK) {
		if (raw->nargs < 2)
			return gtd_fail(d, -RTD_E_GO_EVENT, off,
					"EvStack has wrong number of arguments at offset %llu: want at least 2, got %u",
					(unsigned long long)off, raw->nargs);
		uint64_t size = raw->args[1];
		if (size > RTD_GOTRACE_MAX_FRAMES)
			return gtd_fail(d, -RTD_E_GO_EVENT, off,
					"EvStack has bad number of frames at offset %llu: %llu",
					(unsigned long long)off,
					(unsigned long long)size);
		uint64_t w = ver < 1007 ? 2 + size : 2 + 4 * size;
		if (raw->nargs != w)
			return gtd_fail(d, -RTD_E_GO_EVENT, off,
					"EvStack has wrong number of arguments at offset %llu: want %llu, got %u",
					(unsigned long long)off,
					(unsigned long long)w, raw->nargs);
	} else if ((int)raw->nargs != want) {
		return gtd_fail(d, -RTD_E_GO_EVENT, off,
				"%s has wrong number of arguments at offset %llu: want %d, got %u",
				v1_descs[typ].name, (unsigned long long)off,
				want, raw->nargs);
	}
	return 1;
}

void v1_set_sarg(const rtd_gotrace_dec *d, struct rtd_gotrace_event *ev,
		 unsigned i, uint64_t id)
{
	size_t n;
	const char *s = gtd_str_get(d, id, &n);
	ev->sargs[i] = s ? s : "";
	ev->sarg_lens[i] = s ? n : 0;
}

int v1_fill(rtd_gotrace_dec *d, unsigned type, const struct v1_raw *raw,
	    struct rtd_gotrace_event *ev)
{
	const struct v1_desc *desc = &v1_descs[type];
	v1_fill_head(ev, type, raw->off, raw->nargs, raw->args);
	memset(ev->args, 0, sizeof(ev->args));
	switch (type) {
	case RTD_GO_EV_BATCH:
	case RTD_GO_EV_FREQUENCY:
	case RTD_GO_EV_TIMER_GOROUTINE:
		ev->nargs = raw->nargs;
		for (unsigned i = 0; i < raw->nargs && i < RTD_GOTRACE_MAX_ARGS; i++)
			ev->args[i] = raw->args[i];
		if (d->ver < 1007)
			ev->argnames = type == RTD_GO_EV_BATCH ? batch15_args
				       : type == RTD_GO_EV_FREQUENCY ? freq15_args
								     : timer15_args;
		return 0;
	case RTD_GO_EV_STRING:
		ev->nargs = 0;
		ev->str_id = raw->args[0];
		ev->str = (const char *)raw->s;
		ev->str_len = raw->slen;
		return 0;
	case RTD_GO_EV_STACK: {
		ev->args[0] = raw->args[0];
		ev->args[1] = raw->args[1];
		size_t n = (size_t)raw->args[1];
		if (n > d->frames_cap) {
			struct rtd_gotrace_frame *f =
				realloc(d->frames, n * sizeof(*f));
			if (!f)
				return -ENOMEM;
			d->frames = f;
			d->frames_cap = n;
		}
		for (size_t i = 0; i < n; i++) {
			struct rtd_gotrace_frame *f = &d->frames[i];
			memset(f, 0, sizeof(*f));
			if (d->ver < 1007) {
				f->pc = raw->args[2 + i];
			} else {
				f->pc = raw->args[2 + i * 4];
				f->fn_id = raw->args[2 + i * 4 + 1];
				f->file_id = raw->args[2 + i * 4 + 2];
				f->line = raw->args[2 + i * 4 + 3];
			}
			const char *s = gtd_str_get(d, f->fn_id, NULL);
			f->fn = s ? s : "";
			s = gtd_str_get(d, f->file_id, NULL);
			f->file = s ? s : "";
		}
		ev->nframes = n;
		ev->frames = d->frames;
		return 0;
	}
	}
	unsigned argoff = d->ver < 1007 ? 2 : 1;
	unsigned narg = raw->nargs;
	for (unsigned i = argoff; i < narg; i++) {
		if (i == narg - 1 && desc->stack)
			ev->stack = raw->args[i];
		else if (i - argoff < RTD_GOTRACE_MAX_ARGS)
			ev->args[i - argoff] = raw->args[i];
	}
	switch (type) {
	case RTD_GO_EV_GO_START_LABEL:
		ev->nsargs = 1;
		v1_set_sarg(d, ev, 0, ev->args[2]);
		break;
	case RTD_GO_EV_GC_STW_START: {
		uint64_t k = ev->args[0];
		ev->nsargs = 1;
		if (d->ver >= 1021) {
			ev->sargs[0] = k < sizeof(stw121) / sizeof(stw121[0])
					       ? stw121[k]
					       : "unknown";
		} else if (k == 0) {
			ev->sargs[0] = "mark termination";
		} else if (k == 1) {
			ev->sargs[0] = "sweep termination";
		} else {
			return gtd_fail(d, -RTD_E_GO_EVENT, raw->off,
					"unknown STW kind %llu at offset %llu",
					(unsigned long long)k,
					(unsigned long long)raw->off);
		}
		ev->sarg_lens[0] = strlen(ev->sargs[0]);
		break;
	}
	case RTD_GO_EV_USER_TASK_CREATE:
	case RTD_GO_EV_USER_REGION:
		ev->nsargs = 1;
		v1_set_sarg(d, ev, 0, ev->args[2]);
		break;
	case RTD_GO_EV_USER_LOG: {
		ev->nsargs = 2;
		v1_set_sarg(d, ev, 0, ev->args[1]);
		rtd_buf_reset(&d->sbuf);
		int rc = rtd_buf_append(&d->sbuf, raw->s ? raw->s : (const uint8_t *)"",
					raw->slen);
		if (rc < 0)
			return gtd_fail(d, rc, raw->off, "log message: %s",
					rtd_strerror(rc));
		ev->sargs[1] = rtd_buf_cstr(&d->sbuf);
		ev->sarg_lens[1] = raw->slen;
		break;
	}
	}
	return 0;
}
