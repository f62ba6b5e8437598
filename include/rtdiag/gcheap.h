/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gcheap.h - a .NET GC heap snapshot as an object graph, from the
 * runtime's heap-dump events (what dotnet-gcdump reads): types from
 * Type/BulkType, objects from GC/BulkNode, references from GC/BulkEdge,
 * roots from GC/BulkRootEdge, GC/BulkRootStaticVar and the conditional
 * weak table edges; then dominators and retained sizes.
 *
 * Memory: about 40 bytes per object and 12 per reference (up to twice
 * that while the arrays grow: 80 bytes per object measured on a
 * 400,000-object heap), capped by max_objects and max_refs (-RTD_E_CAP beyond them; what was read stays
 * usable). A session that produces the events: rtd_gcheap_request().
 */
#ifndef RTDIAG_GCHEAP_H
#define RTDIAG_GCHEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"
#include "rtdiag/ipc.h"
#include "rtdiag/nettrace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_gcheap rtd_gcheap;

/**
 * struct rtd_gcheap_opts - options for rtd_gcheap_new()
 * @sz: sizeof(struct rtd_gcheap_opts)
 * @max_objects: cap on objects (0: 64 M)
 * @max_refs: cap on references (0: 256 M)
 */
struct rtd_gcheap_opts {
	size_t sz;
	uint64_t max_objects;
	uint64_t max_refs;
};

/**
 * rtd_gcheap_new - an empty heap graph
 * @o: options, NULL for the defaults
 *
 * Returns: the graph, or NULL when out of memory.
 */
RTD_API rtd_gcheap *rtd_gcheap_new(const struct rtd_gcheap_opts *o);

/**
 * rtd_gcheap_free - free a heap graph
 * @h: the graph; NULL does nothing
 */
RTD_API void rtd_gcheap_free(rtd_gcheap *h);

/**
 * rtd_gcheap_request - the session that makes the runtime dump its heap
 * @out: receives the provider (appended to): Microsoft-Windows-DotNETRuntime
 *       with GC, GCHeapCollect, GCHeapDump, GCHeapAndTypeNames and Type at
 *       Verbose; enabling GCHeapCollect makes the runtime run a full,
 *       blocking GC that walks the heap
 *
 * Returns: 0 or -ENOMEM.
 */
RTD_API int rtd_gcheap_request(struct rtd_ipc_providers *out);

/**
 * rtd_gcheap_event - read one event of the session
 * @h: the graph
 * @dec: the decoder that delivered @ev
 * @ev: any event
 *
 * Returns: 0; 1 once the heap walk's GC has ended (the snapshot is whole:
 * stop the session); -RTD_E_CAP, -ENOMEM, or -RTD_E_STATE after
 * rtd_gcheap_finish().
 */
RTD_API int rtd_gcheap_event(rtd_gcheap *h, rtd_nettrace *dec,
			     const struct rtd_nettrace_event *ev);

/**
 * rtd_gcheap_finish - resolve references and compute retained sizes
 * @h: the graph
 *
 * References to addresses that are no object of the snapshot are dropped
 * (counted in struct rtd_gcheap_stats). The dominator tree is computed
 * (Cooper, Harvey and Kennedy's iterative algorithm, over a depth-first
 * order from a virtual root that references every root): an object's
 * retained size is its own plus that of every object it dominates.
 *
 * Returns: 0, -ENOMEM, or -RTD_E_NOTFOUND when no object was read.
 */
RTD_API int rtd_gcheap_finish(rtd_gcheap *h);

/**
 * struct rtd_gcheap_stats - the snapshot's totals
 * @objects: objects read
 * @refs: references read
 * @dangling: references to no object of the snapshot (dropped)
 * @roots: roots that are objects of the snapshot
 * @bytes: the objects' total size
 * @reachable_bytes: the size of the objects reachable from a root
 * @memory: bytes the graph holds
 */
struct rtd_gcheap_stats {
	uint64_t objects, refs, dangling, roots, bytes, reachable_bytes;
	uint64_t memory;
};

/**
 * rtd_gcheap_stats - the snapshot's totals
 * @h: the graph
 * @s: receives them
 */
RTD_API void rtd_gcheap_stats(const rtd_gcheap *h, struct rtd_gcheap_stats *s);

/**
 * struct rtd_gcheap_object - one object, as the iterator gives it
 * @index: its index (0 .. objects-1)
 * @address: its address
 * @size: its size in bytes
 * @type: its type's name ("?" when the dump named no type)
 * @retained: its retained size (after rtd_gcheap_finish(); 0 when it is
 *            unreachable)
 * @idom: the index of its immediate dominator; -1 for one dominated by the
 *        roots only (or unreachable)
 * @nrefs: how many references it holds
 */
struct rtd_gcheap_object {
	uint64_t index;
	uint64_t address;
	uint64_t size;
	const char *type;
	uint64_t retained;
	int64_t idom;
	uint64_t nrefs;
};

/**
 * rtd_gcheap_object - one object of the graph
 * @h: the graph (finished)
 * @index: 0 .. objects-1
 * @out: receives it
 *
 * Returns: 0, or -RTD_E_NOTFOUND past the last.
 */
RTD_API int rtd_gcheap_object(const rtd_gcheap *h, uint64_t index,
			      struct rtd_gcheap_object *out);

/**
 * rtd_gcheap_ref - the @i-th reference of an object
 * @h: the graph (finished)
 * @index: the object
 * @i: 0 .. nrefs-1
 *
 * Returns: the referenced object's index, or -1 (dropped, or out of range).
 */
RTD_API int64_t rtd_gcheap_ref(const rtd_gcheap *h, uint64_t index, uint64_t i);

/**
 * struct rtd_gcheap_type - totals per type (rtd_gcheap_types())
 * @name: the type
 * @count: objects of it
 * @size: their size
 * @retained: their retained size, counting an object only when its
 *            immediate dominator is of another type (so a list of nodes
 *            is not counted once per node)
 */
struct rtd_gcheap_type {
	const char *name;
	uint64_t count, size, retained;
};

/**
 * rtd_gcheap_types - totals per type, largest retained size first
 * @h: the graph (finished)
 * @out: receives a malloc'd array (free() it); names stay valid while @h
 * @n: receives its length
 *
 * Returns: 0 or -ENOMEM.
 */
RTD_API int rtd_gcheap_types(const rtd_gcheap *h, struct rtd_gcheap_type **out,
			     size_t *n);

#ifdef __cplusplus
}
#endif
#endif
