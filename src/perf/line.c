/* SPDX-License-Identifier: MIT */
/*
 * line.c - perf events as lines of text or JSON (rtdiag/perf_line.h), as
 * `rtdiag perf trace` prints them.
 */
#include <arpa/inet.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "rtdiag/perf_line.h"
#include "rtdiag/perf_monitor.h"
#include "rtdiag/perf_sample.h"
#include "rtdiag/perf_tracepoint.h"

struct rtd_perf_line {
	bool json;
	rtd_buf b;
	uint64_t t0; /* the first system call's start: text times count from it */
};

rtd_perf_line *rtd_perf_line_new(unsigned flags)
{
	rtd_perf_line *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->json = flags & RTD_PERF_LINE_JSON;
	rtd_buf_init(&l->b, RTD_CAP_LINE);
	return l;
}

void rtd_perf_line_free(rtd_perf_line *l)
{
	if (!l)
		return;
	rtd_buf_free(&l->b);
	free(l);
}

static const char *line_out(rtd_perf_line *l, size_t *len)
{
	if (len)
		*len = l->b.len;
	return l->b.data ? (const char *)l->b.data : "";
}

/* Numbers without printf: this runs once per field of every event. */
static void put_u64(rtd_buf *b, uint64_t v)
{
	char t[24];
	int i = 24;
	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	rtd_buf_append(b, t + i, (size_t)(24 - i));
}

static void put_i64(rtd_buf *b, int64_t v)
{
	if (v < 0) {
		rtd_buf_putc(b, '-');
		put_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(b, (uint64_t)v);
	}
}

