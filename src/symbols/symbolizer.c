/* SPDX-License-Identifier: MIT */
/*
 * symbolizer.c - processes, their mappings, objects and locations.
 *
 * A process is a sorted array of its executable mappings. An object is
 * what code lives in: an ELF file (keyed by device and inode, so the same
 * library in many processes is one object), the kernel, a process's JIT
 * code (its perf map), or "unknown". A location is (object, offset): the
 * file offset for files, the address for the others; locations are
 * interned in an open-addressing table so a profiler's stacks are arrays
 * of small ids and each distinct address is named once.
 *
 * Files are opened when the first address in them is located and kept
 * open until their symbols are loaded, so symbolization at the end of a
 * recording works for processes that have exited and for deleted files
 * (read through /proc/PID/map_files while the process lives).
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/stats.h"
#include "common/buf.h"
#include "common/file.h"
#include "common/log.h"
#include "common/optlib_debuginfod.h"
#include "symbols/internal.h"
#include "rtdiag/source.h"

static void warnf(rtd_symbolizer *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warnf(rtd_symbolizer *s, const char *fmt, ...)
{
	char msg[PATH_MAX + 256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rtd_debug("symbols: %s", msg);
	if (s->warn)
		s->warn(msg, s->warn_ctx);
}

void rtd_sym_set_warn(rtd_symbolizer *s, rtd_sym_warn_fn fn, void *ctx)
{
	if (!s)
		return;
	s->warn = fn;
	s->warn_ctx = ctx;
}

static const char *intern_path(rtd_symbolizer *s, const char *p, size_t n)
{
	void *v;
	if (rtd_strmap_get(&s->paths, p, n, &v))
		return v;
	const char *c = sym_table_strdup(&s->strings, p, n);
	if (!c || rtd_strmap_put(&s->paths, p, n, (void *)c))
		return NULL;
	return c;
}

int rtd_symbolizer_new(const struct rtd_sym_opts *opts, rtd_symbolizer **out)
{
	struct rtd_sym_opts o;
	*out = NULL;
	if (rtd_opts_copy(&o, sizeof(o), opts, RTD_OPTS_END(rtd_sym_opts, dwarf_max)))
		return -RTD_E_INVAL;
	elf_version(EV_CURRENT);
	rtd_symbolizer *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->flags = o.flags;
	s->dwarf_max = o.dwarf_max ? o.dwarf_max : RTD_SYM_DWARF_MAX;
	s->debug_dirs = strdup(o.debug_dirs ? o.debug_dirs : "/usr/lib/debug");
	s->kallsyms = strdup(o.kallsyms ? o.kallsyms : RTD_KALLSYMS_PATH);
	if (!s->debug_dirs || !s->kallsyms) {
		rtd_symbolizer_free(s);
		return -ENOMEM;
	}
	if (o.debuginfod_urls && !*o.debuginfod_urls)
		s->flags |= RTD_SYM_NO_DEBUGINFOD;
	else if (o.debuginfod_urls)
		setenv("DEBUGINFOD_URLS", o.debuginfod_urls, 1);
	rtd_map_init(&s->obj_by_key, RTD_SYM_MAX_OBJECTS);
	rtd_map_init(&s->procs, SYM_MAX_PROCS);
	rtd_strmap_init(&s->paths, 0);
	rtd_strmap_init(&s->build_ids, RTD_SYM_MAX_OBJECTS);
	s->kernel_obj = s->unknown_obj = -1;
	*out = s;
	return 0;
}

/*
 * The kernel's symbols are the same for every symbolizer of a process
 * (the agent has one per native target and kind, each ~10 MB of kallsyms
 * and a read of /proc/kallsyms at its start): read once per kallsyms
 * path, shared read-only and counted, freed with the last symbolizer that
 * used them (the next one reads them again: modules loaded since show).
 * A read that found nothing (warned) is not shared: the next one tries.
 */
static pthread_mutex_t kshared_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *path; /* set while refs > 0 */
	struct sym_table t;
	size_t refs;
} kshared;

static void kshared_release(void)
{
	pthread_mutex_lock(&kshared_mu);
	if (kshared.refs && --kshared.refs == 0) {
		sym_table_free(&kshared.t);
		free(kshared.path);
		memset(&kshared, 0, sizeof(kshared));
	}
	pthread_mutex_unlock(&kshared_mu);
}

static void obj_free(struct sym_obj *o)
{
	if (!o)
		return;
	sym_dwarf_close(o->dw);
	if (o->dbg)
		elf_end(o->dbg); /* the decompressed sections, with it */
	if (o->dbg_fd >= 0)
		close(o->dbg_fd);
	free(o->dbg_mem);
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	sym_elf_info_clear(&o->info);
	if (o->shared_syms)
		kshared_release();
	else
		sym_table_free(&o->syms);
	free(o->perfmap_host);
	free(o);
}

static void proc_free(struct sym_proc *p)
{
	if (!p)
		return;
	sym_unwinder_free(p->uw);
	free(p->m);
	free(p);
}

void rtd_symbolizer_free(rtd_symbolizer *s)
{
	if (!s)
		return;
	rtd_sym_preload_finish(s);
	for (size_t i = 0; i < s->nobjs; i++)
		obj_free(s->objs[i]);
	free(s->objs);
	size_t it = 0;
	uint64_t k;
	void *v;
	while (rtd_map_next(&s->procs, &it, &k, &v))
		proc_free(v);
	rtd_map_free(&s->procs);
	rtd_map_free(&s->obj_by_key);
	rtd_strmap_free(&s->paths);
	rtd_strmap_free(&s->build_ids);
	sym_table_free(&s->strings);
	sym_table_free(&s->names);
	free(s->locs);
	free(s->lht);
	free(s->debug_dirs);
	free(s->kallsyms);
	if (s->dbgd)
		debuginfod_end(s->dbgd);
	free(s);
}

/* ---- processes ---------------------------------------------------------------- */

static struct sym_proc *proc_get(rtd_symbolizer *s, pid_t pid, bool create)
{
	if (s->last_proc && s->last_pid == pid)
		return s->last_proc;
	void *v = NULL;
	if (!rtd_map_get(&s->procs, (uint64_t)(uint32_t)pid, &v) && create) {
		struct sym_proc *p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		p->pid = pid;
		p->perfmap = -1;
		if (rtd_map_put(&s->procs, (uint64_t)(uint32_t)pid, p, NULL)) {
			free(p);
			return NULL;
		}
		s->st.processes++;
		v = p;
	}
	if (v) {
		s->last_pid = pid;
		s->last_proc = v;
	}
	return v;
}

