/* SPDX-License-Identifier: MIT */
/*
 * offcpu_bpf.c - the user side of bpf/offcpu.bpf.c (see offcpu_bpf.h).
 *
 * The kernel keeps running totals per (pid, tid, user stack id, kernel
 * stack id, state); a read walks them and passes on what grew since the
 * previous read, so a read never races the kernel's additions (a
 * delete-after-read would lose the waits added between the two). The
 * stacks are kept by a 64-bit hash of their frames, never replaced.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file.h"
#include "common/map.h"
#include "perf/offcpu_bpf.h"
#include "rtdiag/common.h"

#ifdef RTD_HAVE_BPF
#include <linux/types.h>

#include "offcpu.bpf.inc"
#include "perf/bpf/offcpu_maps.h"
#include "perf/bpf_lib.h"

/* What a read has passed on for one key (chained on a hash clash). */
struct seen {
	struct offcpu_bpf_key k;
	uint64_t count, ns;
	struct seen *next;
};

struct offcpu_bpf {
	const struct bpf_lib *l;
	struct bpf_object *obj;
	struct bpf_link *links[3];
	int waits_fd, stacks_fd, stats_fd;
	rtd_map seen; /* key hash -> struct seen chain */
	uint64_t kips[OFFCPU_BPF_MAX_DEPTH], uips[OFFCPU_BPF_MAX_DEPTH];
};

static const char *const progs[] = {"offcpu_switch", "offcpu_fork",
				    "offcpu_exec"};

