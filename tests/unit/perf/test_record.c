/* SPDX-License-Identifier: MIT */
/*
 * Record decoding: every PERF_SAMPLE_* field in its uapi order, the other
 * record types with their sample_id trailer, and bad records (counts that
 * overrun the record, sizes past the bytes available).
 */
#include "test_util.h"

#include "perf/internal.h"

struct w {
	uint8_t b[4096];
	size_t n;
};

static void put(struct w *w, const void *p, size_t n)
{
	memcpy(w->b + w->n, p, n);
	w->n += n;
}
static void u64(struct w *w, uint64_t v) { put(w, &v, 8); }
static void u32(struct w *w, uint32_t v) { put(w, &v, 4); }
static void u16(struct w *w, uint16_t v) { put(w, &v, 2); }
static void hdr(struct w *w, uint32_t type, uint16_t misc)
{
	w->n = 0;
	u32(w, type);
	u16(w, misc);
	u16(w, 0); /* size, fixed by fin() */
}
static void fin(struct w *w)
{
	while (w->n & 7)
		w->b[w->n++] = 0;
	uint16_t sz = (uint16_t)w->n;
	memcpy(w->b + 6, &sz, 2);
}

#define ALL_SAMPLE                                                             \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |           \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |                \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |        \
	 PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |          \
	 PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |                    \
	 PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT_STRUCT |                  \
	 PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |                      \
	 PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |  \
	 PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE |             \
	 PERF_SAMPLE_AUX)

static const struct perf_layout all_lay = {
	.sample_type = ALL_SAMPLE,
	.read_format = RTD_PERF_FORMAT_GROUP | RTD_PERF_FORMAT_TOTAL_TIME_ENABLED |
		       RTD_PERF_FORMAT_TOTAL_TIME_RUNNING | RTD_PERF_FORMAT_ID |
		       RTD_PERF_FORMAT_LOST,
	.branch_sample_type = RTD_PERF_SAMPLE_BRANCH_HW_INDEX,
	.regs_user_nr = 3,
	.regs_intr_nr = 2,
	.sample_id_all = 1,
};

static void build_all(struct w *w)
{
	hdr(w, PERF_RECORD_SAMPLE, 2);
	u64(w, 77);                /* identifier */
	u64(w, 0x401000);          /* ip */
	u32(w, 10); u32(w, 11);    /* pid tid */
	u64(w, 123456789);         /* time */
	u64(w, 0xdead);            /* addr */
	u64(w, 77);                /* id */
	u64(w, 78);                /* stream id */
	u32(w, 1); u32(w, 0);      /* cpu */
	u64(w, 1);                 /* period */
	u64(w, 2); u64(w, 1000); u64(w, 900);        /* read: nr, en, run */
	u64(w, 5); u64(w, 77); u64(w, 0);            /* value id lost */
	u64(w, 6); u64(w, 79); u64(w, 1);
	u64(w, 3); u64(w, 0xffffffffffffff80ull); u64(w, 0x401000); u64(w, 0x401100); /* callchain */
	u32(w, 12); put(w, "raw-data-123", 12);     /* raw: u32 + 12 = 16 */
	u64(w, 1); u64(w, 9); u64(w, 1); u64(w, 2); u64(w, 3); /* branches: nr hw_idx {from to flags} */
	u64(w, 2); u64(w, 100); u64(w, 101); u64(w, 102); /* regs_user abi + 3 */
	u64(w, 16); put(w, "0123456789abcdef", 16); u64(w, 8); /* stack_user */
	u64(w, 0x0003000200000001ull);               /* weight struct */
	u64(w, 0x42);                                /* data_src */
	u64(w, 0x43);                                /* transaction */
	u64(w, 2); u64(w, 200); u64(w, 201);         /* regs_intr */
	u64(w, 0x1000);                              /* phys */
	u64(w, 55);                                  /* cgroup */
	u64(w, 4096);                                /* data page */
	u64(w, 2 << 20);                             /* code page */
	u64(w, 8); put(w, "AUXDATA!", 8);            /* aux */
	fin(w);
}

