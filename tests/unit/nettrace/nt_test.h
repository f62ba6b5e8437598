/* SPDX-License-Identifier: MIT */
/* nt_test.h - helpers shared by the nettrace unit tests. */
#ifndef NT_TEST_H
#define NT_TEST_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "rtdiag/nettrace.h"

/* The shared vectors every test walks, with their baselines. */
static const char *const nt_vectors[] = {
	"testdata/nettrace/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
	"testdata/nettrace/eventpipe-dotnetcore2.1-linux-x64-objver3.netperf",
	"testdata/nettrace/eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf",
	"testdata/nettrace/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
	"testdata/nettrace/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace",
	"testdata/nettrace/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace",
	"testdata/nettrace/mixed_managed_external_samples.nettrace",
	"testdata/nettrace/only_managed_samples.nettrace",
	NULL,
};

/* The bytes of a shared vector (*len its size), or NULL when the
 * vector is not there. */
static inline uint8_t *nt_vector_read(const char *rel, size_t *len)
{
	const char *path = rtd_test_vector(rel);
	if (!path)
		return NULL;
	uint8_t *buf = rtd_test_slurp(path, len);
	assert_non_null(buf);
	return buf;
}

/* A digest of everything a decoder delivered: each event's header
 * values, type, payload bytes and stack folded into one hash. */
struct nt_digest {
	rtd_nettrace *dec;
	uint64_t hash;
	uint64_t events;
	uint64_t metas;
	uint64_t seqpoints;
	uint64_t last_offset;
};

static inline int nt_digest_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct nt_digest *d = ctx;
	uint64_t h[12] = {ev->timestamp, ev->thread_id, ev->capture_thread_id,
			  ev->proc_number, ev->sequence, ev->sorted,
			  ev->stack_id, ev->offset, ev->meta->id,
			  rtd_hash_bytes(ev->meta->name, strlen(ev->meta->name)),
			  rtd_hash_bytes(ev->payload, ev->payload_len),
			  ev->nframes ? rtd_hash_bytes(ev->stack,
						       ev->nframes * 8)
				      : 0};
	d->hash = d->hash * 1099511628211ULL ^ rtd_hash_bytes(h, sizeof(h)) ^
		  rtd_hash_bytes(ev->activity_id, 16);
	d->events++;
	d->last_offset = ev->offset;
	return 0;
}

static inline int nt_digest_meta(void *ctx, struct rtd_nettrace_metadata *m)
{
	struct nt_digest *d = ctx;
	(void)m;
	d->metas++;
	return 0;
}

static inline int nt_digest_sp(void *ctx, uint64_t ts)
{
	struct nt_digest *d = ctx;
	d->seqpoints++;
	d->hash ^= ts;
	return 0;
}

/* Decode buf feeding chunks of `chunk` bytes (0: all at once). Returns
 * rtd_nettrace_finish()'s result; the digest is in *d. */
static inline int nt_digest_run(const uint8_t *buf, size_t len, size_t chunk,
				struct nt_digest *d)
{
	memset(d, 0, sizeof(*d));
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = d,
				      .on_event = nt_digest_event,
				      .on_metadata = nt_digest_meta,
				      .on_seqpoint = nt_digest_sp};
	d->dec = rtd_nettrace_new(&o);
	if (!d->dec)
		return -1;
	int rc = 0;
	if (!chunk)
		chunk = len ? len : 1;
	for (size_t off = 0; off < len && rc >= 0 && rc != 1; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		rc = rtd_nettrace_feed(d->dec, buf + off, n);
	}
	if (rc >= 0)
		rc = rtd_nettrace_finish(d->dec);
	return rc;
}

#endif
