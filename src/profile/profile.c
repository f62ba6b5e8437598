/* SPDX-License-Identifier: MIT */
/*
 * profile.c - the profile model: a call tree of interned frame names.
 *
 * Adding a stack walks the tree from the root, so equal stacks share their
 * nodes and memory grows with the number of distinct call paths, not with
 * the number of samples. Children are found through one hash map keyed by
 * (parent node, frame name); each node also links its first child and next
 * sibling so writers can walk the tree without recursion.
 */
#include "profile/profile_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NODE_NONE UINT32_MAX

static uint64_t child_key(uint32_t parent, uint32_t name)
{
	return (uint64_t)parent << 32 | name;
}

rtd_profile *rtd_profile_new(const char *sample_type, const char *unit)
{
	rtd_profile *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->sample_type = strdup(sample_type ? sample_type : "samples");
	p->unit = strdup(unit ? unit : "count");
	rtd_strmap_init(&p->name_ids, RTD_PROFILE_MAX_NAMES);
	rtd_map_init(&p->children, RTD_PROFILE_MAX_NODES);
	if (!p->sample_type || !p->unit || prof_node_new(p, NODE_NONE, 0) == NODE_NONE) {
		rtd_profile_free(p);
		return NULL;
	}
	return p;
}

void rtd_profile_free(rtd_profile *p)
{
	if (!p)
		return;
	free(p->sample_type);
	free(p->unit);
	free(p->names);
	free(p->nodes);
	rtd_strmap_free(&p->name_ids);
	rtd_map_free(&p->children);
	free(p);
}

/* Intern a frame name; returns its index or -errno. The names array points
 * at the map's own key copies, which stay put until the map is freed. */
