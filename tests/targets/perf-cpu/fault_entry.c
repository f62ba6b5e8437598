/* fault_entry: a CPU profile's user frame that is no return address.
 * entry_fn() starts a page of its own; each round drops that page from
 * the process (MADV_DONTNEED on the program's own text: the file's page
 * stays in the page cache) and calls entry_fn(), whose first instruction
 * then faults. A sample taken in the fault handler has kernel frames and,
 * as its first user frame, the interrupted address: entry_fn's first byte,
 * exactly. A profiler that takes it for a return address (one byte back)
 * names whatever lies before entry_fn.
 *
 * usage: fault_entry [rounds=N]   (default 200000) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline, aligned(4096))) int entry_fn(int x)
{
	return x * 3 + 1;
}

/* a page of its own for main too: the dropped page holds entry_fn alone,
 * and madvise() returns into a page still there */
__attribute__((aligned(4096))) int main(int argc, char **argv)
{
	long rounds = 200000;
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "rounds=", 7))
			rounds = atol(argv[i] + 7);
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t fn = (uintptr_t)entry_fn, at = fn & ~(uintptr_t)(pg - 1);
	if (at != fn || (uintptr_t)main - at < (uintptr_t)pg) {
		fprintf(stderr, "fault_entry: entry_fn at 0x%jx does not have a page of its own\n",
			(uintmax_t)fn);
		return 1;
	}
	void *page = (void *)at;
	volatile int v = 0;
	for (long r = 0; r < rounds; r++) {
		if (madvise(page, (size_t)pg, MADV_DONTNEED)) {
			perror("fault_entry: madvise");
			return 1;
		}
		v = entry_fn(v);
	}
	printf("fault_entry: %ld rounds (%d)\n", rounds, v);
	return 0;
}
