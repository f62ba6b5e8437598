/* SPDX-License-Identifier: MIT */
/* profile_impl.h - the profile model's insides, shared by its writers. */
#ifndef RTD_PROFILE_IMPL_H
#define RTD_PROFILE_IMPL_H

#include <stdint.h>

#include "common/map.h"
#include "rtdiag/profile.h"

#define PROF_NONE UINT32_MAX

/* An interned frame. The key part is compared as bytes, so it has no
 * padding holes and is zeroed before it is filled. */
struct prof_frame_key {
	uint64_t addr;
	uint32_t name;    /* string id; 0 ("") when unsymbolized */
	uint32_t module;  /* string id, 0 none */
	uint32_t file;    /* string id, 0 none */
	uint32_t line;
	uint32_t mapping; /* 1-based, 0 none */
	uint8_t kind;
	uint8_t inlined;
	uint8_t pad[2];
};

struct prof_frame {
	struct prof_frame_key k;
	uint32_t disp; /* string id of the display name */
};

struct prof_mapping { /* compared as bytes: no padding */
	uint64_t start, limit, offset;
	uint32_t file, build_id; /* string ids */
};

struct prof_label {
	uint32_t key, str, unit; /* string ids; str 0 for a number */
	uint32_t pad;
	int64_t num;
};

/* A context: the thread and labels a set of samples share. Each has its
 * own root node. */
struct prof_ctx {
	uint32_t root;
	uint32_t thread; /* string id of the thread name, 0 none */
	int64_t pid, tid;
	uint32_t label_off, nlabels; /* into labels[] */
};

struct prof_node {
	uint32_t frame;        /* index into frames; PROF_NONE for a root */
	uint32_t parent;       /* PROF_NONE for a root */
	uint32_t first_child;  /* PROF_NONE when none */
	uint32_t next_sibling; /* PROF_NONE when none */
};

struct rtd_profile {
	/* types: string ids of type and unit; strings 1.. are the types' */
	size_t ntypes, default_type;
	uint32_t type_str[RTD_PROFILE_MAX_TYPES][2];
	uint32_t period_str[2];
	int64_t period;
	struct rtd_profile_type period_type; /* strdup'd, NULL: default type */
	struct rtd_profile_type types[RTD_PROFILE_MAX_TYPES]; /* strdup'd */
	uint32_t nfixed_strings; /* strings kept by reset: "", types */

	/* metadata (malloc'd strings) */
	char *source, *process, *comment;
	int64_t pid, time_nanos, duration_nanos;

	/* strings: id 0 is "" */
	const char **strs; /* borrowed from str_ids' key copies */
	size_t nstrs, strs_cap;
	rtd_strmap str_ids;

	struct prof_frame *frames;
	size_t nframes, frames_cap;
	rtd_strmap frame_ids; /* prof_frame_key bytes -> index */

	struct prof_mapping *maps;
	size_t nmaps, maps_cap;
	rtd_strmap map_ids; /* prof_mapping bytes -> id (1-based) */

	struct prof_label *labels;
	size_t nlabels, labels_cap;
	struct prof_ctx *ctxs;
	size_t nctxs, ctxs_cap;
	rtd_strmap ctx_ids; /* serialized context -> index */

	struct prof_node *nodes;
	int64_t *vals; /* nodes_cap * ntypes: each node's self values */
	size_t nnodes, nodes_cap;
	rtd_map children; /* (parent << 32 | frame) -> child node */

	int64_t total[RTD_PROFILE_MAX_TYPES];
	uint64_t nsamples;
};

static inline const int64_t *prof_vals(const rtd_profile *p, uint32_t node)
{
	return p->vals + (size_t)node * p->ntypes;
}

/* Intern a string; returns its id (>= 0) or a negative error. */
int64_t prof_intern(rtd_profile *p, const char *s, size_t len);

/* Resolve a write option's type name to an index, or a negative error. */
int prof_type_index(const rtd_profile *p, const char *name);

/*
 * The function-level view: a tree whose nodes are display names, merged
 * along each path, for one value type over a chosen set of contexts.
 * Node 0 is the root. Node ids grow from parent to child.
 */
struct ftree_node {
	uint32_t name; /* string id of the display name */
	uint32_t parent, first_child, next_sibling;
	int64_t self, total;
	uint8_t kind;
};

struct ftree {
	struct ftree_node *n;
	size_t nn, cap;
	rtd_map kids;    /* (parent << 32 | name) -> child */
	char **extra;    /* thread-root names: ids from p->nstrs on */
	size_t nextra;
	rtd_strmap extra_ids;
	uint32_t base;   /* p->nstrs when built */
};

/* Which contexts feed a tree: NULL keeps all. */
typedef bool (*ftree_filter_fn)(const rtd_profile *p,
				const struct prof_ctx *c, void *arg);

/* Build the view of value type @type. When @thread_roots, each context's
 * stacks start with a node named by its thread ("name (tid N)"), whose
 * name id is one of the tree's extra names. */
int ftree_build(const rtd_profile *p, size_t type, ftree_filter_fn filter,
		void *arg, bool thread_roots, struct ftree *t);
void ftree_free(struct ftree *t);
/* Children of every node sorted by name (alphabetical), as flame graphs
 * lay them out. */
int ftree_sort_children(const rtd_profile *p, struct ftree *t);

/* A node's name: a profile string, or one of the tree's extra names. */
const char *ftree_name(const rtd_profile *p, const struct ftree *t,
		       uint32_t id);

/* The title of a picture: o->title, or made from the metadata, saying
 * what the picture weighs: "perf: app (pid 42), 2.00s, weight: cpu
 * (nanoseconds)". */
void prof_title(const rtd_profile *p, size_t type,
		const struct rtd_profile_write_opts *o, char *buf, size_t n);
/* An ftree filter keeping the contexts without a thread. */
bool prof_ctx_no_thread(const rtd_profile *p, const struct prof_ctx *c,
			void *arg);

/* A value in its unit for people: "1.25 s", "3.4 MB", "1234". */
const char *prof_fmt_value(int64_t v, const char *unit, char *buf, size_t n);
/* "N samples" (rtd_profile_samples()), or "N stacks" when no type counts */
const char *prof_samples_text(const rtd_profile *p, char *buf, size_t len);

int prof_write_folded(const rtd_profile *p, FILE *f, size_t type,
		      bool thread_roots);
int prof_write_top(const rtd_profile *p, FILE *f, size_t type, size_t rows);
int prof_write_pprof(const rtd_profile *p, FILE *f);
/* Names a location: a run of n frames (leaf first), the last the one the
 * others are inlined into; sets the writer's error on failure. */
typedef uint32_t (*prof_loc_fn)(void *ctx, const uint32_t *run, size_t n);
/* The locations of node's stack, leaf first, into *locs (*nloc of them):
 * its frames from the root, each run of inlined frames with the frame they
 * are inlined into as one location, named by loc(ctx, run, n) until *err
 * is set. *path and *locs grow together, *cap their size (the caller's to
 * free). Returns 0 or -ENOMEM. One walk for the pprof and OTLP writers. */
int prof_node_locations(const rtd_profile *p, uint32_t node, prof_loc_fn loc,
			void *ctx, const int *err, uint32_t **path,
			uint32_t **locs, size_t *cap, size_t *nloc);
int prof_write_svg(const rtd_profile *p, FILE *f, size_t type,
		   const struct rtd_profile_write_opts *o);
int prof_write_speedscope(const rtd_profile *p, FILE *f, size_t type,
			  const struct rtd_profile_write_opts *o);

#endif /* RTD_PROFILE_IMPL_H */
