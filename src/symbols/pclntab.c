/* SPDX-License-Identifier: MIT */
/*
 * pclntab.c - function names of a Go binary from its .gopclntab, for Go
 * binaries built with -ldflags=-s (no .symtab): Go keeps the table because
 * its runtime needs it for tracebacks.
 *
 * Layouts (Go's src/debug/gosym/pclntab.go and runtime/symtab.go):
 *  magic 0xfffffffb (Go 1.2-1.15): header 8 bytes, nfunc uintptr, then
 *    nfunc pairs {entry pc, func offset} (uintptrs, offsets from the table
 *    start); a func starts {entry uintptr, nameoff int32 from table start}.
 *  magic 0xfffffffa (1.16-1.17): header 8 bytes, nfunc, nfiles,
 *    funcnameOffset, cuOffset, filetabOffset, pctabOffset, pclnOffset
 *    (uintptrs); functab at pclnOffset with {entry, funcoff from functab}
 *    uintptr pairs; func {entry uintptr, nameoff int32 from funcnametab}.
 *  magic 0xfffffff0 (1.18-1.19) and 0xfffffff1 (1.20+): as 1.16 with
 *    textStart after nfiles; functab pairs are {entryoff u32 from
 *    textStart, funcoff u32 from functab}; func {entryoff u32, nameoff
 *    int32 from funcnametab}.
 * Every offset is checked against the table; a bad entry ends the walk
 * with what was read so far.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "symbols/internal.h"

#define GO12 0xfffffffbu
#define GO116 0xfffffffau
#define GO118 0xfffffff0u
#define GO120 0xfffffff1u

static bool rd_word(const uint8_t *p, size_t len, size_t off, unsigned ptr,
		    uint64_t *out)
{
	if (off > len || len - off < ptr)
		return false;
	if (ptr == 8) {
		uint64_t v;
		memcpy(&v, p + off, 8);
		*out = v;
	} else {
		uint32_t v;
		memcpy(&v, p + off, 4);
		*out = v;
	}
	return true;
}

static bool rd_32(const uint8_t *p, size_t len, size_t off, uint32_t *out)
{
	if (off > len || len - off < 4)
		return false;
	memcpy(out, p + off, 4);
	return true;
}

/* A NUL-terminated name at off, within the table. */
static const char *name_at(const uint8_t *p, size_t len, uint64_t off,
			   size_t *nl)
{
	if (off >= len)
		return NULL;
	const uint8_t *z = memchr(p + off, 0, len - off);
	if (!z || z == p + off || (size_t)(z - (p + off)) > SYM_MAX_NAME)
		return NULL;
	*nl = (size_t)(z - (p + off));
	return (const char *)p + off;
}

int sym_pclntab_parse(const uint8_t *p, size_t len, uint64_t textva,
		      struct sym_table *t)
{
	uint32_t magic;
	if (len < 16 || !rd_32(p, len, 0, &magic) || p[4] || p[5])
		return -RTD_E_FORMAT;
	unsigned ptr = p[7];
	if ((ptr != 4 && ptr != 8) || (p[6] != 1 && p[6] != 2 && p[6] != 4))
		return -RTD_E_FORMAT;
	uint64_t nfunc, nameoff_base = 0, functab = 8 + ptr, textstart = 0;
	if (!rd_word(p, len, 8, ptr, &nfunc))
		return -RTD_E_TRUNCATED;
	switch (magic) {
	case GO12:
		break;
	case GO116:
		if (!rd_word(p, len, 8 + 2 * ptr, ptr, &nameoff_base) ||
		    !rd_word(p, len, 8 + 6 * ptr, ptr, &functab))
			return -RTD_E_TRUNCATED;
		break;
	case GO118:
	case GO120:
		if (!rd_word(p, len, 8 + 2 * ptr, ptr, &textstart) ||
		    !rd_word(p, len, 8 + 3 * ptr, ptr, &nameoff_base) ||
		    !rd_word(p, len, 8 + 7 * ptr, ptr, &functab))
			return -RTD_E_TRUNCATED;
		if (!textstart)
			textstart = textva; /* PIE: relocated at run time */
		break;
	default:
		return -RTD_E_FORMAT;
	}
	bool new = magic == GO118 || magic == GO120;
	size_t esz = new ? 8 : 2 * ptr; /* one functab pair */
	if (functab > len || nfunc > (len - functab) / esz)
		return -RTD_E_FORMAT;
	int added = 0;
	for (uint64_t i = 0; i < nfunc; i++) {
		size_t e = (size_t)(functab + i * esz);
		uint64_t entry, funcoff, next;
		if (new) {
			uint32_t a, b, c;
			if (!rd_32(p, len, e, &a) || !rd_32(p, len, e + 4, &b) ||
			    !rd_32(p, len, e + 8, &c))
				break;
			entry = textstart + a;
			funcoff = b;
			next = textstart + c;
		} else {
			if (!rd_word(p, len, e, ptr, &entry) ||
			    !rd_word(p, len, e + ptr, ptr, &funcoff) ||
			    !rd_word(p, len, e + 2 * ptr, ptr, &next))
				break;
		}
		/* func offsets count from the table (1.2) or the functab */
		uint64_t fo = magic == GO12 ? funcoff : functab + funcoff;
		size_t noff_at = (size_t)fo + (new ? 4 : ptr);
		uint32_t nameoff;
		if (fo > len || !rd_32(p, len, noff_at, &nameoff))
			break;
		size_t nl;
		const char *nm = name_at(p, len, nameoff_base + nameoff, &nl);
		if (!nm)
			continue;
		int r = sym_table_add(t, entry, next > entry ? next - entry : 0,
				      nm, nl, false);
		if (r)
			return r;
		added++;
	}
	return added;
}

int sym_go_pclntab(Elf *e, struct sym_table *t)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return -RTD_E_NOTFOUND;
	Elf_Scn *scn = NULL;
	Elf_Data *d = NULL;
	uint64_t textva = 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *nm;
		if (!gelf_getshdr(scn, &sh) ||
		    !(nm = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(nm, ".text"))
			textva = sh.sh_addr;
		else if ((!strcmp(nm, ".gopclntab") ||
			  !strcmp(nm, ".data.rel.ro.gopclntab")) &&
			 sh.sh_type != SHT_NOBITS)
			d = elf_rawdata(scn, NULL);
	}
	if (!d || !d->d_buf)
		return -RTD_E_NOTFOUND;
	return sym_pclntab_parse(d->d_buf, d->d_size, textva, t);
}
