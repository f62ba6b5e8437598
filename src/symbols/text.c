/* SPDX-License-Identifier: MIT */
/*
 * text.c - the text formats symbols come in: /proc/kallsyms, perf maps (/tmp/perf-PID.map), and .NET's method names
 * in them. Every parser takes a buffer and a length (no NUL needed), checks
 * each field, and names the first bad line; they are fuzzed (fuzz/targets/
 * sym_text.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/file.h"
#include "common/textrd.h"
#include "symbols/internal.h"

/*
 * "ffffffff81000000 T _text" and "ffffffffc0a01000 t foo\t[mod]". Module
 * symbols are named "name [mod]" in the table; the caller splits them. A
 * line whose address is zero (kptr_restrict hides them) is skipped.
 */
/* One kallsyms line into the table: functions only ('t', 'T', 'w', 'W';
 * a hidden address skipped), a module's as "name [mod]". */
static int ksym_add(const struct rtd_ksym *k, void *ctx)
{
	struct sym_table *t = ctx;
	if (k->name_len > SYM_MAX_NAME)
		return -RTD_E_FORMAT;
	if (!k->addr || !(k->type == 't' || k->type == 'T' || k->type == 'w' ||
			  k->type == 'W'))
		return 0;
	char tmp[SYM_MAX_NAME + 64];
	size_t tl = k->name_len;
	memcpy(tmp, k->name, tl);
	if (k->mod) {
		tmp[tl++] = ' ';
		tmp[tl++] = '[';
		memcpy(tmp + tl, k->mod, k->mod_len);
		tl += k->mod_len;
		tmp[tl++] = ']';
	}
	/* of aliases the last listed is shown, as perf shows it
	 * (memcpy, __memcpy, __pi_memcpy: __pi_memcpy; __do_sys_X,
	 * __ia32_sys_X, __x64_sys_X: __x64_sys_X): its lookup lands on
	 * the one alias its table gave a length, the last */
	return sym_table_add_ranked(t, k->addr, 0, tmp, tl, true,
				    (uint32_t)(UINT32_MAX - k->line));
}

int sym_kallsyms_parse(const char *buf, size_t len, struct sym_table *t,
		       size_t *bad_line)
{
	int rc = rtd_kallsyms_parse(buf, len, ksym_add, t, bad_line);
	/* what came before a bad line is kept, sorted */
	sym_table_finish(t);
	return rc;
}

int sym_kallsyms_read(const char *path, struct sym_table *t, size_t *bad_line)
{
	int rc = rtd_kallsyms_read(path, ksym_add, t, bad_line);
	sym_table_finish(t);
	return rc;
}

/* "7f1234560000 1a0 name with spaces" */
int sym_perfmap_parse(const char *buf, size_t len, struct sym_table *t,
		      size_t *bad_line)
{
	struct line_rd r = {buf, buf + len};
	const char *s;
	size_t n, lineno = 0;
	int rc = 0;
	*bad_line = 0;
	while (next_line(&r, &s, &n)) {
		lineno++;
		if (n && s[n - 1] == '\r')
			n--;
		if (!n)
			continue;
		size_t i = 0;
		uint64_t start, size;
		if (!hex_field(s, n, &i, &start) || !skip_char(s, n, &i, ' ') ||
		    !hex_field(s, n, &i, &size) || !skip_char(s, n, &i, ' ') ||
		    i >= n || n - i > SYM_MAX_NAME) {
			/* a line being written as we read: the last one may be
			 * cut short, which is no error */
			if (r.p >= r.end)
				break;
			*bad_line = lineno;
			rc = -RTD_E_FORMAT;
			break;
		}
		if (!size || start + size < start)
			continue;
		rc = sym_table_add(t, start, size, s + i, n - i, true);
		if (rc)
			break;
	}
	/* later entries for the same address win (code memory reused): keep
	 * the last by reversing before the stable dedupe of finish */
	for (size_t a = 0, b = t->n ? t->n - 1 : 0; a < b; a++, b--) {
		struct sym_symbol x = t->v[a];
		t->v[a] = t->v[b];
		t->v[b] = x;
	}
	sym_table_finish(t);
	return rc;
}

/*
 * .NET writes "[return type] [Assembly] Namespace.Type::Method(args)[Tier]"
 * (e.g. "instance void [System.Private.CoreLib] System.Threading.Thread::
 * StartCallback()[Optimized]"); stubs look like "stub<1> AllocateTemporaryEntryPoints<PRESTUB_METHOD>".
 * Keep "Namespace.Type.Method(args)", as dotnet-trace and PerfView show it.
 */
const char *sym_dotnet_name(const char *in, char *out, size_t n)
{
	const char *dc = strstr(in, "::");
	if (!dc || n < 2)
		return NULL;
	const char *paren = strchr(dc, '(');
	/* the type starts after the last "] " or space before "::" */
	const char *ts = dc;
	/* generic arguments right before "::" ("G`1[System.Int32]::M") are
	 * part of the type; any other ']' ends an assembly name */
	if (ts > in && ts[-1] == ']') {
		int depth = 0;
		while (ts > in) {
			char c = *--ts;
			if (c == ']')
				depth++;
			else if (c == '[' && --depth == 0)
				break;
		}
	}
	while (ts > in && ts[-1] != ' ' && ts[-1] != ']')
		ts--;
	/* generic args of the type may hold spaces: "[A] G`1<int32>::M" has
	 * none in practice, .NET prints no space inside <> */
	size_t k = 0;
	for (const char *p = ts; *p && k + 1 < n; p++) {
		if (p == dc) {
			out[k++] = '.';
			p++; /* skip the second ':' */
			continue;
		}
		if (paren && p > paren && *p == '[') {
			/* the tier suffix after the argument list */
			const char *close = strchr(p, ']');
			if (close && !close[1] && p > in && p[-1] == ')')
				break;
		}
		out[k++] = *p;
	}
	out[k] = 0;
	return out;
}
