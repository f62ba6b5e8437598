/* SPDX-License-Identifier: MIT */
/* file.c - small whole-file reads (procfs, sysfs, tracefs). */
#include "common/file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rtdiag/common.h"

int rtd_read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t got = 0;
	while (got + 1 < len) {
		ssize_t n = read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = 0;
	return (int)got;
}

int rtd_proc_stat(pid_t pid, char *state, unsigned long long *start)
{
	struct rtd_pstat st;
	int rc = rtd_pstat_read(NULL, (int)pid, 0, &st);
	if (rc)
		return rc;
	if (state)
		*state = st.state;
	if (start)
		*start = st.start_ticks;
	return 0;
}

bool rtd_proc_alive(pid_t pid, unsigned long long start)
{
	char st;
	unsigned long long t;
	if (pid <= 0 || rtd_proc_stat(pid, &st, &t))
		return false;
	return st != 'Z' && st != 'X' && (!start || t == start);
}

bool rtd_proc_wait_gone(pid_t pid, unsigned long long start, int ms)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	/* the pidfd is of the process that has the pid now: checked after */
	if (fd >= 0 && rtd_proc_alive(pid, start)) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		while (poll(&p, 1, ms) < 0 && errno == EINTR)
			;
	}
	for (int waited = 0; fd < 0 && waited < ms && rtd_proc_alive(pid, start); waited += 10) {
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL);
	}
	if (fd >= 0)
		close(fd);
	return !rtd_proc_alive(pid, start);
}
