/* SPDX-License-Identifier: MIT */
/* file.h - small whole-file reads (procfs, sysfs, tracefs). */
#ifndef RTD_COMMON_FILE_H
#define RTD_COMMON_FILE_H

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

#endif /* RTD_COMMON_FILE_H */
