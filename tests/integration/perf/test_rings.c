/* SPDX-License-Identifier: MIT */
/*
 * A monitor's rings at their default size are perf's default size: what
 * perf record and perf trace map per CPU without -m (kernel.perf_event_
 * mlock_kb less a page, in pages, rounded down to a power of two: 128
 * data pages with the kernel's default 516 KiB; Debian's perf 6.1 mapped
 * 528384 bytes per CPU here, traced with strace). Checked on what is
 * really mapped: this process's perf_event mappings in /proc/self/maps.
 * (rtdiag's library default was 64 pages, half of perf's: system-wide
 * tracepoints lost events where perf lost none.)
 */
#include "perf_test.h"

/* perf's rule, written here again rather than taken from the library */
static unsigned perf_default_pages(void)
{
	long page = sysconf(_SC_PAGESIZE), kb = 512 + page / 1024;
	FILE *f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "r");
	if (f) {
		if (fscanf(f, "%ld", &kb) != 1)
			kb = 512 + page / 1024;
		fclose(f);
	}
	long pages = (kb - page / 1024) * 1024 / page;
	unsigned p = 1;
	while ((long)p * 2 <= pages)
		p *= 2;
	return p;
}

int main(void)
{
	struct rtd_perf_opts o = {.sz = sizeof(o)};
	struct rtd_perf_monitor *m = pt_monitor_switch(&o);
	unsigned want = perf_default_pages();
	long page = sysconf(_SC_PAGESIZE);
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		FAIL("/proc/self/maps: %s", strerror(errno));
	char line[512];
	unsigned rings = 0, bad = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (!strstr(line, "[perf_event]") ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		rings++;
		if ((hi - lo) / (unsigned long)page != want + 1u) {
			printf("ring mapped with %lu pages, perf maps %u + 1: %s",
			       (hi - lo) / (unsigned long)page, want, line);
			bad++;
		}
	}
	fclose(f);
	struct rtd_perf_stats st = {.sz = sizeof(st)};
	rtd_perf_monitor_stats(m, &st);
	if (!rings)
		FAIL("no perf_event ring mapping in /proc/self/maps");
	if (bad)
		FAIL("%u of %u rings are not perf's default size", bad, rings);
	if (st.ring_pages != want || rtd_perf_default_ring_pages() != want)
		FAIL("stats say %u pages, rtd_perf_default_ring_pages %u, perf %u",
		     st.ring_pages, rtd_perf_default_ring_pages(), want);
	OK("%u rings of %u data pages (+1), as perf maps them", rings, want);
	rtd_perf_monitor_free(m);
	printf("PASS\n");
	return 0;
}
