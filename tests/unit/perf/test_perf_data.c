/* SPDX-License-Identifier: MIT */
/*
 * test_perf_data.c - the perf.data decoder and its record source on files
 * Debian's perf 6.12 wrote (fuzz/corpus/perf_data: perf record -g, -z,
 * --call-graph dwarf, -e sched:sched_switch, two events,
 * --switch-events), and on cut and foreign ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/perf_event.h>

#include "rtdiag/perf_data.h"
#include "rtdiag/profile_records.h"
#include "test_util.h"

static char path_buf[4096];

static const char *corpus(const char *name)
{
	snprintf(path_buf, sizeof(path_buf), "%s/%s",
		 rtd_test_path("RTD_SOURCE_DIR", "fuzz/corpus/perf_data"), name);
	return path_buf;
}

struct walk {
	uint64_t records, samples, comms, mmaps, rounds_seen;
	uint64_t last_time, backwards;
	int end;
};

/* Every record to the end: times never go back. */
static struct walk walk_all(rtd_perf_data *d)
{
	struct walk w = {0};
	struct rtd_perf_data_rec r;
	while ((w.end = rtd_perf_data_next(d, &r)) == 1) {
		w.records++;
		if (r.s->type == 9)
			w.samples++;
		if (r.s->type == 3)
			w.comms++;
		if (r.s->type == 1 || r.s->type == 10)
			w.mmaps++;
		if (r.s->has & (1u << 2) /* PERF_SAMPLE_TIME */) {
			if (r.s->time < w.last_time)
				w.backwards++;
			w.last_time = r.s->time;
		}
	}
	return w;
}

static void header_and_records(void **state)
{
	(void)state;
	rtd_perf_data *d;
	assert_int_equal(rtd_perf_data_open(corpus("g.data"), NULL, &d), 0);
	const struct rtd_perf_data_info *in = rtd_perf_data_info(d);
	assert_true(in->version && !strncmp(in->version, "6.", 2)); /* 6.12.95 wrote the corpus */
	assert_string_equal(in->arch, "x86_64");
	assert_non_null(strstr(in->cmdline, "perf record"));
	assert_int_equal(in->clockid, -1);
	assert_int_equal(rtd_perf_data_nevents(d), 1);
	const struct rtd_perf_data_event *e = rtd_perf_data_event(d, 0);
	assert_string_equal(e->name, "task-clock:ppp");
	assert_true(e->sample_type & (1u << 5)); /* PERF_SAMPLE_CALLCHAIN */
	assert_true(e->nids > 0);
	size_t nb;
	const struct rtd_perf_data_build_id *b = rtd_perf_data_build_ids(d, &nb);
	assert_true(nb > 0);
	bool prog = false;
	for (size_t i = 0; i < nb; i++)
		prog |= b[i].len == 20 && strstr(b[i].path, "cpu_shares_fp") != NULL;
	assert_true(prog);
	struct walk w = walk_all(d);
	assert_int_equal(w.end, 0);
	assert_true(w.samples > 0);
	assert_true(w.comms > 0 && w.mmaps > 0);
	assert_int_equal(w.backwards, 0);
	struct rtd_perf_data_stats st;
	rtd_perf_data_stats(d, &st);
	assert_int_equal(st.samples, w.samples);
	assert_true(st.rounds > 0);
	assert_int_equal(rtd_perf_data_next(d, &(struct rtd_perf_data_rec){0}), 0);
	rtd_perf_data_free(d);
}

/* perf record -z: the records inside zstd frames, as many as perf counts */
static void compressed(void **state)
{
	(void)state;
	rtd_perf_data *d;
	assert_int_equal(rtd_perf_data_open(corpus("z.data"), NULL, &d), 0);
	assert_true(rtd_perf_data_info(d)->compressed);
	struct walk w = walk_all(d);
	assert_int_equal(w.end, 0);
	struct rtd_perf_data_stats st;
	rtd_perf_data_stats(d, &st);
	assert_true(st.compressed > 0);
	assert_true(w.samples > 0 && w.mmaps > 0);
	assert_int_equal(w.backwards, 0);
	rtd_perf_data_free(d);
}

/* Records sorted across rounds, some kept for the next: a dwarf file's
 * samples (8 KiB each) move in the queue when a round is given out. */
