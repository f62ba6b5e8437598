/* SPDX-License-Identifier: MIT */
/*
 * The off-CPU pairing (src/perf/offcpu.c) on synthetic switch records:
 * a switch-out and the thread's next switch-in make one wait of their
 * time difference, with the switch-out's stack node and state; threads
 * interleave; what cannot be paired is counted, never invented; memory
 * is one pending entry per thread; prev_state values as the kernel
 * writes them.
 */
#include "test_util.h"

#include "perf/offcpu.h"
#include "rtdiag/common.h"

static void test_state_of(void **state)
{
	(void)state;
	assert_int_equal(offcpu_state_of(0x001), OFFCPU_SLEEP);   /* S */
	assert_int_equal(offcpu_state_of(0x002), OFFCPU_DISK);    /* D */
	assert_int_equal(offcpu_state_of(0x000), OFFCPU_PREEMPTED); /* R */
	assert_int_equal(offcpu_state_of(0x100), OFFCPU_PREEMPTED); /* R+ */
	assert_int_equal(offcpu_state_of(0x004), OFFCPU_OTHER);   /* T */
	assert_int_equal(offcpu_state_of(0x008), OFFCPU_OTHER);   /* t */
	assert_int_equal(offcpu_state_of(0x040), OFFCPU_OTHER);   /* P */
	assert_int_equal(offcpu_state_of(0x080), OFFCPU_OTHER);   /* I */
	assert_int_equal(offcpu_state_of(0x010), OFFCPU_DEAD);    /* X */
	assert_int_equal(offcpu_state_of(0x020), OFFCPU_DEAD);    /* Z */
	assert_string_equal(offcpu_state_name(OFFCPU_SLEEP), "S");
	assert_string_equal(offcpu_state_name(OFFCPU_DISK), "D");
	assert_string_equal(offcpu_state_name(OFFCPU_PREEMPTED), "R");
	assert_string_equal(offcpu_state_name(OFFCPU_OTHER), "T");
}

static void test_pairs(void **state)
{
	(void)state;
	struct offcpu o;
	struct offcpu_pending w;
	uint64_t d;
	offcpu_init(&o, 0);
	/* two threads interleaved: 10 out@100 in@350, 11 out@200 in@260 */
	assert_int_equal(offcpu_out(&o, 10, 100, 7, OFFCPU_SLEEP), 0);
	assert_int_equal(offcpu_out(&o, 11, 200, 9, OFFCPU_DISK), 0);
	assert_true(offcpu_in(&o, 11, 260, &w, &d));
	assert_int_equal(d, 60);
	assert_int_equal(w.node, 9);
	assert_int_equal(w.state, OFFCPU_DISK);
	assert_true(offcpu_in(&o, 10, 350, &w, &d));
	assert_int_equal(d, 250);
	assert_int_equal(w.node, 7);
	assert_int_equal(w.state, OFFCPU_SLEEP);
	/* a second switch-in of the same wait is not one */
	assert_false(offcpu_in(&o, 10, 400, &w, &d));
	/* a switch-in of a thread never seen leaving (it left before) */
	assert_false(offcpu_in(&o, 12, 410, &w, &d));
	assert_int_equal(o.waits, 2);
	assert_int_equal(o.unpaired, 2);
	assert_int_equal(o.count[OFFCPU_SLEEP], 1);
	assert_int_equal(o.ns[OFFCPU_SLEEP], 250);
	assert_int_equal(o.ns[OFFCPU_DISK], 60);
	/* the same thread again: a new wait, the entry reused */
	assert_int_equal(offcpu_out(&o, 10, 500, 3, OFFCPU_PREEMPTED), 0);
	assert_true(offcpu_in(&o, 10, 505, &w, &d));
	assert_int_equal(d, 5);
	assert_int_equal(o.ns[OFFCPU_PREEMPTED], 5);
	assert_int_equal(o.tids.count, 2); /* 10 and 11: one entry each */
	offcpu_free(&o);
}

static void test_lost_and_exit(void **state)
{
	(void)state;
	struct offcpu o;
	struct offcpu_pending w;
	uint64_t d;
	offcpu_init(&o, 0);
	/* the switch-in between two switch-outs was lost: the newer wins */
	offcpu_out(&o, 5, 100, 1, OFFCPU_SLEEP);
	offcpu_out(&o, 5, 300, 2, OFFCPU_SLEEP);
	assert_int_equal(o.replaced, 1);
	assert_true(offcpu_in(&o, 5, 310, &w, &d));
	assert_int_equal(d, 10);
	assert_int_equal(w.node, 2);
	/* an exiting thread's last switch-out (X) is not kept ... */
	offcpu_out(&o, 6, 400, 4, OFFCPU_SLEEP);
	offcpu_out(&o, 6, 450, 4, offcpu_state_of(0x10));
	assert_false(offcpu_in(&o, 6, 900, &w, &d));
	/* ... nor one pending at its EXIT record */
	offcpu_out(&o, 7, 400, 4, OFFCPU_SLEEP);
	offcpu_exit(&o, 7);
	assert_false(offcpu_in(&o, 7, 900, &w, &d));
	assert_int_equal(o.tids.count, 1); /* 5 only */
	/* a switch-in timed before its switch-out (clock skew) is 0, not
	 * a huge unsigned delay */
	offcpu_out(&o, 5, 1000, 1, OFFCPU_SLEEP);
	assert_true(offcpu_in(&o, 5, 999, &w, &d));
	assert_int_equal(d, 0);
	offcpu_free(&o);
}

static void test_cap_and_walk(void **state)
{
	(void)state;
	struct offcpu o;
	offcpu_init(&o, 3);
	for (uint32_t t = 1; t <= 3; t++)
		assert_int_equal(offcpu_out(&o, t, 10 * t, t, OFFCPU_SLEEP), 0);
	/* a fourth thread is past the cap: dropped and counted */
	assert_int_equal(offcpu_out(&o, 4, 40, 4, OFFCPU_SLEEP), -RTD_E_CAP);
	assert_int_equal(o.dropped, 1);
	/* the pending ones, each once, their node changeable (a take
	 * rebuilds the call tree) */
	size_t it = 0;
	uint32_t tid, seen = 0;
	struct offcpu_pending *p;
	while (offcpu_next(&o, &it, &tid, &p)) {
		assert_int_equal(p->node, tid);
		assert_int_equal(p->out_ns, 10 * tid);
		seen |= 1u << tid;
		p->node = 100 + tid;
	}
	assert_int_equal(seen, 0xe);
	struct offcpu_pending w;
	uint64_t d;
	assert_true(offcpu_in(&o, 2, 70, &w, &d));
	assert_int_equal(w.node, 102);
	assert_int_equal(d, 50);
	/* a paired thread is no longer pending */
	it = 0;
	seen = 0;
	while (offcpu_next(&o, &it, &tid, &p))
		seen |= 1u << tid;
	assert_int_equal(seen, 0xa);
	offcpu_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_of),
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_lost_and_exit),
		cmocka_unit_test(test_cap_and_walk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
