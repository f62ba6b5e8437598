/* SPDX-License-Identifier: MIT */
/*
 * dwarf.c - inlined frames and source lines from DWARF, through libdw.
 *
 * The unit holding an address is found in a table of every unit's ranges
 * built once per image (dwarf_ranges on each unit DIE): GCC 11+ no longer
 * writes .debug_aranges by default, and libdw 0.188 only reads that
 * section. Then the unit's DIE tree is walked down to the innermost DIE
 * with code at the address (scope_chain); each DW_TAG_inlined_subroutine is a frame whose caller
 * sits at its DW_AT_call_file:DW_AT_call_line, up to the DW_TAG_subprogram
 * that holds them (DWARF 5, section 3.3.8).
 */
#include <gelf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/optlib_dw.h"
#include "symbols/internal.h"

struct cu_range {
	uint64_t lo, hi;
	Dwarf_Off off; /* the unit DIE's offset */
};

struct sym_dwarf {
	Dwarf *dw;
	struct cu_range *r;
	size_t n, cap;
};

static int cmp_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int add_range(struct sym_dwarf *d, uint64_t lo, uint64_t hi,
		     Dwarf_Off off)
{
	if (hi <= lo)
		return 0;
	if (d->n >= SYM_MAX_CUS)
		return -RTD_E_CAP;
	if (d->n == d->cap) {
		struct cu_range *nr = rtd_grow(d->r, &d->cap, d->n + 1,
					sizeof(*nr), 64);
		if (!nr)
			return -ENOMEM;
		d->r = nr;
	}
	d->r[d->n++] = (struct cu_range){lo, hi, off};
	return 0;
}

uint64_t sym_dwarf_size(Elf *e)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx))
		return 0;
	uint64_t sum = 0;
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn;
	     scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		if (!n || (strncmp(n, ".debug_", 7) && strncmp(n, ".zdebug_", 8)))
			continue;
		/* what libdw will hold: a compressed section decompressed
		 * (its header says to how much) */
		GElf_Chdr ch;
		if ((sh.sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch))
			sum += ch.ch_size;
		else
			sum += sh.sh_size;
	}
	return sum;
}

struct sym_dwarf *sym_dwarf_open(Elf *e)
{
	/* without libdw, functions are named from the symbol tables only */
	if (!rtd_optlib_want_dw())
		return NULL;
	Dwarf *dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	if (!dw)
		return NULL;
	struct sym_dwarf *d = calloc(1, sizeof(*d));
	if (!d) {
		dwarf_end(dw);
		return NULL;
	}
	d->dw = dw;
	/* .debug_aranges when the producer wrote it: one small section read,
	 * instead of every unit's DIE and ranges */
	Dwarf_Aranges *ar = NULL;
	size_t nar = 0;
	if (dwarf_getaranges(dw, &ar, &nar) == 0 && nar > 0) {
		for (size_t i = 0; i < nar; i++) {
			Dwarf_Addr start;
			Dwarf_Word len;
			Dwarf_Off off;
			Dwarf_Arange *a = dwarf_onearange(ar, i);
			if (!a || dwarf_getarangeinfo(a, &start, &len, &off) != 0)
				continue;
			/* libdw gives the unit DIE's offset */
			if (add_range(d, start, start + len, off))
				break;
		}
		if (d->n)
			goto done;
	}
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	while (dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial &&
		    unit_type != DW_UT_skeleton)
			continue;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0)
			if (add_range(d, lo, hi, dwarf_dieoffset(&cudie)))
				goto done;
	}
done:
	if (d->n)
		qsort(d->r, d->n, sizeof(*d->r), cmp_range);
	return d;
}

void sym_dwarf_close(struct sym_dwarf *d)
{
	if (!d)
		return;
	dwarf_end(d->dw);
	free(d->r);
	free(d);
}

/* The unit DIE whose ranges hold vaddr. Ranges of units may nest or
 * overlap (LTO): look back from the last start at or below vaddr. */
static bool find_cu(struct sym_dwarf *d, uint64_t vaddr, Dwarf_Die *out)
{
	size_t lo = 0, hi = d->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->r[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo, steps = 0; k > 0 && steps < 64; k--, steps++) {
		const struct cu_range *c = &d->r[k - 1];
		if (vaddr < c->hi)
			return dwarf_offdie(d->dw, c->off, out) != NULL;
	}
	return false;
}

#define SCOPE_MAX 64

