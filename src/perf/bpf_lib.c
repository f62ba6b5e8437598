/* SPDX-License-Identifier: MIT */
/*
 * bpf_lib.c - libbpf through dlopen (see bpf_lib.h). libbpf's own
 * messages go to the library's log at debug level (the verifier's log
 * included), never to a terminal.
 */
#ifdef RTD_HAVE_BPF
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "perf/bpf/follow.bpf.h"
#include "perf/bpf_lib.h"

static struct bpf_lib lib;
static char lib_why[256];
static bool lib_ok;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static int on_libbpf_print(enum libbpf_print_level level, const char *fmt,
			   va_list ap)
{
	char line[1024];
	if (level == LIBBPF_DEBUG || !rtd_log_enabled(RTD_LOG_DEBUG))
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	rtd_debug("libbpf: %s", line);
	return 0;
}

static void lib_open(void)
{
	/* libbpf 1.x: the soname of Debian's libbpf1 */
	void *h = dlopen("libbpf.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(lib_why, sizeof(lib_why),
			 "libbpf.so.1 cannot be opened (apt-get install libbpf1): %s",
			 dlerror());
		return;
	}
	static const struct { size_t off; const char *name; } syms[] = {
#define S(f, n) {offsetof(struct bpf_lib, f), n}
		S(set_print, "libbpf_set_print"),
		S(object_open_mem, "bpf_object__open_mem"),
		S(object_load, "bpf_object__load"),
		S(object_close, "bpf_object__close"),
		S(find_map, "bpf_object__find_map_by_name"),
		S(find_prog, "bpf_object__find_program_by_name"),
		S(attach, "bpf_program__attach"),
		S(link_destroy, "bpf_link__destroy"),
		S(map_fd, "bpf_map__fd"),
		S(get_next_key, "bpf_map_get_next_key"),
		S(lookup, "bpf_map_lookup_elem"),
		S(update, "bpf_map_update_elem"),
		S(rb_new, "ring_buffer__new"),
		S(rb_poll, "ring_buffer__poll"),
		S(rb_consume, "ring_buffer__consume"),
		S(rb_free, "ring_buffer__free"),
#undef S
	};
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(h, syms[i].name);
		if (!f) {
			snprintf(lib_why, sizeof(lib_why),
				 "libbpf.so.1 has no %s (too old)", syms[i].name);
			dlclose(h);
			return;
		}
		memcpy((char *)&lib + syms[i].off, &f, sizeof(f));
	}
	lib.set_print(on_libbpf_print);
	lib_ok = true; /* never closed: its objects may live until exit */
}

const struct bpf_lib *bpf_lib_get(char *why, size_t whylen)
{
	pthread_once(&lib_once, lib_open);
	if (!lib_ok)
		snprintf(why, whylen, "%s", lib_why);
	return lib_ok ? &lib : NULL;
}

static void why_errno(char *why, size_t whylen, const char *what,
		      const char *name, int err)
{
	if (err == EPERM || err == EACCES)
		snprintf(why, whylen, "%s %s: %s (needs root, or CAP_BPF and "
			 "CAP_PERFMON)", what, name, strerror(err));
	else
		snprintf(why, whylen, "%s %s: %s", what, name, strerror(err));
}

struct bpf_object *bpf_lib_load(const struct bpf_lib *l, const char *name,
				 const void *obj, size_t len, char *why,
				 size_t whylen)
{
	/* LIBBPF_OPTS() by hand: it is a GNU statement expression */
	struct bpf_object_open_opts oo;
	memset(&oo, 0, sizeof(oo));
	oo.sz = sizeof(oo);
	oo.object_name = name;
	struct bpf_object *o = l->object_open_mem(obj, len, &oo);
	if (!o) {
		why_errno(why, whylen, "opening BPF object", name, errno);
		return NULL;
	}
	int r = l->object_load(o);
	if (r) {
		why_errno(why, whylen, "loading BPF object", name, -r);
		l->object_close(o);
		return NULL;
	}
	return o;
}

int bpf_lib_map_fd(const struct bpf_lib *l, struct bpf_object *o,
		   const char *name)
{
	struct bpf_map *m = l->find_map(o, name);
	return m ? l->map_fd(m) : -1;
}

void bpf_lib_close(const struct bpf_lib *l, struct bpf_object *o,
		   struct bpf_link **links, int n)
{
	for (int i = 0; i < n; i++)
		if (links[i])
			l->link_destroy(links[i]);
	if (o)
		l->object_close(o);
}

int bpf_lib_set_pids(const struct bpf_lib *l, struct bpf_object *o,
		     const char *map, const pid_t *pids, size_t npids,
		     bool on_exec, char *why, size_t whylen)
{
	int fd = bpf_lib_map_fd(l, o, map);
	__u32 on = on_exec ? FOLLOW_EXEC : FOLLOW_ON;
	for (size_t i = 0; i < npids; i++) {
		__u32 pid = (__u32)pids[i];
		if (l->update(fd, &pid, &on, BPF_ANY)) {
			snprintf(why, whylen, "BPF map %s: %s", map, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static struct bpf_link *bpf_lib_attach(const struct bpf_lib *l,
				       struct bpf_object *o, const char *prog,
				       char *why, size_t whylen)
{
	struct bpf_program *p = l->find_prog(o, prog);
	if (!p) {
		snprintf(why, whylen, "no BPF program %s", prog);
		return NULL;
	}
	struct bpf_link *k = l->attach(p);
	if (!k)
		why_errno(why, whylen, "attaching BPF program", prog, errno);
	return k;
}

int bpf_lib_attach_all(const struct bpf_lib *l, struct bpf_object *o,
		       const char *const *progs, struct bpf_link **links,
		       int n, char *why, size_t whylen)
{
	for (int i = n - 1; i >= 0; i--)
		if (!(links[i] = bpf_lib_attach(l, o, progs[i], why, whylen)))
			return -1;
	return 0;
}
#else
/* a build without BPF (RTD_BPF=OFF): nothing here */
typedef int rtd_bpf_lib_unused;
#endif /* RTD_HAVE_BPF */
