/* SPDX-License-Identifier: MIT */
/*
 * share.c - one symbolizer for several profilers (see "one symbolizer,
 * several holders" in internal.h): its lock, its holders, and which of
 * them applies a process record each holder sees.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "rtdiag/common.h"
#include "symbols/internal.h"

/* processes with a record some holder has seen and another not yet */
#define SHARE_MAX_PROCS 65536

struct sym_share {
	pthread_mutex_t mu;
	struct sym_holder h[SYM_MAX_HOLDERS];
	bool used[SYM_MAX_HOLDERS];
	unsigned n;
	/* pid -> uint32_t[SYM_MAX_HOLDERS]: process records seen by each */
	rtd_map seen;
};

static struct sym_share *share_of(rtd_symbolizer *s)
{
	if (s->share)
		return s->share;
	struct sym_share *sh = calloc(1, sizeof(*sh));
	if (!sh)
		return NULL;
	pthread_mutex_init(&sh->mu, NULL);
	rtd_map_init(&sh->seen, SHARE_MAX_PROCS);
	s->share = sh;
	return sh;
}

pthread_mutex_t *sym_share_lock(rtd_symbolizer *s)
{
	struct sym_share *sh = s ? share_of(s) : NULL;
	return sh ? &sh->mu : NULL;
}

int sym_share_add(rtd_symbolizer *s, const struct sym_holder *h)
{
	struct sym_share *sh = s ? share_of(s) : NULL;
	if (!sh)
		return -ENOMEM;
	for (int i = 0; i < SYM_MAX_HOLDERS; i++) {
		if (sh->used[i])
			continue;
		sh->h[i] = *h;
		sh->used[i] = true;
		sh->n++;
		return i;
	}
	return -RTD_E_CAP;
}

void sym_share_remove(rtd_symbolizer *s, int idx)
{
	struct sym_share *sh = s ? s->share : NULL;
	if (!sh || idx < 0 || idx >= SYM_MAX_HOLDERS || !sh->used[idx])
		return;
	sh->used[idx] = false;
	sh->n--;
	/* what it had seen no longer holds a record back */
	size_t it = 0;
	uint64_t k;
	void *v;
	while (rtd_map_next(&sh->seen, &it, &k, &v))
		((uint32_t *)v)[idx] = 0;
}

int sym_share_keep(rtd_symbolizer *s)
{
	struct sym_share *sh = s ? s->share : NULL;
	size_t n = rtd_sym_nlocations(s);
	uint8_t *keep = calloc(n ? n : 1, 1);
	int64_t *remap = malloc((n ? n : 1) * sizeof(*remap));
	int r = keep && remap ? 0 : -ENOMEM;
	for (int i = 0; !r && sh && i < SYM_MAX_HOLDERS; i++)
		if (sh->used[i])
			sh->h[i].mark(sh->h[i].ctx, keep, n);
	int k = r ? r : rtd_sym_keep_locations(s, keep, n, remap);
	/* every holder renumbers, whatever one of them says */
	for (int i = 0; k >= 0 && sh && i < SYM_MAX_HOLDERS; i++) {
		if (!sh->used[i])
			continue;
		int e = sh->h[i].remap(sh->h[i].ctx, remap, n, (size_t)k);
		if (e < 0 && !r)
			r = e;
	}
	free(keep);
	free(remap);
	return k < 0 ? k : r < 0 ? r : k;
}

unsigned sym_share_proc(rtd_symbolizer *s, int idx, pid_t pid, bool exit)
{
	struct sym_share *sh = s ? s->share : NULL;
	if (!sh || sh->n < 2 || idx < 0 || idx >= SYM_MAX_HOLDERS)
		return SYM_PROC_FIRST | SYM_PROC_LAST;
	void *v = NULL;
	uint64_t key = (uint64_t)(uint32_t)pid;
	if (!rtd_map_get(&sh->seen, key, &v)) {
		v = calloc(SYM_MAX_HOLDERS, sizeof(uint32_t));
		if (!v || rtd_map_put(&sh->seen, key, v, NULL)) {
			/* not counted: applied by each holder, as with none */
			free(v);
			return SYM_PROC_FIRST | SYM_PROC_LAST;
		}
	}
	uint32_t *seen = v;
	uint32_t mine = ++seen[idx], most = 0, least = UINT32_MAX;
	for (int i = 0; i < SYM_MAX_HOLDERS; i++) {
		if (!sh->used[i] || i == idx)
			continue;
		if (seen[i] > most)
			most = seen[i];
		if (seen[i] < least)
			least = seen[i];
	}
	unsigned f = (mine > most ? SYM_PROC_FIRST : 0) | (mine <= least ? SYM_PROC_LAST : 0);
	if (exit && (f & SYM_PROC_LAST))
		free(rtd_map_del(&sh->seen, key)); /* every holder saw its end */
	return f;
}

void sym_share_free(rtd_symbolizer *s)
{
	if (!s || !s->share)
		return;
	rtd_map_free_vals(&s->share->seen);
	pthread_mutex_destroy(&s->share->mu);
	free(s->share);
	s->share = NULL;
}
