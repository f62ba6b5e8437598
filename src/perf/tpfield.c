/* SPDX-License-Identifier: MIT */
/*
 * tpfield.c - tracepoint formats (parsed by libtraceevent) and the
 * bounds-checked decoding of their fields from a sample's raw data.
 *
 * A __data_loc field holds a u32: the data's offset in the low 16 bits
 * and its length in the high 16. A __rel_loc field is the same, except
 * that the offset counts from the end of the field itself
 * (include/trace/stages/stage2_data_offsets.h and trace_events.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "perf/internal.h"

void perf_fields_free(struct rtd_perf_field *f, unsigned n)
{
	if (!f)
		return;
	for (unsigned i = 0; i < n; i++) {
		free((char *)f[i].name);
		free((char *)f[i].type);
	}
	free(f);
}

/* "char x[16]", "const char *", "__data_loc char[] name": text. */
static bool is_char_type(const char *type)
{
	const char *t = type;
	if (!strncmp(t, "__data_loc ", 11))
		t += 11;
	else if (!strncmp(t, "__rel_loc ", 10))
		t += 10;
	if (!strncmp(t, "const ", 6))
		t += 6;
	if (!strncmp(t, "signed ", 7))
		t += 7;
	return !strncmp(t, "char", 4) && !isalnum((unsigned char)t[4]) &&
	       t[4] != '_';
}

static int field_from_tep(const struct tep_format_field *t,
			  struct rtd_perf_field *f)
{
	memset(f, 0, sizeof(*f));
	f->name = strdup(t->name ? t->name : "");
	f->type = strdup(t->type ? t->type : "");
	if (!f->name || !f->type)
		return -ENOMEM;
	if (t->offset < 0 || t->size < 0)
		return -RTD_E_FORMAT;
	f->offset = (unsigned)t->offset;
	f->size = (unsigned)t->size;
	f->is_signed = !!(t->flags & TEP_FIELD_IS_SIGNED);
	/* probes' __probe_ip is declared unsigned long but is an address */
	f->is_pointer = !!(t->flags & TEP_FIELD_IS_POINTER) ||
			!strcmp(f->name, "__probe_ip");
	f->is_dynamic = !!(t->flags & TEP_FIELD_IS_DYNAMIC);
	f->is_relative = !!(t->flags & TEP_FIELD_IS_RELATIVE);
	/* text is a char array; "__u8 saddr[4]" and "unsigned char x[6]"
	 * are bytes, printed as arrays (perf prints [127,0,0,1]) */
	bool is_char = is_char_type(f->type);
	if (f->is_dynamic) {
		f->kind = is_char ? RTD_PERF_FIELD_STRING : RTD_PERF_FIELD_ARRAY;
		f->elem_size = t->elementsize ? t->elementsize : 1;
	} else if (t->flags & TEP_FIELD_IS_ARRAY) {
		f->kind = is_char ? RTD_PERF_FIELD_STRING : RTD_PERF_FIELD_ARRAY;
		f->elem_size = t->elementsize ? t->elementsize : 1;
	} else if (f->size == 1 || f->size == 2 || f->size == 4 ||
		   f->size == 8) {
		f->kind = f->is_signed && !f->is_pointer ? RTD_PERF_FIELD_INT
							 : RTD_PERF_FIELD_UINT;
	} else {
		f->kind = RTD_PERF_FIELD_ARRAY;
		f->elem_size = 1;
	}
	return 0;
}

/* The print format's address conversions (%pI4, %pI6c, %pM) of plain
 * fields: the specs and the arguments are matched in order. */
static void print_hints(struct tep_event *e, struct rtd_perf_field *f,
			unsigned n)
{
	const char *fmt = e->print_fmt.format;
	struct tep_print_arg *arg = e->print_fmt.args;
	for (const char *p = fmt; p && *p && arg; p++) {
		if (*p != '%')
			continue;
		if (p[1] == '%') {
			p++;
			continue;
		}
		/* flags, width, precision, length: up to the conversion */
		const char *c = p + 1;
		while (*c && strchr("-+ #0123456789.*lhzjt", *c))
			c++;
		unsigned hint = RTD_PERF_PRINT_DEFAULT;
		if (c[0] == 'p' && c[1] == 'I' && c[2] == '4')
			hint = RTD_PERF_PRINT_IPV4;
		else if (c[0] == 'p' && c[1] == 'I' && c[2] == '6')
			hint = RTD_PERF_PRINT_IPV6;
		else if (c[0] == 'p' && (c[1] == 'M' || c[1] == 'm'))
			hint = RTD_PERF_PRINT_MAC;
		if (hint && arg->type == TEP_PRINT_FIELD && arg->field.name)
			for (unsigned i = 0; i < n; i++)
				if (!strcmp(f[i].name, arg->field.name))
					f[i].print = hint;
		arg = arg->next;
		p = *c ? c : c - 1;
	}
}

int perf_fields_from_format(struct tep_handle *tep, const char *sys,
			    const char *buf, size_t len, int *id,
			    struct rtd_perf_field **fields, unsigned *nall,
			    unsigned *ncommon)
{
	struct tep_event *e = NULL;
	enum tep_errno te = tep_parse_format(tep, &e, buf, len, sys);
	if (te != 0 || !e)
		return -RTD_E_FORMAT;
	return perf_fields_from_event(e, id, fields, nall, ncommon);
}

