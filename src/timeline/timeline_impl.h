/* SPDX-License-Identifier: MIT */
/* timeline_impl.h - the timeline model's insides, shared by its writers. */
#ifndef RTD_TIMELINE_IMPL_H
#define RTD_TIMELINE_IMPL_H

#include "common/buf.h"
#include "common/map.h"
#include "common/pbw.h"
#include "rtdiag/profile.h"
#include "rtdiag/timeline.h"

struct tl_track {
	uint8_t kind;
	uint32_t depth;       /* open slices */
	int64_t pid, tid;     /* Chrome JSON's process and thread */
	char *name;           /* counters: Chrome JSON's counter name */
	char **open;          /* Chrome JSON: the open slices' names, innermost
			       * last (an "E" names its slice: speedscope's
			       * importer ends a slice only on an "E" of its
			       * name) */
	uint32_t open_cap;
};

/* Free a track and what it holds. */
void tl_track_free(struct tl_track *k);

enum tl_ev {
	TL_BEGIN,
	TL_END,
	TL_COMPLETE,
	TL_INSTANT,
};

/* Perfetto's interning tables and scratch buffers. */
/* Names looked up by address before the writer's tables: a Go timeline
 * meets a few dozen names at once (its events', categories' and
 * arguments'), which collided in 256 places at one address hash */
#define PF_NAME_CACHE 1024u
#define PF_NAME_WAYS 4u /* slots a name may take (a power of 2) */

struct tl_pf {
	rtd_pbw pkt, ev, in; /* packet, its TrackEvent, its InternedData */
	rtd_strmap names, annos, funcs, stacks, strs, cats;
	uint64_t clock; /* the incremental clock's value: the last timestamp */
	uint64_t next_iid;
	size_t interned, max_interned;
	/* names looked up by the caller's pointer first (the content is
	 * compared too: a reused buffer with new text misses); a short name
	 * is compared with a copy here, not with the table's (a cache miss
	 * each time: the entries are all over the heap) */
	struct {
		const rtd_strmap *table;
		const char *ptr, *key; /* key: text, or the table's copy */
		uint64_t iid, gen;
		char text[40];
	} cache[PF_NAME_CACHE];
	uint64_t gen; /* interning generation, for the cache */
	unsigned evict; /* the slot of a full set taken next */
	bool cleared; /* the next packet starts a new interning generation */
};

struct rtd_timeline {
	enum rtd_timeline_format fmt;
	FILE *out;
	int err;
	bool finished;
	rtd_map tracks;   /* id -> struct tl_track *, live tracks only */
	uint64_t ntracks; /* tracks ever added: the last id */
	int64_t last_ts;
	uint64_t events, bytes, open;
	/* live tracks by id, looked up first here (ids are dense) */
	struct {
		uint64_t id;
		struct tl_track *k;
	} recent[256];
	rtd_buf b;       /* output waiting to be written */
	bool json_first; /* Chrome JSON: no event written yet */
	struct tl_pf pf;
};

/* A live track by id, or NULL. */
static inline struct tl_track *tl_track_get(const rtd_timeline *tl, uint64_t id)
{
	void *v;
	return rtd_map_get(&tl->tracks, id, &v) ? v : NULL;
}

/* Write out what is buffered (always when force, else when large). */
void tl_flush(rtd_timeline *tl, bool force);
static inline void tl_put(rtd_timeline *tl, int err)
{
	if (err && !tl->err)
		tl->err = err;
}

int pf_start(rtd_timeline *tl);
int pf_track(rtd_timeline *tl, uint64_t id, const struct rtd_track *t);
int pf_event(rtd_timeline *tl, enum tl_ev type, const struct rtd_tl_event *e);
int pf_end(rtd_timeline *tl, uint64_t track, int64_t ts);
int pf_counter(rtd_timeline *tl, uint64_t track, int64_t ts, double v);
int pf_sample(rtd_timeline *tl, uint64_t track, int64_t ts,
	      const struct rtd_frame *frames, size_t n);
int pf_finish(rtd_timeline *tl);
void pf_free(rtd_timeline *tl);

int cj_start(rtd_timeline *tl);
int cj_track(rtd_timeline *tl, uint64_t id, const struct rtd_track *t);
int cj_event(rtd_timeline *tl, enum tl_ev type, const struct rtd_tl_event *e);
int cj_end(rtd_timeline *tl, uint64_t track, int64_t ts, const char *name, const char *args);
/* Chrome JSON: keep a "B"'s args text (",\"args\":{...}") after the name
 * of the slice @k opened last, for its "E" to repeat. Returns 0 or -ENOMEM. */
int tl_open_args(struct tl_track *k, const uint8_t *args, size_t len);
int cj_counter(rtd_timeline *tl, uint64_t track, int64_t ts, double v);
int cj_sample(rtd_timeline *tl, uint64_t track, int64_t ts,
	      const struct rtd_frame *frames, size_t n);
int cj_finish(rtd_timeline *tl);

/* A frame's name for a timeline: its name, or its address. */
const char *tl_frame_name(const struct rtd_frame *f, char *buf, size_t n);

#endif /* RTD_TIMELINE_IMPL_H */