static void proc_forget(rtd_symbolizer *s, pid_t pid)
{
	struct sym_proc *p = rtd_map_del(&s->procs, (uint64_t)(uint32_t)pid);
	if (p && s->st.processes)
		s->st.processes--;
	if (s->last_proc == p)
		s->last_proc = NULL;
	proc_free(p);
}

/* Insert [start, end) replacing whatever it overlaps, as mmap() does. */
static int proc_insert(struct sym_proc *p, const struct sym_map *nm)
{
	size_t w = 0;
	struct sym_map tail = {0};
	bool have_tail = false;
	for (size_t i = 0; i < p->n; i++) {
		struct sym_map m = p->m[i];
		if (m.end <= nm->start || m.start >= nm->end) {
			p->m[w++] = m;
			continue;
		}
		if (m.start < nm->start) { /* keep its head */
			struct sym_map h = m;
			h.end = nm->start;
			p->m[w++] = h;
		}
		if (m.end > nm->end) { /* and its tail */
			tail = m;
			tail.pgoff += nm->end - m.start;
			tail.start = nm->end;
			have_tail = true;
		}
	}
	p->n = w;
	p->gen++;
	size_t need = p->n + 1 + have_tail;
	if (need > SYM_MAX_MAPPINGS)
		return -RTD_E_CAP;
	struct sym_map *nv = rtd_grow(p->m, &p->cap, need, sizeof(*nv), 64);
	if (!nv)
		return -ENOMEM;
	p->m = nv;
	struct sym_map add[2] = {*nm, tail};
	for (int k = 0; k < 1 + have_tail; k++) {
		size_t pos = p->n;
		while (pos > 0 && p->m[pos - 1].start > add[k].start) {
			p->m[pos] = p->m[pos - 1];
			pos--;
		}
		p->m[pos] = add[k];
		p->n++;
	}
	return 0;
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t l = strlen(suf);
	return n >= l && !memcmp(s + n - l, suf, l);
}

static int add_mapping(rtd_symbolizer *s, struct sym_proc *p, uint64_t start,
		       uint64_t len, uint64_t pgoff, const char *path,
		       size_t plen, uint64_t dev, uint64_t ino)
{
	if (!len || start + len < start)
		return 0;
	const char *ip = intern_path(s, path, plen);
	if (!ip)
		return -ENOMEM;
	struct sym_map m = {start, start + len, pgoff, dev, ino, ip, -1};
	const char *base = strrchr(ip, '/');
	base = base ? base + 1 : ip;
	if (!strncmp(base, "libcoreclr.so", 13))
		p->dotnet = true;
	return proc_insert(p, &m);
}

struct sym_proc *sym_proc_find(rtd_symbolizer *s, pid_t pid)
{
	struct sym_proc *p = proc_get(s, pid, false);
	if (p)
		return p;
	if (!(s->flags & RTD_SYM_NO_PROC_LOAD) && pid > 0)
		rtd_sym_proc_load(s, pid); /* gone: an empty process */
	return proc_get(s, pid, true);
}

int rtd_sym_proc_mmap(rtd_symbolizer *s, pid_t pid, uint64_t start,
		      uint64_t len, uint64_t pgoff, const char *path,
		      uint64_t dev, uint64_t ino, uint32_t prot)
{
	if (!s || !path)
		return -RTD_E_INVAL;
	if (!(prot & PROT_EXEC))
		return 0;
	/* a process first seen through a new mapping: what it had before */
	struct sym_proc *p = sym_proc_find(s, pid);
	if (!p)
		return -ENOMEM;
	return add_mapping(s, p, start, len, pgoff, path, strlen(path), dev,
			   ino);
}

struct load_ctx {
	rtd_symbolizer *s;
	struct sym_proc *p;
};

static int on_maps_line(const struct rtd_maps_entry *e, void *ctx)
{
	struct load_ctx *c = ctx;
	if (!e->exec)
		return 0;
	return add_mapping(c->s, c->p, e->start, e->end - e->start, e->pgoff,
			   e->path, e->path_len,
			   makedev(e->dev_major, e->dev_minor), e->ino);
}