static void dwarf_order(void **state)
{
	(void)state;
	rtd_perf_data *d;
	assert_int_equal(rtd_perf_data_open(corpus("dwarf.data"), NULL, &d), 0);
	const struct rtd_perf_data_event *e = rtd_perf_data_event(d, 0);
	assert_true(e->sample_regs_user != 0);
	struct rtd_perf_data_rec r;
	uint64_t with_stack = 0, last = 0;
	int rc;
	while ((rc = rtd_perf_data_next(d, &r)) == 1) {
		if (r.s->type != 9)
			continue;
		assert_true(r.s->time >= last);
		last = r.s->time;
		with_stack += r.s->stack_user_size > 0 && r.s->regs_user_nr > 0;
	}
	assert_int_equal(rc, 0);
	assert_true(with_stack > 0);
	rtd_perf_data_free(d);
}

/* The tracepoint named from the tracing data, its fields decoded. */
static void tracepoint_fields(void **state)
{
	(void)state;
	rtd_perf_data *d;
	assert_int_equal(rtd_perf_data_open(corpus("sched_switch.data"), NULL, &d), 0);
	const struct rtd_perf_data_event *e = rtd_perf_data_event(d, 0);
	assert_string_equal(e->name, "sched:sched_switch");
	assert_true(e->nfields > 5);
	unsigned prev_comm = e->nfields;
	for (unsigned i = 0; i < e->nfields; i++)
		if (!strcmp(e->fields[i].name, "prev_comm"))
			prev_comm = i;
	assert_true(prev_comm < e->nfields);
	struct rtd_perf_data_rec r;
	int rc, sleeps = 0;
	while ((rc = rtd_perf_data_next(d, &r)) == 1) {
		if (r.s->type != 9)
			continue;
		struct rtd_perf_value v;
		assert_int_equal(rtd_perf_data_field(e, r.s, prev_comm, &v), 0);
		sleeps += v.len >= 5 && !memcmp(v.str, "sleep", 5);
	}
	assert_int_equal(rc, 0);
	assert_true(sleeps > 0);
	rtd_perf_data_free(d);
}

/* A file cut inside its data: the records before the cut, then an error
 * naming it; one that is no perf.data: refused at once. */
static void cut_and_foreign(void **state)
{
	(void)state;
	rtd_perf_data *d;
	assert_int_equal(rtd_perf_data_open(corpus("cut_data.data"), NULL, &d), 0);
	struct walk w = walk_all(d);
	assert_int_equal(w.end, -RTD_E_TRUNCATED);
	assert_true(w.samples > 0);
	uint64_t off;
	assert_non_null(strstr(rtd_perf_data_error(d, &off), "it was cut"));
	assert_true(off > 0);
	/* the error again on every call */
	assert_int_equal(rtd_perf_data_next(d, &(struct rtd_perf_data_rec){0}), -RTD_E_TRUNCATED);
	rtd_perf_data_free(d);
	/* cut in its feature sections: every record, the attrs' names */
	assert_int_equal(rtd_perf_data_open(corpus("cut_features.data"), NULL, &d), 0);
	w = walk_all(d);
	assert_int_equal(w.end, 0);
	assert_string_equal(rtd_perf_data_event(d, 0)->name, "task-clock");
	rtd_perf_data_free(d);
	assert_int_equal(rtd_perf_data_open(corpus("not_perf.data"), NULL, &d), -RTD_E_FORMAT);
	assert_non_null(strstr(rtd_perf_data_error(d, NULL), "PERFILE2"));
	rtd_perf_data_free(d);
	/* a pipe-mode header and nothing after it: no event to read by */
	static const uint8_t pipe_hdr[16] = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2', 16};
	assert_int_equal(rtd_perf_data_open_mem(pipe_hdr, sizeof(pipe_hdr), NULL, &d),
			 -RTD_E_FORMAT);
	assert_non_null(strstr(rtd_perf_data_error(d, NULL), "pipe-mode"));
	rtd_perf_data_free(d);
	rtd_perf_data_free(NULL);
}

/* A stream of bytes from memory, 1000 at a time (a pipe's short reads). */
struct mem_stream {
	const uint8_t *p;
	size_t n, pos;
};

static int64_t mem_read(void *ctx, void *buf, size_t len)
{
	struct mem_stream *m = ctx;
	size_t k = m->n - m->pos < len ? m->n - m->pos : len;
	if (k > 1000)
		k = 1000;
	memcpy(buf, m->p + m->pos, k);
	m->pos += k;
	return (int64_t)k;
}

/* perf record -o - (pipe mode, tests/unit's corpus pipe.data: -e
 * task-clock -c 100000 -g, 43 samples): the attributes, names and
 * features are records; read from the file and from a stream alike. */
