/* SPDX-License-Identifier: MIT */
/*
 * timeline.c - the timeline model: tracks, and events checked and handed
 * to the chosen writer as they come.
 *
 * The model keeps one small record per track (its kind, its open-slice
 * depth, what Chrome JSON needs to place it) and nothing per event, so
 * memory follows the number of tracks, never the length of the input.
 * Slices nest per track: an end closes the innermost open slice; ends
 * without a begin are refused; what is open at finish is closed at the
 * last timestamp seen.
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/file.h"
#include "common/opts.h"
#include "rtdiag/format.h"
#include "timeline/timeline_impl.h"
#include "rtdiag/source.h"

static const char *const fmt_names[RTD_TIMELINE_FMT_COUNT] = {
	[RTD_TIMELINE_FMT_NONE] = "none",
	[RTD_TIMELINE_FMT_PERFETTO] = "perfetto",
	[RTD_TIMELINE_FMT_CHROME_JSON] = "chrome-json",
};

const char *rtd_timeline_format_name(enum rtd_timeline_format fmt)
{
	return (unsigned)fmt < RTD_TIMELINE_FMT_COUNT ? fmt_names[fmt] : "none";
}

enum rtd_timeline_format rtd_timeline_format_from_name(const char *name)
{
	static const struct {
		const char *name;
		enum rtd_timeline_format fmt;
	} names[] = {
		{"perfetto", RTD_TIMELINE_FMT_PERFETTO},
		{"pftrace", RTD_TIMELINE_FMT_PERFETTO},
		{"protobuf", RTD_TIMELINE_FMT_PERFETTO},
		{"chrome-json", RTD_TIMELINE_FMT_CHROME_JSON},
		{"chrome", RTD_TIMELINE_FMT_CHROME_JSON},
		{"json", RTD_TIMELINE_FMT_CHROME_JSON},
	};
	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(name, names[i].name))
			return names[i].fmt;
	return RTD_TIMELINE_FMT_NONE;
}

enum rtd_timeline_format rtd_timeline_format_from_path(const char *path)
{
	/* the one table of extensions (rtdiag/format.h) */
	const struct rtd_format_ext *x = rtd_format_ext_of(path);
	return x && x->kind == RTD_FORMAT_TIMELINE ? x->timeline
						   : RTD_TIMELINE_FMT_NONE;
}

void tl_flush(rtd_timeline *tl, bool force)
{
	if (tl->err || (!force && tl->b.len < (256u << 10)))
		return;
	if (tl->b.len && fwrite(tl->b.data, 1, tl->b.len, tl->out) != tl->b.len)
		tl->err = rtd_write_errno();
	tl->bytes += tl->b.len;
	rtd_buf_reset(&tl->b);
}

const char *tl_frame_name(const struct rtd_frame *f, char *buf, size_t n)
{
	if (f->name && f->name[0])
		return f->name;
	if (f->module && f->module[0])
		snprintf(buf, n, "%.200s+0x%" PRIx64, f->module, f->addr);
	else if (f->addr)
		snprintf(buf, n, "0x%" PRIx64, f->addr);
	else
		return "<unknown>"; /* as go tool pprof prints it */
	return buf;
}

rtd_timeline *rtd_timeline_new(const struct rtd_timeline_opts *opts)
{
	struct rtd_timeline_opts oc;
	const struct rtd_timeline_opts *o = &oc;
	if (!opts || rtd_opts_copy(&oc, sizeof(oc), opts,
				   RTD_OPTS_END(rtd_timeline_opts, max_interned)) ||
	    !o->out ||
	    (o->format != RTD_TIMELINE_FMT_PERFETTO &&
	     o->format != RTD_TIMELINE_FMT_CHROME_JSON))
		return NULL;
	rtd_timeline *tl = calloc(1, sizeof(*tl));
	if (!tl)
		return NULL;
	tl->fmt = o->format;
	tl->out = o->out;
	tl->json_first = true;
	size_t mi = o->max_interned;
	tl->pf.max_interned = mi && mi < RTD_TIMELINE_MAX_INTERNED
				      ? mi
				      : RTD_TIMELINE_MAX_INTERNED;
	rtd_buf_init(&tl->b, 0);
	rtd_map_init(&tl->tracks, RTD_TIMELINE_MAX_TRACKS);
	int err = tl->fmt == RTD_TIMELINE_FMT_PERFETTO ? pf_start(tl)
						       : cj_start(tl);
	if (err) {
		rtd_timeline_free(tl);
		return NULL;
	}
	return tl;
}

