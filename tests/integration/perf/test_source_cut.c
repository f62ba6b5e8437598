/* SPDX-License-Identifier: MIT */
/*
 * test_source_cut.c - a live perf source cut on demand
 * (rtd_perf_source_live_cut()), its CPU samples added up by a profile
 * consumer that goes on into a new profile at each cut
 * (rtd_profile_records_retarget()): the wiring of the agent's CPU
 * profiles (src/agent/src_perf.c), on the real kernel.
 *
 * A forked child spins in one named function. The source's own windows
 * are ten minutes long, so within the test only a cut can hand samples
 * over. Three times: the child runs at least 0.2 s of CPU and is stopped
 * (SIGSTOP, seen stopped by waitpid: every sample of it is in the rings
 * before the cut is asked), the source is cut, and the consumer pulls
 * until the source's watermark passes the cut; then:
 *  - the cut's profile holds the child's samples (at 999 Hz, 0.2 s of CPU
 *    is ~200; at least 20 asked), in its spinning function;
 *  - each sample weighs the period in the second type (count x 10^9/999
 *    ns: cpu-clock's period, which the records do not carry);
 *  - the child's thread keeps its name in every cut's profile: the source
 *    names a thread once, the consumer remembers it across profiles;
 * and a fourth cut, the child still stopped, holds no sample: nothing of
 * a cut came with the next one. And the module of the spinning function
 * has its mapping (rtd_perf_source_live_mapping(): the range holding the
 * function's address, this program's path and build-id), as pprof writes
 * it. The old source had no cut: it handed nothing over before its window
 * ended (ten minutes), and this fails at its first cut.
 *
 * All of it twice: each sample a record (RTD_PERF_PROF_KEEP_SAMPLES), then
 * the call tree's totals (RTD_PERF_PROF_TOTALS, nothing kept per sample,
 * as the agent reads its CPU profiles), where a cut's samples come as a
 * record per thread and stack, its count the value and its summed period
 * a "period" field: each cut's ns its samples x period, over the cuts
 * fewer than a quarter as many records as samples, and with
 * RTD_PERF_SOURCE_LINES the spinning function's frames have its file and
 * one of its lines, in the pprof too (or line 0, which the line table
 * gives a sanitizer's checks: addr2line's "?"; the first frame seen was
 * once such a one, and the check took it for a missing line). The drain refused a profiler that kept no
 * samples (the source ended with "the profiler keeps no samples" at the
 * first cut), and records had no file and line. With the totals stamped
 * at their read (after the cut), the first of a drain lifted the
 * watermark past the cut and the consumer stopped before the others
 * came: a cut of 0 samples then one of 409, or 1 sample in the stopped
 * cut (4 of 16 runs, unloaded).
 * No time is asserted: each cut waits for the watermark until the source
 * has had nothing new in 60 waits of 0.5 s.
 */
#include <inttypes.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <zlib.h>

#include "perf_test.h"
#include "rtdiag/perf_source.h"
#include "rtdiag/profile_records.h"

#define HZ 999u
#define CUTS 3
#define MIN_SAMPLES 20

enum { SPIN_FIRST_LINE = __LINE__ };
__attribute__((noinline, used)) static void cut_spin_here(volatile uint64_t *x)
{
	for (uint64_t i = 0; i < 100000; i++)
		*x += i;
}
enum { SPIN_LAST_LINE = __LINE__ };

/* Does the gzip stream hold the string (the pprof's string table)? */
static bool gz_has(const uint8_t *gz, size_t n, const char *str)
{
	static uint8_t out[1 << 22];
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return false;
	z.next_in = (uint8_t *)gz;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = sizeof(out);
	int rc = inflate(&z, Z_FINISH);
	size_t got = sizeof(out) - z.avail_out;
	inflateEnd(&z);
	return rc == Z_STREAM_END && memmem(out, got, str, strlen(str)) != NULL;
}

static rtd_profile *new_profile(void)
{
	static const struct rtd_profile_type types[2] = {{"samples", "count"},
							 {"cpu", "nanoseconds"}};
	struct rtd_profile_opts po = {.sz = sizeof(po), .types = types, .ntypes = 2,
				      .default_type = 1};
	return rtd_profile_new2(&po);
}

/* The cuts, each sample a record or (@totals) the tree's totals. Returns
 * how many checks went wrong. */
