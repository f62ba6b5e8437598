/* SPDX-License-Identifier: MIT */
/*
 * records.c - the profile as a consumer of the record stream
 * (rtdiag/profile_records.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "rtdiag/profile_records.h"

struct rtd_profile_records {
	rtd_profile *p;
	char *name;          /* the records taken; NULL until the first */
	int64_t period;      /* a unit of @value without a "period" field */
	char *category;      /* slices taken, or NULL */
	char *label;         /* the field copied as a label, or NULL */
	int (*mapping)(void *ctx, rtd_profile *p, const char *module);
	void *mapping_ctx;
	rtd_strmap maps;     /* module -> its mapping id + 1 in p */
	rtd_map threads;     /* tid -> its name (interned by its source) */
	struct rtd_frame *frames;
	size_t fcap;
	uint64_t samples;
	int64_t first, last;
};

rtd_profile_records *rtd_profile_records_new(rtd_profile *p,
					     const struct rtd_profile_records_opts *opts,
					     int *err)
{
	struct rtd_profile_records_opts o;
	int rc = p ? rtd_opts_copy(&o, sizeof(o), opts, RTD_OPTS_END(rtd_profile_records_opts, mapping_ctx))
		   : -RTD_E_INVAL;
	rtd_profile_records *c = rc ? NULL : calloc(1, sizeof(*c));
	if (!rc && !c)
		rc = -ENOMEM;
	if (c && ((o.name && !(c->name = strdup(o.name))) ||
		  (o.category && !(c->category = strdup(o.category))) ||
		  (o.label && !(c->label = strdup(o.label))))) {
		free(c->name);
		free(c->category);
		free(c);
		c = NULL;
		rc = -ENOMEM;
	}
	if (rc) {
		if (err)
			*err = rc;
		return NULL;
	}
	c->p = p;
	c->period = o.period;
	c->mapping = o.mapping;
	c->mapping_ctx = o.mapping_ctx;
	rtd_strmap_init(&c->maps, RTD_PROFILE_RECORDS_MAX_THREADS);
	rtd_map_init(&c->threads, RTD_PROFILE_RECORDS_MAX_THREADS);
	return c;
}

void rtd_profile_records_free(rtd_profile_records *c)
{
	if (!c)
		return;
	rtd_map_free(&c->threads);
	rtd_strmap_free(&c->maps);
	free(c->name);
	free(c->category);
	free(c->label);
	free(c->frames);
	free(c);
}

/* A frame's kind from its module, as the perf.data source names them. */
static uint8_t kind_of(const char *module)
{
	if (!module)
		return RTD_FRAME_UNKNOWN;
	if (module[0] != '[' || !strcmp(module, "[vdso]"))
		return RTD_FRAME_NATIVE;
	if (!strcmp(module, "[jit]"))
		return RTD_FRAME_INTERPRETED;
	if (!strcmp(module, "[anon]") || !strcmp(module, "[unknown]"))
		return RTD_FRAME_UNKNOWN;
	return RTD_FRAME_KERNEL; /* [kernel.kallsyms], [ext4], ... */
}

/* The profile's mapping of a module (0: none), asked once per profile. */
static int mapping_of(rtd_profile_records *c, const char *module)
{
	size_t ml = strlen(module);
	void *v = NULL;
	if (rtd_strmap_get(&c->maps, module, ml, &v))
		return (int)((uintptr_t)v - 1);
	int id = c->mapping(c->mapping_ctx, c->p, module);
	if (id < 0)
		return id;
	int rc = rtd_strmap_put(&c->maps, module, ml, (void *)((uintptr_t)id + 1));
	return rc < 0 ? rc : id;
}

