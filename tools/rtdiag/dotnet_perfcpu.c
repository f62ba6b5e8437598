/* SPDX-License-Identifier: MIT */
/*
 * dotnet_perfcpu.c - 'rtdiag dotnet profile --cpu' through perf_event: the
 * kernel samples the process's threads (cpu-clock, 99 Hz, frame-pointer
 * call chains, kernel frames where allowed), and the runtime's perf map,
 * switched on over the diagnostics IPC for the profile and off again
 * (the guardian undoes it should rtdiag be killed), names the JIT frames.
 * No EventPipe sampler: it suspends every managed thread at each of its
 * ~1 kHz ticks, a fifth of a CPU-bound program's work (bench/dotnet/
 * cpu_slowdown.sh); perf_event interrupts one running thread per sample.
 *
 * When this path cannot be taken, dn_profile_perf() says why in one line
 * and the caller runs EventPipe's sampler instead.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dotnet_session.h"
#include "out.h"
#include "perf_cli.h"
#include "rtdiag/perf.h"
#include "rtdiag/profile.h"
#include "rtdiag/symbols.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The CPU the process's threads used between two reads (threads born
 * since count from zero; those that ended in between are not seen). */
static uint64_t cpu_between(const struct rtd_thread_cpu *a, size_t na,
			    const struct rtd_thread_cpu *b, size_t nb)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < nb; i++) {
		uint64_t before = 0;
		for (size_t j = 0; j < na; j++)
			if (a[j].tid == b[i].tid) {
				before = a[j].ns;
				break;
			}
		if (b[i].ns > before)
			sum += b[i].ns - before;
	}
	return sum;
}

/* Why the perf_event path is not for these arguments, or NULL. */
static const char *not_for(const struct collect_args *a)
{
	if (a->eventpipe_cpu)
		return "asked for (--sampler eventpipe)";
	if (a->command)
		return "perf_event follows a running process here, not a "
		       "program rtdiag starts (-p PID samples through perf_event)";
	if (!a->t.pid)
		return "a diagnostic socket names no process to sample (-p PID)";
	if (a->kinds != RTD_IPC_PROFILE_CPU)
		return "other --type kinds come from EventPipe, and one session "
		       "samples the CPU with them";
	if (a->record)
		return "--record keeps an EventPipe session's bytes";
	if (a->managed_only)
		return "--managed-only is EventPipe's";
	return NULL;
}

static void print_top(const struct collect_args *a, const rtd_profile *pr,
		      const struct rtd_perf_profiler_stats *ps,
		      uint64_t process_ns, double wall, bool have_cpu)
{
	int64_t tot = rtd_profile_total_of(pr, rtd_profile_default_type(pr));
	printf("%llu samples, %.3f s of CPU (perf_event at 99 Hz: the kernel's "
	       "samples of its threads; managed, native%s frames)\n",
	       (unsigned long long)ps->samples, (double)tot / 1e9,
	       ps->user_only ? "" : " and kernel");
	if (have_cpu)
		printf("the process used %.3f s of CPU in %.3f s on %ld CPUs "
		       "(the kernel's count of its threads)\n",
		       (double)process_ns / 1e9, wall,
		       sysconf(_SC_NPROCESSORS_ONLN));
	struct rtd_profile_write_opts wo = {.sz = sizeof(wo), .top = a->top};
	rtd_profile_write(pr, RTD_PROFILE_FMT_TOP, stdout, &wo);
	fflush(stdout);
}

static int write_out(const struct collect_args *a, const rtd_profile *pr,
		     uint64_t samples)
{
	struct cli_out o;
	if (cli_out_open(&o, a->out))
		return CLI_FAIL;
	int err = rtd_profile_write(pr, a->format, o.f, NULL);
	if (err) {
		cli_out_abort(&o);
		return cli_fail("%s: %s", a->out, rtd_strerror(err));
	}
	if (cli_out_commit(&o))
		return CLI_FAIL;
	if (!cli_out_is_stdout(a->out))
		fprintf(stderr, "rtdiag: wrote %s (cpu: %llu samples)\n", a->out,
			(unsigned long long)samples);
	return CLI_OK;
}

