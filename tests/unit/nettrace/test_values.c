/* SPDX-License-Identifier: MIT */
/*
 * test_values - decoded field values equal the first-event samples in
 * TraceEvent's baselines: for every event type of every baseline, our
 * earliest event of that type (TraceLog lists events in time order) has
 * the same thread and the same value for every field TraceEvent shows.
 *
 * Values TraceEvent renders through a value map (Reason="AllocSmall") are
 * names, not numbers; they are counted and reported, not compared. Events
 * whose TraceEvent rendering is not a plain field list (nested structs
 * shown as child elements) compare only their top-level attributes.
 */
#include "test_util.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "common/buf.h"
#include "nt_test.h"

struct first {
	uint64_t ts;
	uint64_t tid;
	char *fields; /* "name\tvalue\n"... */
	char activity[33];
};

struct ctx {
	rtd_nettrace *dec;
	rtd_strmap types;
	char key[1024];
	rtd_buf out;
	int depth_array;
	bool first_elem;
	bool char_array;
	bool in_obj;
	bool obj_first[16];
};

static void put_scalar(rtd_buf *b, const struct rtd_nettrace_value *v)
{
	switch (v->field->type) {
	case RTD_NT_T_I8: case RTD_NT_T_I16: case RTD_NT_T_I32:
	case RTD_NT_T_I64: case RTD_NT_T_VARINT:
		rtd_buf_printf(b, "%" PRId64, v->i);
		break;
	case RTD_NT_T_BOOL8: case RTD_NT_T_BOOL32:
		rtd_buf_puts(b, v->u ? "True" : "False");
		break;
	case RTD_NT_T_F32: case RTD_NT_T_F64:
		rtd_buf_printf(b, "%.17g", v->f);
		break;
	case RTD_NT_T_STRING: case RTD_NT_T_CHAR16: case RTD_NT_T_CHAR8:
	case RTD_NT_T_UTF8Z: case RTD_NT_T_GUID: case RTD_NT_T_DATETIME:
		if (v->str)
			rtd_buf_append(b, v->str, v->str_len);
		break;
	default:
		rtd_buf_printf(b, "%" PRIu64, v->u);
		break;
	}
}

/* TraceEvent's rendering of a struct field: { "a":"text", "b":3 } */
static void obj_item(struct ctx *x, const struct rtd_nettrace_value *v)
{
	rtd_buf *b = &x->out;
	if (!x->obj_first[v->depth])
		rtd_buf_puts(b, ", ");
	x->obj_first[v->depth] = false;
	rtd_buf_printf(b, "\"%s\":", v->name ? v->name : "");
}

static int collect(void *c, const struct rtd_nettrace_value *v)
{
	struct ctx *x = c;
	rtd_buf *b = &x->out;
	if (v->depth >= 15)
		return 0;
	if (x->in_obj) {
		switch (v->kind) {
		case RTD_NT_V_BEGIN_OBJECT:
			obj_item(x, v);
			rtd_buf_puts(b, "{ ");
			x->obj_first[v->depth + 1] = true;
			return 0;
		case RTD_NT_V_END_OBJECT:
			rtd_buf_puts(b, " }");
			if (v->depth == 0) {
				rtd_buf_putc(b, '\n');
				x->in_obj = false;
			}
			return 0;
		case RTD_NT_V_SCALAR:
			obj_item(x, v);
			if (v->str)
				rtd_buf_putc(b, '"');
			put_scalar(b, v);
			if (v->str)
				rtd_buf_putc(b, '"');
			return 0;
		default:
			return 0;
		}
	}
	if (v->depth == 0 && v->kind == RTD_NT_V_BEGIN_OBJECT) {
		rtd_buf_printf(b, "%s\t{ ", v->name);
		x->in_obj = true;
		x->obj_first[1] = true;
		return 0;
	}
	if (v->depth == 0 && v->kind == RTD_NT_V_BEGIN_ARRAY) {
		rtd_buf_printf(b, "%s\t", v->name);
		x->depth_array = 1;
		x->first_elem = true;
		/* TraceEvent shows an array of chars as a string */
		x->char_array = v->field->nfields &&
				v->field->fields[0].type == RTD_NT_T_CHAR16;
		if (!x->char_array)
			rtd_buf_putc(b, '[');
		return 0;
	}
	if (v->depth == 0 && v->kind == RTD_NT_V_END_ARRAY) {
		rtd_buf_puts(b, x->char_array ? "\n" : "]\n");
		x->depth_array = 0;
		return 0;
	}
	if (x->depth_array && v->kind == RTD_NT_V_SCALAR && v->depth == 1) {
		if (x->char_array) {
			if (v->u)
				put_scalar(b, v);
			return 0;
		}
		if (!x->first_elem)
			rtd_buf_putc(b, ',');
		x->first_elem = false;
		put_scalar(b, v);
		return 0;
	}
	if (v->depth != 0 || v->kind != RTD_NT_V_SCALAR)
		return 0;
	rtd_buf_printf(b, "%s\t", v->name);
	put_scalar(b, v);
	rtd_buf_putc(b, '\n');
	return 0;
}