/* vm.mmap_min_addr, or 0 (every user frame read) when it cannot be read */
static uint64_t mmap_min_addr(void)
{
	char buf[32];
	if (rtd_read_small("/proc/sys/vm/mmap_min_addr", buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

int offcpu_bpf_new(const struct offcpu_bpf_opts *o, struct offcpu_bpf **out,
		   char *why, size_t whylen)
{
	*out = NULL;
	const struct bpf_lib *l = bpf_lib_get(why, whylen);
	if (!l)
		return -RTD_E_UNSUPPORTED;
	struct offcpu_bpf *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->l = l;
	rtd_map_init(&b->seen, OFFCPU_BPF_MAX_WAITS);
	int r = -RTD_E_UNSUPPORTED;
	b->obj = bpf_lib_load(l, "offcpu", offcpu_bpf_obj,
			      (size_t)offcpu_bpf_obj_len, why, whylen);
	if (!b->obj)
		goto fail;
	int conf_fd = bpf_lib_map_fd(l, b->obj, "conf");
	b->waits_fd = bpf_lib_map_fd(l, b->obj, "waits");
	b->stacks_fd = bpf_lib_map_fd(l, b->obj, "stacks");
	b->stats_fd = bpf_lib_map_fd(l, b->obj, "stats");
	struct offcpu_bpf_conf c = {0};
	c.flags = (o->npids ? 0 : OFFCPU_BPF_ALL) |
		  (o->no_kernel ? OFFCPU_BPF_NO_KERNEL : 0);
	c.min_addr = mmap_min_addr();
	__u32 zero = 0;
	if (o->npids > OFFCPU_BPF_MAX_PIDS) {
		snprintf(why, whylen, "more than %d processes", OFFCPU_BPF_MAX_PIDS);
		goto fail;
	}
	if (l->update(conf_fd, &zero, &c, BPF_ANY)) {
		snprintf(why, whylen, "BPF map conf: %s", strerror(errno));
		goto fail;
	}
	if (bpf_lib_set_pids(l, b->obj, "pids", o->pids, o->npids, o->on_exec,
			     why, whylen) ||
	    bpf_lib_attach_all(l, b->obj, progs, b->links, 3, why, whylen))
		goto fail;
	*out = b;
	return 0;
fail:
	offcpu_bpf_free(b);
	return r;
}

static uint64_t key_hash(const struct offcpu_bpf_key *k)
{
	return rtd_hash_bytes(k, sizeof(*k));
}

/* The frames of a stack, leaf first; 0 for none. */
static size_t stack_of(struct offcpu_bpf *b, __u64 key, uint64_t *ips)
{
	if (!key || b->l->lookup(b->stacks_fd, &key, ips))
		return 0;
	size_t n = 0;
	while (n < OFFCPU_BPF_MAX_DEPTH && ips[n])
		n++;
	return n;
}

int offcpu_bpf_read(struct offcpu_bpf *b, uint32_t pid, offcpu_bpf_fn fn,
		    void *ctx)
{
	struct offcpu_bpf_key k, next;
	struct offcpu_bpf_val v;
	const void *prev = NULL;
	while (!b->l->get_next_key(b->waits_fd, prev, &next)) {
		k = next;
		prev = &k;
		if ((pid && k.pid != pid) || b->l->lookup(b->waits_fd, &k, &v))
			continue; /* gone meanwhile */
		uint64_t h = key_hash(&k);
		void *p = NULL;
		struct seen *s = NULL, *head = NULL;
		if (rtd_map_get(&b->seen, h, &p))
			head = p;
		for (s = head; s && memcmp(&s->k, &k, sizeof(k)); s = s->next)
			;
		if (!s) {
			s = calloc(1, sizeof(*s));
			if (!s)
				return -ENOMEM;
			s->k = k;
			s->next = head;
			int r = rtd_map_put(&b->seen, h, s, NULL);
			if (r) {
				free(s);
				return r;
			}
		}
		if (v.count == s->count && v.ns == s->ns)
			continue;
		struct offcpu_bpf_wait w = {0};
		w.pid = k.pid;
		w.tid = k.tid;
		w.state = k.state;
		v.comm[sizeof(v.comm) - 1] = 0;
		w.comm = v.comm;
		w.count = v.count - s->count;
		w.ns = v.ns - s->ns;
		s->count = v.count;
		s->ns = v.ns;
		w.kips = b->kips;
		w.nk = stack_of(b, k.kstack, b->kips);
		w.uips = b->uips;
		w.nu = stack_of(b, k.ustack, b->uips);
		int r = fn(&w, ctx);
		if (r)
			return r;
	}
	return errno == ENOENT ? 0 : -errno;
}

void offcpu_bpf_counters(struct offcpu_bpf *b, uint64_t *out, size_t n)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpu < 1 || ncpu > 4096)
		ncpu = 4096;
	uint64_t *per = calloc((size_t)ncpu, sizeof(*per));
	for (size_t i = 0; i < n; i++) {
		out[i] = 0;
		__u32 k = (__u32)i;
		if (!per || i >= OFFCPU_BPF_NSTATS ||
		    b->l->lookup(b->stats_fd, &k, per))
			continue;
		for (long c = 0; c < ncpu; c++)
			out[i] += per[c];
	}
	free(per);
}

void offcpu_bpf_free(struct offcpu_bpf *b)
{
	if (!b)
		return;
	bpf_lib_close(b->l, b->obj, b->links, 3);
	size_t it = 0;
	uint64_t h;
	void *p;
	while (rtd_map_next(&b->seen, &it, &h, &p)) {
		for (struct seen *s = p, *nx; s; s = nx) {
			nx = s->next;
			free(s);
		}
	}
	rtd_map_free(&b->seen);
	free(b);
}

#else /* a build without BPF */

int offcpu_bpf_new(const struct offcpu_bpf_opts *o, struct offcpu_bpf **out,
		   char *why, size_t whylen)
{
	(void)o;
	*out = NULL;
	snprintf(why, whylen, "this rtdiag was built without BPF (RTD_BPF=OFF)");
	return -RTD_E_UNSUPPORTED;
}

int offcpu_bpf_read(struct offcpu_bpf *b, uint32_t pid, offcpu_bpf_fn fn,
		    void *ctx)
{
	(void)b, (void)pid, (void)fn, (void)ctx;
	return -RTD_E_UNSUPPORTED;
}

void offcpu_bpf_counters(struct offcpu_bpf *b, uint64_t *out, size_t n)
{
	(void)b;
	memset(out, 0, n * sizeof(*out));
}

void offcpu_bpf_free(struct offcpu_bpf *b)
{
	(void)b;
}
#endif