/* Read a whole small file (procfs sizes are 0: read until EOF). */
static int read_all(int fd, char **out, size_t *len, size_t cap)
{
	size_t n = 0, c = 65536;
	char *b = malloc(c);
	if (!b)
		return -ENOMEM;
	for (;;) {
		if (n == c) {
			if (c >= cap) {
				free(b);
				return -RTD_E_CAP;
			}
			size_t nc = c * 2 < cap ? c * 2 : cap;
			char *nb = realloc(b, nc);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			c = nc;
		}
		ssize_t r = pread(fd, b + n, c - n, (off_t)n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			free(b);
			return e;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	*out = b;
	*len = n;
	return 0;
}

int rtd_sym_proc_load(rtd_symbolizer *s, pid_t pid)
{
	if (!s || pid <= 0)
		return -RTD_E_INVAL;
	size_t bad;
	int fd = rtd_proc_maps_open(pid);
	if (fd < 0)
		return fd == -ENOENT || fd == -ESRCH ? -RTD_E_NOTFOUND : fd;
	struct sym_proc *p = proc_get(s, pid, true);
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	p->n = 0;
	p->gen++;
	p->perfmap = -1;
	p->dotnet = false;
	struct load_ctx c = {s, p};
	int r = rtd_maps_read_fd(fd, on_maps_line, &c, &bad);
	close(fd);
	if (r == -ESRCH)
		r = -RTD_E_NOTFOUND;
	if (r == -RTD_E_FORMAT || r == -RTD_E_CAP)
		warnf(s, "pid %d: /proc/%d/maps line %zu is not in the maps format",
		      (int)pid, (int)pid, bad);
	return r;
}

int rtd_sym_proc_fork(rtd_symbolizer *s, pid_t ppid, pid_t pid)
{
	if (!s)
		return -RTD_E_INVAL;
	struct sym_proc *pp = sym_proc_find(s, ppid);
	struct sym_proc *c = proc_get(s, pid, true);
	if (!c)
		return -ENOMEM;
	if (!pp || pp == c)
		return 0;
	pp = proc_get(s, ppid, false); /* the cache now holds c */
	if (!pp)
		return 0;
	struct sym_map *m = NULL;
	if (pp->n) {
		m = malloc(pp->n * sizeof(*m));
		if (!m)
			return -ENOMEM;
		memcpy(m, pp->m, pp->n * sizeof(*m));
	}
	free(c->m);
	c->m = m;
	c->n = c->cap = pp->n;
	c->gen++;
	c->dotnet = pp->dotnet;
	c->perfmap = -1; /* a new pid writes its own perf map */
	return 0;
}

void rtd_sym_proc_exec(rtd_symbolizer *s, pid_t pid)
{
	if (!s)
		return;
	struct sym_proc *p = proc_get(s, pid, false);
	if (!p)
		p = proc_get(s, pid, true); /* exec'd before we knew it */
	if (!p)
		return;
	p->n = 0;
	p->gen++;
	p->perfmap = -1;
	p->dotnet = false;
}

void rtd_sym_proc_exit(rtd_symbolizer *s, pid_t pid)
{
	if (s)
		proc_forget(s, pid);
}

/* ---- objects ------------------------------------------------------------------ */

/* ---- background loading -------------------------------------------------------- */

/*
 * While a profiler records, a thread loads each object's symbols and
 * DWARF as soon as the object is first located, so that little is left
 * to do when the recording ends. The thread touches only the objects it
 * is handed and the load counters of the stats; the recording thread
 * resolves nothing until rtd_sym_preload_finish() has joined it.
 */
struct sym_loader {
	rtd_symbolizer *s;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct sym_obj **q;
	size_t head, n, cap;
	bool stop;
};

static void obj_load(rtd_symbolizer *s, struct sym_obj *o);

static void loader_push(struct sym_loader *l, struct sym_obj *o)
{
	pthread_mutex_lock(&l->mu);
	if (l->n == l->cap) {
		struct sym_obj **nq = rtd_grow(l->q, &l->cap, l->n + 1,
					sizeof(*nq), 64);
		if (!nq) {
			pthread_mutex_unlock(&l->mu);
			return; /* loaded when resolved instead */
		}
		l->q = nq;
	}
	l->q[l->n++] = o;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
}

static void *loader_main(void *arg)
{
	struct sym_loader *l = arg;
	for (;;) {
		pthread_mutex_lock(&l->mu);
		while (l->head == l->n && !l->stop)
			pthread_cond_wait(&l->cv, &l->mu);
		if (l->head == l->n) {
			pthread_mutex_unlock(&l->mu);
			break; /* stopped, and the queue is drained */
		}
		struct sym_obj *o = l->q[l->head++];
		pthread_mutex_unlock(&l->mu);
		obj_load(l->s, o);
	}
	return NULL;
}

int rtd_sym_preload_start(rtd_symbolizer *s)
{
	if (!s)
		return -RTD_E_INVAL;
	if (s->bg)
		return 0;
	struct sym_loader *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->s = s;
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	int e = pthread_create(&l->th, NULL, loader_main, l);
	if (e) {
		pthread_mutex_destroy(&l->mu);
		pthread_cond_destroy(&l->cv);
		free(l);
		return -e;
	}
	s->bg = l;
	/* objects that exist already */
	for (size_t i = 0; i < s->nobjs; i++)
		if (s->objs[i]->kind == OBJ_FILE || s->objs[i]->kind == OBJ_KERNEL)
			loader_push(l, s->objs[i]);
	return 0;
}

void rtd_sym_preload_finish(rtd_symbolizer *s)
{
	struct sym_loader *l = s ? s->bg : NULL;
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = true;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->th, NULL);
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cv);
	free(l->q);
	free(l);
	s->bg = NULL;
}

static int32_t obj_add(rtd_symbolizer *s, struct sym_obj *o, uint64_t key)
{
	if (s->nobjs >= RTD_SYM_MAX_OBJECTS)
		return -RTD_E_CAP;
	if (s->nobjs == s->objs_cap) {
		struct sym_obj **nv = rtd_grow(s->objs, &s->objs_cap, s->nobjs + 1,
					sizeof(*nv), 64);
		if (!nv)
			return -ENOMEM;
		s->objs = nv;
	}
	int32_t id = (int32_t)s->nobjs;
	if (rtd_map_put(&s->obj_by_key, key, (void *)(uintptr_t)(id + 1), NULL))
		return -ENOMEM;
	s->objs[s->nobjs++] = o;
	s->st.objects++;
	if (s->bg && (o->kind == OBJ_FILE || o->kind == OBJ_KERNEL))
		loader_push(s->bg, o);
	return id;
}

static struct sym_obj *obj_new(uint8_t kind, const char *path)
{
	struct sym_obj *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->kind = kind;
	o->path = path;
	o->fd = -1;
	o->dbg_fd = -1;
	return o;
}

static int32_t obj_find(rtd_symbolizer *s, uint64_t key)
{
	void *v;
	if (rtd_map_get(&s->obj_by_key, key, &v))
		return (int32_t)((uintptr_t)v - 1);
	return -1;
}

static int32_t singleton(rtd_symbolizer *s, int32_t *slot, uint8_t kind,
			 const char *name)
{
	if (*slot >= 0)
		return *slot;
	struct sym_obj *o = obj_new(kind, name);
	if (!o)
		return -ENOMEM;
	int32_t id = obj_add(s, o, rtd_hash_bytes(name, strlen(name)) ^ kind);
	if (id < 0) {
		obj_free(o);
		return id;
	}
	*slot = id;
	return id;
}

/* Anonymous or memfd code: where JIT compilers put theirs. */
static bool is_anon(const char *path)
{
	return !*path || !strcmp(path, "//anon") || !strncmp(path, "[anon", 5) ||
	       !strncmp(path, "/memfd:", 7) || !strcmp(path, "/dev/zero") ||
	       !strncmp(path, "/anon_hugepage", 14) || !strcmp(path, "[heap]") ||
	       !strncmp(path, "[stack", 6);
}

int rtd_sym_perfmap_path(pid_t pid, char *out, size_t n)
{
	char tmpdir[PATH_MAX];
	rtd_proc_tmpdir(pid, tmpdir, sizeof(tmpdir));
	return rtd_proc_root_path(out, n, pid, "%s/perf-%d.map", tmpdir,
				  (int)rtd_proc_ns_pid(pid)) ? -RTD_E_CAP : 0;
}

static int32_t perfmap_obj(rtd_symbolizer *s, struct sym_proc *p)
{
	if (p->perfmap >= 0)
		return p->perfmap;
	char path[PATH_MAX + 64], host[64];
	rtd_sym_perfmap_path(p->pid, path, sizeof(path));
	snprintf(host, sizeof(host), "/tmp/perf-%d.map", (int)p->pid);
	const char *ip = intern_path(s, path, strlen(path));
	struct sym_obj *o = ip ? obj_new(OBJ_PERFMAP, ip) : NULL;
	if (!o)
		return -ENOMEM;
	o->pid = p->pid;
	o->dotnet = p->dotnet;
	o->perfmap_host = strdup(host);
	o->fd = open(path, O_RDONLY | O_CLOEXEC);
	/* a key no file has: the pid, and a generation per pid reuse */
	uint64_t key = rtd_hash_u64(0x9e3779b97f4a7c15ull ^ (uint64_t)p->pid ^
				    ((uint64_t)s->nobjs << 32));
	int32_t id = obj_add(s, o, key);
	if (id < 0) {
		obj_free(o);
		return id;
	}
	p->perfmap = id;
	return id;
}

