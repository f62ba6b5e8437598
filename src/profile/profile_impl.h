/* SPDX-License-Identifier: MIT */
/* profile_impl.h - the profile model's insides, shared by its writers. */
#ifndef RTD_PROFILE_IMPL_H
#define RTD_PROFILE_IMPL_H

#include <stdint.h>

#include "common/map.h"
#include "rtdiag/profile.h"

/* Caps: distinct frame names and call-tree nodes one profile may hold. */
#define RTD_PROFILE_MAX_NAMES (4u << 20)
#define RTD_PROFILE_MAX_NODES (16u << 20)

struct prof_node {
	uint32_t name;         /* index into names */
	uint32_t parent;       /* UINT32_MAX for the root */
	uint32_t first_child;  /* UINT32_MAX when none */
	uint32_t next_sibling; /* UINT32_MAX when none */
	int64_t self;          /* weight of stacks ending here */
};

struct rtd_profile {
	char *sample_type, *unit;
	const char **names; /* borrowed from name_ids' key copies */
	size_t nnames, names_cap;
	rtd_strmap name_ids;  /* name -> index */
	struct prof_node *nodes; /* nodes[0] is the root */
	size_t nnodes, nodes_cap;
	rtd_map children; /* (parent << 32 | name) -> child node */
	int64_t total;
	uint64_t nsamples;
};

uint32_t prof_node_new(rtd_profile *p, uint32_t parent, uint32_t name);

typedef int (*prof_visit_fn)(const rtd_profile *p, uint32_t node,
			     size_t depth, const uint32_t *path, void *ctx);
int prof_walk(const rtd_profile *p, prof_visit_fn fn, void *ctx);
/* malloc'd array of each node's inclusive weight, or NULL. */
int64_t *prof_inclusive(const rtd_profile *p);

#endif /* RTD_PROFILE_IMPL_H */
