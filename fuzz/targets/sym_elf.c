/* SPDX-License-Identifier: MIT */
/*
 * sym_elf - fuzz what the symbolizer reads from an ELF image of another
 * process or container: segments and build-id, .symtab/.dynsym, the
 * .gnu_debuglink name, the PLT's stubs (.plt, .plt.sec, .plt.got and
 * their relocations), MiniDebugInfo (.gnu_debugdata, xz through
 * liblzma), Go's .gopclntab, and DWARF unit ranges and inlined frames
 * (libelf and libdw parse the bytes; this checks what rtdiag builds on
 * them). Invariants: offsets map into segments; looked-up symbols cover
 * their address.
 */
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"

static void image(char *buf, size_t size, int depth)
{
	Elf *e = elf_memory(buf, size);
	if (!e)
		return;
	struct sym_elf_info info;
	if (sym_elf_info(e, &info) == 0) {
		uint64_t va;
		for (size_t i = 0; i < info.nsegs; i++)
			sym_elf_off_to_vaddr(&info, info.segs[i].offset, &va);
		if (strlen(info.debuglink) >= sizeof(info.debuglink))
			abort();
		struct sym_table t = {0};
		sym_elf_symbols(e, 0, &t, true);
		sym_elf_symbols(e, 1, &t, true);
		sym_go_pclntab(e, &t);
		sym_elf_plt(e, e, 0, &t);
		sym_table_finish(&t);
		for (size_t i = 0; i < t.n && i < 32; i++) {
			const struct sym_symbol *s = sym_table_find(&t, t.v[i].addr);
			if (!s || s->addr > t.v[i].addr)
				abort();
		}
		struct sym_dwarf *d = sym_dwarf_open(e);
		if (d) {
			struct sym_dwarf_frame fr[8];
			for (size_t i = 0; i < t.n && i < 8; i++)
				sym_dwarf_frames(d, t.v[i].addr, fr, 8, &t, true);
			sym_dwarf_close(d);
		}
		sym_table_free(&t);
		uint8_t *dd;
		size_t dl;
		if (depth == 0 && sym_elf_debugdata(e, &dd, &dl) == 0) {
			image((char *)dd, dl, 1);
			free(dd);
		}
		sym_elf_info_clear(&info);
	}
	elf_end(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	elf_version(EV_CURRENT);
	/* libelf may write to the image it converts: give it a copy */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	image(buf, size, 0);
	free(buf);
	return 0;
}
