/* SPDX-License-Identifier: MIT */
/*
 * test_source_totals.c - off-CPU waits through BPF as records: a live
 * perf source over an off-CPU profiler made with
 * RTD_PERF_PROF_WAIT_TOTALS hands out the kernel's totals (per thread,
 * stack and state) as weighted "off-cpu" SAMPLE records, and a profile
 * consumer (rtd_profile_records) adds them up into the same block profile
 * as the profiler's own take: the wiring of the agent's /debug/pprof/block
 * (src/agent/src_perf.c) at the direct path's cost, nothing copied out
 * per switch.
 *
 * A forked child runs a pipe ping-pong between two threads (ROUNDS round
 * trips, each thread waiting in its own named function), started by a
 * byte once both profilers watch it, and exits. Two profilers follow it
 * at once on the real kernel, each with its own BPF program: the direct
 * one (its call tree, rtd_perf_profiler_profile() when its run ends) and
 * the record one (KEEP_SAMPLES | WAIT_TOTALS | WINDOWS, read through
 * rtd_perf_source_live(), its source cut on demand as the agent cuts it,
 * the records added up until the source ends). Checked:
 *  - the record profiler goes through BPF (no switch copied out);
 *  - both profiles have the same stacks under the same threads (folded,
 *    each stack over 1% of either's total), among them each thread's
 *    waiting function, with the same count of waits (contentions, within
 *    2%: each BPF program sees every switch; the margin is for a wait the
 *    kernel drops under load) and the same delay (within 2%, plus 2 us a
 *    wait: the program attached second stamps each switch-out after the
 *    first one's stack walk, 350-400 ns a wait here);
 *  - the ping-pong's waits are there: at least ROUNDS in each.
 * The old source had no totals: an off-CPU profiler that keeps samples
 * went through perf and its waits came as slices, so no "off-cpu" sample
 * reached the consumer (its profile is empty, and its profiler's path is
 * perf): this fails.
 * No time is asserted; the child's run and the source's end are polled
 * with generous bounds.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "perf_test.h"
#include "rtdiag/perf_source.h"
#include "rtdiag/profile_records.h"

#define ROUNDS 10000
#define MAX_STACKS 512

static int ab[2], ba[2], go_pipe[2];

/* A read or write with the system call inline (x86-64): the thread's
 * user-side leaf frame when it leaves the CPU is then the named function
 * itself, whatever frame pointers libc and this build keep. */
#if defined(__x86_64__)
#define HAVE_RAW_RW 1
static inline __attribute__((always_inline)) long raw_rw(long nr, int fd, char *c)
{
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"((long)fd), "S"(c), "d"(1L)
			 : "rcx", "r11", "memory");
	return ret;
}
#define RD(fd, c) raw_rw(SYS_read, fd, c)
#define WR(fd, c) raw_rw(SYS_write, fd, c)
#else
#define HAVE_RAW_RW 0
#define RD(fd, c) read(fd, c, 1)
#define WR(fd, c) write(fd, c, 1)
#endif

__attribute__((noinline, used)) static void totals_ping_waits(void)
{
	char c = 0;
	for (int i = 0; i < ROUNDS; i++)
		if (WR(ab[1], &c) != 1 || RD(ba[0], &c) != 1)
			_exit(3);
}

__attribute__((noinline, used)) static void *totals_pong_waits(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "totals-pong");
	char c;
	for (int i = 0; i < ROUNDS; i++)
		if (RD(ab[0], &c) != 1 || WR(ba[1], &c) != 1)
			_exit(3);
	return NULL;
}

static void child_main(void)
{
	prctl(PR_SET_NAME, "totals-ping");
	char c;
	if (read(go_pipe[0], &c, 1) != 1)
		_exit(2);
	pthread_t t;
	if (pthread_create(&t, NULL, totals_pong_waits, NULL))
		_exit(2);
	totals_ping_waits();
	pthread_join(t, NULL);
	_exit(0);
}

/* One folded line: a stack and its weight. */
struct line {
	char *stack;
	int64_t v;
};

struct folded {
	struct line l[MAX_STACKS];
	size_t n;
};

/* The profile's folded stacks of one sample type, each under its thread. */
static void folded_of(const rtd_profile *p, const char *type, struct folded *out)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	RTD_OPTS(rtd_profile_write_opts, wo, .type = type, .thread_roots = true);
	if (!f || rtd_profile_write(p, RTD_PROFILE_FMT_FOLDED, f, &wo) || fclose(f))
		FAIL("writing a folded profile");
	out->n = 0;
	for (char *save = NULL, *ln = strtok_r(text, "\n", &save); ln;
	     ln = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(ln, ' ');
		if (!sp)
			continue;
		*sp = 0;
		int64_t v = strtoll(sp + 1, NULL, 10);
		size_t i = 0;
		while (i < out->n && strcmp(out->l[i].stack, ln))
			i++;
		if (i == out->n) {
			if (out->n == MAX_STACKS)
				FAIL("more than %d stacks", MAX_STACKS);
			out->l[out->n++] = (struct line){strdup(ln), 0};
		}
		out->l[i].v += v;
	}
	free(text);
}

