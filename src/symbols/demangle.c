/* SPDX-License-Identifier: MIT */
/*
 * demangle.c - C++ (Itanium ABI) and Rust (legacy and v0) names, through
 * libiberty's demangler (the one binutils and gdb use): cplus_demangle
 * with DMGL_AUTO tries Rust first for "_R" names and strips the hash of
 * legacy Rust names, as perf and gdb show them.
 */
#include <errno.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"

static bool looks_mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R' ||
				  (name[1] == '_' && name[2] == 'Z'));
}

int rtd_sym_demangle(const char *name, char **out)
{
	*out = NULL;
	if (!name || !looks_mangled(name))
		return 0;
	*out = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	return 0;
}

const char *sym_demangle_into(struct sym_table *t, const char *name)
{
	char *d = NULL;
	if (rtd_sym_demangle(name, &d) || !d)
		return name;
	const char *r = sym_table_strdup(t, d, strlen(d));
	free(d);
	return r ? r : name;
}
