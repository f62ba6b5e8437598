/* SPDX-License-Identifier: MIT */
/*
 * sym_text - fuzz the text formats symbols are read from: /proc/PID/maps,
 * /proc/kallsyms, perf maps (/tmp/perf-PID.map, written by JIT compilers
 * of other processes), and .NET method names in them.
 *
 * Byte 0 picks the parser (mod 4), the rest is the text. Invariants: a
 * mapping's end is not below its start and its path lies in the input; a
 * table is sorted and each lookup returns a symbol that covers the address.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "symbols/internal.h"

struct ctx {
	const char *buf;
	size_t len;
};

static int on_line(const struct rtd_maps_entry *e, void *arg)
{
	struct ctx *c = arg;
	if (e->end < e->start)
		abort();
	if (e->path < c->buf || e->path + e->path_len > c->buf + c->len)
		abort();
	return 0;
}

static void check_table(struct sym_table *t)
{
	for (size_t i = 1; i < t->n; i++)
		if (t->v[i - 1].addr >= t->v[i].addr)
			abort();
	for (size_t i = 0; i < t->n && i < 64; i++) {
		const struct sym_symbol *s = sym_table_find(t, t->v[i].addr);
		if (!s || s->addr > t->v[i].addr || !s->name)
			abort();
	}
	sym_table_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	const char *buf = (const char *)data + 1;
	size_t len = size - 1, bad;
	struct sym_table t = {0};
	struct ctx c = {buf, len};
	switch (data[0] % 4) {
	case 0:
		rtd_maps_parse(buf, len, on_line, &c, &bad);
		break;
	case 1:
		sym_kallsyms_parse(buf, len, &t, &bad);
		check_table(&t);
		break;
	case 2:
		sym_perfmap_parse(buf, len, &t, &bad);
		sym_table_finish(&t);
		check_table(&t);
		break;
	case 3: {
		char *in = malloc(len + 1), out[256];
		if (!in)
			return 0;
		memcpy(in, buf, len);
		in[len] = 0;
		const char *r = sym_dotnet_name(in, out, sizeof(out));
		if (r && strlen(r) >= sizeof(out))
			abort();
		free(in);
		break;
	}
	}
	return 0;
}
