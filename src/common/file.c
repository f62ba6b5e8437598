/* SPDX-License-Identifier: MIT */
/* file.c - small whole-file reads (procfs, sysfs, tracefs). */
#include "common/file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

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