static int64_t intern(rtd_profile *p, const char *name)
{
	size_t len = strlen(name);
	void *v;
	if (rtd_strmap_get(&p->name_ids, name, len, &v))
		return (int64_t)(uintptr_t)v;
	if (p->nnames == p->names_cap) {
		size_t ncap = p->names_cap ? p->names_cap * 2 : 64;
		const char **nn = realloc(p->names, ncap * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		p->names = nn;
		p->names_cap = ncap;
	}
	uint32_t id = (uint32_t)p->nnames;
	int err = rtd_strmap_put(&p->name_ids, name, len, (void *)(uintptr_t)id);
	if (err)
		return err;
	p->names[id] = rtd_strmap_find(&p->name_ids, name, len)->key;
	p->nnames++;
	return id;
}

uint32_t prof_node_new(rtd_profile *p, uint32_t parent, uint32_t name)
{
	if (p->nnodes == p->nodes_cap) {
		size_t ncap = p->nodes_cap ? p->nodes_cap * 2 : 256;
		struct prof_node *nn = realloc(p->nodes, ncap * sizeof(*nn));
		if (!nn)
			return NODE_NONE;
		p->nodes = nn;
		p->nodes_cap = ncap;
	}
	uint32_t id = (uint32_t)p->nnodes++;
	struct prof_node *n = &p->nodes[id];
	n->name = name;
	n->parent = parent;
	n->first_child = NODE_NONE;
	n->next_sibling = NODE_NONE;
	n->self = 0;
	if (parent != NODE_NONE) {
		n->next_sibling = p->nodes[parent].first_child;
		p->nodes[parent].first_child = id;
	}
	return id;
}

int rtd_profile_add(rtd_profile *p, const char *const *frames, size_t nframes,
		    int64_t value)
{
	uint32_t cur = 0; /* the root */
	for (size_t i = 0; i < nframes; i++) {
		int64_t name = intern(p, frames[i] ? frames[i] : "?");
		if (name < 0)
			return (int)name;
		uint64_t key = child_key(cur, (uint32_t)name);
		void *v;
		if (rtd_map_get(&p->children, key, &v)) {
			cur = (uint32_t)(uintptr_t)v;
			continue;
		}
		uint32_t child = prof_node_new(p, cur, (uint32_t)name);
		if (child == NODE_NONE)
			return -ENOMEM;
		int err = rtd_map_put(&p->children, key, (void *)(uintptr_t)child,
				      NULL);
		if (err) {
			p->nnodes--; /* unlink the node we just made */
			p->nodes[cur].first_child = p->nodes[child].next_sibling;
			return err == -RTD_E_CAP ? -ENOMEM : err;
		}
		cur = child;
	}
	p->nodes[cur].self += value;
	p->total += value;
	p->nsamples++;
	return 0;
}

int64_t rtd_profile_total(const rtd_profile *p)
{
	return p->total;
}

/*
 * prof_walk - visit every node in depth-first pre-order, without recursion.
 * The callback sees each node with its depth (the root has depth 0 and is
 * not visited) and the path of nodes from the root's child down to it
 * (path[depth - 1] == node). Returns the first non-zero callback result,
 * or -ENOMEM.
 */
int prof_walk(const rtd_profile *p, prof_visit_fn fn, void *ctx)
{
	uint32_t *path = NULL;
	size_t path_cap = 0;
	uint32_t cur = p->nodes[0].first_child;
	size_t depth = 1;
	int r = 0;
	while (cur != NODE_NONE) {
		if (depth > path_cap) {
			size_t ncap = path_cap ? path_cap * 2 : 64;
			uint32_t *np = realloc(path, ncap * sizeof(*np));
			if (!np) {
				r = -ENOMEM;
				break;
			}
			path = np;
			path_cap = ncap;
		}
		path[depth - 1] = cur;
		r = fn(p, cur, depth, path, ctx);
		if (r)
			break;
		const struct prof_node *n = &p->nodes[cur];
		if (n->first_child != NODE_NONE) {
			cur = n->first_child;
			depth++;
			continue;
		}
		/* climb until a node has a next sibling */
		while (cur != 0 && p->nodes[cur].next_sibling == NODE_NONE) {
			cur = p->nodes[cur].parent;
			depth--;
		}
		if (cur == 0)
			break;
		cur = p->nodes[cur].next_sibling;
	}
	free(path);
	return r;
}

/* Inclusive weight of every node, children summed into parents. Node ids
 * grow from parent to child, so one backwards pass suffices. */
int64_t *prof_inclusive(const rtd_profile *p)
{
	int64_t *inc = malloc((p->nnodes ? p->nnodes : 1) * sizeof(*inc));
	if (!inc)
		return NULL;
	for (size_t i = 0; i < p->nnodes; i++)
		inc[i] = p->nodes[i].self;
	for (size_t i = p->nnodes; i-- > 1;)
		inc[p->nodes[i].parent] += inc[i];
	return inc;
}

struct top_ctx {
	int64_t *self, *total, *inc;
	uint32_t *on_path; /* per name: how many times it is on the current path */
	uint32_t *path;    /* node at each depth */
	size_t path_len;
};

static int top_visit(const rtd_profile *p, uint32_t node, size_t depth,
		     const uint32_t *path, void *vctx)
{
	struct top_ctx *c = vctx;
	(void)path; /* the names to release are those of the previous path */
	/* pop the path down to this depth, releasing names */
	while (c->path_len >= depth) {
		c->on_path[p->nodes[c->path[c->path_len - 1]].name]--;
		c->path_len--;
	}
	uint32_t name = p->nodes[node].name;
	c->self[name] += p->nodes[node].self;
	/* a recursive frame counts once per stack: only its outermost node */
	if (c->on_path[name] == 0)
		c->total[name] += c->inc[node];
	c->on_path[name]++;
	c->path[c->path_len++] = node;
	return 0;
}

struct top_row {
	uint32_t name;
	int64_t self, total;
};

static int top_cmp(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

int rtd_profile_top(const rtd_profile *p, struct rtd_profile_entry *out,
		    size_t max)
{
	struct top_ctx c = {0};
	size_t nn = p->nnames ? p->nnames : 1;
	c.self = calloc(nn, sizeof(int64_t));
	c.total = calloc(nn, sizeof(int64_t));
	c.on_path = calloc(nn, sizeof(uint32_t));
	c.path = malloc(p->nnodes * sizeof(uint32_t));
	c.inc = prof_inclusive(p);
	struct top_row *rows = malloc(nn * sizeof(*rows));
	int ret = -ENOMEM;
	if (!c.self || !c.total || !c.on_path || !c.path || !c.inc || !rows)
		goto out;
	if (prof_walk(p, top_visit, &c))
		goto out;
	for (size_t i = 0; i < p->nnames; i++)
		rows[i] = (struct top_row){(uint32_t)i, c.self[i], c.total[i]};
	qsort(rows, p->nnames, sizeof(*rows), top_cmp);
	size_t n = p->nnames < max ? p->nnames : max;
	for (size_t i = 0; i < n; i++)
		out[i] = (struct rtd_profile_entry){p->names[rows[i].name],
						    rows[i].self, rows[i].total};
	ret = (int)n;
out:
	free(c.self);
	free(c.total);
	free(c.on_path);
	free(c.path);
	free(c.inc);
	free(rows);
	return ret;
}