static int64_t weight_of(const struct folded *f, const char *stack)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->l[i].stack, stack))
			return f->l[i].v;
	return -1;
}

/* a and b within frac of the larger, plus slack */
static bool near(int64_t a, int64_t b, double frac, int64_t slack)
{
	int64_t d = a > b ? a - b : b - a;
	return (double)d <= frac * (double)(a > b ? a : b) + (double)slack;
}

/* Two BPF programs on sched_switch run one after the other: the second
 * stamps each switch-out after the first has walked the stacks, and each
 * switch-in after a lookup only, so its waits read shorter (by 350-400 ns
 * a wait measured here, either program second). The delays compared get
 * this much per wait; the counts none. */
#define LAG_NS 2000

/* Each stack of @a with over 1% of its total (@tot) in @b within 2%
 * (plus LAG_NS a wait when @counts is given). Returns the mismatches. */
static int compare(const char *what, const struct folded *a, const struct folded *b,
		   int64_t tot, const struct folded *counts, size_t *compared)
{
	int bad = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (a->l[i].v * 100 < tot)
			continue;
		int64_t w = weight_of(b, a->l[i].stack);
		int64_t n = counts ? weight_of(counts, a->l[i].stack) : 0;
		++*compared;
		if (w < 0 || !near(a->l[i].v, w, 0.02, n > 0 ? n * LAG_NS : 0)) {
			printf("%s: %s %" PRId64 " against %" PRId64 "\n", what, a->l[i].stack,
			       a->l[i].v, w);
			bad++;
		}
	}
	return bad;
}

static rtd_profile *block_profile(void)
{
	static const struct rtd_profile_type types[2] = {{"contentions", "count"},
							 {"delay", "nanoseconds"}};
	struct rtd_profile_opts po = {.sz = sizeof(po), .types = types, .ntypes = 2,
				      .default_type = 1, .period_type = types[0], .period = 1};
	return rtd_profile_new2(&po);
}

static struct rtd_perf_profiler *offcpu_profiler(pid_t *pid, unsigned flags)
{
	struct rtd_perf_sampler_opts so = {.sz = sizeof(so), .callgraph = RTD_PERF_CG_FP};
	struct rtd_perf_profiler_opts o = {
		.sz = sizeof(o),
		.pids = pid,
		.npids = 1,
		.flags = RTD_PERF_PROF_OFF_CPU | RTD_PERF_PROF_NO_DOTNET | RTD_PERF_PROF_NO_COMM |
			 flags,
		.sampler = &so,
		.ring_pages = 64};
	struct rtd_perf_profiler *p;
	if (rtd_perf_profiler_new(&o, &p)) {
		kill(*pid, SIGKILL);
		FAIL("profiler_new: %s", rtd_perf_profiler_errmsg(NULL));
	}
	return p;
}

static void *direct_run(void *arg)
{
	rtd_perf_profiler_run(arg); /* until the child is gone */
	return NULL;
}

