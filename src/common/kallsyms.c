/* SPDX-License-Identifier: MIT */
/*
 * kallsyms.c - rtdiag's one reader of /proc/kallsyms (common/file.h): a
 * line parser (fuzzed through the symbolizer's, fuzz/targets/sym_text.c)
 * and a streaming reader in one buffer of RTD_KALLSYMS_LINE_MAX bytes
 * (the file is ~10 MB and read by the symbolizer, the profiler's kernel
 * ranges and perf.data's kernel map: now once, by the symbolizer, whose
 * read notes their landmarks, rtd_kallsyms_mark()).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
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

/* The landmarks, as bits of struct rtd_kallsyms_marks' seen. */
enum {
	KM_TEXT = 1u << 0,
	KM_ENTRY_LO = 1u << 1,
	KM_ENTRY_HI = 1u << 2,
	KM_ITER = 1u << 3,    /* __traceiter_sched_switch found */
	KM_ITER_END = 1u << 4 /* and a line above it after it */
};

static bool ksym_named(const struct rtd_ksym *k, const char *name, size_t n)
{
	return k->name_len == n && !memcmp(k->name, name, n);
}

void rtd_kallsyms_mark(struct rtd_kallsyms_marks *m, const struct rtd_ksym *k)
{
	if ((m->seen & (KM_ITER | KM_ITER_END)) == KM_ITER && k->addr > m->iter_lo) {
		m->iter_hi = k->addr;
		m->seen |= KM_ITER_END;
	}
	if (k->mod)
		return;
	/* _text as perf record reads it: the first of the kernel's own,
	 * even hidden (then no kernel map is written) */
	if (!(m->seen & KM_TEXT) && ksym_named(k, "_text", 5)) {
		m->text = k->addr;
		m->seen |= KM_TEXT;
	}
	if (!k->addr)
		return;
	if (!(m->seen & KM_ENTRY_LO) && ksym_named(k, "__entry_text_start", 18)) {
		m->entry_lo = k->addr;
		m->seen |= KM_ENTRY_LO;
	} else if (!(m->seen & KM_ENTRY_HI) && ksym_named(k, "__entry_text_end", 16)) {
		m->entry_hi = k->addr;
		m->seen |= KM_ENTRY_HI;
	} else if (!(m->seen & KM_ITER) && ksym_named(k, "__traceiter_sched_switch", 24)) {
		m->iter_lo = k->addr;
		m->seen |= KM_ITER;
	}
}

void rtd_kallsyms_marks_finish(struct rtd_kallsyms_marks *m)
{
	if ((m->seen & KM_ITER) && m->iter_hi <= m->iter_lo)
		m->iter_hi = m->iter_lo + 256; /* the last symbol: a small function */
	if (m->entry_hi <= m->entry_lo)
		m->entry_lo = m->entry_hi = 0;
}

static int mark_line(const struct rtd_ksym *k, void *ctx)
{
	struct rtd_kallsyms_marks *m = ctx;
	rtd_kallsyms_mark(m, k);
	return (m->seen & KM_TEXT) != 0;
}

int rtd_kallsyms_marks_read(const char *path, struct rtd_kallsyms_marks *m)
{
	size_t bad;
	*m = (struct rtd_kallsyms_marks){0};
	int rc = rtd_kallsyms_read(path, mark_line, m, &bad);
	rtd_kallsyms_marks_finish(m);
	return rc == 1 ? 0 : rc;
}