static int on_event(void *c, const struct rtd_nettrace_event *ev)
{
	struct ctx *x = c;
	snprintf(x->key, sizeof(x->key), "%s/%s", ev->meta->provider,
		 ev->meta->name);
	void *v;
	struct first *f;
	if (rtd_strmap_get(&x->types, x->key, strlen(x->key), &v)) {
		f = v;
		if (ev->timestamp >= f->ts)
			return 0;
		free(f->fields);
	} else {
		f = calloc(1, sizeof(*f));
		assert_non_null(f);
		assert_int_equal(rtd_strmap_put(&x->types, x->key,
						strlen(x->key), f), 0);
	}
	f->ts = ev->timestamp;
	f->tid = ev->thread_id;
	/* a GUID's text form: Data1, Data2, Data3 as little-endian
	 * numbers, then the 8 bytes in order */
	static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11,
				      12, 13, 14, 15};
	for (int i = 0; i < 16; i++)
		snprintf(f->activity + 2 * i, 3, "%02X",
			 ev->activity_id[order[i]]);
	rtd_buf_reset(&x->out);
	x->depth_array = 0;
	x->in_obj = false;
	assert_int_equal(rtd_nettrace_walk(x->dec, ev, collect, x), 0);
	f->fields = strdup(rtd_buf_cstr(&x->out));
	return 0;
}

static const char *find_field(const char *fields, const char *name,
			      size_t *len)
{
	size_t n = strlen(name);
	for (const char *p = fields; *p;) {
		const char *tab = strchr(p, '\t');
		const char *nl = strchr(p, '\n');
		if (!tab || !nl)
			return NULL;
		if ((size_t)(tab - p) == n && !strncmp(p, name, n)) {
			*len = (size_t)(nl - tab - 1);
			return tab + 1;
		}
		p = nl + 1;
	}
	return NULL;
}

static void xml_unescape(char *s)
{
	static const struct { const char *e; char c; } m[] = {
		{"&quot;", '"'}, {"&amp;", '&'}, {"&lt;", '<'},
		{"&gt;", '>'}, {"&apos;", '\''}};
	char *w = s;
	for (char *r = s; *r;) {
		bool done = false;
		for (size_t i = 0; i < 5 && *r == '&'; i++) {
			size_t l = strlen(m[i].e);
			if (!strncmp(r, m[i].e, l)) {
				*w++ = m[i].c;
				r += l;
				done = true;
				break;
			}
		}
		if (!done)
			*w++ = *r++;
	}
	*w = 0;
}

/* Parse a TraceEvent number: "104,096", "0x000196A0", "-1", "1.5". */
static bool te_number(const char *s, double *d, uint64_t *u, bool *is_int)
{
	char buf[128];
	size_t n = 0;
	for (const char *p = s; *p && n < sizeof(buf) - 1; p++)
		if (*p != ',')
			buf[n++] = *p;
	buf[n] = 0;
	if (!n)
		return false;
	char *end;
	if (!strncmp(buf, "0x", 2)) {
		*u = strtoull(buf + 2, &end, 16);
		*is_int = true;
		*d = (double)*u;
		return *end == 0;
	}
	if (buf[0] == '-' || isdigit((unsigned char)buf[0])) {
		*is_int = !strchr(buf, '.') && !strchr(buf, 'E') &&
			  !strchr(buf, 'e');
		if (*is_int) {
			*u = buf[0] == '-' ? (uint64_t)strtoll(buf, &end, 10)
					   : strtoull(buf, &end, 10);
			*d = buf[0] == '-' ? (double)(int64_t)*u : (double)*u;
		} else {
			*d = strtod(buf, &end);
		}
		return *end == 0;
	}
	return false;
}