static void test_sample_all_fields(void **state)
{
	(void)state;
	struct w w;
	build_all(&w);
	struct rtd_perf_sample s;
	size_t off;
	assert_int_equal(perf_record_decode(w.b, w.n, &all_lay, &s, &off), 0);
	assert_int_equal(s.type, PERF_RECORD_SAMPLE);
	assert_int_equal(s.size, w.n);
	assert_int_equal(s.identifier, 77);
	assert_int_equal(s.ip, 0x401000);
	assert_int_equal(s.pid, 10);
	assert_int_equal(s.tid, 11);
	assert_int_equal(s.time, 123456789);
	assert_int_equal(s.addr, 0xdead);
	assert_int_equal(s.stream_id, 78);
	assert_int_equal(s.cpu, 1);
	assert_int_equal(s.period, 1);
	assert_int_equal(s.read.nr, 2);
	assert_int_equal(s.read.time_enabled, 1000);
	assert_int_equal(s.read.time_running, 900);
	assert_int_equal(s.read.values[1].value, 6);
	assert_int_equal(s.read.values[1].id, 79);
	assert_int_equal(s.read.values[1].lost, 1);
	assert_int_equal(s.callchain_nr, 3);
	assert_int_equal(rtd_perf_u64_at(s.callchain, 2), 0x401100);
	assert_int_equal(s.raw_size, 12);
	assert_memory_equal(s.raw, "raw-data-123", 12);
	assert_int_equal(s.branch_nr, 1);
	assert_int_equal(s.branch_hw_idx, 9);
	assert_int_equal(rtd_perf_u64_at(s.branches, 1), 2);
	assert_int_equal(s.regs_user_abi, 2);
	assert_int_equal(s.regs_user_nr, 3);
	assert_int_equal(rtd_perf_u64_at(s.regs_user, 2), 102);
	assert_int_equal(s.stack_user_size, 16);
	assert_memory_equal(s.stack_user, "0123456789abcdef", 16);
	assert_int_equal(s.stack_user_dyn_size, 8);
	assert_int_equal(s.weight_var1, 1);
	assert_int_equal(s.weight_var2, 2);
	assert_int_equal(s.weight_var3, 3);
	assert_int_equal(s.data_src, 0x42);
	assert_int_equal(s.transaction, 0x43);
	assert_int_equal(s.regs_intr_nr, 2);
	assert_int_equal(rtd_perf_u64_at(s.regs_intr, 1), 201);
	assert_int_equal(s.phys_addr, 0x1000);
	assert_int_equal(s.cgroup, 55);
	assert_int_equal(s.data_page_size, 4096);
	assert_int_equal(s.code_page_size, 2 << 20);
	assert_int_equal(s.aux_size, 8);
	assert_memory_equal(s.aux, "AUXDATA!", 8);
	uint64_t id;
	assert_int_equal(perf_record_identifier(w.b, w.n, 1, &id), 0);
	assert_int_equal(id, 77);

	/* every shorter record fails cleanly, with an offset inside it */
	for (size_t cut = 8; cut < w.n; cut += 8) {
		uint16_t sz = (uint16_t)cut;
		uint8_t copy[4096];
		memcpy(copy, w.b, w.n);
		memcpy(copy + 6, &sz, 2);
		int r = perf_record_decode(copy, cut, &all_lay, &s, &off);
		assert_int_equal(r, -RTD_E_TRUNCATED);
		assert_true(off <= cut);
	}
	/* the header's size past the bytes available */
	assert_int_equal(perf_record_decode(w.b, w.n - 8, &all_lay, &s, &off), -RTD_E_TRUNCATED);
}

