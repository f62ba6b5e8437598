/* SPDX-License-Identifier: MIT */
/*
 * perf_target - a program for the perf tests to observe.
 *
 *   perf_target call N        calls rtd_target_func(i, "call-i") N times
 *   perf_target open PATH...  open()s and closes each PATH through libc
 *   perf_target flood N [DELAY_MS | sig]
 *                             N getppid() system calls (after a delay, or
 *                             with "sig" after "ready" and SIGUSR1)
 *   perf_target work MS N [DELAY_MS | sig]
 *                             (after sleeping DELAY_MS, or with "sig" after
 *                             printing "ready" and waiting for SIGUSR1)
 *                             ~MS ms of CPU work, then N 200us sleeps, and
 *                             touches 8 MiB of fresh memory (page faults)
 *   perf_target forkflood N   N getppid() calls, and N in a child it forks
 *   perf_target spin MS       busy loop for MS ms of wall time
 *
 * Built without PIE, so its text segment's address differs from its file
 * offset: a uprobe placed at the symbol's address instead of its file
 * offset misses.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile int rtd_target_sink;

__attribute__((noinline, used)) int rtd_target_func(int n, const char *s)
{
	rtd_target_sink += n + (int)strlen(s);
	__asm__ volatile("" ::: "memory");
	return n * 2;
}

/* Before the work: sleep DELAY_MS, or with "sig" print "ready" and wait for
 * SIGUSR1 (a test attaches what observes this program meanwhile, and only
 * then lets the work begin: nothing of it is missed by a late attach).
 * Returns 0, or -1 when the wait failed. */
static int delay_or_wait(const char *arg)
{
	if (strcmp(arg, "sig")) {
		long d = atol(arg);
		struct timespec ts = {d / 1000, (d % 1000) * 1000000};
		nanosleep(&ts, NULL);
		return 0;
	}
	sigset_t set;
	int sig;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready\n");
	fflush(stdout);
	return sigwait(&set, &sig) ? -1 : 0;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: perf_target call N | open PATH... | flood N | forkflood N | work MS N | spin MS\n");
		return 2;
	}
	if (!strcmp(argv[1], "call")) {
		int n = atoi(argv[2]);
		char buf[32];
		for (int i = 0; i < n; i++) {
			snprintf(buf, sizeof(buf), "call-%d", i);
			rtd_target_func(i, buf);
		}
	} else if (!strcmp(argv[1], "open")) {
		for (int i = 2; i < argc; i++) {
			int fd = open(argv[i], O_RDONLY);
			if (fd >= 0)
				close(fd);
		}
	} else if (!strcmp(argv[1], "flood")) {
		long n = atol(argv[2]);
		if (argc > 3 && delay_or_wait(argv[3]))
			return 1;
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
	} else if (!strcmp(argv[1], "forkflood")) {
		/* N getppid() calls here and N in a child */
		long n = atol(argv[2]);
		pid_t k = fork();
		if (k < 0)
			return 1;
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
		if (!k)
			_exit(0);
		int st = 0;
		while (waitpid(k, &st, 0) < 0 && errno == EINTR)
			;
		return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
	} else if (!strcmp(argv[1], "work") && argc >= 4) {
		double ms = atof(argv[2]);
		int sleeps = atoi(argv[3]);
		if (argc > 4 && delay_or_wait(argv[4]))
			return 1;
		/* fixed work, not fixed time: task-clock is then comparable */
		unsigned long iters = (unsigned long)(ms * 300000);
		for (unsigned long i = 0; i < iters; i++)
			rtd_target_sink += (int)(i * 2654435761u);
		for (int i = 0; i < sleeps; i++) {
			struct timespec ts = {0, 200000};
			nanosleep(&ts, NULL);
		}
		size_t len = 8u << 20;
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			for (size_t i = 0; i < len; i += 4096)
				p[i] = 1;
			munmap(p, len);
		}
	} else if (!strcmp(argv[1], "spin")) {
		double end = now_ms() + atof(argv[2]);
		while (now_ms() < end)
			rtd_target_sink++;
	} else {
		return 2;
	}
	return 0;
}
