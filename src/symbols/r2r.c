/* SPDX-License-Identifier: MIT */
/*
 * r2r.c - method names of ReadyToRun (precompiled) .NET images, for code
 * no perf map names: framework assemblies (System.Private.CoreLib.dll)
 * run precompiled code from their mapped image.
 *
 * The image is a PE file (ECMA-335 II.25): its CLI header points at the
 * metadata and at the ReadyToRun header ("RTR", dotnet/runtime's
 * docs/design/coreclr/botr/readytorun-format.md). Two of its sections
 * matter: RuntimeFunctions (102), the x64 RUNTIME_FUNCTION array of
 * {begin, end, unwind} RVAs, and MethodDefEntryPoints (103), a NativeArray
 * (NativeFormat: variable-length unsigned numbers, a 16-way block index)
 * giving for each MethodDef row the index of its first runtime function
 * (its main body; funclets and the code of generic instantiations are
 * not named here). Names come from the
 * metadata tables (II.22): MethodDef.Name and the TypeDef that owns the
 * row (TypeDef.MethodList ranges), Namespace.Type.Method. Arguments are
 * not decoded (no signature blobs): "Namespace.Type.Method(...)".
 *
 * Every offset read from the image is checked against it; a malformed
 * part ends the walk with what was read. Fuzzed (fuzz/targets/sym_r2r.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"

#define R2R_SIG 0x00525452u
#define R2R_RUNTIME_FUNCTIONS 102
#define R2R_METHODDEF_ENTRYPOINTS 103
#define R2R_MAX_SECTIONS 96
#define R2R_MAX_METHODS (1u << 22)

struct img {
	const uint8_t *p;
	size_t len;
	const struct sym_elf_seg *segs;
	size_t nsegs;
	bool bad;
};

static uint32_t u8at(struct img *m, uint64_t off)
{
	if (off >= m->len) {
		m->bad = true;
		return 0;
	}
	return m->p[off];
}

static uint32_t u16at(struct img *m, uint64_t off)
{
	if (off > m->len || m->len - off < 2) {
		m->bad = true;
		return 0;
	}
	return (uint32_t)m->p[off] | (uint32_t)m->p[off + 1] << 8;
}

static uint32_t u32at(struct img *m, uint64_t off)
{
	if (off > m->len || m->len - off < 4) {
		m->bad = true;
		return 0;
	}
	return (uint32_t)m->p[off] | (uint32_t)m->p[off + 1] << 8 |
	       (uint32_t)m->p[off + 2] << 16 | (uint32_t)m->p[off + 3] << 24;
}

/* RVA -> file offset through the section table; ~0 when in none. */
static uint64_t rva_off(const struct img *m, uint32_t rva)
{
	for (size_t i = 0; i < m->nsegs; i++) {
		const struct sym_elf_seg *s = &m->segs[i];
		if (rva >= s->vaddr && rva - s->vaddr < s->filesz)
			return rva - s->vaddr + s->offset;
	}
	return ~(uint64_t)0;
}

/* NativeFormat's unsigned numbers (NativeReader::DecodeUnsigned). */
static uint64_t decode_unsigned(struct img *m, uint64_t off, uint32_t *v)
{
	uint32_t b = u8at(m, off);
	if (!(b & 1)) {
		*v = b >> 1;
		return off + 1;
	}
	if (!(b & 2)) {
		*v = (b >> 2) | u8at(m, off + 1) << 6;
		return off + 2;
	}
	if (!(b & 4)) {
		*v = (b >> 3) | u8at(m, off + 1) << 5 | u8at(m, off + 2) << 13;
		return off + 3;
	}
	if (!(b & 8)) {
		*v = (b >> 4) | u8at(m, off + 1) << 4 | u8at(m, off + 2) << 12 |
		     u8at(m, off + 3) << 20;
		return off + 4;
	}
	if (!(b & 16)) {
		*v = u32at(m, off + 1);
		return off + 5;
	}
	m->bad = true;
	*v = 0;
	return off + 1;
}

/* NativeArray::TryGetAt over an array at file offset base. */
static bool native_array_get(struct img *m, uint64_t arr, uint32_t index,
			     uint64_t *out)
{
	uint32_t val;
	uint64_t base = decode_unsigned(m, arr, &val);
	uint32_t n = val >> 2, isz = val & 3;
	const uint32_t block = 16;
	if (m->bad || index >= n)
		return false;
	uint64_t off;
	if (isz == 0)
		off = u8at(m, base + index / block);
	else if (isz == 1)
		off = u16at(m, base + 2 * (uint64_t)(index / block));
	else
		off = u32at(m, base + 4 * (uint64_t)(index / block));
	off += base;
	for (uint32_t bit = block >> 1; bit > 0 && !m->bad; bit >>= 1) {
		uint32_t v;
		uint64_t off2 = decode_unsigned(m, off, &v);
		if (index & bit) {
			if (v & 2) {
				off += v >> 2;
				continue;
			}
		} else if (v & 1) {
			off = off2;
			continue;
		}
		if ((v & 3) == 0 && (v >> 2) == (index & (block - 1))) {
			off = off2;
			*out = off;
			return !m->bad;
		}
		return false;
	}
	*out = off;
	return !m->bad;
}