/* The runtime's perf map is on (switched on now, or by its environment)
 * and written: the JIT frames will have names. */
static bool perfmap_on(pid_t pid, const struct rtd_perf_profiler_stats *st)
{
	char map[4096];
	struct stat sb;
	return st->dotnet_perfmaps > 0 ||
	       (rtd_sym_perfmap_path(pid, map, sizeof(map)) == 0 &&
		stat(map, &sb) == 0);
}

int dn_profile_perf(const struct collect_args *a, char *why, size_t n)
{
	const char *no = not_for(a);
	if (no) {
		snprintf(why, n, "%s", no);
		return -1;
	}
	pid_t pid = a->t.pid;
	struct rtd_perf_profiler_opts po = {
		.sz = sizeof(po), .pids = &pid, .npids = 1,
		.flags = RTD_PERF_PROF_NO_COMM | RTD_PERF_PROF_READER_THREAD};
	struct rtd_perf_profiler *pr = NULL;
	int r = rtd_perf_profiler_new(&po, &pr);
	if (r) {
		snprintf(why, n, "perf_event: %s", rtd_perf_profiler_errmsg(NULL));
		return -1;
	}
	struct rtd_perf_profiler_stats st = {.sz = sizeof(st)};
	rtd_perf_profiler_stats(pr, &st);
	if (!perfmap_on(pid, &st)) {
		/* JIT frames would have no names: EventPipe's do */
		rtd_perf_profiler_free(pr);
		snprintf(why, n, "the runtime's perf map could not be switched "
			 "on (.NET 8 or later does it over the diagnostics IPC): "
			 "JIT frames would have no names");
		return -1;
	}
	struct rtd_thread_cpu *c0 = NULL, *c1 = NULL;
	size_t n0 = 0, n1 = 0;
	int crc = rtd_thread_cpu_read(pid, &c0, &n0);
	double t0 = now_s();
	perf_cli_signals(rtd_perf_profiler_monitor(pr), a->duration);
	r = rtd_perf_profiler_run(pr);
	perf_cli_signals(NULL, 0);
	if (!crc)
		crc = rtd_thread_cpu_read(pid, &c1, &n1);
	double wall = now_s() - t0;
	/* not stopped by --duration or a signal: every thread is gone */
	bool gone = kill(pid, 0) && errno == ESRCH;
	uint64_t process_ns = crc ? 0 : cpu_between(c0, n0, c1, n1);
	free(c0);
	free(c1);
	if (r)
		fprintf(stderr, "rtdiag: %s (keeping the samples taken so far)\n",
			rtd_perf_profiler_errmsg(pr));
	rtd_profile *prof = NULL;
	int rc = rtd_perf_profiler_profile(pr, &prof);
	rtd_perf_profiler_stats(pr, &st);
	if (rc) {
		rtd_perf_profiler_free(pr);
		return cli_fail("building the profile: %s", rtd_strerror(rc));
	}
	struct rtd_profile_meta m = {.sz = sizeof(m), .source = "perf_event",
				     .pid = pid};
	rtd_profile_set_meta(prof, &m);
	int out = CLI_OK;
	if (a->out)
		out = write_out(a, prof, st.samples);
	if (out == CLI_OK && a->top && !cli_out_is_stdout(a->out ? a->out : ""))
		print_top(a, prof, &st, process_ns, wall, !crc);
	if (out == CLI_OK && !st.samples)
		fprintf(stderr, "rtdiag: no CPU samples (did the process run?)\n");
	if (st.lost)
		fprintf(stderr, "rtdiag: %llu samples lost (the ring was full)\n",
			(unsigned long long)st.lost);
	rtd_profile_free(prof);
	/* the perf map off again, its file removed */
	rtd_perf_profiler_free(pr);
	if (out == CLI_OK && (r || gone)) {
		fprintf(stderr, "rtdiag: pid %d: kept the profile of what was "
			"sampled, incomplete: %s (exit code %d)\n", (int)pid,
			gone ? "the process ended before the stop"
			     : "sampling failed", CLI_PARTIAL);
		out = CLI_PARTIAL;
	}
	return out;
}
