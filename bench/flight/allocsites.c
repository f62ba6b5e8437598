/* SPDX-License-Identifier: MIT */
/*
 * allocsites.c - a preloaded allocator wrapper that counts the live bytes
 * of each call site (issue #31: what grows in a long ring run). heaptrack
 * stalls the perf reader; this keeps one table and no backtraces.
 *
 *   cc -shared -fPIC -O2 -o allocsites.so allocsites.c -ldl -lpthread
 *   RTD_ALLOCSITES=/tmp/x LD_PRELOAD=./allocsites.so rtdiag record ...
 *
 * A site is the caller of malloc() and two frames above it, read through
 * frame pointers where the caller keeps them (else the caller alone):
 * build rtdiag with -fno-omit-frame-pointer for whole sites. Every
 * RTD_ALLOCSITES_SEC seconds (default 60) a thread of its own writes
 * $RTD_ALLOCSITES.SECONDS: one line per site with live bytes, "live
 * BYTES COUNT MODULE+OFFSET..." (offsets for addr2line -e MODULE), the
 * largest first. Diff two of them for what grew. The table holds 2^21
 * live blocks (48 MB of its own); blocks past it are not counted.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NBLK (1u << 21)
#define NSITE (1u << 16)
#define DEPTH 3

struct blk {
	uintptr_t p;
	size_t size;
	uint32_t site;
};
struct site {
	uintptr_t ra[DEPTH];
	int64_t live, count;
};

static struct blk *blks;
static struct site *sites;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_memalign)(void **, size_t, size_t);
static __thread int inside;
static char boot[65536];
static size_t boot_used;
static int ready;

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static uint32_t site_of(uintptr_t ra[DEPTH])
{
	uint64_t h = 0;
	for (int i = 0; i < DEPTH; i++)
		h = mix(h ^ ra[i]);
	for (uint32_t i = 0; i < NSITE; i++) {
		struct site *s = &sites[(h + i) & (NSITE - 1)];
		if (!s->ra[0]) {
			memcpy(s->ra, ra, sizeof(s->ra));
			return (uint32_t)((h + i) & (NSITE - 1));
		}
		if (!memcmp(s->ra, ra, sizeof(s->ra)))
			return (uint32_t)((h + i) & (NSITE - 1));
	}
	return 0;
}

static void track(void *p, size_t size, uintptr_t ra[DEPTH])
{
	if (!p || !ready || inside)
		return;
	pthread_mutex_lock(&mu);
	uint32_t s = site_of(ra);
	uint64_t h = mix((uintptr_t)p);
	for (uint32_t i = 0; i < 64; i++) {
		struct blk *b = &blks[(h + i) & (NBLK - 1)];
		if (!b->p || b->p == 1) {
			*b = (struct blk){(uintptr_t)p, size, s};
			sites[s].live += (int64_t)size;
			sites[s].count++;
			break;
		}
	}
	pthread_mutex_unlock(&mu);
}

static void untrack(void *p)
{
	if (!p || !ready)
		return;
	pthread_mutex_lock(&mu);
	uint64_t h = mix((uintptr_t)p);
	for (uint32_t i = 0; i < 64; i++) {
		struct blk *b = &blks[(h + i) & (NBLK - 1)];
		if (!b->p)
			break;
		if (b->p == (uintptr_t)p) {
			sites[b->site].live -= (int64_t)b->size;
			sites[b->site].count--;
			b->p = 1; /* a tombstone */
			break;
		}
	}
	pthread_mutex_unlock(&mu);
}

/* the caller, and up to two frames above it through its frame pointer
 * (checked to lie on this thread's stack, near the current one) */
#define SITE(ra)                                                                                  \
	uintptr_t ra[DEPTH] = {(uintptr_t)__builtin_return_address(0), 0, 0};                    \
	do {                                                                                      \
		uintptr_t *fp = __builtin_frame_address(1), here = (uintptr_t)&ra;                \
		for (int d = 1; d < DEPTH && fp; d++) {                                          \
			if ((uintptr_t)fp < here || (uintptr_t)fp > here + (1u << 20) ||          \
			    ((uintptr_t)fp & 7))                                                  \
				break;                                                            \
			ra[d] = fp[1];                                                            \
			uintptr_t *up = (uintptr_t *)fp[0];                                       \
			if (up <= fp)                                                             \
				break;                                                            \
			fp = up;                                                                  \
		}                                                                                 \
	} while (0)