int sym_open_mapping(pid_t pid, const struct sym_map *m)
{
	if (ends_with(m->path, strlen(m->path), " (deleted)"))
		return rtd_proc_map_file_open(pid, m->start, m->end);
	return rtd_proc_open_in_root(pid, m->path);
}

/*
 * The vDSO: no file holds it. Every process of this kernel and word size
 * maps the same image, so ours stands for the target's (as perf copies
 * the image it finds into its build-id cache): copied from our own
 * mapping (AT_SYSINFO_EHDR, its extent from /proc/self/maps) into a
 * memfd, read then as any ELF file. A mapping of another size (a 32-bit
 * process's vDSO) keeps module+offset names.
 */
static int on_vdso_line(const struct rtd_maps_entry *e, void *ctx)
{
	if (e->path_len != 6 || memcmp(e->path, "[vdso]", 6))
		return 0;
	uint64_t *ext = ctx;
	ext[0] = e->start;
	ext[1] = e->end;
	return 1;
}

static int vdso_image_fd(uint64_t want_len)
{
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	uint64_t ext[2] = {0, 0};
	size_t bad;
	if (!base || rtd_proc_maps(0, on_vdso_line, ext, &bad) < 0)
		return -1;
	uint64_t start = ext[0], end = ext[1];
	if (start != base || end <= start || end - start != want_len)
		return -1;
	int fd = memfd_create("rtdiag-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	const char *img = (const char *)base;
	size_t n = (size_t)(end - start), off = 0;
	while (off < n) {
		ssize_t w = write(fd, img + off, n - off);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	return fd;
}

int rtd_sym_file_build_id(rtd_symbolizer *s, const char *path,
			  const uint8_t *id, size_t len)
{
	if (!s || !path || !id || !len || len > 20)
		return -RTD_E_INVAL;
	char b[21];
	b[0] = (char)len;
	memcpy(b + 1, id, len);
	const char *c = sym_table_strdup(&s->strings, b, len + 1);
	if (!c)
		return -ENOMEM;
	return rtd_strmap_put(&s->build_ids, path, strlen(path), (void *)c) ? -ENOMEM : 0;
}

/* The build id recorded for @path: its length (0: none), *id set. */
static size_t recorded_build_id(rtd_symbolizer *s, const char *path,
				const uint8_t **id)
{
	void *v;
	if (!rtd_strmap_get(&s->build_ids, path, strlen(path), &v))
		return 0;
	*id = (const uint8_t *)v + 1;
	return (uint8_t)*(const char *)v;
}

/* perf's build-id cache: the file recorded for @path, or -1. */
static int open_build_id_cache(rtd_symbolizer *s, const char *path)
{
	const uint8_t *id;
	size_t len = recorded_build_id(s, path, &id);
	if (!len)
		return -1;
	char hex[41], dir[PATH_MAX], p[PATH_MAX + 64];
	rtd_hex_lower(hex, id, len); /* len <= 20: rtd_sym_file_build_id() */
	const char *e = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	if (e && *e)
		snprintf(dir, sizeof(dir), "%s", e);
	else if (home && *home)
		snprintf(dir, sizeof(dir), "%s/.debug", home);
	else
		return -1;
	snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s/elf", dir, hex, hex + 2);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0) { /* older perf: the entry links to the file itself */
		struct stat st;
		snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s", dir, hex, hex + 2);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			fd = open(p, O_RDONLY | O_CLOEXEC);
	}
	return fd;
}

int32_t sym_map_object(rtd_symbolizer *s, struct sym_proc *p,
		       struct sym_map *m)
{
	bool vdso = !strcmp(m->path, "[vdso]");
	uint64_t key = m->ino ? rtd_hash_u64(m->dev * 0x100000001b3ull ^ m->ino)
			      : rtd_hash_bytes(m->path, strlen(m->path));
	if (vdso) /* one object per image size, whatever the process */
		key ^= m->end - m->start;
	int32_t id = obj_find(s, key);
	if (id >= 0)
		return id;
	int vfd = vdso ? vdso_image_fd(m->end - m->start) : -1;
	bool special = m->path[0] == '[' && vfd < 0;
	struct sym_obj *o = obj_new(special ? OBJ_SPECIAL : OBJ_FILE, m->path);
	if (!o)
		return -ENOMEM;
	o->pid = p->pid;
	o->dev = m->dev;
	o->ino = m->ino;
	o->map_start = m->start;
	o->map_limit = m->end;
	o->map_pgoff = m->pgoff;
	if (vfd >= 0) {
		o->fd = vfd;
	} else if (!special) {
		o->fd = sym_open_mapping(p->pid, m);
		int e = errno;
		if (o->fd < 0 && (o->fd = open_build_id_cache(s, m->path)) < 0)
			errno = e; /* gone and not in perf's cache either */
		if (o->fd < 0 && errno != EMFILE) {
			o->warned = true;
			warnf(s, "pid %d: %s: cannot open (%s): its frames are "
				 "shown as module+offset", (int)p->pid, m->path,
			      strerror(errno));
		}
	}
	id = obj_add(s, o, key);
	if (id < 0)
		obj_free(o);
	return id;
}

int rtd_sym_proc_objects(rtd_symbolizer *s, pid_t pid)
{
	if (!s || pid <= 0)
		return -RTD_E_INVAL;
	struct sym_proc *p = sym_proc_find(s, pid);
	if (!p)
		return -ENOMEM;
	int added = 0;
	for (size_t i = 0; i < p->n; i++) {
		struct sym_map *m = &p->m[i];
		if (m->obj >= 0 || is_anon(m->path))
			continue;
		size_t before = s->nobjs;
		int32_t id = sym_map_object(s, p, m);
		if (id == -RTD_E_CAP)
			return added;
		if (id < 0)
			continue; /* located later, as without this */
		m->obj = id;
		if (s->nobjs == before)
			continue; /* another mapping of a file already known */
		added++;
		/* without the background thread: loaded now, not at the
		 * first sample that lands in it */
		if (!s->bg && s->objs[id]->kind == OBJ_FILE)
			obj_load(s, s->objs[id]);
	}
	return added;
}

/* ---- locations ------------------------------------------------------------------ */

static uint64_t loc_hash(uint32_t obj, uint64_t off)
{
	return rtd_hash_u64(off * 31 + obj);
}

static int lht_grow(rtd_symbolizer *s)
{
	size_t ns = s->lht_size ? s->lht_size * 2 : 4096;
	uint32_t *t = calloc(ns, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < s->nlocs; i++) {
		size_t h = loc_hash(s->locs[i].obj, s->locs[i].off) & (ns - 1);
		while (t[h])
			h = (h + 1) & (ns - 1);
		t[h] = (uint32_t)i + 1;
	}
	free(s->lht);
	s->lht = t;
	s->lht_size = ns;
	return 0;
}

/* The hash of the locations again, at a size for what they are now (a
 * table grown for many that were forgotten shrinks). */
static int lht_rebuild(rtd_symbolizer *s)
{
	free(s->lht);
	s->lht = NULL;
	s->lht_size = 0;
	while ((s->nlocs + 1) * 2 > s->lht_size)
		if (lht_grow(s))
			return -ENOMEM;
	return 0;
}

int rtd_sym_keep_locations(rtd_symbolizer *s, const uint8_t *keep, size_t n,
			   int64_t *remap)
{
	if (!s || (n && !keep))
		return -RTD_E_INVAL;
	rtd_sym_preload_finish(s); /* the loader thread is done with them */
	size_t k = 0;
	for (size_t i = 0; i < n || i < s->nlocs; i++) {
		bool kept = i < s->nlocs && i < n && keep[i];
		if (remap && i < n)
			remap[i] = kept ? (int64_t)k : -1;
		if (kept)
			s->locs[k++] = s->locs[i];
	}
	s->nlocs = k;
	/* what was copied for the names given out goes: each resolve copies
	 * again, so memory follows the locations kept, not all ever named */
	sym_table_free(&s->names);
	if (s->locs_cap > 2 * k + 1024) {
		struct sym_loc *nv = realloc(s->locs, (k + 1024) * sizeof(*nv));
		if (nv) {
			s->locs = nv;
			s->locs_cap = k + 1024;
		}
	}
	int r = lht_rebuild(s);
	return r ? r : (int)k;
}

static int64_t loc_intern(rtd_symbolizer *s, uint32_t obj, uint64_t off,
			  uint64_t addr)
{
	if ((s->nlocs + 1) * 2 > s->lht_size && lht_grow(s))
		return -ENOMEM;
	size_t h = loc_hash(obj, off) & (s->lht_size - 1);
	while (s->lht[h]) {
		const struct sym_loc *l = &s->locs[s->lht[h] - 1];
		if (l->obj == obj && l->off == off)
			return s->lht[h] - 1;
		h = (h + 1) & (s->lht_size - 1);
	}
	if (s->nlocs >= RTD_SYM_MAX_LOCATIONS)
		return -RTD_E_CAP;
	if (s->nlocs == s->locs_cap) {
		struct sym_loc *nv = rtd_grow(s->locs, &s->locs_cap, s->nlocs + 1,
					sizeof(*nv), 1024);
		if (!nv)
			return -ENOMEM;
		s->locs = nv;
	}
	s->locs[s->nlocs] = (struct sym_loc){obj, off, addr};
	s->lht[h] = (uint32_t)s->nlocs + 1;
	s->st.locations++;
	return (int64_t)s->nlocs++;
}

static struct sym_map *find_map(struct sym_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->m[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < p->m[lo - 1].end)
		return &p->m[lo - 1];
	return NULL;
}

int64_t rtd_sym_locate(rtd_symbolizer *s, pid_t pid, uint64_t addr,
		       bool kernel)
{
	if (!s)
		return -RTD_E_INVAL;
	if (kernel) {
		int32_t k = singleton(s, &s->kernel_obj, OBJ_KERNEL,
				      "[kernel.kallsyms]");
		return k < 0 ? k : loc_intern(s, (uint32_t)k, addr, addr);
	}
	struct sym_proc *p = sym_proc_find(s, pid);
	if (!p)
		return -ENOMEM;
	struct sym_map *m = find_map(p, addr);
	int32_t obj;
	uint64_t off = addr;
	if (m && !is_anon(m->path)) {
		if (m->obj < 0) {
			int32_t id = sym_map_object(s, p, m);
			if (id < 0)
				return id;
			m->obj = id;
		}
		obj = m->obj;
		off = addr - m->start + m->pgoff;
	} else if (m || p->dotnet) {
		obj = perfmap_obj(s, p);
	} else {
		obj = singleton(s, &s->unknown_obj, OBJ_UNKNOWN, "[unknown]");
	}
	if (obj < 0)
		return obj;
	return loc_intern(s, (uint32_t)obj, off, addr);
}

size_t rtd_sym_nlocations(const rtd_symbolizer *s)
{
	return s ? s->nlocs : 0;
}

/* ---- loading an object's symbols ------------------------------------------------- */

static Elf *elf_from_fd(int fd)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return NULL;
	}
	return e;
}

