/* SPDX-License-Identifier: MIT */
/*
 * ftree.c - the function-level view of a profile: frames of the same
 * display name along a path become one node, for one value type, over
 * the contexts a filter keeps. Folded stacks, the top table, the flame
 * graph and speedscope all read this view, so their weights agree.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "profile/profile_impl.h"

static int ft_node(struct ftree *t, uint32_t parent, uint32_t name,
		   uint8_t kind, uint32_t *out)
{
	uint64_t key = (uint64_t)parent << 32 | name;
	void *v;
	if (rtd_map_get(&t->kids, key, &v)) {
		*out = (uint32_t)(uintptr_t)v;
		struct ftree_node *n = &t->n[*out];
		if (n->kind == RTD_FRAME_UNKNOWN)
			n->kind = kind;
		return 0;
	}
	if (t->nn == t->cap) {
		struct ftree_node *nn = rtd_grow(t->n, &t->cap, t->nn + 1,
					sizeof(*nn), 256);
		if (!nn)
			return -ENOMEM;
		t->n = nn;
	}
	uint32_t id = (uint32_t)t->nn;
	int err = rtd_map_put(&t->kids, key, (void *)(uintptr_t)id, NULL);
	if (err)
		return err == -RTD_E_CAP ? -ENOMEM : err;
	t->nn++;
	t->n[id] = (struct ftree_node){.name = name,
				       .parent = parent,
				       .first_child = PROF_NONE,
				       .next_sibling = PROF_NONE,
				       .kind = kind};
	if (parent != PROF_NONE) {
		t->n[id].next_sibling = t->n[parent].first_child;
		t->n[parent].first_child = id;
	}
	*out = id;
	return 0;
}

const char *ftree_name(const rtd_profile *p, const struct ftree *t,
		       uint32_t id)
{
	if (id < t->base)
		return p->strs[id];
	return t->extra[id - t->base];
}

/* The id of a thread root's name, "name (tid N)", "pid P tid N", ... */
static int thread_name_id(const rtd_profile *p, struct ftree *t,
			  const struct prof_ctx *c, uint32_t *out)
{
	char buf[320];
	const char *name = c->thread ? p->strs[c->thread] : NULL;
	if (name && c->tid)
		snprintf(buf, sizeof(buf), "%.256s (tid %" PRId64 ")", name,
			 c->tid);
	else if (name)
		snprintf(buf, sizeof(buf), "%.256s", name);
	else if (c->tid)
		snprintf(buf, sizeof(buf), "thread %" PRId64, c->tid);
	else
		snprintf(buf, sizeof(buf), "process %" PRId64, c->pid);
	size_t len = strlen(buf);
	void *v;
	if (rtd_strmap_get(&t->extra_ids, buf, len, &v)) {
		*out = (uint32_t)(uintptr_t)v;
		return 0;
	}
	char **ne = realloc(t->extra, (t->nextra + 1) * sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	t->extra = ne;
	ne[t->nextra] = strdup(buf);
	if (!ne[t->nextra])
		return -ENOMEM;
	uint32_t id = t->base + (uint32_t)t->nextra;
	int err = rtd_strmap_put(&t->extra_ids, buf, len, (void *)(uintptr_t)id);
	if (err) {
		free(ne[t->nextra]);
		return err;
	}
	t->nextra++;
	*out = id;
	return 0;
}

int ftree_build(const rtd_profile *p, size_t type, ftree_filter_fn filter,
		void *arg, bool thread_roots, struct ftree *t)
{
	memset(t, 0, sizeof(*t));
	rtd_map_init(&t->kids, 0);
	rtd_strmap_init(&t->extra_ids, 0);
	t->base = (uint32_t)p->nstrs;
	uint32_t root;
	int err = ft_node(t, PROF_NONE, 0, RTD_FRAME_UNKNOWN, &root);
	uint32_t *map = malloc((p->nnodes ? p->nnodes : 1) * sizeof(*map));
	if (!map)
		err = -ENOMEM;
	for (size_t i = 0; i < p->nnodes && !err; i++)
		map[i] = PROF_NONE;
	for (size_t i = 0; i < p->nctxs && !err; i++) {
		const struct prof_ctx *c = &p->ctxs[i];
		if (filter && !filter(p, c, arg))
			continue;
		uint32_t base = root;
		if (thread_roots && (c->pid || c->tid || c->thread)) {
			uint32_t name;
			err = thread_name_id(p, t, c, &name);
			if (!err)
				err = ft_node(t, root, name, RTD_FRAME_OTHER,
					      &base);
		}
		map[c->root] = base;
	}
	for (size_t i = 0; i < p->nnodes && !err; i++) {
		const struct prof_node *n = &p->nodes[i];
		if (n->parent != PROF_NONE) {
			uint32_t fp = map[n->parent];
			if (fp == PROF_NONE)
				continue;
			const struct prof_frame *f = &p->frames[n->frame];
			err = ft_node(t, fp, f->disp, f->k.kind, &map[i]);
		}
		if (!err && map[i] != PROF_NONE)
			t->n[map[i]].self += prof_vals(p, (uint32_t)i)[type];
	}
	free(map);
	if (err) {
		ftree_free(t);
		return err;
	}
	for (size_t i = 0; i < t->nn; i++)
		t->n[i].total = t->n[i].self;
	for (size_t i = t->nn; i-- > 1;)
		t->n[t->n[i].parent].total += t->n[i].total;
	return 0;
}

void ftree_free(struct ftree *t)
{
	free(t->n);
	rtd_map_free(&t->kids);
	for (size_t i = 0; i < t->nextra; i++)
		free(t->extra[i]);
	free(t->extra);
	rtd_strmap_free(&t->extra_ids);
	memset(t, 0, sizeof(*t));
}

struct sort_arg {
	const rtd_profile *p;
	const struct ftree *t;
};

static int child_cmp(const void *a, const void *b, void *varg)
{
	const struct sort_arg *s = varg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return strcmp(ftree_name(s->p, s->t, s->t->n[x].name),
		      ftree_name(s->p, s->t, s->t->n[y].name));
}

int ftree_sort_children(const rtd_profile *p, struct ftree *t)
{
	uint32_t *tmp = NULL;
	size_t cap = 0;
	struct sort_arg arg = {p, t};
	for (size_t i = 0; i < t->nn; i++) {
		size_t k = 0;
		for (uint32_t c = t->n[i].first_child; c != PROF_NONE;
		     c = t->n[c].next_sibling) {
			if (k == cap) {
				uint32_t *nt = rtd_grow(tmp, &cap, k + 1,
							sizeof(*nt), 64);
				if (!nt) {
					free(tmp);
					return -ENOMEM;
				}
				tmp = nt;
			}
			tmp[k++] = c;
		}
		if (k < 2)
			continue;
		qsort_r(tmp, k, sizeof(*tmp), child_cmp, &arg);
		t->n[i].first_child = tmp[0];
		for (size_t j = 0; j + 1 < k; j++)
			t->n[tmp[j]].next_sibling = tmp[j + 1];
		t->n[tmp[k - 1]].next_sibling = PROF_NONE;
	}
	free(tmp);
	return 0;
}