static void pipe_mode(void **state)
{
	(void)state;
	rtd_perf_data *d = NULL;
	assert_int_equal(rtd_perf_data_open(corpus("pipe.data"), NULL, &d), 0);
	assert_int_equal(rtd_perf_data_nevents(d), 1);
	assert_string_equal(rtd_perf_data_event(d, 0)->name, "task-clock");
	assert_true(rtd_perf_data_event(d, 0)->nids > 0);
	assert_non_null(rtd_perf_data_info(d)->hostname);
	struct walk a = walk_all(d);
	assert_int_equal(a.end, 0);
	assert_int_equal(a.samples, 43);
	assert_true(a.comms > 0 && a.mmaps > 0);
	assert_int_equal(a.backwards, 0);
	rtd_perf_data_free(d);
	FILE *f = fopen(corpus("pipe.data"), "rb");
	assert_non_null(f);
	static uint8_t buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	struct mem_stream m = {buf, n, 0};
	assert_int_equal(rtd_perf_data_open_reader(mem_read, &m, NULL, &d), 0);
	struct walk b = walk_all(d);
	assert_int_equal(b.end, 0);
	assert_int_equal(b.records, a.records);
	assert_int_equal(b.samples, a.samples);
	rtd_perf_data_free(d);
	/* a file of the seekable layout cannot be read from a stream */
	f = fopen(corpus("g.data"), "rb");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	m = (struct mem_stream){buf, n, 0};
	assert_int_equal(rtd_perf_data_open_reader(mem_read, &m, NULL, &d), -RTD_E_UNSUPPORTED);
	assert_non_null(strstr(rtd_perf_data_error(d, NULL), "give its file name"));
	rtd_perf_data_free(d);
}

/* The record source into a profile: samples of the program's functions,
 * and the off-CPU slices of --switch-events balanced. */
static void source_and_profile(void **state)
{
	(void)state;
	rtd_perf_data *d;
	/* g.data's program (cpu_shares_fp, build id 9c6f4251...) was built in
	 * a worktree since removed: it is read, as perf report reads it, from
	 * a build-id cache (the binary kept under tests/unit/perf/buildid, in
	 * perf's layout), not from its recorded path */
	char cache[4096];
	snprintf(cache, sizeof(cache), "%s/tests/unit/perf/buildid",
		 rtd_test_path("RTD_SOURCE_DIR", "."));
	setenv("PERF_BUILDID_DIR", cache, 1);
	assert_int_equal(rtd_perf_data_open(corpus("g.data"), NULL, &d), 0);
	int err = 0;
	rtd_source *src = rtd_perf_data_source(d, NULL, &err);
	assert_non_null(src);
	rtd_profile *p = rtd_profile_new("samples", "count");
	RTD_OPTS(rtd_profile_records_opts, o, .name = "task-clock:ppp");
	rtd_profile_records *c = rtd_profile_records_new(p, &o, &err);
	assert_non_null(c);
	assert_int_equal(rtd_profile_records_pull(c, src), 0);
	uint64_t n;
	rtd_profile_records_stats(c, &n, NULL, NULL);
	struct rtd_source_stats st;
	rtd_source_stats(src, &st);
	assert_int_equal(n, st.records[RTD_REC_SAMPLE]);
	assert_int_equal(rtd_profile_total(p), (int64_t)n);
	assert_true(st.records[RTD_REC_PROCESS] >= 1 && st.records[RTD_REC_THREAD] >= 1);
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	assert_int_equal(rtd_profile_write_folded(p, m), 0);
	fclose(m);
	assert_non_null(strstr(text, ";main;worker;gamma_fn "));
	free(text);
	rtd_profile_records_free(c);
	rtd_profile_free(p);
	rtd_source_free(src);
	/* with no cache, a program gone from its path is module+offset */
	if (access("/work/wt/perfdata/build/tests/targets/cpu_shares_fp", F_OK)) {
		setenv("PERF_BUILDID_DIR", "/nonexistent", 1);
		assert_int_equal(rtd_perf_data_open(corpus("g.data"), NULL, &d), 0);
		src = rtd_perf_data_source(d, NULL, &err);
		p = rtd_profile_new("samples", "count");
		c = rtd_profile_records_new(p, &o, &err);
		assert_int_equal(rtd_profile_records_pull(c, src), 0);
		m = open_memstream(&text, &len);
		assert_int_equal(rtd_profile_write_folded(p, m), 0);
		fclose(m);
		assert_null(strstr(text, "gamma_fn"));
		assert_non_null(strstr(text, "cpu_shares_fp+0x"));
		free(text);
		rtd_profile_records_free(c);
		rtd_profile_free(p);
		rtd_source_free(src);
	}
	unsetenv("PERF_BUILDID_DIR");

	assert_int_equal(rtd_perf_data_open(corpus("switch.data"), NULL, &d), 0);
	src = rtd_perf_data_source(d, NULL, &err);
	assert_non_null(src);
	const struct rtd_record *r;
	int rc, open = 0, begins = 0;
	while ((rc = rtd_source_next(src, &r)) == 1) {
		if (r->kind == RTD_REC_SLICE_BEGIN) {
			assert_string_equal(r->category, "off-cpu");
			begins++;
			open++;
		} else if (r->kind == RTD_REC_SLICE_END) {
			open--;
		}
		assert_true(open >= 0);
	}
	assert_int_equal(rc, 0);
	assert_true(begins > 0);
	rtd_source_free(src);
}

