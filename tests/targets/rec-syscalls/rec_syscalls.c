/* SPDX-License-Identifier: MIT */
/*
 * rec_syscalls - a program whose system calls are known, for
 * `rtdiag record --syscalls` (tests/integration/record/test_syscalls.sh):
 * ROUNDS rounds (argv[1], default 10) of
 *   openat("/nonexistent/rtd-rec-syscalls")  -> -1 ENOENT
 *   getppid()
 *   write(/dev/null, 4096 bytes)              -> 4096
 *   clock_nanosleep(10 ms)                    -> 0, >= 10 ms
 *   pipe2 write then read of 8 bytes, close both ends
 *   close(-1)                                 -> -1 EBADF
 * through the C library's wrappers, one thread.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	static char buf[4096];
	int null = open("/dev/null", O_WRONLY);
	if (null < 0)
		return 1;
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < rounds; i++) {
		if (open("/nonexistent/rtd-rec-syscalls", O_RDONLY) >= 0)
			return 1;
		(void)getppid();
		if (write(null, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
		struct timespec t = {0, 10 * 1000 * 1000};
		clock_nanosleep(CLOCK_MONOTONIC, 0, &t, NULL);
		int p[2];
		if (pipe2(p, O_CLOEXEC))
			return 1;
		if (write(p[1], "rtd-rec!", 8) != 8 || read(p[0], buf, 8) != 8)
			return 1;
		close(p[0]);
		close(p[1]);
		(void)close(-1);
	}
	return 0;
}