static int add(rtd_profile_records *c, const struct rtd_record *rec)
{
	if (!rec->stack || !rec->name)
		return 0;
	bool slice = rec->kind == RTD_REC_SLICE;
	if (slice && (!c->category || !rec->category || strcmp(c->category, rec->category)))
		return 0;
	if (!slice && !c->name && !(c->name = strdup(rec->name)))
		return -ENOMEM;
	if (!slice && strcmp(c->name, rec->name))
		return 0;
	const struct rtd_stack *st = rec->stack;
	if (st->n > c->fcap) {
		struct rtd_frame *f = realloc(c->frames, st->n * sizeof(*f));
		if (!f)
			return -ENOMEM;
		c->frames = f;
		c->fcap = st->n;
	}
	for (uint32_t i = 0; i < st->n; i++) {
		const struct rtd_rec_frame *rf = &st->frames[i];
		c->frames[i] = (struct rtd_frame){.name = rf->name, .module = rf->module,
						  .file = rf->file, .line = (uint32_t)rf->line,
						  .addr = rf->ip, .inlined = rf->inlined,
						  .kind = rf->kind ? rf->kind : kind_of(rf->module)};
		int rc = c->mapping && rf->module ? mapping_of(c, rf->module) : 0;
		if (rc < 0)
			return rc;
		c->frames[i].mapping = (uint32_t)rc;
	}
	int64_t vals[2] = {rec->kind == RTD_REC_SAMPLE ? (int64_t)rec->value : 1, 0};
	vals[1] = slice ? rec->dur : vals[0] * c->period;
	struct rtd_label lab = {.key = c->label};
	for (size_t i = 0; i < rec->nfields; i++) {
		const struct rtd_field *f = &rec->fields[i];
		if (!f->name)
			continue;
		if (!slice && !strcmp(f->name, "period"))
			vals[1] = (int64_t)f->u;
		if (c->label && f->type == RTD_FIELD_STR && !strcmp(f->name, c->label))
			lab.str = f->s;
	}
	void *tn = NULL;
	rtd_map_get(&c->threads, rec->tid, &tn);
	struct rtd_sample s = {.sz = sizeof(s), .frames = c->frames, .nframes = st->n,
			       .leaf_first = true, .values = vals,
			       .nvalues = rtd_profile_ntypes(c->p) > 1 ? 2 : 1,
			       .pid = rec->pid, .tid = (int64_t)rec->tid, .thread = tn,
			       .labels = lab.str ? &lab : NULL, .nlabels = lab.str ? 1 : 0};
	int rc = rtd_profile_add_sample(c->p, &s);
	if (!rc) {
		if (!c->samples++)
			c->first = rec->mono;
		c->last = rec->mono;
	}
	return rc;
}

int rtd_profile_records_add(rtd_profile_records *c, const struct rtd_record *rec)
{
	switch (rec->kind) {
	case RTD_REC_THREAD:
		return rec->name ? rtd_map_put(&c->threads, rec->tid, (void *)rec->name, NULL) : 0;
	case RTD_REC_SAMPLE:
	case RTD_REC_INSTANT:
	case RTD_REC_SLICE:
		return add(c, rec);
	case RTD_REC_ERROR:
		return rec->code;
	default:
		return 0;
	}
}

int rtd_profile_records_retarget(rtd_profile_records *c, rtd_profile *p)
{
	if (!c || !p)
		return -RTD_E_INVAL;
	c->p = p;
	/* mapping ids are the profile's */
	rtd_strmap_free(&c->maps);
	rtd_strmap_init(&c->maps, RTD_PROFILE_RECORDS_MAX_THREADS);
	return 0;
}

int rtd_profile_records_pull(rtd_profile_records *c, rtd_source *src)
{
	const struct rtd_record *r;
	int rc;
	while ((rc = rtd_source_next(src, &r)) == 1)
		if ((rc = rtd_profile_records_add(c, r)))
			return rc;
	return rc;
}

void rtd_profile_records_stats(const rtd_profile_records *c, uint64_t *samples, int64_t *first,
			       int64_t *last)
{
	if (samples)
		*samples = c->samples;
	if (first)
		*first = c->first;
	if (last)
		*last = c->last;
}
