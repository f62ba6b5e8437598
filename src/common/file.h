/* SPDX-License-Identifier: MIT */
/* file.h - small whole-file reads (procfs, sysfs, tracefs). */
#ifndef RTD_COMMON_FILE_H
#define RTD_COMMON_FILE_H

#include <errno.h>
#include <stddef.h>

/*
 * rtd_read_small - read a small file (procfs, sysfs, tracefs) whole
 * @path: the file
 * @buf: where its bytes go, NUL-terminated
 * @len: size of @buf; at most @len - 1 bytes are read (a longer file is
 *       cut there: the callers' files have a known small size)
 *
 * Reads until end of file, retrying on EINTR. Returns the number of bytes
 * read (<= @len - 1, so it fits an int for the buffers this is for), or
 * -errno when the file cannot be opened or a read fails.
 */
int rtd_read_small(const char *path, char *buf, size_t len);

/*
 * rtd_write_errno - why a write to a stdio stream failed, right after it
 * did (a short fwrite, a non-zero fflush, ferror set): -errno as the
 * failed write(2) left it (-ENOSPC on a full disk, -EIO on a bad one), or
 * -EIO when errno says nothing. Writers return this, never a blanket EIO,
 * so "No space left on device" reaches the person.
 */
static inline int rtd_write_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

#endif /* RTD_COMMON_FILE_H */