void rtd_timeline_free(rtd_timeline *tl)
{
	if (!tl)
		return;
	size_t it = 0;
	uint64_t k;
	void *v;
	while (rtd_map_next(&tl->tracks, &it, &k, &v))
		tl_track_free(v);
	rtd_map_free(&tl->tracks);
	rtd_buf_free(&tl->b);
	pf_free(tl);
	free(tl);
}

static struct tl_track *track_of(rtd_timeline *tl, uint64_t id)
{
	size_t h = id & 255;
	if (tl->recent[h].id == id && id)
		return tl->recent[h].k;
	struct tl_track *k = tl_track_get(tl, id);
	if (k) {
		tl->recent[h].id = id;
		tl->recent[h].k = k;
	}
	return k;
}

int64_t rtd_timeline_add_track(rtd_timeline *tl, const struct rtd_track *t)
{
	if (tl->err)
		return tl->err;
	if (tl->finished)
		return -RTD_E_STATE;
	struct rtd_track copy;
	t = rtd_opts_at_size(t, &copy, sizeof(copy), sizeof(size_t), RTD_OPTS_END(rtd_track, unit));
	if (!t || t->kind > RTD_TRACK_COUNTER ||
	    (t->parent && !track_of(tl, t->parent)))
		return -RTD_E_INVAL;
	if (tl->tracks.count >= RTD_TIMELINE_MAX_TRACKS)
		return -RTD_E_CAP;
	uint64_t id = tl->ntracks + 1;
	struct tl_track *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	int perr = rtd_map_put(&tl->tracks, id, k, NULL);
	if (perr) {
		free(k);
		return perr;
	}
	k->kind = (uint8_t)t->kind;
	k->pid = t->pid;
	k->tid = t->tid;
	if (t->parent && t->kind != RTD_TRACK_THREAD &&
	    t->kind != RTD_TRACK_PROCESS)
		k->pid = track_of(tl, t->parent)->pid;
	const char *name = t->name ? t->name : "";
	if (t->kind == RTD_TRACK_COUNTER && t->unit && t->unit[0]) {
		size_t n = strlen(name) + strlen(t->unit) + 4;
		k->name = malloc(n);
		if (k->name)
			snprintf(k->name, n, "%s (%s)", name, t->unit);
	} else {
		k->name = strdup(name);
	}
	if (!k->name) {
		free(rtd_map_del(&tl->tracks, id));
		return -ENOMEM;
	}
	tl->ntracks++;
	int err = tl->fmt == RTD_TIMELINE_FMT_PERFETTO ? pf_track(tl, id, t)
						       : cj_track(tl, id, t);
	tl_put(tl, err);
	tl_flush(tl, false);
	return tl->err ? tl->err : (int64_t)id;
}

/* @e at this version's size (rtd_opts_at_size(): a copy in @copy when
 * the caller's is another version's), NULL when refused */
#define EVENT_AT_OUR_SIZE(e, copy)                                             \
	rtd_opts_at_size((e), (copy), sizeof(*(copy)), sizeof(size_t),         \
			 RTD_OPTS_END(rtd_tl_event, flow_in))

static int check_event(rtd_timeline *tl, const struct rtd_tl_event *e,
		       struct tl_track **k)
{
	if (tl->err)
		return tl->err;
	if (tl->finished)
		return -RTD_E_STATE;
	if (!e || !e->name ||
	    e->nargs > RTD_TIMELINE_MAX_ARGS || (e->nargs && !e->args))
		return -RTD_E_INVAL;
	*k = track_of(tl, e->track);
	if (!*k || (*k)->kind == RTD_TRACK_COUNTER)
		return -RTD_E_INVAL;
	for (size_t i = 0; i < e->nargs; i++)
		if (!e->args[i].key ||
		    (e->args[i].type == RTD_TL_STR && !e->args[i].s))
			return -RTD_E_INVAL;
	if (e->ts > tl->last_ts)
		tl->last_ts = e->ts;
	return 0;
}