/* The writer's file, read back: its event, the kernel's mapping perf
 * record would synthesize, and the records given. */
static void writer_round_trip(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = tmpfile();
	assert_non_null(f);
	rtd_perf_data_writer *w;
	RTD_OPTS(rtd_perf_data_writer_opts, wo, .cmdline = "rtdiag perf record -- x");
	assert_int_equal(rtd_perf_data_writer_new(f, &wo, &w), 0);
	struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
				    .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
						   PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
				    .sample_id_all = 1};
	uint64_t ids[2] = {41, 42};
	assert_int_equal(rtd_perf_data_writer_event(w, &a, "cpu-clock", ids, 2), 0);
	assert_int_equal(rtd_perf_data_writer_synthesize(w, 0), 0);
	/* a sample: id, ip, pid/tid, time */
	uint8_t rec[40] = {0};
	uint32_t type = PERF_RECORD_SAMPLE;
	uint16_t misc = PERF_RECORD_MISC_USER, size = sizeof(rec);
	uint64_t id = 42, ip = 0x401000, t = 1000;
	uint32_t pt[2] = {77, 78};
	memcpy(rec, &type, 4);
	memcpy(rec + 4, &misc, 2);
	memcpy(rec + 6, &size, 2);
	memcpy(rec + 8, &id, 8);
	memcpy(rec + 16, &ip, 8);
	memcpy(rec + 24, pt, 8);
	memcpy(rec + 32, &t, 8);
	assert_int_equal(rtd_perf_data_writer_record(w, rec, sizeof(rec)), 0);
	assert_int_equal(rtd_perf_data_writer_record(w, rec, 16), -RTD_E_INVAL);
	/* no event after the first record */
	assert_int_equal(rtd_perf_data_writer_event(w, &a, "late", ids, 1), -RTD_E_STATE);
	assert_int_equal(rtd_perf_data_writer_finish(w), 0);
	long n = ftell(f);
	assert_true(n > 0);
	buf = malloc((size_t)n);
	rewind(f);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	len = (size_t)n;
	rtd_perf_data *d;
	assert_int_equal(rtd_perf_data_open_mem(buf, len, NULL, &d), 0);
	assert_string_equal(rtd_perf_data_info(d)->cmdline, "rtdiag perf record -- x");
	assert_int_equal(rtd_perf_data_nevents(d), 1);
	assert_string_equal(rtd_perf_data_event(d, 0)->name, "cpu-clock");
	assert_int_equal(rtd_perf_data_event(d, 0)->nids, 2);
	struct rtd_perf_data_rec r;
	int kernel = 0, samples = 0, rc;
	while ((rc = rtd_perf_data_next(d, &r)) == 1) {
		if (r.s->type == PERF_RECORD_MMAP &&
		    !strcmp(r.s->rec.mmap.filename, "[kernel.kallsyms]_text"))
			kernel++;
		if (r.s->type == PERF_RECORD_SAMPLE) {
			samples++;
			assert_int_equal(r.s->ip, 0x401000);
			assert_int_equal(r.s->tid, 78);
			assert_int_equal(r.event, 0);
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(samples, 1);
	assert_true(kernel <= 1); /* none when kallsyms hides addresses */
	rtd_perf_data_free(d);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(header_and_records),
		cmocka_unit_test(compressed),
		cmocka_unit_test(dwarf_order),
		cmocka_unit_test(tracepoint_fields),
		cmocka_unit_test(cut_and_foreign),
		cmocka_unit_test(pipe_mode),
		cmocka_unit_test(source_and_profile),
		cmocka_unit_test(writer_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
