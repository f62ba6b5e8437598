/* SPDX-License-Identifier: MIT */
/*
 * The kernel's landmarks (_text, the entry text, __traceiter_sched_switch)
 * come out of the symbolizer's one parse of kallsyms the same as the two
 * readers that read the file again for them gave (the profiler's kernel
 * ranges and perf.data's _text, as they were at 2beb156: kept below as
 * the reference), on /proc/kallsyms and on small files with modules and
 * lines out of order; and a second symbolizer of the process reads
 * nothing more.
 */
#include "test_util.h"

#include <errno.h>
#include <string.h>

#include "common/file.h"
#include "symbols/internal.h"

/* ---- the readers as they were (src/perf/profiler.c, perfdata_write.c) --- */

struct old_ranges {
	uint64_t entry_lo, entry_hi, iter_lo, iter_hi;
	bool iter, in_iter;
};

static bool old_is(const struct rtd_ksym *k, const char *name)
{
	return !k->mod && k->name_len == strlen(name) && !memcmp(k->name, name, k->name_len);
}

static int old_range_line(const struct rtd_ksym *k, void *ctx)
{
	struct old_ranges *p = ctx;
	if (p->in_iter) {
		if (k->addr > p->iter_lo) {
			p->iter_hi = k->addr;
			return 1;
		}
		return 0;
	}
	if (!k->addr)
		return 0;
	if (old_is(k, "__entry_text_start"))
		p->entry_lo = k->addr;
	else if (old_is(k, "__entry_text_end"))
		p->entry_hi = k->addr;
	else if (p->iter && old_is(k, "__traceiter_sched_switch")) {
		p->iter_lo = k->addr;
		p->in_iter = true;
	}
	return !p->iter && p->entry_lo && p->entry_hi;
}

static struct old_ranges old_ranges(const char *path, bool iter)
{
	struct old_ranges r = {.iter = iter};
	size_t bad;
	(void)rtd_kallsyms_read(path, old_range_line, &r, &bad);
	if (r.in_iter && r.iter_hi <= r.iter_lo)
		r.iter_hi = r.iter_lo + 256;
	if (r.entry_hi <= r.entry_lo)
		r.entry_lo = r.entry_hi = 0;
	return r;
}

static int old_text_line(const struct rtd_ksym *k, void *ctx)
{
	if (k->mod || k->name_len != 5 || memcmp(k->name, "_text", 5))
		return 0;
	*(uint64_t *)ctx = k->addr;
	return 1;
}

static uint64_t old_text(const char *path)
{
	uint64_t text = 0;
	size_t bad;
	(void)rtd_kallsyms_read(path, old_text_line, &text, &bad);
	return text;
}

/* ---- the one parse against them ----------------------------------------- */

/* The symbolizer's parse of @path gives what the old readers gave, and so
 * does rtd_sym_kernel_text(); returns the landmarks. */
static struct rtd_kallsyms_marks same_as_old(const char *path)
{
	struct sym_table t = {0};
	struct rtd_kallsyms_marks m;
	size_t bad;
	assert_int_equal(sym_kallsyms_read(path, &t, &m, &bad), 0);
	sym_table_free(&t);
	struct old_ranges on = old_ranges(path, false), oi = old_ranges(path, true);
	assert_int_equal(m.text, old_text(path));
	assert_int_equal(m.entry_lo, on.entry_lo);
	assert_int_equal(m.entry_hi, on.entry_hi);
	assert_int_equal(m.entry_lo, oi.entry_lo);
	assert_int_equal(m.entry_hi, oi.entry_hi);
	assert_int_equal(m.iter_lo, oi.iter_lo);
	assert_int_equal(m.iter_hi, oi.iter_hi);

	struct rtd_sym_opts o = {.sz = sizeof(o), .kallsyms = path};
	rtd_symbolizer *s;
	struct rtd_sym_kernel_text k;
	assert_int_equal(rtd_symbolizer_new(&o, &s), 0);
	assert_int_equal(rtd_sym_kernel_text(s, &k), 0);
	assert_int_equal(k.text, m.text);
	assert_int_equal(k.entry_start, m.entry_lo);
	assert_int_equal(k.entry_end, m.entry_hi);
	assert_int_equal(k.traceiter_start, m.iter_lo);
	assert_int_equal(k.traceiter_end, m.iter_hi);
	rtd_symbolizer_free(s);
	return m;
}

/* @text into @path, a /tmp/rtd-ktext-XXXXXX name made first when it ends
 * in XXXXXX. */
