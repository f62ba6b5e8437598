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
 * usable). A session that produces the events: rtd_gcheap_request(); one
 * that runs it: rtd_gcheap_collect(); the .gcdump file dotnet-gcdump and
 * PerfView read: rtd_gcheap_write_gcdump(), rtd_gcheap_gcdump().
 */
#ifndef RTDIAG_GCHEAP_H
#define RTDIAG_GCHEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

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

/**
 * struct rtd_gcheap_collect_opts - how rtd_gcheap_collect() runs the session
 * @sz: sizeof(struct rtd_gcheap_collect_opts)
 * @buffer_mb: the runtime's buffer for the walk's events (0: 1024). The
 *             walk is written during one blocking GC, faster than any
 *             reader: the buffer must hold most of it (about 45 MB per
 *             million objects)
 * @timeout_ms: stop the session when the walk's GC has not ended after
 *              this long (0: 60 s); what arrived is kept
 * @cancel: when it becomes non-zero (a signal handler may set it), the
 *          session is stopped; may be NULL
 * @started: called once the session is on (may be NULL), with its id and
 *           its CollectTracing version
 * @tick: called about every 100 ms with the stream's bytes, the events
 *        decoded and those the runtime dropped (may be NULL)
 * @ctx: passed to @started and @tick
 * @max_objects: rtd_gcheap_gcdump() only: the graph's cap (0: 64 M)
 */
struct rtd_gcheap_collect_opts {
	size_t sz;
	unsigned buffer_mb;
	uint64_t timeout_ms;
	volatile int *cancel;
	void (*started)(uint64_t session_id, int version, void *ctx);
	void (*tick)(uint64_t bytes, uint64_t events, uint64_t dropped, void *ctx);
	void *ctx;
	uint64_t max_objects;
};

/**
 * struct rtd_gcheap_collect_result - how a heap-dump session ended
 * @session: the session started (else the error is the start's)
 * @walk_ended: the heap walk's GC ended (the snapshot is whole unless
 *              @dropped); false after @timeout_ms or @cancel
 * @heap_err: rtd_gcheap_event()'s first error (-RTD_E_CAP: the graph's
 *            cap; what was read stays usable), or 0
 * @dropped: events the runtime dropped (its buffer filled)
 * @events: events decoded
 * @bytes: stream bytes read
 * @pump: how the stream ended
 */
struct rtd_gcheap_collect_result {
	bool session;
	bool walk_ended;
	int heap_err;
	uint64_t dropped, events, bytes;
	struct rtd_ipc_pump_result pump;
};

/**
 * rtd_gcheap_collect - run the heap-dump session of @c into @h
 * @h: an empty graph (rtd_gcheap_new())
 * @c: a client of the target
 * @o: options (NULL: the defaults)
 * @res: receives how it went (may be NULL)
 *
 * Starts the session of rtd_gcheap_request() (no rundown, no stacks): the
 * runtime runs a full blocking GC that walks the heap; the session is
 * stopped once that GC ends, at @timeout_ms, or at @cancel. Before it, a
 * session of the runtime's provider without its Type keyword is started
 * and stopped at once: the runtime names each type once until that
 * flushes its table of named types (beside another session of the
 * provider, the end of the last heap dump's session does not). Prints
 * nothing. The graph is not finished (rtd_gcheap_finish()).
 *
 * Returns: 0 when the session ran (check @res: the walk may have ended
 * early, been cut at the cap or lost events), the session's start error
 * (@res->session false; rtd_ipc_client_errmsg() says more), an error
 * reading the stream, or -ENOMEM.
 */
RTD_API int rtd_gcheap_collect(rtd_gcheap *h, rtd_ipc_client *c,
			       const struct rtd_gcheap_collect_opts *o,
			       struct rtd_gcheap_collect_result *res);

/**
 * struct rtd_gcheap_gcdump_info - what a .gcdump says of its process
 * @sz: sizeof(struct rtd_gcheap_gcdump_info)
 * @pid: the process (0: not said)
 * @process_name: its name (NULL: not said)
 * @time_ns: when the heap was walked, CLOCK_REALTIME nanoseconds (0: now)
 * @tool: the creating tool's name (NULL: "rtdiag")
 */
struct rtd_gcheap_gcdump_info {
	size_t sz;
	int pid;
	const char *process_name;
	uint64_t time_ns;
	const char *tool;
};

/**
 * rtd_gcheap_write_gcdump - write the graph as a .gcdump file
 * @h: the graph (finished)
 * @f: where
 * @info: the process it came from (may be NULL)
 *
 * The format dotnet-gcdump and PerfView read (their GCHeapDump: a
 * FastSerialization stream "!FastSerialization.1" holding a MemoryGraph):
 * a node per object with its address, size, type and references, a root
 * node "[.NET Roots]" whose child "[other roots]" references every root,
 * a type per name of the snapshot (a nameless object's is "?"). Written in
 * one pass; the graph's own arrays are read, nothing of its size is
 * copied but the node offsets (4 bytes per object).
 *
 * Returns: 0, -RTD_E_STATE before rtd_gcheap_finish(), -RTD_E_CAP past
 * the format's 2^31 - 1 nodes or 2 GiB of node data, -ENOMEM, or -EIO.
 */
RTD_API int rtd_gcheap_write_gcdump(const rtd_gcheap *h, FILE *f,
				    const struct rtd_gcheap_gcdump_info *info);

/**
 * rtd_gcheap_gcdump - a .NET process's heap as a .gcdump file
 * @pid: the process
 * @f: where the .gcdump is written
 * @o: the session's options (NULL: the defaults; @max_objects caps it)
 * @res: receives how the session went (may be NULL)
 *
 * rtd_gcheap_collect(), rtd_gcheap_finish() and rtd_gcheap_write_gcdump()
 * in one call (what dotnet-gcdump collect does). A walk that did not end
 * or lost events is still written (@res says so).
 *
 * Returns: 0; an error connecting or of the session; -RTD_E_CAP when the
 * heap passed the cap (nothing written); -RTD_E_NOTFOUND when no heap
 * walk arrived before the timeout or @cancel (nothing written); -ENOMEM,
 * -EIO.
 */
RTD_API int rtd_gcheap_gcdump(pid_t pid, FILE *f,
			      const struct rtd_gcheap_collect_opts *o,
			      struct rtd_gcheap_collect_result *res);

#ifdef __cplusplus
}
#endif
#endif
