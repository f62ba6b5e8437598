/* SPDX-License-Identifier: MIT */
/*
 * elf.c - what symbolization needs from an ELF image, through libelf:
 * loadable segments (file offset -> link-time address), the GNU build-id,
 * function symbols of .symtab/.dynsym, .gnu_debuglink, and MiniDebugInfo
 * (.gnu_debugdata: an xz-compressed ELF holding a .symtab, decompressed
 * with liblzma under a cap).
 *
 * Images come from files of other processes and containers: every count
 * and offset libelf hands over is checked against the section's data.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "common/optlib_lzma.h"
#include "symbols/internal.h"

void sym_elf_info_clear(struct sym_elf_info *i)
{
	free(i->segs);
	memset(i, 0, sizeof(*i));
}

static void read_build_id(Elf_Data *d, struct sym_elf_info *out)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;
	while (d && off < d->d_size &&
	       (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)d->d_buf + name_off;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(name, "GNU", 4) && nh.n_descsz > 0 &&
		    nh.n_descsz <= sizeof(out->build_id) && !out->build_id_len) {
			memcpy(out->build_id, (const char *)d->d_buf + desc_off,
			       nh.n_descsz);
			out->build_id_len = (uint8_t)nh.n_descsz;
		}
		/* Go's own build id note: "Go\0\0", type 4 */
		if (nh.n_namesz == 4 && !memcmp(name, "Go\0", 4) && nh.n_type == 4)
			out->is_go = true;
	}
}

int sym_elf_info(Elf *e, struct sym_elf_info *out)
{
	memset(out, 0, sizeof(*out));
	GElf_Ehdr eh;
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		return -RTD_E_FORMAT;
	out->type = eh.e_type;
	size_t nph;
	if (elf_getphdrnum(e, &nph) != 0)
		nph = 0;
	if (nph > 65536)
		return -RTD_E_CAP;
	if (nph) {
		out->segs = calloc(nph, sizeof(*out->segs));
		if (!out->segs)
			return -ENOMEM;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		out->segs[out->nsegs++] = (struct sym_elf_seg){
			ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz};
	}
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return 0; /* no sections: segments only */
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
		if (!nm)
			continue;
		if (sh.sh_type == SHT_SYMTAB && sh.sh_size > 0)
			out->has_symtab = true;
		else if (!strcmp(nm, ".debug_info") && sh.sh_type != SHT_NOBITS)
			out->has_debug_info = true;
		else if (!strcmp(nm, ".gnu_debugdata") && sh.sh_type != SHT_NOBITS)
			out->has_debugdata = true;
		else if (!strcmp(nm, ".gopclntab") || !strcmp(nm, ".data.rel.ro.gopclntab"))
			out->is_go = true;
		else if (sh.sh_type == SHT_NOTE && !out->build_id_len)
			read_build_id(elf_getdata(scn, NULL), out);
		else if (!strcmp(nm, ".gnu_debuglink") && sh.sh_type != SHT_NOBITS) {
			Elf_Data *d = elf_getdata(scn, NULL);
			if (d && d->d_buf && d->d_size > 4) {
				size_t l = strnlen(d->d_buf, d->d_size);
				if (l && l < d->d_size && l < sizeof(out->debuglink) &&
				    !memchr(d->d_buf, '/', l)) {
					memcpy(out->debuglink, d->d_buf, l);
					out->debuglink[l] = 0;
				}
			}
		}
	}
	if (!out->build_id_len) {
		/* no section headers worth reading: the PT_NOTE segments */
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			Elf_Data *d = elf_getdata_rawchunk(e, ph.p_offset,
							   ph.p_filesz,
							   ELF_T_NHDR);
			read_build_id(d, out);
		}
	}
	return 0;
}

bool sym_elf_off_to_vaddr(const struct sym_elf_info *i, uint64_t off,
			  uint64_t *vaddr)
{
	for (size_t k = 0; k < i->nsegs; k++) {
		const struct sym_elf_seg *s = &i->segs[k];
		/* a segment's last page may be mapped past its file size */
		uint64_t span = s->filesz > s->memsz ? s->filesz : s->memsz;
		if (off >= s->offset && off - s->offset < span) {
			*vaddr = off - s->offset + s->vaddr;
			return true;
		}
	}
	return false;
}

static bool exec_section(Elf *e, size_t ndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(e, ndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

int sym_elf_symbols(Elf *e, int which, struct sym_table *t, unsigned flags)
{
	Elf_Scn *scn = NULL;
	Elf32_Word want = which ? SHT_DYNSYM : SHT_SYMTAB;
	int added = 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != want ||
		    !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t n = d->d_size / sh.sh_entsize;
		if (n > SYM_MAX_SYMBOLS)
			return -RTD_E_CAP;
		for (size_t k = 0; k < n; k++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)k, &sym))
				break;
			int ty = GELF_ST_TYPE(sym.st_info);
			bool label = ty == STT_NOTYPE;
			if ((ty != STT_FUNC && ty != STT_GNU_IFUNC && !label) ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
			    !sym.st_value)
				continue;
			const char *nm = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!nm || !*nm || (label && (nm[0] == '.' || nm[0] == '$' ||
						      !exec_section(e, sym.st_shndx))))
				continue;
			/* a label in code (an assembler entry point such as
			 * ld.so's _dl_start_user) names what no function covers,
			 * as perf's does; a function wins over it */
			size_t nl = strlen(nm), cut = flags & SYM_ELF_VERSIONED ? nl : strcspn(nm, "@");
			int b = GELF_ST_BIND(sym.st_info);
			uint32_t rank = sym_alias_rank(b == STB_WEAK ? SYM_BIND_WEAK
						       : b == STB_GLOBAL ? SYM_BIND_GLOBAL
									 : SYM_BIND_LOCAL,
						       nm, cut);
			int r = sym_table_add_ranked(t, sym.st_value, label ? 0 : sym.st_size,
						     nm, cut, (flags & SYM_ELF_COPY) || cut < nl,
						     rank | (label ? 1u << 30 : 0));
			if (r)
				return r;
			added++;
		}
	}
	return added;
}

