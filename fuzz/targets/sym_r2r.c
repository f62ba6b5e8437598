/* SPDX-License-Identifier: MIT */
/*
 * sym_r2r - fuzz the reader of ReadyToRun .NET images (PE headers, the CLI
 * header, metadata streams and tables, the R2R header, RuntimeFunctions
 * and the MethodDefEntryPoints NativeArray), which are files a profiled
 * process maps. Invariant: every named range lies in a section the image
 * declares, and names are NUL-terminated copies.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_elf_info info;
	struct sym_table t = {0};
	int n = sym_r2r_parse(data, size, &info, &t);
	if (n > 0 && (size_t)n != t.n)
		abort();
	for (size_t i = 0; i < t.n; i++)
		if (!t.v[i].name || strlen(t.v[i].name) >= SYM_MAX_NAME)
			abort();
	sym_table_finish(&t);
	for (size_t i = 0; i < t.n && i < 16; i++) {
		const struct sym_symbol *s = sym_table_find(&t, t.v[i].addr);
		if (!s || s->addr > t.v[i].addr)
			abort();
	}
	sym_table_free(&t);
	sym_elf_info_clear(&info);
	return 0;
}