static int cuts(bool totals)
{
	printf("-- %s\n", totals ? "totals (RTD_PERF_PROF_TOTALS)" : "each sample a record");
	pid_t child = fork();
	if (child < 0)
		FAIL("fork: %s", strerror(errno));
	if (child == 0) {
		prctl(PR_SET_NAME, "cut-spinner");
		volatile uint64_t x = 0;
		for (;;)
			cut_spin_here(&x);
	}
	struct rtd_perf_sampler_opts so = {.sz = sizeof(so), .freq = HZ};
	struct rtd_perf_profiler_opts o = {
		.sz = sizeof(o),
		.pids = &child,
		.npids = 1,
		.flags = (totals ? RTD_PERF_PROF_TOTALS : RTD_PERF_PROF_KEEP_SAMPLES) |
			 RTD_PERF_PROF_WINDOWS | RTD_PERF_PROF_NO_DOTNET,
		.sampler = &so};
	struct rtd_perf_profiler *p;
	if (rtd_perf_profiler_new(&o, &p)) {
		kill(child, SIGKILL);
		FAIL("profiler_new: %s", rtd_perf_profiler_errmsg(NULL));
	}
	RTD_OPTS(rtd_perf_source_opts, lo, .window_ms = 600000,
		 .flags = RTD_PERF_SOURCE_COPIED | RTD_PERF_SOURCE_MAPPINGS |
			  (totals ? RTD_PERF_SOURCE_LINES : 0));
	int err = 0;
	rtd_source *s = rtd_perf_source_live(p, &lo, &err);
	if (!s) {
		kill(child, SIGKILL);
		FAIL("source: %s", rtd_strerror(err));
	}
	const int64_t period = 1000000000 / HZ;
	rtd_profile *prof = new_profile();
	RTD_OPTS(rtd_profile_records_opts, co, .name = "cpu", .period = period);
	rtd_profile_records *c = prof ? rtd_profile_records_new(prof, &co, &err) : NULL;
	if (!c) {
		kill(child, SIGKILL);
		FAIL("consumer: %s", rtd_strerror(err));
	}
	int fails = 0;
	uint64_t spin_ip = 0;
	char spin_mod[256] = "", spin_file[256] = "";
	uint64_t spin_line = 0, bad_line = 0;
	size_t line0 = 0;
	int64_t all_n = 0;
	size_t all_rec = 0;
	bool all_lines = false;
	for (int cut = 0; cut <= CUTS; cut++) {
		size_t nrec = 0;
		/* 0.2 s of the child's CPU, then the child stopped: every sample
		 * of it is in the rings before the cut is asked (the last cut:
		 * none since the one before) */
		if (cut < CUTS) {
			kill(child, SIGCONT);
			double t0 = pt_cpu_seconds(child);
			for (int i = 0; i < 6000 && pt_cpu_seconds(child) < t0 + 0.2; i++)
				usleep(10000);
			kill(child, SIGSTOP);
			int st = 0;
			if (waitpid(child, &st, WUNTRACED) != child || !WIFSTOPPED(st)) {
				kill(child, SIGKILL);
				FAIL("the child did not stop");
			}
		}
		int64_t at = 0;
		int rc = rtd_perf_source_live_cut(s, &at);
		if (rc) {
			fails++;
			printf("cut %d: %s\n", cut, rtd_strerror(rc));
			break;
		}
		bool reached = false;
		for (int idle = 0; !reached && idle < 60;) {
			const struct rtd_record *r;
			rc = rtd_source_next(s, &r);
			if (rc == 1) {
				if ((rc = rtd_profile_records_add(c, r)))
					break;
				nrec += r->kind == RTD_REC_SAMPLE;
				for (uint32_t i = 0; r->stack && i < r->stack->n; i++) {
					const struct rtd_rec_frame *f = &r->stack->frames[i];
					if (!f->name || strcmp(f->name, "cut_spin_here"))
						continue;
					if (!spin_ip) {
						spin_ip = f->ip;
						snprintf(spin_mod, sizeof(spin_mod), "%s", f->module);
						snprintf(spin_file, sizeof(spin_file), "%s",
							 f->file ? f->file : "");
					}
					/* line 0: code of no source line (a
					 * sanitizer's check; addr2line's "?") */
					if (!f->line)
						line0++;
					else if (f->line > SPIN_FIRST_LINE && f->line < SPIN_LAST_LINE)
						spin_line = spin_line ? spin_line : f->line;
					else
						bad_line = f->line;
				}
				continue;
			}
			if (rc != RTD_SOURCE_IDLE)
				break;
			/* only a wait that saw nothing counts: while the window
			 * is queued the source is idle between its records */
			if (!(reached = r->mono >= at) && rtd_source_wait(s, 500) == 0)
				idle++;
		}
		if (!reached) {
			printf("cut %d: the watermark did not pass the cut (rc %d)\n", cut, rc);
			fails++;
			break;
		}
		int64_t n = rtd_profile_total_of(prof, 0), ns = rtd_profile_total_of(prof, 1);
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		if (!f || rtd_profile_write_folded(prof, f) || fclose(f))
			FAIL("writing the profile");
		uint8_t *pb = NULL;
		size_t pblen = 0;
		f = open_memstream((char **)&pb, &pblen);
		if (!f || rtd_profile_write_pprof(prof, f) || fclose(f))
			FAIL("writing the pprof");
		bool named = gz_has(pb, pblen, "cut-spinner");
		bool lines = gz_has(pb, pblen, "test_source_cut.c");
		printf("cut %d: %" PRId64 " samples in %zu records, %" PRId64 " ns, in "
		       "cut_spin_here: %s, thread named: %s, file in the pprof: %s\n",
		       cut, n, nrec, ns, strstr(text, "cut_spin_here") ? "yes" : "no",
		       named ? "yes" : "no", lines ? "yes" : "no");
		/* each cut holds the samples taken before it, and only those:
		 * the last, of a stopped child, none (a cut's samples were seen
		 * to come with the next cut under load: 0 then 403) */
		if (cut == CUTS) {
			if (n != 0) {
				printf("cut %d: %" PRId64 " samples of a stopped child: a cut "
				       "came late\n", cut, n);
				fails++;
			}
		} else if (n < MIN_SAMPLES || ns != n * period || !strstr(text, "cut_spin_here") ||
			   !named) {
			fails++;
		}
		if (totals) {
			all_n += n;
			all_rec += nrec;
			all_lines |= lines;
		}
		free(text);
		free(pb);
		rtd_profile *next = new_profile();
		if (!next || rtd_profile_records_retarget(c, next))
			FAIL("retarget");
		rtd_profile_free(prof);
		prof = next;
	}
	/* the module of the spinning function: its mapping, as pprof writes it */
	struct rtd_perf_source_mapping m;
	int mr = rtd_perf_source_live_mapping(s, spin_mod, &m);
	printf("%s: mapping %d: %#" PRIx64 "-%#" PRIx64 " offset %#" PRIx64 " %s build-id %s "
	       "(the function at %#" PRIx64 ")\n",
	       spin_mod, mr, mr ? 0 : m.start, mr ? 0 : m.limit, mr ? 0 : m.offset,
	       mr ? "" : m.file, mr ? "" : m.build_id, spin_ip);
	if (mr || spin_ip < m.start || spin_ip >= m.limit || !m.file ||
	    !strstr(m.file, "test_source_cut") || !m.build_id[0])
		fails++;
	/* RTD_PERF_SOURCE_LINES: the frame's file and line (DWARF) */
	printf("cut_spin_here at %s:%" PRIu64 " (its lines %d-%d; %zu frames of line 0, "
	       "a line outside: %" PRIu64 ")\n",
	       spin_file[0] ? spin_file : "(no file)", spin_line, SPIN_FIRST_LINE + 1,
	       SPIN_LAST_LINE - 1, line0, bad_line);
	if (totals && (!strstr(spin_file, "test_source_cut.c") || !spin_line || bad_line))
		fails++;
	if (totals) {
		printf("totals: %" PRId64 " samples in %zu records over the cuts\n", all_n, all_rec);
		if (all_n < MIN_SAMPLES * CUTS || all_rec * 4 > (size_t)all_n || !all_lines)
			fails++;
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	rtd_source_free(s);
	rtd_profile_records_free(c);
	rtd_profile_free(prof);
	rtd_perf_profiler_free(p);
	return fails;
}

int main(void)
{
	pt_require();
	int fails = cuts(false) + cuts(true);
	if (fails)
		FAIL("%d checks wrong", fails);
	printf("PASS: %d cuts, each sample a record and as totals\n", CUTS);
	return 0;
}