static void write_file(char *path, const char *text)
{
	if (strstr(path, "XXXXXX"))
		close(mkstemp(path));
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void real_kallsyms(void **state)
{
	(void)state;
	FILE *f = fopen(RTD_KALLSYMS_PATH, "r");
	if (!f) {
		printf("skipped: %s: %s\n", RTD_KALLSYMS_PATH, strerror(errno));
		skip();
	}
	fclose(f);
	struct rtd_kallsyms_marks m = same_as_old(RTD_KALLSYMS_PATH);
	if (!m.text)
		printf("note: %s hides its addresses here (kernel.kptr_restrict, "
		       "an unprivileged user): every landmark 0, as before\n",
		       RTD_KALLSYMS_PATH);
}

/* Modules' lines among the kernel's, a module's _text and entry name (not
 * the kernel's), the entry's end before its start, a hidden address, a
 * line below __traceiter_sched_switch after it (not its end), and its end
 * a module's line (the first above it, as the profiler read it). */
static void written_files(void **state)
{
	(void)state;
	char path[] = "/tmp/rtd-ktext-XXXXXX";
	write_file(path, "ffffffffc0001000 t _text\t[mod]\n"
			 "0000000000000000 T hidden\n"
			 "ffffffff81000000 T _stext\n"
			 "ffffffff81000000 T _text\n"
			 "ffffffffc0002000 t __entry_text_start\t[mod2]\n"
			 "ffffffff81001a87 T __entry_text_end\n"
			 "ffffffff81000010 T __entry_text_start\n"
			 "ffffffff81300000 t zzz\n"
			 "ffffffff8139bb30 T __traceiter_sched_switch\n"
			 "ffffffff81000500 t below\n"
			 "ffffffffc0003000 t modfn\t[mod]\n"
			 "ffffffff8139bb40 T __probestub_sched_switch\n");
	struct rtd_kallsyms_marks m = same_as_old(path);
	assert_int_equal(m.text, 0xffffffff81000000);
	assert_int_equal(m.entry_lo, 0xffffffff81000010);
	assert_int_equal(m.entry_hi, 0xffffffff81001a87);
	assert_int_equal(m.iter_lo, 0xffffffff8139bb30);
	assert_int_equal(m.iter_hi, 0xffffffffc0003000);

	/* __traceiter_sched_switch the last line: 256 bytes; an entry start
	 * with no end: no entry text */
	write_file(path, "ffffffff81000010 T __entry_text_start\n"
			 "ffffffff81000000 T _text\n"
			 "ffffffff8139bb30 T __traceiter_sched_switch\n"
			 "ffffffff81000000 t lower\n");
	m = same_as_old(path);
	assert_int_equal(m.entry_lo, 0);
	assert_int_equal(m.entry_hi, 0);
	assert_int_equal(m.iter_hi, 0xffffffff8139bb30 + 256);

	/* addresses hidden (kptr_restrict): every landmark 0 */
	write_file(path, "0000000000000000 T _stext\n0000000000000000 T _text\n"
			 "0000000000000000 T __entry_text_start\n"
			 "0000000000000000 T __entry_text_end\n"
			 "0000000000000000 T __traceiter_sched_switch\n"
			 "0000000000000000 T schedule\n");
	m = same_as_old(path);
	assert_int_equal(m.text | m.entry_lo | m.entry_hi | m.iter_lo | m.iter_hi, 0);
	unlink(path);
}

/* The second symbolizer of a process takes the landmarks and the kernel's
 * names from the first one's read: the file gone meanwhile changes
 * nothing, and its kernel frames are named. */
static void read_once(void **state)
{
	(void)state;
	char path[] = "/tmp/rtd-ktext-XXXXXX";
	write_file(path, "ffffffff81000000 T _text\n"
			 "ffffffff81000010 T __entry_text_start\n"
			 "ffffffff81001000 T schedule\n"
			 "ffffffff81001a87 T __entry_text_end\n");
	struct rtd_sym_opts o = {.sz = sizeof(o), .kallsyms = path};
	rtd_symbolizer *a, *b;
	struct rtd_sym_kernel_text ka, kb;
	assert_int_equal(rtd_symbolizer_new(&o, &a), 0);
	assert_int_equal(rtd_symbolizer_new(&o, &b), 0);
	assert_int_equal(rtd_sym_kernel_text(a, &ka), 0);
	unlink(path);
	assert_int_equal(rtd_sym_kernel_text(b, &kb), 0);
	assert_memory_equal(&ka, &kb, sizeof(ka));
	assert_int_equal(kb.text, 0xffffffff81000000);
	assert_int_equal(kb.entry_end, 0xffffffff81001a87);
	struct rtd_sym_frame f[2];
	assert_int_equal(rtd_sym_resolve_addr(b, -1, 0xffffffff81001010, true, f, 2), 1);
	assert_string_equal(f[0].name, "schedule");
	rtd_symbolizer_free(a);
	rtd_symbolizer_free(b);
	assert_int_equal(rtd_sym_kernel_text(NULL, &ka), -RTD_E_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(real_kallsyms),
		cmocka_unit_test(written_files),
		cmocka_unit_test(read_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