int perf_fields_from_event(struct tep_event *e, int *id,
			   struct rtd_perf_field **fields, unsigned *nall,
			   unsigned *ncommon)
{
	struct tep_format_field **cf = tep_event_common_fields(e);
	struct tep_format_field **of = tep_event_fields(e);
	unsigned nc = 0, no = 0;
	while (cf && cf[nc])
		nc++;
	while (of && of[no])
		no++;
	struct rtd_perf_field *f = calloc(nc + no + 1, sizeof(*f));
	int r = f ? 0 : -ENOMEM;
	unsigned done = 0;
	for (unsigned i = 0; !r && i < nc + no; i++, done++)
		r = field_from_tep(i < nc ? cf[i] : of[i - nc], &f[i]);
	free(cf);
	free(of);
	if (r) {
		/* the failed entry may hold one string: free it too */
		perf_fields_free(f, done + (f ? 1 : 0));
		return r;
	}
	print_hints(e, f, nc + no);
	*id = e->id;
	*fields = f;
	*nall = nc + no;
	*ncommon = nc;
	return 0;
}

static uint64_t le_uint(const uint8_t *p, unsigned size)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int perf_field_decode(const struct rtd_perf_field *f, const uint8_t *raw,
		      size_t raw_size, struct rtd_perf_value *v)
{
	memset(v, 0, sizeof(*v));
	v->kind = f->kind;
	v->is_pointer = f->is_pointer;
	v->elem_size = f->elem_size;
	if (f->offset > raw_size || f->size > raw_size - f->offset)
		return -RTD_E_TRUNCATED;
	const uint8_t *p = raw + f->offset;
	size_t len = f->size;
	if (f->is_dynamic) {
		if (f->size != 4)
			return -RTD_E_FORMAT;
		uint32_t loc = (uint32_t)le_uint(p, 4);
		size_t off = loc & 0xffff;
		len = loc >> 16;
		if (f->is_relative)
			off += f->offset + f->size;
		if (off > raw_size || len > raw_size - off)
			return -RTD_E_TRUNCATED;
		p = raw + off;
	}
	if (f->kind == RTD_PERF_FIELD_INT || f->kind == RTD_PERF_FIELD_UINT) {
		if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
			return -RTD_E_FORMAT;
		if (len < f->size) /* a dynamic field shorter than its type */
			return -RTD_E_TRUNCATED;
	}
	switch (f->kind) {
	case RTD_PERF_FIELD_STRING: {
		const uint8_t *nul = memchr(p, 0, len);
		v->str = (const char *)p;
		v->len = nul ? (size_t)(nul - p) : len;
		v->data = p;
		break;
	}
	case RTD_PERF_FIELD_ARRAY:
		v->data = p;
		v->len = len;
		break;
	case RTD_PERF_FIELD_INT: {
		uint64_t u = le_uint(p, f->size);
		unsigned sh = 64 - 8 * f->size;
		v->i = sh < 64 ? (int64_t)(u << sh) >> sh : (int64_t)u;
		v->u = (uint64_t)v->i;
		break;
	}
	case RTD_PERF_FIELD_UINT:
		v->u = le_uint(p, f->size);
		v->i = (int64_t)v->u;
		break;
	}
	return 0;
}

int perf_tracepoint_load(struct rtd_perf_monitor *m, struct rtd_perf_event *ev,
			 const char *sys, const char *name)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/events/%s/%s/format",
			 m->tracefs, sys, name);
	if (n < 0 || (size_t)n >= sizeof(path) || strchr(sys, '/') ||
	    strchr(name, '/') || !strcmp(sys, "..") || !strcmp(name, ".."))
		return perf_set_err(m, -RTD_E_INVAL, "%s:%s: bad event name",
				    sys, name);
	char *buf = malloc(PERF_MAX_FORMAT);
	if (!buf)
		return -ENOMEM;
	int r = rtd_read_small(path, buf, PERF_MAX_FORMAT);
	if (r < 0) {
		free(buf);
		if (r == -ENOENT)
			return perf_set_err(m, -RTD_E_PERF_NOEVENT,
					    "%s:%s: no such tracepoint (%s)",
					    sys, name, path);
		if (r == -EACCES || r == -EPERM)
			return perf_set_err(m, r,
					    "%s:%s: permission denied reading %s "
					    "(tracefs is root's only: run as root, or "
					    "mount -o remount,mode=755 %s)",
					    sys, name, path, m->tracefs);
		return perf_set_err(m, r, "%s: %s", path, strerror(-r));
	}
	int id;
	r = perf_fields_from_format(m->tep, sys, buf, (size_t)r, &id,
				    &ev->fields, &ev->nfields_all,
				    &ev->ncommon);
	free(buf);
	if (r < 0)
		return perf_set_err(m, r, "%s: cannot parse the format", path);
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = (uint64_t)id;
	ev->attr.sample_type |= PERF_SAMPLE_RAW;
	return 0;
}