/* A candidate debug file: its build-id must match when both have one. */
static bool try_debug_file(struct sym_obj *o, int fd)
{
	if (fd < 0)
		return false;
	Elf *e = elf_from_fd(fd);
	struct sym_elf_info di;
	if (!e || sym_elf_info(e, &di)) {
		if (e)
			elf_end(e);
		close(fd);
		return false;
	}
	bool ok = (!di.build_id_len || !o->info.build_id_len ||
		   (di.build_id_len == o->info.build_id_len &&
		    !memcmp(di.build_id, o->info.build_id, di.build_id_len))) &&
		  (di.has_symtab || di.has_debug_info);
	sym_elf_info_clear(&di);
	if (!ok) {
		elf_end(e);
		close(fd);
		return false;
	}
	o->dbg = e;
	o->dbg_fd = fd;
	return true;
}

static bool find_debug_by_build_id(rtd_symbolizer *s, struct sym_obj *o)
{
	if (!o->info.build_id_len)
		return false;
	char hex[2 * sizeof(o->info.build_id) + 1];
	rtd_hex_lower(hex, o->info.build_id, o->info.build_id_len);
	char *dirs = strdup(s->debug_dirs), *save = NULL;
	if (!dirs)
		return false;
	bool found = false;
	for (char *d = strtok_r(dirs, ":", &save); d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s.debug", d, hex,
			 hex + 2);
		found = try_debug_file(o, rtd_proc_open_in_root(o->pid, p));
	}
	free(dirs);
	return found;
}

static bool find_debug_by_link(rtd_symbolizer *s, struct sym_obj *o)
{
	if (!o->info.debuglink[0])
		return false;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", o->path);
	char *sl = strrchr(dir, '/');
	if (!sl)
		return false;
	*sl = 0;
	char p[PATH_MAX * 2];
	snprintf(p, sizeof(p), "%s/%s", dir, o->info.debuglink);
	if (strcmp(p, o->path) && try_debug_file(o, rtd_proc_open_in_root(o->pid, p)))
		return true;
	snprintf(p, sizeof(p), "%s/.debug/%s", dir, o->info.debuglink);
	if (try_debug_file(o, rtd_proc_open_in_root(o->pid, p)))
		return true;
	char *dirs = strdup(s->debug_dirs), *save = NULL;
	bool found = false;
	for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(p, sizeof(p), "%s%s/%s", d, dir, o->info.debuglink);
		found = try_debug_file(o, rtd_proc_open_in_root(o->pid, p));
	}
	free(dirs);
	return found;
}