static void test_sample_bad_counts(void **state)
{
	(void)state;
	struct perf_layout lay = {.sample_type = PERF_SAMPLE_CALLCHAIN};
	struct w w;
	struct rtd_perf_sample s;
	size_t off;
	hdr(&w, PERF_RECORD_SAMPLE, 0);
	u64(&w, 0x2000000000000001ull); /* nr * 8 overflows */
	u64(&w, 1);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &lay, &s, &off), -RTD_E_TRUNCATED);
	assert_int_equal(off, 16);

	lay.sample_type = PERF_SAMPLE_READ;
	lay.read_format = RTD_PERF_FORMAT_GROUP;
	hdr(&w, PERF_RECORD_SAMPLE, 0);
	u64(&w, RTD_PERF_MAX_READ_VALUES + 1);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &lay, &s, &off), -RTD_E_CAP);

	lay.sample_type = PERF_SAMPLE_RAW;
	hdr(&w, PERF_RECORD_SAMPLE, 0);
	u32(&w, 1000);
	u32(&w, 0);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &lay, &s, &off), -RTD_E_TRUNCATED);

	/* a header claiming fewer than 8 bytes */
	hdr(&w, PERF_RECORD_SAMPLE, 0);
	uint16_t four = 4;
	memcpy(w.b + 6, &four, 2);
	assert_int_equal(perf_record_decode(w.b, 8, &lay, &s, &off), -RTD_E_TRUNCATED);
}

#define ID_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)
static const struct perf_layout id_lay = {.sample_type = ID_TYPE, .sample_id_all = 1};

static void trailer(struct w *w, uint64_t id)
{
	u32(w, 1); u32(w, 2);  /* pid tid */
	u64(w, 999);           /* time */
	u32(w, 3); u32(w, 0);  /* cpu */
	u64(w, id);
}