static int emit(rtd_timeline *tl, enum tl_ev type, const struct rtd_tl_event *e)
{
	int err = tl->fmt == RTD_TIMELINE_FMT_PERFETTO ? pf_event(tl, type, e)
						       : cj_event(tl, type, e);
	tl_put(tl, err);
	tl->events++;
	tl_flush(tl, false);
	return tl->err;
}

void tl_track_free(struct tl_track *k)
{
	if (!k)
		return;
	for (uint32_t i = 0; i < k->open_cap; i++)
		free(k->open[i]);
	free(k->open);
	free(k->name);
	free(k);
}

/* Keep @name as the name of the slice @k opens now (Chrome JSON); its
 * args follow the name's NUL once written (open_args()). */
static int open_name(struct tl_track *k, const char *name)
{
	if (k->depth >= k->open_cap) {
		uint32_t cap = k->open_cap ? k->open_cap * 2 : 4;
		char **v = realloc(k->open, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + k->open_cap, 0, (cap - k->open_cap) * sizeof(*v));
		k->open = v;
		k->open_cap = cap;
	}
	size_t n = strlen(name);
	char *s = malloc(n + 2);
	if (!s)
		return -ENOMEM;
	memcpy(s, name, n);
	s[n] = s[n + 1] = 0; /* no args yet */
	k->open[k->depth] = s;
	return 0;
}

int tl_open_args(struct tl_track *k, const uint8_t *args, size_t len)
{
	if (!len || !k->depth || !k->open || !k->open[k->depth - 1])
		return 0;
	char *s = k->open[k->depth - 1];
	size_t n = strlen(s);
	char *v = realloc(s, n + 1 + len + 1);
	if (!v)
		return -ENOMEM;
	memcpy(v + n + 1, args, len);
	v[n + 1 + len] = 0;
	k->open[k->depth - 1] = v;
	return 0;
}

int rtd_timeline_begin(rtd_timeline *tl, const struct rtd_tl_event *e)
{
	struct tl_track *k;
	struct rtd_tl_event copy;
	e = EVENT_AT_OUR_SIZE(e, &copy);
	int err = check_event(tl, e, &k);
	if (err)
		return err;
	if (k->depth >= RTD_TIMELINE_MAX_DEPTH)
		return -RTD_E_CAP;
	if (tl->fmt != RTD_TIMELINE_FMT_PERFETTO && (err = open_name(k, e->name)) < 0)
		return err;
	k->depth++;
	tl->open++;
	return emit(tl, TL_BEGIN, e);
}

int rtd_timeline_end(rtd_timeline *tl, uint64_t track, int64_t ts)
{
	if (tl->err)
		return tl->err;
	if (tl->finished)
		return -RTD_E_STATE;
	struct tl_track *k = track_of(tl, track);
	if (!k || k->kind == RTD_TRACK_COUNTER)
		return -RTD_E_INVAL;
	if (!k->depth)
		return -RTD_E_STATE;
	k->depth--;
	tl->open--;
	if (ts > tl->last_ts)
		tl->last_ts = ts;
	char *name = k->open && k->depth < k->open_cap ? k->open[k->depth] : NULL;
	int err = tl->fmt == RTD_TIMELINE_FMT_PERFETTO ? pf_end(tl, track, ts)
						       : cj_end(tl, track, ts, name,
								name ? name + strlen(name) + 1 : NULL);
	free(name);
	if (name)
		k->open[k->depth] = NULL;
	tl_put(tl, err);
	tl_flush(tl, false);
	return tl->err;
}

int rtd_timeline_slice(rtd_timeline *tl, const struct rtd_tl_event *e)
{
	struct tl_track *k;
	struct rtd_tl_event copy;
	e = EVENT_AT_OUR_SIZE(e, &copy);
	int err = check_event(tl, e, &k);
	if (err)
		return err;
	if (e->dur < 0)
		return -RTD_E_INVAL;
	if (e->ts + e->dur > tl->last_ts)
		tl->last_ts = e->ts + e->dur;
	return emit(tl, TL_COMPLETE, e);
}

int rtd_timeline_instant(rtd_timeline *tl, const struct rtd_tl_event *e)
{
	struct tl_track *k;
	struct rtd_tl_event copy;
	e = EVENT_AT_OUR_SIZE(e, &copy);
	int err = check_event(tl, e, &k);
	return err ? err : emit(tl, TL_INSTANT, e);
}