static bool find_debug_debuginfod(rtd_symbolizer *s, struct sym_obj *o)
{
	if ((s->flags & RTD_SYM_NO_DEBUGINFOD) || !o->info.build_id_len)
		return false;
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!urls || !*urls)
		return false;
	if (!s->dbgd && !s->dbgd_tried) {
		s->dbgd_tried = true;
		/* DEBUGINFOD_URLS is set: libdebuginfod is wanted */
		if (rtd_optlib_want_debuginfod())
			s->dbgd = debuginfod_begin();
	}
	if (!s->dbgd)
		return false;
	char *path = NULL;
	int fd = debuginfod_find_debuginfo(s->dbgd, o->info.build_id,
					   o->info.build_id_len, &path);
	free(path);
	if (fd < 0)
		return false;
	if (try_debug_file(o, fd)) {
		s->st.debuginfod++;
		return true;
	}
	return false;
}

/* A .NET ReadyToRun image: its precompiled methods by name. */
static bool load_pe(rtd_symbolizer *s, struct sym_obj *o)
{
	struct stat st;
	char mz[2];
	if (pread(o->fd, mz, 2, 0) != 2 || mz[0] != 'M' || mz[1] != 'Z' ||
	    fstat(o->fd, &st) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > (4ull << 30))
		return false;
	void *img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, o->fd, 0);
	if (img == MAP_FAILED)
		return false;
	int n = sym_r2r_parse(img, (size_t)st.st_size, &o->info, &o->syms);
	munmap(img, (size_t)st.st_size);
	if (n < 0 && n != -RTD_E_NOTFOUND)
		warnf(s, "%s: ReadyToRun image: %s (names read before it kept)",
		      o->path, rtd_strerror(n));
	o->is_pe = true;
	o->warned = true; /* not ELF, and that is fine */
	sym_table_finish(&o->syms);
	s->st.symbols += o->syms.n;
	return true;
}

/*
 * libdw decompresses every debug section of a file as it opens it, and
 * holds them till it is closed (libc's: ~10 MB): the DWARF held at once
 * is capped (rtd_sym_opts.dwarf_max), first come first served, as files
 * are loaded (the first location named in each). A file whose DWARF does
 * not fit is named from its symbol table, and said once.
 */
static void open_dwarf(rtd_symbolizer *s, struct sym_obj *o, Elf *e)
{
	if (!e)
		return;
	uint64_t need = sym_dwarf_size(e);
	if (need > s->dwarf_max || s->st.dwarf_bytes > s->dwarf_max - need) {
		s->st.dwarf_skipped++;
		warnf(s, "%s: its DWARF (%.1f MB decompressed) is past what is "
		      "held at once (%.1f of %.1f MB): no inlined frames or "
		      "file:line for it (raise the cap: --dwarf-max)", o->path,
		      (double)need / 1048576, (double)s->st.dwarf_bytes / 1048576,
		      (double)s->dwarf_max / 1048576);
		return;
	}
	o->dw = sym_dwarf_open(e);
	if (o->dw) {
		o->dw_bytes = need;
		s->st.dwarf_bytes += need;
	}
}

static void load_file(rtd_symbolizer *s, struct sym_obj *o)
{
	if (o->fd < 0)
		o->fd = rtd_proc_open_in_root(-1, o->path); /* the host's, as a last try */
	if (o->fd < 0)
		return;
	o->elf = elf_from_fd(o->fd);
	if (!o->elf && load_pe(s, o))
		return;
	bool bad = !o->elf || sym_elf_info(o->elf, &o->info);
	const uint8_t *want;
	size_t wl = recorded_build_id(s, o->path, &want);
	if (!bad && wl && o->info.build_id_len &&
	    (o->info.build_id_len != wl || memcmp(o->info.build_id, want, wl))) {
		/* rebuilt since it was recorded: the recorded one, if kept */
		int fd = open_build_id_cache(s, o->path);
		if (fd >= 0) {
			elf_end(o->elf);
			close(o->fd);
			o->fd = fd;
			o->elf = elf_from_fd(fd);
			memset(&o->info, 0, sizeof(o->info));
			bad = !o->elf || sym_elf_info(o->elf, &o->info);
		}
	}
	if (bad) {
		if (!o->warned)
			warnf(s, "%s: not an ELF file we can read", o->path);
		o->warned = true;
		return;
	}
	/* the mapping stays readable without the descriptor */
	if (elf_cntl(o->elf, ELF_C_FDREAD) == 0) {
		close(o->fd);
		o->fd = -1;
	}
	int r = 0;
	unsigned ef = s->flags & RTD_SYM_VERSIONED ? SYM_ELF_VERSIONED : 0;
	if (o->info.has_symtab)
		r = sym_elf_symbols(o->elf, 0, &o->syms, ef);
	bool dbg = false;
	if (!o->info.has_symtab || (!o->info.has_debug_info &&
				    !(s->flags & RTD_SYM_NO_DWARF))) {
		dbg = find_debug_by_build_id(s, o) || find_debug_by_link(s, o) ||
		      (!o->info.has_symtab && !o->info.has_debugdata &&
		       !o->info.is_go && find_debug_debuginfod(s, o));
		if (dbg) {
			s->st.debug_files++;
			if (elf_cntl(o->dbg, ELF_C_FDREAD) == 0) {
				close(o->dbg_fd);
				o->dbg_fd = -1;
			}
			if (!o->info.has_symtab)
				r = sym_elf_symbols(o->dbg, 0, &o->syms, ef);
		}
	}
	if (!o->info.has_symtab && !dbg && o->info.has_debugdata &&
	    sym_elf_debugdata(o->elf, &o->dbg_mem, &o->dbg_len) == 0) {
		o->dbg = elf_memory((char *)o->dbg_mem, o->dbg_len);
		if (o->dbg && elf_kind(o->dbg) == ELF_K_ELF) {
			r = sym_elf_symbols(o->dbg, 0, &o->syms, ef);
			s->st.debugdata++;
		}
	}
	if (!o->info.has_symtab && !dbg && o->info.is_go)
		r = sym_go_pclntab(o->elf, &o->syms);
	/* one symbol source, as perf's: .dynsym only without a .symtab here
	 * or in a debug file (MiniDebugInfo holds what .dynsym lacks) */
	int rd = o->info.has_symtab || dbg ? 0 : sym_elf_symbols(o->elf, 1, &o->syms, ef);
	/* the stubs: in the file that runs; IFUNCs known from the symbols' source */
	Elf *src = o->info.has_symtab ? o->elf : o->dbg ? o->dbg : o->elf;
	int rp = sym_elf_plt(o->elf, src, o->info.has_symtab || o->dbg ? 0 : 1, &o->syms);
	if (r < 0 || rd < 0 || rp < 0)
		warnf(s, "%s: symbol table: %s", o->path,
		      rtd_strerror(r < 0 ? r : rd < 0 ? rd : rp));
	sym_table_finish(&o->syms);
	s->st.symbols += o->syms.n;
	if (!(s->flags & RTD_SYM_NO_DWARF))
		open_dwarf(s, o, o->info.has_debug_info ? o->elf
				 : o->dbg && o->dbg_mem == NULL ? o->dbg
								: NULL);
}