int main(void)
{
	pt_require();
	if (pipe(ab) || pipe(ba) || pipe(go_pipe))
		FAIL("pipe: %s", strerror(errno));
	pid_t child = fork();
	if (child < 0)
		FAIL("fork: %s", strerror(errno));
	if (child == 0)
		child_main();
	close(go_pipe[0]);
	/* the child's wait for the go byte began before both profilers:
	 * neither sees it (had it begun between the two attaches, only the
	 * first would, a stack the other lacks) */
	pt_wait_blocked_in_read(child, go_pipe[0]);
	struct rtd_perf_profiler *direct = offcpu_profiler(&child, 0);
	const char *why = "";
	if (rtd_perf_profiler_offcpu_via(direct, &why) != RTD_PERF_OFFCPU_VIA_BPF) {
		kill(child, SIGKILL);
		SKIP("no BPF path here: %s", why);
	}
	struct rtd_perf_profiler *rp = offcpu_profiler(
		&child, RTD_PERF_PROF_KEEP_SAMPLES | RTD_PERF_PROF_WAIT_TOTALS | RTD_PERF_PROF_WINDOWS);
	int fails = 0;
	enum rtd_perf_offcpu_via via = rtd_perf_profiler_offcpu_via(rp, &why);
	printf("record profiler: through %s %s\n", via == RTD_PERF_OFFCPU_VIA_BPF ? "BPF" : "perf",
	       why);
	if (via != RTD_PERF_OFFCPU_VIA_BPF)
		fails++;
	RTD_OPTS(rtd_perf_source_opts, lo, .window_ms = 600000, .flags = RTD_PERF_SOURCE_COPIED);
	int err = 0;
	rtd_source *s = rtd_perf_source_live(rp, &lo, &err);
	if (!s) {
		kill(child, SIGKILL);
		FAIL("source: %s", rtd_strerror(err));
	}
	rtd_profile *rprof = block_profile();
	RTD_OPTS(rtd_profile_records_opts, co, .name = "off-cpu", .label = "state");
	rtd_profile_records *c = rprof ? rtd_profile_records_new(rprof, &co, &err) : NULL;
	if (!c) {
		kill(child, SIGKILL);
		FAIL("consumer: %s", rtd_strerror(err));
	}
	pthread_t th;
	if (pthread_create(&th, NULL, direct_run, direct)) {
		kill(child, SIGKILL);
		FAIL("thread");
	}
	/* both watch it (the BPF programs are attached at _new): go */
	if (write(go_pipe[1], "g", 1) != 1)
		FAIL("go: %s", strerror(errno));
	/* the agent's way: a cut now and then while the child runs; the
	 * records until the source ends (the child is gone) */
	int rc = 0, idle = 0, cuts = 0;
	for (;;) {
		const struct rtd_record *r;
		rc = rtd_source_next(s, &r);
		if (rc == 1) {
			if ((rc = rtd_profile_records_add(c, r)))
				break;
			continue;
		}
		if (rc != RTD_SOURCE_IDLE)
			break;
		if (rtd_source_wait(s, 500) == 0 && ++idle % 2 == 0 &&
		    rtd_perf_source_live_cut(s, NULL) == 0)
			cuts++;
		if (idle > 600) /* 5 minutes with nothing new: stuck */
			break;
	}
	printf("record source: ended with %d after %d cuts\n", rc, cuts);
	if (rc != 0)
		fails++;
	pthread_join(th, NULL);
	int st = 0;
	waitpid(child, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("the ping-pong child failed (status %#x)", st);
	rtd_profile *dprof = NULL;
	if (rtd_perf_profiler_profile(direct, &dprof) || !dprof)
		FAIL("the direct profile: %s", rtd_perf_profiler_errmsg(direct));

	int64_t dn = rtd_profile_total_of(dprof, 0), dns = rtd_profile_total_of(dprof, 1);
	int64_t rn = rtd_profile_total_of(rprof, 0), rns = rtd_profile_total_of(rprof, 1);
	printf("direct: %" PRId64 " waits, %" PRId64 " ns; records: %" PRId64 " waits, %" PRId64
	       " ns\n", dn, dns, rn, rns);
	if (dn < ROUNDS || rn < ROUNDS || !near(dn, rn, 0.02, 0) ||
	    !near(dns, rns, 0.02, dn * LAG_NS))
		fails++;
	struct folded *f = calloc(4, sizeof(*f));
	if (!f)
		FAIL("out of memory");
	struct folded *dc = &f[0], *rc_ = &f[1], *dd = &f[2], *rf = &f[3];
	folded_of(dprof, "contentions", dc);
	folded_of(rprof, "contentions", rc_);
	folded_of(dprof, "delay", dd);
	folded_of(rprof, "delay", rf);
	/* the same stacks under the same threads, both ways */
	size_t compared = 0;
	fails += compare("waits, direct against records", dc, rc_, dn, NULL, &compared);
	fails += compare("waits, records against direct", rc_, dc, rn, NULL, &compared);
	fails += compare("delay, direct against records", dd, rf, dns, dc, &compared);
	fails += compare("delay, records against direct", rf, dd, rns, rc_, &compared);
	/* real stacks: the pipe's wait in the kernel, and (x86-64) each
	 * thread's own waiting function */
	bool ping = !HAVE_RAW_RW, pong = !HAVE_RAW_RW, pipe_wait = false;
	for (size_t i = 0; i < rf->n; i++) {
		ping |= strstr(rf->l[i].stack, "totals_ping_waits") != NULL;
		pong |= strstr(rf->l[i].stack, "totals_pong_waits") != NULL;
		pipe_wait |= strstr(rf->l[i].stack, "pipe_read") != NULL;
	}
	printf("%zu stacks direct, %zu records, %zu compared; ping %s, pong %s, pipe_read %s\n",
	       dd->n, rf->n, compared, ping ? "yes" : "no", pong ? "yes" : "no",
	       pipe_wait ? "yes" : "no");
	if (!ping || !pong || !pipe_wait || !compared)
		fails++;
	for (size_t k = 0; k < 4; k++)
		for (size_t i = 0; i < f[k].n; i++)
			free(f[k].l[i].stack);
	free(f);
	rtd_source_free(s);
	rtd_profile_records_free(c);
	rtd_profile_free(rprof);
	rtd_profile_free(dprof);
	rtd_perf_profiler_free(rp);
	rtd_perf_profiler_free(direct);
	if (fails)
		FAIL("%d checks wrong", fails);
	printf("PASS: %d waits each way, the same stacks\n", ROUNDS);
	return 0;
}