int rtd_timeline_counter(rtd_timeline *tl, uint64_t track, int64_t ts,
			 double value)
{
	if (tl->err)
		return tl->err;
	if (tl->finished)
		return -RTD_E_STATE;
	struct tl_track *k = track_of(tl, track);
	if (!k || k->kind != RTD_TRACK_COUNTER)
		return -RTD_E_INVAL;
	if (ts > tl->last_ts)
		tl->last_ts = ts;
	int err = tl->fmt == RTD_TIMELINE_FMT_PERFETTO
			  ? pf_counter(tl, track, ts, value)
			  : cj_counter(tl, track, ts, value);
	tl_put(tl, err);
	tl->events++;
	tl_flush(tl, false);
	return tl->err;
}

int rtd_timeline_sample(rtd_timeline *tl, uint64_t track, int64_t ts,
			const struct rtd_frame *frames, size_t nframes)
{
	if (tl->err)
		return tl->err;
	if (tl->finished)
		return -RTD_E_STATE;
	struct tl_track *k = track_of(tl, track);
	if (!k || k->kind == RTD_TRACK_COUNTER || (nframes && !frames))
		return -RTD_E_INVAL;
	if (ts > tl->last_ts)
		tl->last_ts = ts;
	int err = tl->fmt == RTD_TIMELINE_FMT_PERFETTO
			  ? pf_sample(tl, track, ts, frames, nframes)
			  : cj_sample(tl, track, ts, frames, nframes);
	tl_put(tl, err);
	tl->events++;
	tl_flush(tl, false);
	return tl->err;
}

int rtd_timeline_finish(rtd_timeline *tl)
{
	if (tl->finished)
		return -RTD_E_STATE;
	/* close what is open, innermost first, at the last time seen */
	size_t it = 0;
	uint64_t id;
	void *v;
	while (!tl->err && rtd_map_next(&tl->tracks, &it, &id, &v))
		while (((struct tl_track *)v)->depth && !tl->err)
			rtd_timeline_end(tl, id, tl->last_ts);
	tl->finished = true;
	if (!tl->err)
		tl_put(tl, tl->fmt == RTD_TIMELINE_FMT_PERFETTO ? pf_finish(tl)
								 : cj_finish(tl));
	tl_flush(tl, true);
	if (!tl->err && (fflush(tl->out) || ferror(tl->out)))
		tl->err = rtd_write_errno();
	return tl->err;
}

int rtd_timeline_close_track(rtd_timeline *tl, uint64_t track, int64_t ts)
{
	struct tl_track *k = track_of(tl, track);
	if (!k)
		return -RTD_E_INVAL;
	while (k->depth && !tl->err)
		rtd_timeline_end(tl, track, ts);
	rtd_map_del(&tl->tracks, track);
	if (tl->recent[track & 255].id == track)
		tl->recent[track & 255].id = 0;
	tl_track_free(k);
	return tl->err;
}

int rtd_timeline_rename_track(rtd_timeline *tl, uint64_t track, const char *name)
{
	if (tl->err)
		return tl->err;
	if (tl->finished)
		return -RTD_E_STATE;
	struct tl_track *k = track_of(tl, track);
	if (!k || !name || (k->kind != RTD_TRACK_PROCESS && k->kind != RTD_TRACK_THREAD))
		return -RTD_E_INVAL;
	char *n = strdup(name);
	if (!n)
		return -ENOMEM;
	free(k->name);
	k->name = n;
	/* the descriptor again, same id: the viewers take its latest name */
	struct rtd_track t = {.sz = sizeof(t), .kind = k->kind, .pid = k->pid,
			      .tid = k->tid, .name = name};
	tl_put(tl, tl->fmt == RTD_TIMELINE_FMT_PERFETTO ? pf_track(tl, track, &t)
							 : cj_track(tl, track, &t));
	tl_flush(tl, false);
	return tl->err;
}

void rtd_timeline_get_stats(const rtd_timeline *tl,
			    struct rtd_timeline_stats *st)
{
	st->tracks = tl->ntracks;
	st->events = tl->events;
	st->bytes = tl->bytes + tl->b.len;
	st->open = tl->open;
}
