/* SPDX-License-Identifier: MIT */
/*
 * gcheap_int.h - the heap graph's arrays (gcheap.c), shared with its
 * .gcdump writer and session (gcdump.c).
 */
#ifndef RTD_DOTNET_GCHEAP_INT_H
#define RTD_DOTNET_GCHEAP_INT_H

#include "common/buf.h"
#include "common/map.h"
#include "rtdiag/gcheap.h"

#define PROVIDER "Microsoft-Windows-DotNETRuntime"
#define NONE UINT32_MAX

struct rtd_gcheap {
	struct rtd_gcheap_opts o;
	/* objects, in the order the runtime sent them */
	uint64_t *addr, *size;
	uint64_t *tid;      /* TypeID (named at finish: BulkType may follow) */
	uint64_t *edge_off; /* first reference in refs */
	size_t n, cap;
	uint64_t edge_total; /* references announced by the nodes */
	/* references: addresses while reading, then object indexes */
	uint64_t *raddr;
	uint32_t *refs;
	size_t nr, rcap;
	/* roots: addresses while reading */
	uint64_t *roots;
	size_t nroots, rootcap;
	/* types */
	rtd_map type_index; /* TypeID -> index + 1 */
	char **names;
	size_t nnames, namecap;
	/* the dump's GC */
	bool nodes_seen;
	int64_t gc; /* count of the GC that walks the heap, -1 unknown */
	bool done;
	/* after finish */
	bool finished;
	uint32_t *idom;  /* dominator; n = the virtual root; NONE unreachable */
	uint64_t *retained;
	uint64_t dangling, nroot_objs, reachable;
	uint32_t *root_idx; /* the root objects, as indexes (nroot_objs) */
	rtd_buf tmp;
};

/* The index + 1 of object @i's type in names, or 0 when it has none. */
size_t gcheap_type_of(const rtd_gcheap *h, size_t i);
/* Object @i's reference count. */
uint64_t gcheap_nrefs(const rtd_gcheap *h, size_t i);

#endif
