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
#include <inttypes.h>
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

/* The rank of an ELF symbol among the names at its address
 * (sym_alias_rank() of its binding and its name's first @len bytes). */
static uint32_t elf_sym_rank(const GElf_Sym *sym, const char *nm, size_t len)
{
	int b = GELF_ST_BIND(sym->st_info);
	return sym_alias_rank(b == STB_WEAK ? SYM_BIND_WEAK
			      : b == STB_GLOBAL ? SYM_BIND_GLOBAL
						: SYM_BIND_LOCAL,
			      nm, len);
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
			uint32_t rank = elf_sym_rank(&sym, nm, cut);
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

/* One .rela.plt or .rela.dyn relocation: where it writes, what it names. */
struct plt_rel {
	uint64_t got;    /* r_offset: the GOT slot */
	uint64_t addend; /* an IRELATIVE's resolver */
	uint32_t sym;    /* index into the dynamic symbols, 0: none */
	uint32_t type;
};

static int cmp_rel(const void *a, const void *b)
{
	const struct plt_rel *x = a, *y = b;
	return x->got != y->got ? (x->got < y->got ? -1 : 1) : 0;
}

/* The relocations of @scn with a symbol (@with_sym) or all of them, sorted
 * by the GOT slot they write (no two write one slot). */
static int read_rels(Elf_Scn *scn, bool with_sym, struct plt_rel **out,
		     size_t *n)
{
	GElf_Shdr sh;
	Elf_Data *d;
	*out = NULL;
	*n = 0;
	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
	    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
		return 0;
	size_t cnt = d->d_size / sh.sh_entsize;
	if (cnt > SYM_MAX_SYMBOLS)
		return -RTD_E_CAP;
	struct plt_rel *v = cnt ? malloc(cnt * sizeof(*v)) : NULL;
	if (cnt && !v)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < cnt; i++) {
		GElf_Rela r;
		if (!gelf_getrela(d, (int)i, &r))
			break;
		uint32_t si = (uint32_t)GELF_R_SYM(r.r_info);
		if (with_sym && !si)
			continue;
		v[k++] = (struct plt_rel){.got = r.r_offset, .addend = (uint64_t)r.r_addend,
					  .sym = si, .type = (uint32_t)GELF_R_TYPE(r.r_info)};
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_rel);
	*out = v;
	*n = k;
	return 0;
}

/* The address an x86-64 PLT entry jumps through (its GOT slot): "jmp
 * *disp(%rip)", after an endbr64 and a bnd prefix if there; 0: none. */
static uint64_t plt_jump_slot(const uint8_t *p, size_t len, uint64_t at)
{
	static const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	size_t k = 0;
	if (len >= sizeof(endbr64) && !memcmp(p, endbr64, sizeof(endbr64)))
		k += sizeof(endbr64);
	if (k < len && p[k] == 0xf2)
		k++;
	if (k + 6 > len || p[k] != 0xff || p[k + 1] != 0x25)
		return 0;
	int32_t disp = (int32_t)((uint32_t)p[k + 2] | (uint32_t)p[k + 3] << 8 |
				 (uint32_t)p[k + 4] << 16 | (uint32_t)p[k + 5] << 24);
	return at + k + 6 + (uint64_t)(int64_t)disp;
}

/* The name of dynamic symbol @si (NULL: none), its version cut off. */
static const char *dyn_name(Elf *e, Elf_Data *dd, size_t strndx, uint32_t si,
			    size_t *len)
{
	GElf_Sym sym;
	const char *nm;
	if (!si || !dd || !gelf_getsym(dd, (int)si, &sym) ||
	    !(nm = elf_strptr(e, strndx, sym.st_name)) || !*nm)
		return NULL;
	*len = strcspn(nm, "@");
	return nm;
}

/* Whether the name shown at each of @addr[0..n) (sorted) is an IFUNC's or
 * an IFUNC's alias, as perf decides it (tools/perf/util/symbol.c,
 * symbols__fixup_duplicate()): of the functions at one address, in
 * @src's .symtab (which = 0) or .dynsym (1) order, each pair leaves the
 * better (as sym_table_finish() keeps it), which becomes an alias when the
 * one it drops is an IFUNC, and loses that when itself dropped: @is[i]. */