static void put_hex(rtd_buf *b, uint64_t v)
{
	char t[18];
	int i = 18;
	do {
		t[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	t[--i] = 'x';
	t[--i] = '0';
	rtd_buf_append(b, t + i, (size_t)(18 - i));
}

/* v as exactly width digits, zero-padded (v < 10^width). */
static void put_fixed(rtd_buf *b, uint64_t v, int width)
{
	char t[20];
	for (int i = width - 1; i >= 0; i--) {
		t[i] = (char)('0' + v % 10);
		v /= 10;
	}
	rtd_buf_append(b, t, (size_t)width);
}

/* Text: quoted with C escapes. */
static void put_text_str(rtd_buf *b, const char *s, size_t n)
{
	rtd_buf_putc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			rtd_buf_printf(b, "\\%c", c);
		else if (c == '\n')
			rtd_buf_puts(b, "\\n");
		else if (c == '\t')
			rtd_buf_puts(b, "\\t");
		else if (c < 0x20 || c == 0x7f)
			rtd_buf_printf(b, "\\x%02x", c);
		else
			rtd_buf_putc(b, (char)c);
	}
	rtd_buf_putc(b, '"');
}

/* An address as the event's print format shows it; false when the bytes
 * do not fit the form. */
static bool put_address(rtd_buf *b, const struct rtd_perf_value *v,
			unsigned print, bool json)
{
	char t[INET6_ADDRSTRLEN + 2];
	if (print == RTD_PERF_PRINT_IPV4 && v->len == 4)
		inet_ntop(AF_INET, v->data, t, sizeof(t));
	else if (print == RTD_PERF_PRINT_IPV6 && v->len == 16)
		inet_ntop(AF_INET6, v->data, t, sizeof(t));
	else if (print == RTD_PERF_PRINT_MAC && v->len == 6)
		snprintf(t, sizeof(t), "%02x:%02x:%02x:%02x:%02x:%02x", v->data[0],
			 v->data[1], v->data[2], v->data[3], v->data[4], v->data[5]);
	else
		return false;
	if (json)
		rtd_buf_json_str(b, t, strlen(t));
	else
		rtd_buf_puts(b, t);
	return true;
}

static void put_value(rtd_buf *b, const struct rtd_perf_value *v, unsigned print,
		      bool json)
{
	switch (v->kind) {
	case RTD_PERF_FIELD_INT:
		put_i64(b, v->i);
		break;
	case RTD_PERF_FIELD_UINT:
		if (v->is_pointer) {
			if (json)
				rtd_buf_putc(b, '"');
			put_hex(b, v->u);
			if (json)
				rtd_buf_putc(b, '"');
		} else {
			put_u64(b, v->u);
		}
		break;
	case RTD_PERF_FIELD_STRING:
		if (json)
			rtd_buf_json_str(b, v->str, v->len);
		else
			put_text_str(b, v->str, v->len);
		break;
	case RTD_PERF_FIELD_ARRAY: {
		if (print && put_address(b, v, print, json))
			break;
		unsigned es = v->elem_size;
		if (es != 1 && es != 2 && es != 4 && es != 8)
			es = 1;
		size_t n = v->len / es;
		rtd_buf_putc(b, '[');
		for (size_t i = 0; i < n && i < 256; i++) {
			uint64_t x = 0;
			for (unsigned k = 0; k < es; k++)
				x |= (uint64_t)v->data[i * es + k] << (8 * k);
			if (i)
				rtd_buf_putc(b, ',');
			put_u64(b, x);
		}
		if (n > 256)
			rtd_buf_puts(b, json ? "" : ",...");
		rtd_buf_putc(b, ']');
		break;
	}
	}
}

const char *rtd_perf_line_value(rtd_perf_line *l, const struct rtd_perf_value *v,
				unsigned print, size_t *len)
{
	rtd_buf_reset(&l->b);
	put_value(&l->b, v, print, l->json);
	return line_out(l, len);
}

const char *rtd_perf_line_syscall(rtd_perf_line *l, struct rtd_perf_syscalls *sc,
				  const struct rtd_perf_syscall *c, size_t *len)
{
	rtd_buf *b = &l->b;
	char args[4096] = "", ret[128];
	const char *comm = c->comm;
	rtd_perf_syscalls_format_args(sc, c, args, sizeof(args));
	rtd_perf_syscalls_format_ret(c, ret, sizeof(ret));
	char num[32];
	snprintf(num, sizeof(num), "syscall_%ld", c->nr);
	const char *name = c->name ? c->name : num;
	uint64_t start = c->has_enter ? c->enter_ns : c->exit_ns;
	if (!l->t0)
		l->t0 = start;
	rtd_buf_reset(b);
	if (l->json) {
		rtd_buf_printf(b, "{\"time_ns\":%llu,\"pid\":%u,\"tid\":%u,\"comm\":",
			       (unsigned long long)start, c->pid, c->tid);
		rtd_buf_json_str(b, comm, strlen(comm));
		rtd_buf_puts(b, ",\"syscall\":");
		rtd_buf_json_str(b, name, strlen(name));
		rtd_buf_puts(b, ",\"args\":");
		rtd_buf_json_str(b, args, strlen(args));
		rtd_buf_printf(b, ",\"ret\":%lld", (long long)c->ret);
		if (c->ret < 0 && c->ret >= -4095) {
			const char *en = strerrorname_np((int)-c->ret);
			rtd_buf_puts(b, ",\"errno\":");
			rtd_buf_json_str(b, en ? en : "", en ? strlen(en) : 0);
		}
		if (c->has_enter)
			rtd_buf_printf(b, ",\"duration_ns\":%llu",
				       (unsigned long long)(c->exit_ns - c->enter_ns));
		rtd_buf_puts(b, "}\n");
	} else {
		double t = (double)(start - l->t0) / 1e6;
		if (c->has_enter)
			rtd_buf_printf(b, "%10.3f (%7.3f ms): %s/%u %s(%s) = %s\n", t,
				       (double)(c->exit_ns - c->enter_ns) / 1e6, comm,
				       c->tid, name, args, ret);
		else
			rtd_buf_printf(b, "%10.3f (        ?   ): %s/%u ... [continued]: %s() = %s\n",
				       t, comm, c->tid, name, ret);
	}
	return line_out(l, len);
}

const char *rtd_perf_line_sample(rtd_perf_line *l, const struct rtd_perf_sample *s,
				 size_t *len)
{
	rtd_buf *b = &l->b;
	if (len)
		*len = 0;
	if (!s || !s->event)
		return NULL;
	rtd_buf_reset(b);
	const char *name = rtd_perf_event_name(s->event);
	const char *sym = rtd_perf_event_symbol(s->event);
	unsigned nf = rtd_perf_event_nfields(s->event);
	if (l->json) {
		rtd_buf_printf(b, "{\"time_ns\":%llu,\"cpu\":%u,\"pid\":%u,"
				  "\"tid\":%u,\"event\":",
			       (unsigned long long)s->time, s->cpu, s->pid,
			       s->tid);
		rtd_buf_json_str(b, name, strlen(name));
		if (sym) {
			rtd_buf_puts(b, ",\"symbol\":");
			rtd_buf_json_str(b, sym, strlen(sym));
		}
		if (s->has & PERF_SAMPLE_IP)
			rtd_buf_printf(b, ",\"ip\":\"0x%llx\"",
				       (unsigned long long)s->ip);
		rtd_buf_puts(b, ",\"fields\":{");
	} else {
		put_u64(b, s->time / 1000000000ull);
		rtd_buf_putc(b, '.');
		put_fixed(b, s->time % 1000000000ull, 9);
		rtd_buf_puts(b, " [");
		if (s->cpu < 1000)
			put_fixed(b, s->cpu, 3);
		else
			put_u64(b, s->cpu);
		rtd_buf_puts(b, "] ");
		put_u64(b, s->pid);
		rtd_buf_putc(b, '/');
		put_u64(b, s->tid);
		rtd_buf_putc(b, ' ');
		rtd_buf_puts(b, name);
		rtd_buf_putc(b, ':');
		if (sym) {
			rtd_buf_putc(b, ' ');
			rtd_buf_puts(b, sym);
		}
	}
	for (unsigned i = 0; i < nf; i++) {
		const struct rtd_perf_field *f = rtd_perf_event_field(s->event, i);
		struct rtd_perf_value v;
		int r = rtd_perf_sample_field_at(s, i, &v);
		if (l->json) {
			if (i)
				rtd_buf_putc(b, ',');
			rtd_buf_json_str(b, f->name, strlen(f->name));
			rtd_buf_putc(b, ':');
		} else {
			rtd_buf_putc(b, ' ');
			rtd_buf_puts(b, f->name);
			rtd_buf_putc(b, '=');
		}
		if (r)
			rtd_buf_puts(b, l->json ? "null" : "<truncated>");
		else
			put_value(b, &v, f->print, l->json);
	}
	rtd_buf_puts(b, l->json ? "}}\n" : "\n");
	return line_out(l, len);
}
