/* SPDX-License-Identifier: MIT */
/*
 * A live perf source cut twice at a time ends only when its process does.
 *
 * The monitor keeps a stop that comes while run() drains the rings after
 * its loop, and the next run() returns at once. The live source's ticker
 * stops the monitor at each cut; two cuts close together can end one run
 * and the next, and the runner took a run that ended with no tick of its
 * own for the end of the processes: the source ended while they ran. So
 * the runner asks the monitor whether a run ended on a stop.
 *
 * A child that writes all along (`yes`, its system calls recorded by a
 * live source with 1 ms windows) and ITERS rounds of two cuts and a pull
 * of what came: the source must never end while the child runs. A race,
 * not a certainty: with the runner's old test it ended in 3 of 3 runs
 * (after 22,000 to 213,000 rounds, load 10-12). No time is asserted.
 */
#include <signal.h>

#include "perf_test.h"
#include "rtdiag/source.h"

#define ITERS 1000000ul

int main(void)
{
	pt_require();
	pid_t c;
	rtd_perf_syscall_recorder *r;
	rtd_source *s = pt_yes_calls_source(1, &c, &r);
	unsigned long i, recs = 0;
	int rc = RTD_SOURCE_IDLE;
	for (i = 0; i < ITERS && (rc == 1 || rc == RTD_SOURCE_IDLE); i++) {
		rtd_perf_source_live_cut(s, NULL);
		rtd_perf_source_live_cut(s, NULL);
		const struct rtd_record *rec;
		for (int k = 0; k < 64 && (rc = rtd_source_next(s, &rec)) == 1; k++)
			recs++;
	}
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	if (rc == 0)
		FAIL("the source ended while its process ran, after %lu rounds", i);
	if (rc < 0)
		FAIL("the source failed after %lu rounds: %s", i, rtd_strerror(rc));
	OK("%lu rounds of two cuts, %lu records: the source ran as long as its process", i,
	   recs);
	rtd_source_free(s);
	rtd_perf_syscall_recorder_free(r);
	return 0;
}
