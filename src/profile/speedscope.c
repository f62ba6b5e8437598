/* SPDX-License-Identifier: MIT */
/*
 * speedscope.c - speedscope's JSON file format (jlfwong/speedscope,
 * src/lib/file-format-spec.ts; schema file-format-schema.json in the npm
 * package): shared frames, and one "sampled" profile per thread where the
 * profile knows threads, weights in the sample type's unit.
 *
 * Samples are the function-level view's stacks with self weight, in the
 * view's order (children sorted by name): speedscope's "time order" then
 * reads as a flame graph, and "left heavy" and "sandwich" are exact. The
 * order of the original samples is not kept (the model keeps distinct
 * stacks, not samples).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "common/buf.h"
#include "common/map.h"
#include "profile/profile_impl.h"

struct ss {
	const rtd_profile *p;
	FILE *f;
	rtd_buf b;
	int err;
	rtd_map frame_of; /* display name id -> speedscope frame index + 1 */
	uint32_t *names;  /* speedscope frame index -> name id */
	size_t nframes, cap;
};

static void ss_flush(struct ss *s, bool force)
{
	if (s->err || (!force && s->b.len < (256u << 10)))
		return;
	if (s->b.len && fwrite(s->b.data, 1, s->b.len, s->f) != s->b.len)
		s->err = rtd_write_errno();
	rtd_buf_reset(&s->b);
}

static void ss_put(struct ss *s, int err)
{
	if (err && !s->err)
		s->err = err;
}

static const char *ss_unit(const char *unit)
{
	static const char *const ok[] = {"bytes", "microseconds",
					 "milliseconds", "nanoseconds",
					 "seconds"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(unit, ok[i]))
			return ok[i];
	return "none";
}

static uint32_t ss_frame(struct ss *s, uint32_t name)
{
	void *v;
	if (rtd_map_get(&s->frame_of, name, &v))
		return (uint32_t)(uintptr_t)v - 1;
	if (s->nframes == s->cap) {
		uint32_t *nn = rtd_grow(s->names, &s->cap, s->nframes + 1,
					sizeof(*nn), 256);
		if (!nn) {
			ss_put(s, -ENOMEM);
			return 0;
		}
		s->names = nn;
	}
	uint32_t id = (uint32_t)s->nframes++;
	s->names[id] = name;
	ss_put(s, rtd_map_put(&s->frame_of, name, (void *)(uintptr_t)(id + 1),
			      NULL));
	return id;
}

/* One profile: the stacks under node @top of tree @t (not @top itself). */
static void ss_profile(struct ss *s, const struct ftree *t, uint32_t top,
		       const char *name, size_t type, bool *first)
{
	const rtd_profile *p = s->p;
	ss_put(s, rtd_buf_puts(&s->b, *first ? "\n" : ",\n"));
	*first = false;
	ss_put(s, rtd_buf_puts(&s->b, "{\"type\":\"sampled\",\"name\":"));
	ss_put(s, rtd_buf_json_str(&s->b, name, strlen(name)));
	ss_put(s, rtd_buf_printf(&s->b,
				 ",\"unit\":\"%s\",\"startValue\":0,"
				 "\"endValue\":%" PRId64 ",\"samples\":[",
				 ss_unit(p->types[type].unit), t->n[top].total));
	/* depth-first from top, stacks as frame indices root first */
	uint32_t *path = malloc(t->nn * sizeof(*path));
	uint32_t *stack = malloc(t->nn * sizeof(*stack));
	if (!path || !stack) {
		ss_put(s, -ENOMEM);
		free(path);
		free(stack);
		return;
	}
	size_t sp = 0, plen = 0;
	bool any = false;
	/* two passes: the stacks, then their weights; children are pushed
	 * in reverse so the walk meets them in sorted order */
	for (int pass = 0; pass < 2 && !s->err; pass++) {
		sp = plen = 0;
		any = false;
		if (pass == 1)
			ss_put(s, rtd_buf_puts(&s->b, "],\"weights\":["));
		size_t base = sp;
		for (uint32_t c = t->n[top].first_child; c != PROF_NONE;
		     c = t->n[c].next_sibling)
			stack[sp++] = c;
		for (size_t i = base, j = sp; i + 1 < j; i++, j--) {
			uint32_t x = stack[i];
			stack[i] = stack[j - 1];
			stack[j - 1] = x;
		}
		while (sp && !s->err) {
			uint32_t c = stack[--sp];
			while (plen && path[plen - 1] != t->n[c].parent)
				plen--;
			path[plen++] = c;
			if (t->n[c].self > 0) {
				if (any)
					ss_put(s, rtd_buf_putc(&s->b, ','));
				any = true;
				if (pass == 0) {
					ss_put(s, rtd_buf_putc(&s->b, '['));
					for (size_t k = 0; k < plen; k++)
						ss_put(s, rtd_buf_printf(
								  &s->b, k ? ",%u" : "%u",
								  ss_frame(s, t->n[path[k]].name)));
					ss_put(s, rtd_buf_putc(&s->b, ']'));
				} else {
					ss_put(s, rtd_buf_printf(&s->b, "%" PRId64,
								 t->n[c].self));
				}
				ss_flush(s, false);
			}
			base = sp;
			for (uint32_t k = t->n[c].first_child; k != PROF_NONE;
			     k = t->n[k].next_sibling)
				stack[sp++] = k;
			for (size_t i = base, j = sp; i + 1 < j; i++, j--) {
				uint32_t x = stack[i];
				stack[i] = stack[j - 1];
				stack[j - 1] = x;
			}
		}
	}
	ss_put(s, rtd_buf_puts(&s->b, "]}"));
	free(path);
	free(stack);
}