static void mark_ifuncs(Elf *src, int which, const uint64_t *addr, size_t n,
			bool *is)
{
	struct best {
		bool have, sized, ifunc, alias;
		uint32_t rank;
	} *b = calloc(n ? n : 1, sizeof(*b));
	Elf_Scn *scn = NULL;
	Elf32_Word want = which ? SHT_DYNSYM : SHT_SYMTAB;
	while (b && src && n && (scn = elf_nextscn(src, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != want || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		size_t cnt = d->d_size / sh.sh_entsize;
		for (size_t k = 0; k < cnt && k < SYM_MAX_SYMBOLS; k++) {
			GElf_Sym sym;
			const char *nm;
			if (!gelf_getsym(d, (int)k, &sym))
				break;
			int ty = GELF_ST_TYPE(sym.st_info);
			if ((ty != STT_FUNC && ty != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
			    sym.st_shndx >= SHN_LORESERVE || !sym.st_value)
				continue;
			size_t lo = 0, hi = n;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (addr[mid] < sym.st_value)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo == n || addr[lo] != sym.st_value ||
			    !(nm = elf_strptr(src, sh.sh_link, sym.st_name)) || !*nm)
				continue;
			struct best x = {
				.have = true, .sized = sym.st_size != 0, .ifunc = ty == STT_GNU_IFUNC,
				.rank = elf_sym_rank(&sym, nm, strcspn(nm, "@"))};
			for (; lo < n && addr[lo] == sym.st_value; lo++) {
				struct best *c = &b[lo];
				if (!c->have) {
					*c = x;
				} else if (x.sized != c->sized ? x.sized : x.rank < c->rank) {
					bool alias = c->ifunc;
					*c = x;
					c->alias = alias;
				} else if (x.ifunc) {
					c->alias = true;
				}
			}
		}
	}
	for (size_t i = 0; b && i < n; i++)
		is[i] = b[i].have && (b[i].ifunc || b[i].alias);
	free(b);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x != y ? (x < y ? -1 : 1) : 0;
}

/* A stub's name: "name@plt"; an IRELATIVE's the IFUNC's at its resolver
 * (the name shown there), else "offset_0x<file offset>@plt", as perf. */
static int add_stub(struct sym_table *t, uint64_t at, uint64_t size,
		    const char *nm, size_t nl, uint64_t off)
{
	char buf[512];
	int l = nm ? snprintf(buf, sizeof(buf), "%.*s@plt", (int)nl, nm)
		   : snprintf(buf, sizeof(buf), "offset_%#" PRIx64 "@plt", off);
	if (l <= 0 || (size_t)l >= sizeof(buf))
		return 0;
	/* a function or label there wins: only a stub no symbol covers */
	int r = sym_table_add_ranked(t, at, size, buf, (size_t)l, true, 1u << 31);
	return r ? r : 1;
}

/* .plt.got: 8-byte stubs jumping through GOT slots that .rela.dyn fills
 * (GLOB_DAT: functions whose address is also taken). */
static int plt_got_stubs(Elf *e, Elf_Data *dd, size_t strndx, struct sym_table *t)
{
	GElf_Shdr gsh, rsh;
	Elf_Scn *got = section_named(e, ".plt.got", &gsh);
	Elf_Data *gd;
	if (!got || !gsh.sh_entsize || gsh.sh_type != SHT_PROGBITS ||
	    !(gd = elf_getdata(got, NULL)) || gd->d_size < gsh.sh_size)
		return 0;
	struct plt_rel *rel;
	size_t nrel;
	int r = read_rels(section_named(e, ".rela.dyn", &rsh), true, &rel, &nrel);
	int added = 0;
	for (uint64_t i = 0; !r && i + gsh.sh_entsize <= gsh.sh_size; i += gsh.sh_entsize) {
		struct plt_rel key = {.got = plt_jump_slot((const uint8_t *)gd->d_buf + i,
							   gsh.sh_entsize, gsh.sh_addr + i)};
		const struct plt_rel *hit = key.got && nrel ? bsearch(&key, rel, nrel, sizeof(*rel), cmp_rel)
						  : NULL;
		size_t nl = 0;
		const char *nm = hit ? dyn_name(e, dd, strndx, hit->sym, &nl) : NULL;
		r = add_stub(t, gsh.sh_addr + i, gsh.sh_entsize, nm, nl, gsh.sh_offset + i);
		added += r > 0;
		r = r < 0 ? r : 0;
	}
	free(rel);
	return r < 0 ? r : added;
}

int sym_elf_plt(Elf *e, Elf *src, int which, struct sym_table *t)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64)
		return 0;
	GElf_Shdr rsh, psh, ssh, dsh;
	Elf_Scn *plt = section_named(e, ".plt", &psh);
	if (!plt || psh.sh_type != SHT_PROGBITS) /* NOBITS in a debug file */
		return 0;
	const uint64_t ent = psh.sh_entsize == 8 || psh.sh_entsize == 16 ? psh.sh_entsize
			     : psh.sh_addralign == 8 ? 8 : 16;
	Elf_Scn *rel = section_named(e, ".rela.plt", &rsh), *dyn = NULL;
	Elf_Data *dd = NULL;
	if (rel && rsh.sh_type == SHT_RELA && (dyn = elf_getscn(e, rsh.sh_link)) &&
	    gelf_getshdr(dyn, &dsh))
		dd = elf_getdata(dyn, NULL);
	else if ((dyn = section_named(e, ".dynsym", &dsh)))
		dd = elf_getdata(dyn, NULL);
	size_t strndx = dd ? dsh.sh_link : 0;
	int added = plt_got_stubs(e, dd, strndx, t);
	if (added < 0)
		return added;
	struct plt_rel *v;
	size_t n;
	int r = read_rels(rel, false, &v, &n);
	if (r)
		return r;
	/* IBT: callers jump into .plt.sec, one entry per relocation, and
	 * .plt (its header and the lazy entries) is one symbol; else .plt's
	 * entries follow its header, which a .plt of exactly one entry per
	 * relocation lacks (not lazy) */
	Elf_Scn *sec = section_named(e, ".plt.sec", &ssh);
	uint64_t hdr = ent, at = psh.sh_addr, off = psh.sh_offset;
	if (sec && ssh.sh_type == SHT_PROGBITS) {
		hdr = psh.sh_size;
		at = ssh.sh_addr;
		off = ssh.sh_offset;
	} else if (n * ent == psh.sh_size) {
		hdr = 0;
	} else {
		at += ent;
		off += ent;
	}
	if (hdr) {
		r = sym_table_add_ranked(t, psh.sh_addr, hdr, ".plt", 4, false, 1u << 31);
		added += !r;
	}
	/* the IRELATIVE resolvers that an IFUNC symbol is at */
	uint64_t *fn = malloc((n ? n : 1) * sizeof(*fn));
	bool *isf = calloc(n ? n : 1, sizeof(*isf));
	size_t nf = 0;
	if (!fn || !isf)
		r = -ENOMEM;
	for (size_t i = 0; !r && i < n; i++)
		if (!v[i].sym && v[i].type == R_X86_64_IRELATIVE)
			fn[nf++] = v[i].addend;
	if (!r) {
		qsort(fn, nf, sizeof(*fn), cmp_u64);
		mark_ifuncs(src, which, fn, nf, isf);
	}
	for (size_t i = 0; !r && i < n; i++, at += ent, off += ent) {
		size_t nl = 0;
		const char *nm = dyn_name(e, dd, strndx, v[i].sym, &nl);
		uint64_t *f = !nm && v[i].type == R_X86_64_IRELATIVE
				      ? bsearch(&v[i].addend, fn, nf, sizeof(*fn), cmp_u64)
				      : NULL;
		if (f && isf[f - fn] && (nm = sym_table_best_at(t, v[i].addend)))
			nl = strlen(nm);
		r = add_stub(t, at, ent, nm, nl, off);
		added += r > 0;
		r = r < 0 ? r : 0;
	}
	free(fn);
	free(isf);
	free(v);
	return r < 0 ? r : added;
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
