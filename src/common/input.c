/* SPDX-License-Identifier: MIT */
/* input.c - a file or a buffer, read in pieces (input.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/input.h"
#include "rtdiag/source.h"

int rtd_input_open(rtd_input *in, const char *path)
{
	memset(in, 0, sizeof(*in));
	in->buf = malloc(RTD_INPUT_CHUNK);
	if (!in->buf)
		return -ENOMEM;
	in->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		int e = -errno;
		free(in->buf);
		in->buf = NULL;
		return e;
	}
	return 0;
}

int rtd_input_mem(rtd_input *in, const void *mem, size_t len)
{
	memset(in, 0, sizeof(*in));
	in->fd = -1;
	in->mem = mem;
	in->len = len;
	return 0;
}

int rtd_input_from(rtd_input *in, const char *path, const void *mem, size_t len)
{
	return path ? rtd_input_open(in, path) : rtd_input_mem(in, mem, len);
}

int rtd_input_setup(rtd_input *in, const char *path, const void *mem, size_t len, void *dst,
		    size_t dst_size, const void *opts, size_t known)
{
	in->fd = -1;
	int rc = rtd_opts_copy(dst, dst_size, opts, known);
	return rc < 0 ? rc : rtd_input_from(in, path, mem, len);
}

int rtd_input_reader(rtd_input *in, int64_t (*read)(void *ctx, void *buf, size_t len),
		     void *ctx)
{
	memset(in, 0, sizeof(*in));
	in->fd = -1;
	in->buf = malloc(RTD_INPUT_CHUNK);
	if (!in->buf)
		return -ENOMEM;
	in->read = read;
	in->read_ctx = ctx;
	return 0;
}

void rtd_input_close(rtd_input *in)
{
	if (in->fd >= 0)
		close(in->fd);
	in->fd = -1;
	free(in->buf);
	in->buf = NULL;
}

/* A stream read in order, as rtd_input_pread() at its position. */
static int64_t read_on(rtd_input *in, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		int64_t r;
		if (in->read) {
			r = in->read(in->read_ctx, (uint8_t *)buf + got, len - got);
		} else {
			r = read(in->fd, (uint8_t *)buf + got, len - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				r = -errno;
		}
		if (r < 0)
			return r;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	in->pos += got;
	return (int64_t)got;
}

int64_t rtd_input_pread(rtd_input *in, void *buf, size_t len, uint64_t off)
{
	/* a stream (a reader function, a pipe): only where it stands */
	if (in->read)
		return off == in->pos ? read_on(in, buf, len) : -ESPIPE;
	if (in->fd < 0) {
		if (off >= in->len)
			return 0;
		size_t n = in->len - (size_t)off < len ? in->len - (size_t)off : len;
		memcpy(buf, in->mem + off, n);
		return (int64_t)n;
	}
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(in->fd, (uint8_t *)buf + got, len - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == ESPIPE && !got)
			return off == in->pos ? read_on(in, buf, len) : -ESPIPE;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (int64_t)got;
}

int64_t rtd_input_next(rtd_input *in, const uint8_t **p)
{
	if (in->read) {
		int64_t n = in->read(in->read_ctx, in->buf, RTD_INPUT_CHUNK);
		if (n > 0) {
			*p = in->buf;
			in->pos += (uint64_t)n;
		}
		return n;
	}
	if (in->fd < 0) {
		if (in->pos >= in->len)
			return 0;
		size_t n = in->len - (size_t)in->pos;
		if (n > RTD_INPUT_CHUNK)
			n = RTD_INPUT_CHUNK;
		*p = in->mem + in->pos;
		in->pos += n;
		return (int64_t)n;
	}
	uint64_t at = in->pos;
	int64_t n = rtd_input_pread(in, in->buf, RTD_INPUT_CHUNK, at);
	if (n > 0) {
		*p = in->buf;
		in->pos = at + (uint64_t)n; /* a pipe's read moved it already */
	}
	return n;
}

void rtd_input_rewind(rtd_input *in)
{
	in->pos = 0;
}