int prof_write_speedscope(const rtd_profile *p, FILE *f, size_t type,
			  const struct rtd_profile_write_opts *o)
{
	struct ftree t;
	int err = ftree_build(p, type, NULL, NULL, true, &t);
	if (err)
		return err;
	err = ftree_sort_children(p, &t);
	if (err) {
		ftree_free(&t);
		return err;
	}
	struct ss s = {.p = p, .f = f};
	rtd_buf_init(&s.b, 0);
	rtd_map_init(&s.frame_of, 0);
	char title[512];
	prof_title(p, type, o, title, sizeof(title));
	ss_put(&s, rtd_buf_puts(&s.b, "{\"$schema\":\"https://www.speedscope."
				      "app/file-format-schema.json\",\"name\":"));
	ss_put(&s, rtd_buf_json_str(&s.b, title, strlen(title)));
	ss_put(&s, rtd_buf_printf(&s.b, ",\"exporter\":\"rtdiag %s\","
					"\"activeProfileIndex\":0,\"profiles\":[",
				  rtd_version()));
	/* the threads are the root's children with the tree's extra names;
	 * stacks of samples without a thread hang from the root itself and
	 * form one more profile */
	bool first = true;
	int64_t rest = t.n[0].self;
	for (uint32_t c = t.n[0].first_child; c != PROF_NONE;
	     c = t.n[c].next_sibling)
		if (t.n[c].name < t.base)
			rest += t.n[c].total;
	for (uint32_t c = t.n[0].first_child; c != PROF_NONE && !s.err;
	     c = t.n[c].next_sibling)
		if (t.n[c].name >= t.base && t.n[c].total)
			ss_profile(&s, &t, c, ftree_name(p, &t, t.n[c].name),
				   type, &first);
	if (rest || first) {
		/* a profile of the thread-less stacks: hide the thread nodes
		 * by building a second view without thread roots would cost a
		 * pass; instead write the root's non-thread children */
		struct ftree u;
		int e = ftree_build(p, type, prof_ctx_no_thread, NULL, false, &u);
		if (!e)
			e = ftree_sort_children(p, &u);
		if (!e) {
			/* thread-root names of u are none, so base is nstrs */
			ss_profile(&s, &u, 0, first ? title : "(no thread)",
				   type, &first);
			ftree_free(&u);
		}
		ss_put(&s, e);
	}
	ss_put(&s, rtd_buf_puts(&s.b, "\n],\"shared\":{\"frames\":[\n"));
	for (size_t i = 0; i < s.nframes && !s.err; i++) {
		const char *name = ftree_name(p, &t, s.names[i]);
		ss_put(&s, rtd_buf_puts(&s.b, i ? ",{\"name\":" : "{\"name\":"));
		ss_put(&s, rtd_buf_json_str(&s.b, name, strlen(name)));
		ss_put(&s, rtd_buf_puts(&s.b, "}\n"));
		ss_flush(&s, false);
	}
	ss_put(&s, rtd_buf_puts(&s.b, "]}}\n"));
	ss_flush(&s, true);
	err = s.err;
	rtd_buf_free(&s.b);
	rtd_map_free(&s.frame_of);
	free(s.names);
	ftree_free(&t);
	if (!err && (fflush(f) || ferror(f)))
		err = rtd_write_errno();
	return err;
}
