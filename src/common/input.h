/* SPDX-License-Identifier: MIT */
/*
 * input.h - the bytes of a file source: a file read in pieces, or a
 * buffer in memory, read from the start again when a source needs two
 * passes, or at any offset (a decoder's read-again hook).
 */
#ifndef RTD_COMMON_INPUT_H
#define RTD_COMMON_INPUT_H

#include <stddef.h>
#include <stdint.h>

#define RTD_INPUT_CHUNK (64u << 10) /* bytes handed out per read */

typedef struct rtd_input {
	int fd;               /* -1 for memory */
	const uint8_t *mem;   /* the buffer (borrowed) */
	size_t len;
	uint64_t pos;         /* next offset to read */
	uint8_t *buf;         /* RTD_INPUT_CHUNK bytes for file reads */
	/* a stream read by the caller's function (a socket): once, in order */
	int64_t (*read)(void *ctx, void *buf, size_t len);
	void *read_ctx;
} rtd_input;

/* Open @path. Returns 0 or -errno. */
int rtd_input_open(rtd_input *in, const char *path);
/* Read @len bytes at @mem (borrowed). Returns 0 or -ENOMEM. */
int rtd_input_mem(rtd_input *in, const void *mem, size_t len);
/* @path when not NULL, else the @len bytes at @mem. Returns 0 or -errno. */
int rtd_input_from(rtd_input *in, const char *path, const void *mem, size_t len);
/* What a file source's constructor does first: copy and check its
 * options (rtd_opts_copy() into @dst of @dst_size, @known bytes known),
 * then open its input (rtd_input_from()). Returns 0 or the error; on an
 * error @in is left closed. */
int rtd_input_setup(rtd_input *in, const char *path, const void *mem, size_t len, void *dst,
		    size_t dst_size, const void *opts, size_t known);
/* Bytes from @read(@ctx, buf, len) (their count, 0 at the end, or
 * -errno): read once, in order; rtd_input_pread() and a rewind are not
 * possible. Returns 0 or -ENOMEM. */
int rtd_input_reader(rtd_input *in, int64_t (*read)(void *ctx, void *buf, size_t len),
		     void *ctx);
void rtd_input_close(rtd_input *in);
/* The next bytes: *@p points at up to RTD_INPUT_CHUNK of them, valid
 * until the next call. Returns their count, 0 at the end, or -errno. */
int64_t rtd_input_next(rtd_input *in, const uint8_t **p);
/* Start again from offset 0. */
void rtd_input_rewind(rtd_input *in);
/* Read @len bytes at @off into @buf: the count (short only at the end) or
 * -errno. A stream (a reader, a pipe) reads only at its position, in
 * order: another @off is -ESPIPE. */
int64_t rtd_input_pread(rtd_input *in, void *buf, size_t len, uint64_t off);

#endif /* RTD_COMMON_INPUT_H */