void *malloc(size_t n)
{
	if (!real_malloc) {
		void *p = boot + boot_used;
		boot_used += (n + 15) & ~(size_t)15;
		return p;
	}
	SITE(ra);
	void *p = real_malloc(n);
	track(p, n, ra);
	return p;
}

void *calloc(size_t n, size_t m)
{
	if (!real_calloc) {
		void *p = boot + boot_used;
		boot_used += (n * m + 15) & ~(size_t)15;
		return p; /* static: zeroed */
	}
	SITE(ra);
	void *p = real_calloc(n, m);
	track(p, n * m, ra);
	return p;
}

void *realloc(void *old, size_t n)
{
	if ((char *)old >= boot && (char *)old < boot + sizeof(boot)) {
		void *p = malloc(n);
		if (p)
			memcpy(p, old, n); /* boot blocks are small; over-read stays in boot */
		return p;
	}
	SITE(ra);
	untrack(old);
	void *p = real_realloc(old, n);
	track(p ? p : (n ? NULL : NULL), n, ra);
	if (!p && n && old)
		track(old, 0, ra); /* failed: old stays (its size unknown now) */
	return p;
}

void free(void *p)
{
	if ((char *)p >= boot && (char *)p < boot + sizeof(boot))
		return;
	untrack(p);
	real_free(p);
}

int posix_memalign(void **out, size_t al, size_t n)
{
	SITE(ra);
	int r = real_memalign(out, al, n);
	if (!r)
		track(*out, n, ra);
	return r;
}

void *aligned_alloc(size_t al, size_t n)
{
	void *p = NULL;
	SITE(ra);
	if (real_memalign(&p, al, n))
		return NULL;
	track(p, n, ra);
	return p;
}

static const char *out_path;
static unsigned every = 60;

static int by_live(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	return x->live < y->live ? 1 : x->live > y->live ? -1 : 0;
}

static void dump(unsigned sec)
{
	inside = 1;
	struct site *copy = mmap(NULL, NSITE * sizeof(*copy), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (copy == MAP_FAILED)
		return;
	pthread_mutex_lock(&mu);
	memcpy(copy, sites, NSITE * sizeof(*copy));
	pthread_mutex_unlock(&mu);
	qsort(copy, NSITE, sizeof(*copy), by_live);
	char path[4096];
	snprintf(path, sizeof(path), "%s.%u", out_path, sec);
	FILE *f = fopen(path, "w");
	for (size_t i = 0; f && i < NSITE && copy[i].live > 0; i++) {
		fprintf(f, "live %lld %lld", (long long)copy[i].live, (long long)copy[i].count);
		for (int d = 0; d < DEPTH && copy[i].ra[d]; d++) {
			Dl_info di;
			if (dladdr((void *)copy[i].ra[d], &di) && di.dli_fname)
				fprintf(f, " %s+0x%lx", strrchr(di.dli_fname, '/') ? strrchr(di.dli_fname, '/') + 1 : di.dli_fname,
					(unsigned long)(copy[i].ra[d] - (uintptr_t)di.dli_fbase - 1));
			else
				fprintf(f, " ?+0x%lx", (unsigned long)copy[i].ra[d]);
		}
		fputc('\n', f);
	}
	if (f)
		fclose(f);
	munmap(copy, NSITE * sizeof(*copy));
	inside = 0;
}

static void *run(void *arg)
{
	(void)arg;
	inside = 1;
	for (unsigned t = every;; t += every) {
		sleep(every);
		dump(t);
	}
	return NULL;
}

__attribute__((constructor)) static void start(void)
{
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_free = dlsym(RTLD_NEXT, "free");
	real_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	out_path = getenv("RTD_ALLOCSITES");
	if (!out_path)
		return;
	const char *e = getenv("RTD_ALLOCSITES_SEC");
	if (e && atoi(e) > 0)
		every = (unsigned)atoi(e);
	blks = mmap(NULL, NBLK * sizeof(*blks), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	sites = mmap(NULL, NSITE * sizeof(*sites), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (blks == MAP_FAILED || sites == MAP_FAILED)
		return;
	unsetenv("LD_PRELOAD");
	ready = 1;
	pthread_t th;
	pthread_create(&th, NULL, run, NULL);
	pthread_detach(th);
}