/* DIEs whose children may hold code though they have no address ranges. */
static bool holds_code(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_module ||
	       tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
	       tag == DW_TAG_union_type;
}

static bool has_code(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
	       tag == DW_TAG_catch_block || tag == DW_TAG_entry_point;
}

/*
 * The concrete DIEs holding pc, innermost first: from the unit down
 * through the subprogram and every inlined instance and block that covers
 * pc (what dwarf_getscopes + dwarf_getscopes_die give; libdw 0.188's
 * dwarf_getscopes leaks its array when a later step fails on malformed
 * DWARF, found by the sym_elf fuzzer).
 */
/* Search parent's children (and namespaces/classes among them) for the
 * DIE with code at pc; push it and go on inside it. */
static bool find_in(Dwarf_Die *parent, uint64_t pc, Dwarf_Die *chain,
		    int *depth, int level, unsigned *steps)
{
	Dwarf_Die child;
	if (level >= SCOPE_MAX || *depth >= SCOPE_MAX ||
	    dwarf_child(parent, &child) != 0)
		return false;
	do {
		if (++*steps > 4000000)
			return false; /* a malformed tree: give up */
		int tag = dwarf_tag(&child);
		if (has_code(tag) && dwarf_haspc(&child, pc) == 1) {
			chain[(*depth)++] = child;
			find_in(&child, pc, chain, depth, level + 1, steps);
			return true;
		}
		if (holds_code(tag) &&
		    find_in(&child, pc, chain, depth, level + 1, steps))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static int scope_chain(Dwarf_Die *cu, uint64_t pc, Dwarf_Die *out)
{
	Dwarf_Die chain[SCOPE_MAX];
	int depth = 0;
	unsigned steps = 0;
	find_in(cu, pc, chain, &depth, 0, &steps);
	for (int i = 0; i < depth; i++)
		out[i] = chain[depth - 1 - i];
	return depth;
}

static const char *die_name(Dwarf_Die *die, struct sym_table *strings,
			    bool demangle)
{
	Dwarf_Attribute at;
	const char *ln = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &at) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at))
		ln = dwarf_formstring(&at);
	if (ln && demangle) {
		const char *dm = sym_demangle_into(strings, ln);
		if (dm != ln)
			return dm;
	}
	const char *nm = NULL;
	if (dwarf_attr_integrate(die, DW_AT_name, &at))
		nm = dwarf_formstring(&at);
	if (!nm)
		nm = ln;
	return nm ? sym_table_strdup(strings, nm, strlen(nm)) : NULL;
}

static const char *intern(struct sym_table *t, const char *s)
{
	return s ? sym_table_strdup(t, s, strlen(s)) : NULL;
}

int sym_dwarf_frames(struct sym_dwarf *d, uint64_t vaddr,
		     struct sym_dwarf_frame *out, size_t max,
		     struct sym_table *strings, bool demangle)
{
	Dwarf_Die cudie;
	if (!d || !max || !find_cu(d, vaddr, &cudie))
		return 0;
	Dwarf_Die scopes[SCOPE_MAX];
	int ns = scope_chain(&cudie, vaddr, scopes);
	if (ns <= 0)
		return 0;
	/* the innermost frame's line is the address's own */
	const char *file = NULL;
	uint32_t line = 0;
	Dwarf_Line *dl = dwarf_getsrc_die(&cudie, vaddr);
	if (dl) {
		int ln = 0;
		dwarf_lineno(dl, &ln);
		file = dwarf_linesrc(dl, NULL, NULL);
		line = ln > 0 ? (uint32_t)ln : 0;
	}
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	if (dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0)
		files = NULL;
	size_t k = 0;
	for (int i = 0; i < ns && k < max; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		out[k].name = die_name(&scopes[i], strings, demangle);
		out[k].file = intern(strings, file);
		out[k].line = line;
		if (!out[k].name)
			out[k].name = "";
		k++;
		if (tag == DW_TAG_subprogram)
			break;
		/* the caller's position: where this one was inlined */
		Dwarf_Attribute at;
		Dwarf_Word cf = 0, cl = 0;
		file = NULL;
		line = 0;
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &at),
				    &cf) == 0 &&
		    files && cf < nfiles)
			file = dwarf_filesrc(files, cf, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &at),
				    &cl) == 0)
			line = cl <= UINT32_MAX ? (uint32_t)cl : 0;
	}
	return (int)k;
}
