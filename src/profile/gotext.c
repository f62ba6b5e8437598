/* SPDX-License-Identifier: MIT */
/*
 * gotext.c - Go's legacy text forms of a profile, as runtime/pprof's
 * Profile.WriteTo(w, 1) writes them and net/http/pprof serves them for
 * ?debug=1: "heap profile:" for allocations, "--- contention:" for block
 * and "--- mutex:" for mutex profiles. Each stack is a line of values and
 * addresses, leaf first, then a "#" line per frame with its name and
 * file:line. pprof's legacy parser (legacy_profile.go) reads both.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_impl.h"

struct gt_rec {
	uint32_t node;
	int64_t key; /* delay; bytes in use, else allocated */
	int64_t v[4];
};

static int cmp_desc(const void *a, const void *b)
{
	const struct gt_rec *x = a, *y = b;
	/* the largest first (Go sorts contention by cycles); then by node
	 * for a stable order */
	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* An address for a frame: its own, else one made from its index (the
 * legacy form tells locations apart by address only). */
static uint64_t frame_addr(const rtd_profile *p, uint32_t fi)
{
	uint64_t a = p->frames[fi].k.addr;
	return a ? a : 0x1000ull + fi;
}

static void write_stack(const rtd_profile *p, uint32_t node, FILE *f)
{
	for (uint32_t n = node; n != PROF_NONE && p->nodes[n].frame != PROF_NONE;
	     n = p->nodes[n].parent)
		fprintf(f, " %#llx",
			(unsigned long long)frame_addr(p, p->nodes[n].frame));
	fputc('\n', f);
	for (uint32_t n = node; n != PROF_NONE && p->nodes[n].frame != PROF_NONE;
	     n = p->nodes[n].parent) {
		uint32_t fi = p->nodes[n].frame;
		const struct prof_frame *fr = &p->frames[fi];
		const char *name = p->strs[fr->disp];
		fprintf(f, "#\t%#llx\t%s+0x0\t%s:%u\n",
			(unsigned long long)frame_addr(p, fi),
			*name ? name : "?",
			fr->k.file ? p->strs[fr->k.file] : "?", fr->k.line);
	}
	fputc('\n', f);
}

int rtd_profile_write_go_text(const rtd_profile *p,
			      enum rtd_profile_go_text form, FILE *f)
{
	if (!p || !f)
		return -RTD_E_INVAL;
	/* the values each form prints, by type name: -1 absent (0) */
	static const char *const heap[4] = {"inuse_objects", "inuse_space",
					    "alloc_objects", "alloc_space"};
	static const char *const lock[4] = {"delay", "contentions", NULL, NULL};
	const char *const *want;
	switch (form) {
	case RTD_PROFILE_GO_HEAP:
		want = heap;
		break;
	case RTD_PROFILE_GO_CONTENTION:
	case RTD_PROFILE_GO_MUTEX:
		want = lock;
		break;
	default:
		return -RTD_E_INVAL;
	}
	int ti[4];
	bool any = false;
	for (int i = 0; i < 4; i++) {
		ti[i] = want[i] ? rtd_profile_find_type(p, want[i]) : -1;
		any |= ti[i] >= 0;
	}
	if (!any || (form != RTD_PROFILE_GO_HEAP && (ti[0] < 0 || ti[1] < 0)))
		return -RTD_E_INVAL;

	struct gt_rec *recs = NULL;
	size_t n = 0, cap = 0;
	int64_t tot[4] = {0};
	for (uint32_t i = 0; i < p->nnodes; i++) {
		if (p->nodes[i].frame == PROF_NONE)
			continue;
		const int64_t *v = prof_vals(p, i);
		struct gt_rec r = {.node = i};
		bool nz = false;
		for (int k = 0; k < 4; k++) {
			r.v[k] = ti[k] >= 0 ? v[ti[k]] : 0;
			nz |= r.v[k] != 0;
			tot[k] += r.v[k];
		}
		if (!nz)
			continue;
		r.key = form != RTD_PROFILE_GO_HEAP ? r.v[0]
			: r.v[1]                    ? r.v[1]
						    : r.v[3];
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct gt_rec *g = realloc(recs, nc * sizeof(*g));
			if (!g) {
				free(recs);
				return -ENOMEM;
			}
			recs = g;
			cap = nc;
		}
		recs[n++] = r;
	}
	if (n)
		qsort(recs, n, sizeof(*recs), cmp_desc);
	if (form == RTD_PROFILE_GO_HEAP) {
		/* "heap/2R" where R is the sampling rate (Go writes twice
		 * MemProfileRate, pprof halves it): the values here are what
		 * they are, rate 1, so pprof scales nothing */
		fprintf(f, "heap profile: %lld: %lld [%lld: %lld] @ heap/2\n",
			(long long)tot[0], (long long)tot[1],
			(long long)tot[2], (long long)tot[3]);
	} else {
		/* the delay is in nanoseconds: cycles of a 1 GHz clock */
		fprintf(f, "--- %s:\ncycles/second=1000000000\n",
			form == RTD_PROFILE_GO_MUTEX ? "mutex" : "contention");
		if (form == RTD_PROFILE_GO_MUTEX)
			fprintf(f, "sampling period=%lld\n",
				(long long)(p->period > 0 ? p->period : 1));
	}
	for (size_t i = 0; i < n; i++) {
		const int64_t *v = recs[i].v;
		if (form == RTD_PROFILE_GO_HEAP)
			fprintf(f, "%lld: %lld [%lld: %lld] @", (long long)v[0],
				(long long)v[1], (long long)v[2], (long long)v[3]);
		else
			fprintf(f, "%lld %lld @", (long long)v[0], (long long)v[1]);
		write_stack(p, recs[i].node, f);
	}
	free(recs);
	return ferror(f) ? -EIO : 0;
}