struct mdtables {
	uint64_t strings, strings_len;
	uint32_t rows[64];
	unsigned str_idx, guid_idx, blob_idx;
	uint64_t typedef_off, methoddef_off;
	unsigned typedef_size, methoddef_size;
	unsigned typedef_name, typedef_ns, typedef_mlist;
	unsigned methoddef_name;
	unsigned method_idx;
};

static unsigned idx_size(const struct mdtables *t, unsigned table)
{
	return t->rows[table] < 65536 ? 2 : 4;
}

/* A coded index over tables (II.24.2.6): 2 bytes while every table's rows
 * fit in the bits left by the tag. */
static unsigned coded_size(const struct mdtables *t, const unsigned *tabs,
			   unsigned n, unsigned tagbits)
{
	for (unsigned i = 0; i < n; i++)
		if (t->rows[tabs[i]] >= (1u << (16 - tagbits)))
			return 4;
	return 2;
}

static uint32_t read_idx(struct img *m, uint64_t off, unsigned size)
{
	return size == 2 ? u16at(m, off) : u32at(m, off);
}

/* The #~ stream: row counts, and where TypeDef and MethodDef rows are. */
static int parse_tables(struct img *m, uint64_t off, uint64_t len,
			struct mdtables *t)
{
	if (len < 24)
		return -RTD_E_FORMAT;
	uint32_t heaps = u8at(m, off + 6);
	uint64_t valid = (uint64_t)u32at(m, off + 8) |
			 (uint64_t)u32at(m, off + 12) << 32;
	uint64_t p = off + 24;
	for (unsigned i = 0; i < 64; i++)
		if (valid & (1ull << i)) {
			t->rows[i] = u32at(m, p);
			p += 4;
		}
	if (m->bad)
		return -RTD_E_TRUNCATED;
	t->str_idx = heaps & 1 ? 4 : 2;
	t->guid_idx = heaps & 2 ? 4 : 2;
	t->blob_idx = heaps & 4 ? 4 : 2;
	static const unsigned resolution_scope[] = {0x00, 0x1A, 0x23, 0x01};
	static const unsigned typedef_or_ref[] = {0x02, 0x01, 0x1B};
	unsigned module = 2 + t->str_idx + 3 * t->guid_idx;
	unsigned typeref = coded_size(t, resolution_scope, 4, 2) + 2 * t->str_idx;
	t->typedef_name = 4;
	t->typedef_ns = 4 + t->str_idx;
	unsigned tdr = coded_size(t, typedef_or_ref, 3, 2);
	t->typedef_mlist = 4 + 2 * t->str_idx + tdr + idx_size(t, 0x04);
	t->method_idx = idx_size(t, 0x06);
	t->typedef_size = t->typedef_mlist + t->method_idx;
	unsigned fieldptr = idx_size(t, 0x04);
	unsigned field = 2 + t->str_idx + t->blob_idx;
	unsigned methodptr = idx_size(t, 0x06);
	t->methoddef_name = 8;
	t->methoddef_size = 8 + t->str_idx + t->blob_idx + idx_size(t, 0x08);
	t->typedef_off = p + (uint64_t)module * t->rows[0x00] +
			 (uint64_t)typeref * t->rows[0x01];
	t->methoddef_off = t->typedef_off +
			   (uint64_t)t->typedef_size * t->rows[0x02] +
			   (uint64_t)fieldptr * t->rows[0x03] +
			   (uint64_t)field * t->rows[0x04] +
			   (uint64_t)methodptr * t->rows[0x05];
	uint64_t end = t->methoddef_off + (uint64_t)t->methoddef_size * t->rows[0x06];
	if (end > off + len || end > m->len || t->rows[0x05] /* MethodPtr: uncompressed */)
		return -RTD_E_FORMAT;
	return 0;
}

static const char *str_at(struct img *m, const struct mdtables *t,
			  uint32_t idx, size_t *n)
{
	if (idx >= t->strings_len)
		return NULL;
	const char *s = (const char *)m->p + t->strings + idx;
	const char *z = memchr(s, 0, (size_t)(t->strings_len - idx));
	if (!z)
		return NULL;
	*n = (size_t)(z - s);
	return s;
}