/* A section by name (NULL: none), its header in @sh. */
static Elf_Scn *section_named(Elf *e, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;
		if (gelf_getshdr(scn, sh) && (n = elf_strptr(e, shstrndx, sh->sh_name)) &&
		    !strcmp(n, name))
			return scn;
	}
	return NULL;
}

int sym_elf_plt(Elf *e, struct sym_table *t)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64)
		return 0;
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rel = section_named(e, ".rela.plt", &rsh);
	/* with IBT the entries callers jump to are in .plt.sec, one per
	 * relocation; else in .plt after its first (PLT0) entry */
	Elf_Scn *plt = section_named(e, ".plt.sec", &psh);
	uint64_t first = 0;
	if (!plt) {
		plt = section_named(e, ".plt", &psh);
		first = 1;
	}
	if (!rel || !plt || rsh.sh_type != SHT_RELA || !rsh.sh_entsize)
		return 0;
	Elf_Scn *dyn = elf_getscn(e, rsh.sh_link);
	Elf_Data *rd = elf_getdata(rel, NULL), *dd = dyn ? elf_getdata(dyn, NULL) : NULL;
	if (!rd || !dd || !gelf_getshdr(dyn, &dsh))
		return 0;
	const uint64_t ent = 16;
	size_t n = rd->d_size / rsh.sh_entsize;
	int added = 0;
	for (size_t i = 0; i < n && i < SYM_MAX_SYMBOLS; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		if (!gelf_getrela(rd, (int)i, &r))
			break;
		size_t si = GELF_R_SYM(r.r_info);
		uint64_t at = psh.sh_addr + (i + first) * ent;
		if (!si || at + ent > psh.sh_addr + psh.sh_size || !gelf_getsym(dd, (int)si, &sym))
			continue;
		const char *nm = elf_strptr(e, dsh.sh_link, sym.st_name);
		if (!nm || !*nm)
			continue;
		char buf[512];
		int l = snprintf(buf, sizeof(buf), "%.*s@plt", (int)strcspn(nm, "@"), nm);
		if (l <= 0 || (size_t)l >= sizeof(buf))
			continue;
		/* a function or label there wins: only a stub no symbol covers */
		int rc = sym_table_add_ranked(t, at, ent, buf, (size_t)l, true, 1u << 31);
		if (rc)
			return rc;
		added++;
	}
	return added;
}

int sym_elf_debugdata(Elf *e, uint8_t **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return -RTD_E_NOTFOUND;
	Elf_Scn *scn = NULL;
	Elf_Data *d = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *nm;
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (nm = elf_strptr(e, shstrndx, sh.sh_name)) &&
		    !strcmp(nm, ".gnu_debugdata")) {
			d = elf_rawdata(scn, NULL);
			break;
		}
	}
	if (!d || !d->d_buf || !d->d_size)
		return -RTD_E_NOTFOUND;
	if (!rtd_optlib_want_lzma())
		return -RTD_E_NOLIB;
	lzma_stream s = LZMA_STREAM_INIT;
	if (lzma_stream_decoder(&s, SYM_MAX_DEBUGDATA, 0) != LZMA_OK)
		return -ENOMEM;
	size_t cap = d->d_size * 4 + 4096, used = 0;
	uint8_t *buf = malloc(cap);
	int r = 0;
	if (!buf) {
		lzma_end(&s);
		return -ENOMEM;
	}
	s.next_in = d->d_buf;
	s.avail_in = d->d_size;
	for (;;) {
		if (used == cap) {
			if (cap >= SYM_MAX_DEBUGDATA) {
				r = -RTD_E_CAP;
				break;
			}
			size_t nc = cap * 2 > SYM_MAX_DEBUGDATA ? SYM_MAX_DEBUGDATA
								: cap * 2;
			uint8_t *nb = realloc(buf, nc);
			if (!nb) {
				r = -ENOMEM;
				break;
			}
			buf = nb;
			cap = nc;
		}
		s.next_out = buf + used;
		s.avail_out = cap - used;
		lzma_ret lr = lzma_code(&s, LZMA_FINISH);
		used = cap - s.avail_out;
		if (lr == LZMA_STREAM_END)
			break;
		if (lr != LZMA_OK) {
			r = lr == LZMA_MEM_ERROR || lr == LZMA_MEMLIMIT_ERROR
				    ? -RTD_E_CAP
				    : -RTD_E_FORMAT;
			break;
		}
		if (!s.avail_in && s.avail_out) {
			r = -RTD_E_TRUNCATED;
			break;
		}
	}
	lzma_end(&s);
	if (r) {
		free(buf);
		return r;
	}
	*out = buf;
	*len = used;
	return 0;
}