/* Attributes TraceEvent computes rather than reads from the payload. */
static const struct {
	const char *type, *field;
} computed[] = {
	{"Microsoft-Windows-DotNETRuntime/GC/HeapStats", "TotalPromoted"},
	{"Microsoft-Windows-DotNETRuntime/GC/HeapStats", "TotalHeapSize"},
	{"Microsoft-Windows-DotNETRuntime/GC/HeapStats", "Depth"},
	{"Microsoft-Windows-DotNETRuntime/Method/LoadVerbose",
	 "OptimizationTier"},
	{NULL, NULL},
};

static bool is_computed(const char *type, const char *field)
{
	for (int i = 0; computed[i].type; i++)
		if (!strcmp(computed[i].type, type) &&
		    !strcmp(computed[i].field, field))
			return true;
	return false;
}

/* Fields TraceEvent names otherwise than the runtime's manifest. */
static const struct {
	const char *type, *te, *manifest;
} renames[] = {
	{"Microsoft-Windows-DotNETRuntime/GC/MarkWithType", "Promoted",
	 "Bytes"},
	{NULL, NULL, NULL},
};

static const char *renamed(const char *type, const char *field)
{
	for (int i = 0; renames[i].type; i++)
		if (!strcmp(renames[i].type, type) &&
		    !strcmp(renames[i].te, field))
			return renames[i].manifest;
	return field;
}

static const char *const standard_attrs[] = {
	"MSec", "PID", "PName", "TID", "EventName", "ProviderName",
	"FormattedMessage", NULL};

static bool is_standard(const char *name)
{
	for (int i = 0; standard_attrs[i]; i++)
		if (!strcmp(standard_attrs[i], name))
			return true;
	return false;
}

struct tally {
	int compared, enum_names, events, bad, computed, absent;
};

/* Report a mismatch and count it; the test fails at the end. */
#define BAD(...)                                                               \
	do {                                                                   \
		printf("MISMATCH: " __VA_ARGS__);                              \
		printf("\n");                                                  \
		t->bad++;                                                      \
	} while (0)

static void compare_event(const char *vec, const char *type,
			  const struct first *f, char *xml, struct tally *t)
{
	/* only the <Event ...> element's own attributes */
	char *endtag = strstr(xml, ">");
	if (endtag)
		*endtag = 0;
	t->events++;
	for (char *p = strstr(xml, "<Event "); p && *p;) {
		char *eq = strstr(p, "=\"");
		if (!eq)
			break;
		char *name = eq;
		while (name > xml && name[-1] != ' ')
			name--;
		char *vend = strchr(eq + 2, '"');
		if (!vend)
			break;
		char nm[256], val[4096];
		snprintf(nm, sizeof(nm), "%.*s", (int)(eq - name), name);
		snprintf(val, sizeof(val), "%.*s", (int)(vend - eq - 2), eq + 2);
		xml_unescape(val);
		p = vend + 1;
		if (!strcmp(nm, "TID")) {
			uint64_t u;
			double d;
			bool isint;
			assert_true(te_number(val, &d, &u, &isint));
			if (u != f->tid) {
				BAD("%s: %s: TID %s, decoded %" PRIu64, vec,
					 type, val, f->tid);
			}
			continue;
		}
		if (is_standard(nm))
			continue;
		if (!strcmp(nm, "ActivityID")) {
			/* TraceEvent prints the 16 bytes in hex */
			if (strcasecmp(val, f->activity))
				BAD("%s: %s: ActivityID %s, decoded %s", vec,
				    type, val, f->activity);
			else
				t->compared++;
			continue;
		}
		size_t len;
		const char *ours = find_field(f->fields, renamed(type, nm),
					      &len);
		if (!ours && is_computed(type, nm)) {
			t->computed++;
			continue;
		}
		if (!ours && nm[0] == 0) {
			BAD("%s: %s: no struct field for TraceEvent's '%s'", vec,
			    type, val);
			continue;
		}
		if (!ours) {
			/* a field newer than the event's version: TraceEvent
			 * shows its default, zero */
			double d;
			uint64_t u;
			bool isint;
			if (te_number(val, &d, &u, &isint) && d == 0) {
				t->absent++;
				continue;
			}
			BAD("%s: %s: field %s (baseline %s) not decoded",
				 vec, type, nm, val);
			continue;
		}
		char mine[4096];
		snprintf(mine, sizeof(mine), "%.*s", (int)len, ours);
		double bd, md;
		uint64_t bu, mu;
		bool bi, mi;
		if (te_number(val, &bd, &bu, &bi)) {
			if (!te_number(mine, &md, &mu, &mi)) {
				BAD("%s: %s: %s: baseline %s, decoded '%s'",
					 vec, type, nm, val, mine);
				continue;
			}
			/* a UInt32 of the manifest that TraceEvent types as
			 * int (GC/SuspendEEStart Count -1): the same bits */
			bool same = (bi && mi) ? bu == mu ||
						 ((uint32_t)bu == (uint32_t)mu &&
						  (bu >> 32 == 0xffffffffu ||
						   mu >> 32 == 0xffffffffu))
					       : fabs(bd - md) <=
							 1e-6 * fmax(1.0, fabs(bd));
			if (!same)
				BAD("%s: %s: %s: baseline %s, decoded %s",
					 vec, type, nm, val, mine);
			t->compared++;
		} else if (!strcmp(val, mine)) {
			t->compared++;
		} else if (te_number(mine, &md, &mu, &mi) && val[0] != '[') {
			/* TraceEvent shows a value map's name for a number */
			t->enum_names++;
		} else if (val[0] == '[') {
			/* arrays: TraceEvent prints "[a,b]" like ours */
			BAD("%s: %s: %s: baseline %s, decoded %s", vec,
				 type, nm, val, mine);
		} else {
			BAD("%s: %s: %s: baseline '%s', decoded '%s'", vec,
				 type, nm, val, mine);
		}
	}
}