static void load_perfmap(rtd_symbolizer *s, struct sym_obj *o)
{
	if (o->fd < 0)
		o->fd = open(o->path, O_RDONLY | O_CLOEXEC);
	if (o->fd < 0 && o->perfmap_host)
		o->fd = open(o->perfmap_host, O_RDONLY | O_CLOEXEC);
	if (o->fd < 0)
		return;
	char *buf = NULL;
	size_t len = 0, bad;
	if (lseek(o->fd, 0, SEEK_SET) < 0)
		return;
	int r = read_all(o->fd, &buf, &len, SYM_MAX_TEXT_FILE);
	if (r) {
		warnf(s, "%s: %s", o->path, rtd_strerror(r));
		return;
	}
	o->perfmap_read = len;
	r = sym_perfmap_parse(buf, len, &o->syms, &bad);
	free(buf);
	if (r == -RTD_E_FORMAT)
		warnf(s, "%s: line %zu is not 'START SIZE NAME': names after it "
			 "are not used", o->path, bad);
	sym_table_finish(&o->syms);
	s->st.symbols += o->syms.n;
}

/*
 * The runtime appends to its perf map as it compiles (and, switched on
 * while running, writes what was compiled before, which takes a while): a
 * symbolizer that lives on (the agent's) read it early. An address it
 * does not name reads the map again when the file has grown since.
 */
#define PERFMAP_RETRY_NS 1000000000ull /* a missing map looked for again */
static bool perfmap_reload(rtd_symbolizer *s, struct sym_obj *o)
{
	struct stat st;
	if (o->fd < 0) {
		/* switched on later than the first sample (a stopped runtime
		 * answers when it goes on): the file is looked for again, at
		 * most once a second */
		uint64_t now = rtd_now_ns();
		if (now - o->perfmap_tried < PERFMAP_RETRY_NS)
			return false;
		o->perfmap_tried = now;
		load_perfmap(s, o);
		return o->fd >= 0;
	}
	if (fstat(o->fd, &st) ||
	    (uint64_t)st.st_size <= o->perfmap_read)
		return false;
	s->st.symbols -= o->syms.n;
	sym_table_free(&o->syms);
	memset(&o->syms, 0, sizeof(o->syms));
	load_perfmap(s, o);
	return true;
}

/* Read kallsyms into t, with the warnings a symbolizer gives. */
static void read_kernel(rtd_symbolizer *s, struct sym_table *t)
{
	size_t bad;
	int r = sym_kallsyms_read(s->kallsyms, t, &bad);
	if (r == -RTD_E_FORMAT)
		warnf(s, "%s: line %zu is not 'ADDRESS TYPE NAME'", s->kallsyms,
		      bad);
	else if (r == -RTD_E_CAP)
		warnf(s, "%s: line %zu is longer than %u bytes", s->kallsyms, bad,
		      RTD_KALLSYMS_LINE_MAX);
	else if (r < 0)
		warnf(s, "%s: %s: kernel frames are shown as addresses",
		      s->kallsyms, rtd_strerror(r));
	else if (!t->n)
		warnf(s, "%s: every address is 0 (kernel.kptr_restrict): kernel "
			 "frames are shown as addresses; run as root or set "
			 "kernel.kptr_restrict=0", s->kallsyms);
}

static void load_kernel(rtd_symbolizer *s, struct sym_obj *o)
{
	pthread_mutex_lock(&kshared_mu);
	if (!kshared.refs) {
		/* the first to need them reads them for all */
		read_kernel(s, &o->syms);
		if (o->syms.n && (kshared.path = strdup(s->kallsyms)))
			kshared.t = o->syms;
	} else if (strcmp(kshared.path, s->kallsyms)) {
		read_kernel(s, &o->syms); /* another file (tests): its own */
	}
	if (kshared.path && !strcmp(kshared.path, s->kallsyms)) {
		kshared.refs++;
		o->syms = kshared.t; /* read-only from here: lookups only */
		o->shared_syms = true;
	}
	pthread_mutex_unlock(&kshared_mu);
	s->st.symbols += o->syms.n;
}

static void obj_load(rtd_symbolizer *s, struct sym_obj *o)
{
	if (o->loaded)
		return;
	o->loaded = true;
	s->st.objects_loaded++;
	switch (o->kind) {
	case OBJ_FILE:
		load_file(s, o);
		break;
	case OBJ_PERFMAP:
		load_perfmap(s, o);
		break;
	case OBJ_KERNEL:
		load_kernel(s, o);
		break;
	default:
		break;
	}
}

/* ---- resolving ------------------------------------------------------------------- */

static const char *basename_of(const char *p)
{
	const char *b = strrchr(p, '/');
	return b && b[1] ? b + 1 : p;
}

bool rtd_sym_runtime_lib(const char *path)
{
	/* a name's start: "libpython3.11.so.1.0", "libSystem.Native.so" */
	static const char *const libs[] = {
		"libcoreclr.so", "libclrjit.so", "libhostfxr.so",
		"libhostpolicy.so", "libcoreclrtraceptprovider.so",
		"libmscordaccore.so", "libmscordbi.so", "libSystem.",
		"libjvm.so", "libpython", "libruby", "libnode.so",
	};
	if (!path)
		return false;
	const char *b = basename_of(path);
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strncmp(b, libs[i], strlen(libs[i])))
			return strstr(b, ".so") != NULL;
	return false;
}

static uint8_t file_kind(const struct sym_obj *o, const char *name)
{
	if (o->is_pe)
		return RTD_SYM_MANAGED;
	if (rtd_sym_runtime_lib(o->path))
		return RTD_SYM_RUNTIME;
	if (!o->info.is_go)
		return RTD_SYM_NATIVE;
	return name && !strncmp(name, "runtime.", 8) ? RTD_SYM_GO_RUNTIME
						     : RTD_SYM_GO;
}

/* Go's linker names ABI wrappers "runtime.goexit.abi0"; Go's own tools
 * (pprof, tracebacks) show "runtime.goexit". */