/* Metadata root (II.24.2.1): the #~ and #Strings streams. */
static int parse_metadata(struct img *m, uint64_t off, uint64_t len,
			  struct mdtables *t)
{
	if (len < 32 || u32at(m, off) != 0x424A5342)
		return -RTD_E_FORMAT;
	uint32_t vlen = u32at(m, off + 12);
	if (vlen > 256)
		return -RTD_E_FORMAT;
	uint64_t p = off + 16 + ((vlen + 3) & ~3u);
	uint32_t nstreams = u16at(m, p + 2);
	p += 4;
	uint64_t tabs = 0, tabs_len = 0;
	for (uint32_t i = 0; i < nstreams && i < 16 && !m->bad; i++) {
		uint32_t so = u32at(m, p), sl = u32at(m, p + 4);
		const char *nm = (const char *)m->p + p + 8;
		size_t room = p + 8 < m->len ? (size_t)(m->len - p - 8) : 0;
		size_t nl = strnlen(nm, room < 32 ? room : 32);
		if (nl == room)
			return -RTD_E_TRUNCATED;
		if (so > len || sl > len - so)
			return -RTD_E_FORMAT;
		if (!strcmp(nm, "#~") || !strcmp(nm, "#-")) {
			tabs = off + so;
			tabs_len = sl;
		} else if (!strcmp(nm, "#Strings")) {
			t->strings = off + so;
			t->strings_len = sl;
		}
		p += 8 + ((nl + 4) & ~(size_t)3);
	}
	if (m->bad || !tabs || !t->strings)
		return -RTD_E_FORMAT;
	return parse_tables(m, tabs, tabs_len, t);
}

static int pe_sections(struct img *m, struct sym_elf_info *info,
		       uint32_t *clr_rva)
{
	if (m->len < 64 || m->p[0] != 'M' || m->p[1] != 'Z')
		return -RTD_E_FORMAT;
	uint32_t pe = u32at(m, 0x3c);
	if (u32at(m, pe) != 0x00004550)
		return -RTD_E_FORMAT;
	uint32_t nsec = u16at(m, pe + 6), optsz = u16at(m, pe + 20);
	uint64_t opt = pe + 24;
	uint32_t magic = u16at(m, opt);
	uint64_t ddir = opt + (magic == 0x20b ? 112 : 96);
	uint32_t ndirs = u32at(m, ddir - 4);
	if ((magic != 0x20b && magic != 0x10b) || ndirs < 15 || nsec > R2R_MAX_SECTIONS)
		return -RTD_E_FORMAT;
	*clr_rva = u32at(m, ddir + 14 * 8);
	info->segs = calloc(nsec ? nsec : 1, sizeof(*info->segs));
	if (!info->segs)
		return -ENOMEM;
	uint64_t sec = opt + optsz;
	for (uint32_t i = 0; i < nsec; i++) {
		uint64_t s = sec + 40 * (uint64_t)i;
		struct sym_elf_seg g = {u32at(m, s + 20), u32at(m, s + 12),
					u32at(m, s + 16), u32at(m, s + 8)};
		info->segs[info->nsegs++] = g;
	}
	m->segs = info->segs;
	m->nsegs = info->nsegs;
	return m->bad ? -RTD_E_TRUNCATED : 0;
}

