/* SPDX-License-Identifier: MIT */
/*
 * maps.c - rtdiag's one reader of /proc/PID/maps (common/file.h): the
 * line parser (fuzzed, fuzz/targets/sym_text.c) and a streaming reader
 * that hands each line to a callback as the kernel gives it, in a buffer
 * of RTD_MAPS_LINE_MAX bytes however long the file (a JIT's process maps
 * tens of thousands of regions); rtd_lines_read_fd(), the piecewise read
 * of whole lines it and the kallsyms reader (kallsyms.c) share.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file.h"
#include "common/textrd.h"
#include "rtdiag/common.h"

struct maps_cb {
	rtd_maps_fn fn;
	void *ctx;
};

/* "start-end perms offset maj:min inode   path" */
static int maps_line(const char *s, size_t n, size_t line, void *ctx)
{
	struct maps_cb *m = ctx;
	(void)line;
	struct rtd_maps_entry e = {0};
	uint64_t maj, min;
	size_t i = 0;
	if (!hex_field(s, n, &i, &e.start) || !skip_char(s, n, &i, '-') ||
	    !hex_field(s, n, &i, &e.end) || !skip_char(s, n, &i, ' ') || i + 4 > n)
		return -RTD_E_FORMAT;
	memcpy(e.perms, s + i, 4);
	e.exec = s[i + 2] == 'x';
	i += 4;
	if (!skip_char(s, n, &i, ' ') || !hex_field(s, n, &i, &e.pgoff) ||
	    !skip_char(s, n, &i, ' ') || !hex_field(s, n, &i, &maj) ||
	    !skip_char(s, n, &i, ':') || !hex_field(s, n, &i, &min) ||
	    !skip_char(s, n, &i, ' ') || !dec_field(s, n, &i, &e.ino) ||
	    e.end < e.start || maj > 0xfff || min > 0xfffff)
		return -RTD_E_FORMAT;
	e.dev_major = (unsigned)maj;
	e.dev_minor = (unsigned)min;
	skip_spaces(s, n, &i);
	e.path = s + i;
	e.path_len = n - i;
	return m->fn(&e, m->ctx);
}

/* The lines of buf, counted on from *lineno. */
static int parse_lines(const char *buf, size_t len, void *ctx, size_t *lineno)
{
	return each_line(buf, len, lineno, maps_line, ctx);
}

int rtd_maps_parse(const char *buf, size_t len, rtd_maps_fn fn, void *ctx,
		   size_t *bad_line)
{
	struct maps_cb m = {fn, ctx};
	size_t lineno = 0;
	int rc = parse_lines(buf, len, &m, &lineno);
	*bad_line = rc == -RTD_E_FORMAT ? lineno : 0;
	return rc;
}

int rtd_lines_read_fd(int fd, size_t max_line, rtd_lines_fn parse, void *ctx,
		      size_t *bad_line)
{
	char *buf = malloc(max_line);
	size_t have = 0, lineno = 0;
	int rc = 0;
	*bad_line = 0;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r = read(fd, buf + have, max_line - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			break;
		}
		if (!r && !have)
			break;
		have += (size_t)r;
		/* whole lines now, a cut one kept for the next read; at the
		 * end, the last line without its '\n' */
		const char *nl = r ? memrchr(buf, '\n', have) : buf + have - 1;
		if (!nl && have < max_line)
			continue;
		if (!nl) {
			rc = -RTD_E_CAP; /* a line longer than the buffer */
			lineno++;
			break;
		}
		size_t used = (size_t)(nl - buf) + 1;
		rc = parse(buf, used, ctx, &lineno);
		if (rc || !r)
			break;
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	free(buf);
	if (rc == -RTD_E_FORMAT || rc == -RTD_E_CAP)
		*bad_line = lineno;
	return rc;
}

int rtd_maps_read_fd(int fd, rtd_maps_fn fn, void *ctx, size_t *bad_line)
{
	struct maps_cb m = {fn, ctx};
	return rtd_lines_read_fd(fd, RTD_MAPS_LINE_MAX, parse_lines, &m, bad_line);
}

int rtd_proc_maps_open(pid_t pid)
{
	char path[32];
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int rtd_proc_maps(pid_t pid, rtd_maps_fn fn, void *ctx, size_t *bad_line)
{
	*bad_line = 0;
	int fd = rtd_proc_maps_open(pid);
	if (fd < 0)
		return fd;
	int rc = rtd_maps_read_fd(fd, fn, ctx, bad_line);
	close(fd);
	return rc;
}
