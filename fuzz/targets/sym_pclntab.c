/* SPDX-License-Identifier: MIT */
/*
 * sym_pclntab - fuzz the reader of Go's function table (.gopclntab), which
 * comes from any Go binary a profiled process runs. Invariant: every name
 * read lies inside the table and is NUL-terminated there.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_table t = {0};
	int n = sym_pclntab_parse(data, size, 0x401000, &t);
	if (n > 0 && (size_t)n != t.n)
		abort();
	for (size_t i = 0; i < t.n; i++) {
		const char *nm = t.v[i].name;
		if (nm < (const char *)data || nm >= (const char *)data + size ||
		    !memchr(nm, 0, (size_t)((const char *)data + size - nm)))
			abort();
	}
	sym_table_finish(&t);
	sym_table_free(&t);
	return 0;
}