static const char *go_name(rtd_symbolizer *s, const char *name)
{
	size_t n = strlen(name);
	if (n > 5 && !strcmp(name + n - 5, ".abi0")) {
		const char *t = sym_table_strdup(&s->names, name, n - 5);
		return t ? t : name;
	}
	return name;
}

static const char *unnamed(rtd_symbolizer *s, const char *module,
			   uint64_t off)
{
	int n = snprintf(s->tmp, sizeof(s->tmp), "%s+0x%llx", module,
			 (unsigned long long)off);
	if (n < 0)
		return module;
	const char *r = sym_table_strdup(&s->names, s->tmp,
					 (size_t)n < sizeof(s->tmp) ? (size_t)n
								    : sizeof(s->tmp) - 1);
	return r ? r : module;
}

static int resolve_file(rtd_symbolizer *s, struct sym_obj *o,
			const struct sym_loc *l, struct rtd_sym_frame *out,
			size_t max)
{
	uint64_t vaddr = l->off;
	bool have_vaddr = (o->elf || o->is_pe) &&
			  sym_elf_off_to_vaddr(&o->info, l->off, &vaddr);
	const struct sym_symbol *sym =
		have_vaddr ? sym_table_find(&o->syms, vaddr) : NULL;
	bool dm = !(s->flags & RTD_SYM_NO_DEMANGLE);
	struct sym_dwarf_frame df[RTD_SYM_MAX_INLINE + 1];
	int nd = 0;
	if (o->dw && have_vaddr)
		nd = sym_dwarf_frames(o->dw, vaddr, df,
				      max < RTD_SYM_MAX_INLINE + 1 ? max
								   : RTD_SYM_MAX_INLINE + 1,
				      &s->names, dm);
	const char *symname = sym ? (dm ? sym_demangle_into(&s->names, sym->name)
					: sym->name)
				  : NULL;
	if (symname && o->info.is_go)
		symname = go_name(s, symname);
	int k = 0;
	for (int i = 0; i < nd && (size_t)k < max; i++) {
		bool last = i == nd - 1;
		out[k] = out[0];
		out[k].name = last && symname ? symname : df[i].name;
		out[k].file = df[i].file;
		out[k].line = df[i].line;
		out[k].inlined = !last;
		out[k].named = true;
		out[k].kind = file_kind(o, out[k].name);
		k++;
	}
	if (!k) {
		out[0].name = symname;
		out[0].named = symname != NULL;
		if (!symname) {
			out[0].name = unnamed(s, basename_of(o->path), l->off);
			/* the runtime's stripped insides are still the runtime */
			out[0].kind = rtd_sym_runtime_lib(o->path) ? RTD_SYM_RUNTIME
								   : RTD_SYM_UNKNOWN;
		} else {
			out[0].kind = file_kind(o, symname);
		}
		k = 1;
	}
	if (sym)
		for (int i = 0; i < k; i++)
			out[i].sym_offset = vaddr - sym->addr;
	return k;
}

int rtd_sym_resolve(rtd_symbolizer *s, int64_t loc, struct rtd_sym_frame *out,
		    size_t max)
{
	if (!s || loc < 0 || (size_t)loc >= s->nlocs || !out || !max)
		return -RTD_E_INVAL;
	rtd_sym_preload_finish(s); /* resolving is single-threaded */
	const struct sym_loc *l = &s->locs[loc];
	struct sym_obj *o = s->objs[l->obj];
	obj_load(s, o);
	memset(out, 0, sizeof(*out));
	out->addr = l->addr;
	out->offset = l->off;
	out->module = o->path;
	if (o->kind == OBJ_FILE || o->kind == OBJ_SPECIAL) {
		out->map_start = o->map_start;
		out->map_limit = o->map_limit;
		out->map_pgoff = o->map_pgoff;
		out->build_id = o->info.build_id_len ? o->info.build_id : NULL;
		out->build_id_len = o->info.build_id_len;
	}
	int n = 1;
	const struct sym_symbol *sym;
	switch (o->kind) {
	case OBJ_FILE:
		n = resolve_file(s, o, l, out, max);
		break;
	case OBJ_KERNEL:
		out->kind = RTD_SYM_KERNEL;
		sym = sym_table_find(&o->syms, l->off);
		if (sym) {
			const char *sp = strchr(sym->name, ' ');
			out->named = true;
			out->sym_offset = l->off - sym->addr;
			if (sp) { /* "name [module]" */
				out->name = sym_table_strdup(&s->names, sym->name,
							     (size_t)(sp - sym->name));
				out->module = sp + 1;
			} else {
				out->name = sym->name;
			}
		} else {
			out->name = unnamed(s, "[kernel.kallsyms]", l->off);
		}
		break;
	case OBJ_PERFMAP:
		out->module = "[jit]";
		sym = sym_table_find(&o->syms, l->off);
		if (!sym && perfmap_reload(s, o))
			sym = sym_table_find(&o->syms, l->off);
		out->kind = o->dotnet ? RTD_SYM_MANAGED : RTD_SYM_JIT;
		if (sym) {
			const char *nm = o->dotnet ? sym_dotnet_name(sym->name, s->tmp,
								     sizeof(s->tmp))
						   : NULL;
			out->name = nm ? sym_table_strdup(&s->names, nm, strlen(nm))
				       : sym->name;
			if (!out->name)
				out->name = sym->name;
			out->named = true;
			out->sym_offset = l->off - sym->addr;
		} else {
			out->module = "[anon]";
			out->kind = RTD_SYM_UNKNOWN;
			out->name = unnamed(s, "[anon]", l->off);
		}
		break;
	case OBJ_SPECIAL:
		out->kind = RTD_SYM_NATIVE;
		out->name = unnamed(s, o->path, l->off);
		break;
	default:
		out->kind = RTD_SYM_UNKNOWN;
		out->name = unnamed(s, "[unknown]", l->off);
		break;
	}
	for (int i = 0; i < n; i++)
		if (!out[i].named)
			s->st.unnamed++;
	return n;
}

int rtd_sym_resolve_addr(rtd_symbolizer *s, pid_t pid, uint64_t addr,
			 bool kernel, struct rtd_sym_frame *out, size_t max)
{
	int64_t l = rtd_sym_locate(s, pid, addr, kernel);
	if (l < 0)
		return (int)l;
	return rtd_sym_resolve(s, l, out, max);
}

void rtd_sym_stats(const rtd_symbolizer *s, struct rtd_sym_stats *st)
{
	if (!s)
		return;
	rtd_sym_preload_finish((rtd_symbolizer *)s); /* its counters settle */
	struct rtd_sym_stats t = s->st;
	t.name_bytes = s->names.pool_bytes;
	t.locations_held = s->nlocs;
	rtd_stats_copy(st, &t, sizeof(t));
}