int sym_r2r_parse(const uint8_t *p, size_t len, struct sym_elf_info *info,
		  struct sym_table *tab)
{
	struct img m = {p, len, NULL, 0, false};
	uint32_t clr;
	memset(info, 0, sizeof(*info));
	int r = pe_sections(&m, info, &clr);
	if (r)
		return r;
	uint64_t c = rva_off(&m, clr);
	if (!clr || c == ~(uint64_t)0)
		return -RTD_E_NOTFOUND; /* not a .NET image */
	uint32_t md_rva = u32at(&m, c + 8), md_size = u32at(&m, c + 12);
	uint32_t mnh = u32at(&m, c + 64);
	uint64_t md = rva_off(&m, md_rva), h = rva_off(&m, mnh);
	if (m.bad || md == ~(uint64_t)0)
		return -RTD_E_FORMAT;
	if (!mnh || h == ~(uint64_t)0 || u32at(&m, h) != R2R_SIG)
		return -RTD_E_NOTFOUND; /* IL only: the JIT's perf map names it */
	struct mdtables t;
	memset(&t, 0, sizeof(t));
	if ((r = parse_metadata(&m, md, md_size, &t)))
		return r;
	/* Signature, MajorVersion, MinorVersion, Flags, NumberOfSections */
	uint32_t nsecs = u32at(&m, h + 12);
	uint64_t rf = ~(uint64_t)0, ep = ~(uint64_t)0;
	uint32_t rf_size = 0;
	for (uint32_t i = 0; i < nsecs && i < R2R_MAX_SECTIONS && !m.bad; i++) {
		uint64_t s = h + 16 + 12 * (uint64_t)i;
		uint32_t type = u32at(&m, s), rva = u32at(&m, s + 4),
			 size = u32at(&m, s + 8);
		if (type == R2R_RUNTIME_FUNCTIONS) {
			rf = rva_off(&m, rva);
			rf_size = size;
		} else if (type == R2R_METHODDEF_ENTRYPOINTS) {
			ep = rva_off(&m, rva);
		}
	}
	if (m.bad || rf == ~(uint64_t)0 || ep == ~(uint64_t)0)
		return -RTD_E_FORMAT;
	uint32_t nfunc = rf_size / 12, nmeth = t.rows[0x06], ntype = t.rows[0x02];
	if (nmeth > R2R_MAX_METHODS)
		return -RTD_E_CAP;
	/* runtime function index -> MethodDef row (0: none yet) */
	uint32_t *owner = calloc(nfunc ? nfunc : 1, sizeof(*owner));
	uint32_t *type_of = calloc(nmeth + 1, sizeof(*type_of));
	if (!owner || !type_of) {
		free(owner);
		free(type_of);
		return -ENOMEM;
	}
	for (uint32_t ti = 0; ti < ntype && !m.bad; ti++) {
		uint64_t row = t.typedef_off + (uint64_t)ti * t.typedef_size;
		uint32_t first = read_idx(&m, row + t.typedef_mlist, t.method_idx);
		uint32_t next = ti + 1 < ntype
					? read_idx(&m, row + t.typedef_size + t.typedef_mlist,
						   t.method_idx)
					: nmeth + 1;
		for (uint32_t mi = first; mi < next && mi <= nmeth; mi++)
			type_of[mi] = ti + 1;
	}
	for (uint32_t rid = 1; rid <= nmeth && !m.bad; rid++) {
		uint64_t off;
		if (!native_array_get(&m, ep, rid - 1, &off))
			continue;
		uint32_t id;
		decode_unsigned(&m, off, &id);
		id = id & 1 ? id >> 2 : id >> 1; /* fixups are not ours to run */
		if (id < nfunc)
			owner[id] = rid;
	}
	int added = 0;
	char name[SYM_MAX_NAME];
	for (uint32_t i = 0; i < nfunc && !m.bad; i++) {
		/* a method's main body; funclets and generic instantiations
		 * (InstanceEntryPoints, not read) stay module+0xOFFSET rather
		 * than be given a neighbour's name */
		uint32_t cur = owner[i];
		if (!cur)
			continue;
		uint32_t begin = u32at(&m, rf + 12 * (uint64_t)i);
		uint32_t end = u32at(&m, rf + 12 * (uint64_t)i + 4);
		uint64_t mrow = t.methoddef_off + (uint64_t)(cur - 1) * t.methoddef_size;
		uint64_t trow = t.typedef_off +
				(uint64_t)(type_of[cur] ? type_of[cur] - 1 : 0) * t.typedef_size;
		size_t ml = 0, tl = 0, nl = 0;
		const char *mn = str_at(&m, &t, read_idx(&m, mrow + t.methoddef_name, t.str_idx), &ml);
		const char *tn = type_of[cur] ? str_at(&m, &t, read_idx(&m, trow + t.typedef_name, t.str_idx), &tl) : NULL;
		const char *ns = type_of[cur] ? str_at(&m, &t, read_idx(&m, trow + t.typedef_ns, t.str_idx), &nl) : NULL;
		if (!mn || m.bad || end <= begin)
			continue;
		size_t k = 0;
		if (ns && nl && nl + 1 < sizeof(name) - k) {
			memcpy(name + k, ns, nl);
			k += nl;
			name[k++] = '.';
		}
		if (tn && tl && tl + 1 < sizeof(name) - k) {
			memcpy(name + k, tn, tl);
			k += tl;
			name[k++] = '.';
		}
		if (ml + 6 < sizeof(name) - k) {
			memcpy(name + k, mn, ml);
			k += ml;
			memcpy(name + k, "(...)", 5);
			k += 5;
		}
		r = sym_table_add(tab, begin, end - begin, name, k, true);
		if (r)
			break;
		added++;
	}
	free(owner);
	free(type_of);
	return r < 0 ? r : added;
}
