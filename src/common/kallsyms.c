/* SPDX-License-Identifier: MIT */
/*
 * kallsyms.c - rtdiag's one reader of /proc/kallsyms (common/file.h): a
 * line parser (fuzzed through the symbolizer's, fuzz/targets/sym_text.c)
 * and a streaming reader in one buffer of RTD_KALLSYMS_LINE_MAX bytes
 * (the file is ~10 MB and read by the symbolizer, the profiler's kernel
 * ranges and perf.data's kernel map).
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/file.h"
#include "common/textrd.h"
#include "rtdiag/common.h"

struct ks_cb {
	rtd_ksym_fn fn;
	void *ctx;
};

/* "ffffffff81000000 T _text" and "ffffffffc0a01000 t foo\t[mod]" */
static int ksym_line(const char *s, size_t n, size_t line, void *ctx)
{
	struct ks_cb *c = ctx;
	struct rtd_ksym k = {.line = line};
	size_t i = 0;
	if (!hex_field(s, n, &i, &k.addr) || !skip_char(s, n, &i, ' ') || i + 2 > n ||
	    s[i + 1] != ' ')
		return -RTD_E_FORMAT;
	k.type = s[i];
	i += 2;
	k.name = s + i;
	while (i < n && s[i] != '\t' && s[i] != ' ')
		i++;
	k.name_len = (size_t)(s + i - k.name);
	if (!k.name_len)
		return -RTD_E_FORMAT;
	skip_spaces(s, n, &i);
	if (i < n) {
		if (s[i] != '[' || s[n - 1] != ']' || n - i < 2 || n - i - 2 > 255)
			return -RTD_E_FORMAT;
		k.mod = s + i + 1;
		k.mod_len = n - i - 2;
	}
	return c->fn(&k, c->ctx);
}

static int parse_lines(const char *buf, size_t len, void *ctx, size_t *lineno)
{
	return each_line(buf, len, lineno, ksym_line, ctx);
}

int rtd_kallsyms_parse(const char *buf, size_t len, rtd_ksym_fn fn, void *ctx,
		       size_t *bad_line)
{
	struct ks_cb c = {fn, ctx};
	size_t lineno = 0;
	int rc = parse_lines(buf, len, &c, &lineno);
	*bad_line = rc == -RTD_E_FORMAT ? lineno : 0;
	return rc;
}

int rtd_kallsyms_read(const char *path, rtd_ksym_fn fn, void *ctx, size_t *bad_line)
{
	*bad_line = 0;
	int fd = open(path ? path : RTD_KALLSYMS_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct ks_cb c = {fn, ctx};
	int rc = rtd_lines_read_fd(fd, RTD_KALLSYMS_LINE_MAX, parse_lines, &c, bad_line);
	close(fd);
	return rc;
}