static void test_other_records(void **state)
{
	(void)state;
	struct w w;
	struct rtd_perf_sample s;
	size_t off;

	hdr(&w, PERF_RECORD_LOST, 0);
	u64(&w, 5); u64(&w, 1234);
	trailer(&w, 5);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), 0);
	assert_int_equal(s.rec.lost.id, 5);
	assert_int_equal(s.rec.lost.lost, 1234);
	assert_int_equal(s.time, 999);
	assert_int_equal(s.cpu, 3);
	assert_int_equal(s.pid, 1);
	uint64_t id;
	assert_int_equal(perf_record_identifier(w.b, w.n, 1, &id), 0);
	assert_int_equal(id, 5);

	hdr(&w, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	u32(&w, 42); u32(&w, 43);
	put(&w, "bash\0\0\0\0", 8);
	trailer(&w, 6);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), 0);
	assert_string_equal(s.rec.comm.comm, "bash");
	assert_int_equal(s.rec.comm.tid, 43);

	/* a comm without its NUL inside the body */
	hdr(&w, PERF_RECORD_COMM, 0);
	u32(&w, 42); u32(&w, 43);
	put(&w, "abcdefgh", 8);
	trailer(&w, 6);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), -RTD_E_TRUNCATED);

	hdr(&w, PERF_RECORD_MMAP2, 0);
	u32(&w, 7); u32(&w, 8);
	u64(&w, 0x400000); u64(&w, 0x1000); u64(&w, 0);
	u32(&w, 8); u32(&w, 1); u64(&w, 1234); u64(&w, 1); /* maj min ino gen */
	u32(&w, 5); u32(&w, 2);                             /* prot flags */
	put(&w, "/bin/true\0\0\0\0\0\0\0", 16);
	trailer(&w, 6);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), 0);
	assert_int_equal(s.rec.mmap.ino, 1234);
	assert_int_equal(s.rec.mmap.prot, 5);
	assert_string_equal(s.rec.mmap.filename, "/bin/true");

	hdr(&w, PERF_RECORD_MMAP2, RTD_PERF_MISC_MMAP_BUILD_ID);
	u32(&w, 7); u32(&w, 8);
	u64(&w, 0x400000); u64(&w, 0x1000); u64(&w, 0);
	w.b[w.n++] = 20; w.b[w.n++] = 0; u16(&w, 0);
	put(&w, "0123456789abcdefghij", 20);
	u32(&w, 5); u32(&w, 2);
	put(&w, "/x\0\0\0\0\0\0", 8);
	trailer(&w, 6);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), 0);
	assert_int_equal(s.rec.mmap.build_id_size, 20);
	assert_memory_equal(s.rec.mmap.build_id, "0123456789abcdefghij", 20);

	hdr(&w, PERF_RECORD_FORK, 0);
	u32(&w, 1); u32(&w, 2); u32(&w, 3); u32(&w, 4); u64(&w, 55);
	trailer(&w, 6);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), 0);
	assert_int_equal(s.rec.task.ptid, 4);
	assert_int_equal(s.rec.task.time, 55);

	hdr(&w, PERF_RECORD_LOST_SAMPLES, 0);
	u64(&w, 17);
	trailer(&w, 6);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), 0);
	assert_int_equal(s.rec.lost.lost, 17);

	hdr(&w, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT);
	u32(&w, 9); u32(&w, 10);
	trailer(&w, 6);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), 0);
	assert_int_equal(s.rec.sw.next_prev_tid, 10);

	hdr(&w, PERF_RECORD_NAMESPACES, 0);
	u32(&w, 1); u32(&w, 1); u64(&w, 2);
	u64(&w, 3); u64(&w, 4); u64(&w, 5); u64(&w, 6);
	trailer(&w, 6);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), 0);
	assert_int_equal(s.rec.ns.nr, 2);
	assert_int_equal(rtd_perf_u64_at(s.rec.ns.ns, 3), 6);

	hdr(&w, PERF_RECORD_KSYMBOL, 0);
	u64(&w, 0xffffffffa0000000ull); u32(&w, 100); u16(&w, 1); u16(&w, 0);
	put(&w, "bpf_prog_x\0\0\0\0\0\0", 16);
	trailer(&w, 6);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), 0);
	assert_string_equal(s.rec.ksymbol.name, "bpf_prog_x");

	hdr(&w, PERF_RECORD_TEXT_POKE, 0);
	u64(&w, 0x1000); u16(&w, 2); u16(&w, 3);
	put(&w, "abcde\0\0\0", 8);
	trailer(&w, 6);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), 0);
	assert_memory_equal(s.rec.poke.bytes, "abcde", 5);

	hdr(&w, PERF_RECORD_CGROUP, 0);
	u64(&w, 88);
	put(&w, "/a/b\0\0\0\0", 8);
	trailer(&w, 6);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), 0);
	assert_string_equal(s.rec.cgroup.path, "/a/b");

	hdr(&w, PERF_RECORD_THROTTLE, 0);
	u64(&w, 1); u64(&w, 2); u64(&w, 3);
	trailer(&w, 6);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), 0);
	assert_int_equal(s.rec.throttle.stream_id, 3);

	hdr(&w, RTD_PERF_RECORD_CALLCHAIN_DEFERRED, 0);
	u64(&w, 11); u64(&w, 1); u64(&w, 0x401000);
	trailer(&w, 6);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), 0);
	assert_int_equal(s.rec.deferred.cookie, 11);
	assert_int_equal(rtd_perf_u64_at(s.rec.deferred.ips, 0), 0x401000);

	/* unknown type: header and trailer only */
	hdr(&w, 200, 0);
	u64(&w, 1);
	trailer(&w, 6);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), 0);
	assert_int_equal(s.time, 999);
	assert_string_equal(rtd_perf_record_name(200), "UNKNOWN");
	assert_string_equal(rtd_perf_record_name(PERF_RECORD_LOST), "LOST");

	/* a trailer larger than the record */
	hdr(&w, PERF_RECORD_SWITCH, 0);
	u64(&w, 1);
	fin(&w);
	assert_int_equal(perf_record_decode(w.b, w.n, &id_lay, &s, &off), -RTD_E_TRUNCATED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_all_fields),
		cmocka_unit_test(test_sample_bad_counts),
		cmocka_unit_test(test_other_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