static void test_first_event_values(void **state)
{
	(void)state;
	int done = 0, total_bad = 0;
	for (int i = 0; nt_vectors[i]; i++) {
		char rel[512];
		snprintf(rel, sizeof(rel), "%s.baseline.txt", nt_vectors[i]);
		const char *bp = rtd_test_path("RTD_SHARED_DIR", rel);
		FILE *bf = bp ? fopen(bp, "r") : NULL;
		if (!bf)
			continue;
		const char *path = rtd_test_vector(nt_vectors[i]);
		if (!path) {
			fclose(bf);
			continue;
		}
		size_t len = 0;
		uint8_t *buf = rtd_test_slurp(path, &len);
		struct ctx x;
		memset(&x, 0, sizeof(x));
		rtd_strmap_init(&x.types, 0);
		rtd_buf_init(&x.out, 1 << 24);
		struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = &x,
					      .on_event = on_event};
		x.dec = rtd_nettrace_new(&o);
		assert_int_equal(rtd_nettrace_feed(x.dec, buf, len), 1);
		struct tally t = {0};
		static char line[1 << 20];
		while (fgets(line, sizeof(line), bf)) {
			char *s = line;
			if (!strncmp(s, "\xef\xbb\xbf", 3))
				s += 3;
			char *comma = strstr(s, ", ");
			char *xml = strstr(s, "<Event ");
			if (!comma || !xml)
				continue;
			*comma = 0;
			void *v;
			if (!rtd_strmap_get(&x.types, s, strlen(s), &v))
				continue; /* a merged name, see test_vectors */
			compare_event(nt_vectors[i], s, v, xml, &t);
		}
		fclose(bf);
		printf("ok: %s: %d event types, %d values equal; not compared: "
		       "%d value-map names, %d fields TraceEvent computes, %d "
		       "fields newer than the event's version (TraceEvent "
		       "shows 0)\n", nt_vectors[i], t.events, t.compared,
		       t.enum_names, t.computed, t.absent);
		assert_true(t.compared > 0);
		total_bad += t.bad;
		size_t b = 0;
		rtd_strmap_entry *e = NULL;
		while ((e = rtd_strmap_next(&x.types, &b, e))) {
			free(((struct first *)e->val)->fields);
			free(e->val);
		}
		rtd_strmap_free(&x.types);
		rtd_buf_free(&x.out);
		rtd_nettrace_free(x.dec);
		free(buf);
		done++;
	}
	assert_int_equal(total_bad, 0);
	if (!done)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_event_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
