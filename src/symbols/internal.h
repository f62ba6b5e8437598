/* SPDX-License-Identifier: MIT */
/* internal.h - the symbols module's private structures and helpers. */
#ifndef RTD_SYMBOLS_INTERNAL_H
#define RTD_SYMBOLS_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/map.h"
#include "rtdiag/symbols.h"

/* Caps on what comes from files and /proc. */
#define SYM_MAX_SYMBOLS (1u << 24)       /* symbols of one object */
#define SYM_MAX_MAPPINGS (1u << 20)      /* executable mappings of a process */
#define SYM_MAX_PROCS 65536              /* processes followed at once */
#define SYM_MAX_DEBUGDATA (512u << 20)   /* a decompressed .gnu_debugdata */
#define SYM_MAX_TEXT_FILE (1u << 30)     /* kallsyms, a perf map */
#define SYM_MAX_NAME 4096                /* one symbol name in a text file */
#define SYM_MAX_CUS (1u << 22)           /* DWARF units of one object */

/* One named range: a function. */
struct sym_symbol {
	uint64_t addr;
	uint64_t size; /* 0: up to the next symbol */
	const char *name;
	uint32_t rank; /* among aliases at one address the lowest is shown */
};

/* A sorted table of symbols with the strings they point to. */
struct sym_table {
	struct sym_symbol *v;
	size_t n, cap;
	char **pools;    /* string blocks owned by the table */
	size_t npools;
	char *pool_cur;  /* room left in the last pool */
	size_t pool_left;
	size_t pool_bytes; /* the pools' sizes, summed */
};

void sym_table_free(struct sym_table *t);
/* Add a symbol; the name is copied when copy is set, else borrowed. */
int sym_table_add(struct sym_table *t, uint64_t addr, uint64_t size,
		  const char *name, size_t nlen, bool copy);
/* The same with a rank: of aliases at one address (and of the same
 * sizedness) the lowest rank is kept, the first added among equals. */
int sym_table_add_ranked(struct sym_table *t, uint64_t addr, uint64_t size,
			 const char *name, size_t nlen, bool copy,
			 uint32_t rank);
/* A symbol's binding, for sym_alias_rank(). */
enum { SYM_BIND_GLOBAL, SYM_BIND_LOCAL, SYM_BIND_WEAK };
/* The rank of one of several names at an address, as perf chooses
 * (tools/perf/util/symbol.c, choose_best_symbol()): a strong name over a
 * weak one, a global over a local, fewer leading underscores, then the
 * longest name; the first added among equals. */
uint32_t sym_alias_rank(unsigned bind, const char *name, size_t len);
/* Sort by address, drop exact duplicates (keep the first named), and
 * give size-0 symbols the room up to the next one. */
void sym_table_finish(struct sym_table *t);
/* The symbol containing addr, or NULL. */
const struct sym_symbol *sym_table_find(const struct sym_table *t,
					uint64_t addr);
/* The name an unsorted @t would show at exactly @addr (a sized symbol
 * first, then the lowest rank, then the first added), or NULL. */
const char *sym_table_best_at(const struct sym_table *t, uint64_t addr);
/* Copy a string into the table's pools. */
const char *sym_table_strdup(struct sym_table *t, const char *s, size_t n);

/* ---- text parsers over untrusted bytes (fuzzed) -------------------------- */

/* /proc/kallsyms: "ADDR TYPE NAME [MODULE]" lines. Text symbols (t, T,
 * w, W) go into t, module names into their pool as "[mod]" prefixes are
 * kept per symbol through modname (borrowed from t's pools). */
int sym_kallsyms_parse(const char *buf, size_t len, struct sym_table *t,
		       size_t *bad_line);
/* The same over a kallsyms file read a piece at a time (rtd_kallsyms_read()):
 * 0, -RTD_E_FORMAT, -RTD_E_CAP, or -errno when it cannot be read. */
int sym_kallsyms_read(const char *path, struct sym_table *t, size_t *bad_line);

/* A perf map: "START SIZE NAME" lines, hex without 0x (0x accepted). */
int sym_perfmap_parse(const char *buf, size_t len, struct sym_table *t,
		      size_t *bad_line);

/* Normalize a .NET perf map name ("instance void [Asm] NS.Type::M(int32)[Optimized]")
 * to "NS.Type.M(int32)" into out (cap n). Returns out, or NULL when the
 * name is not in .NET's shape. */
const char *sym_dotnet_name(const char *in, char *out, size_t n);

/* ---- ELF ---------------------------------------------------------------- */

struct sym_elf_seg {
	uint64_t offset, vaddr, filesz, memsz;
};

/* What is learned from one ELF image: segments, build-id, symbols. */
struct sym_elf_info {
	int type;            /* ET_EXEC, ET_DYN, ... */
	struct sym_elf_seg *segs;
	size_t nsegs;
	uint8_t build_id[64];
	uint8_t build_id_len;
	bool has_symtab;     /* a .symtab with functions */
	bool has_debug_info; /* .debug_info */
	bool has_debugdata;  /* .gnu_debugdata */
	bool is_go;          /* .gopclntab or a Go build id note */
	char debuglink[256]; /* .gnu_debuglink file name, "" when none */
};

struct Elf;
/* Read segments, build-id, flags of an image. */
int sym_elf_info(struct Elf *e, struct sym_elf_info *out);
void sym_elf_info_clear(struct sym_elf_info *i);
/* Flags of sym_elf_symbols() (true: SYM_ELF_COPY). */
enum { SYM_ELF_COPY = 1u << 0, SYM_ELF_VERSIONED = 1u << 1 };
/* Add the function symbols of .symtab (which = 0) or .dynsym (1): names
 * copied with SYM_ELF_COPY (else borrowed from the image); a symbol
 * version in a name ("memcpy@@GLIBC_2.14") kept with SYM_ELF_VERSIONED,
 * else cut off (then the name is copied). */
int sym_elf_symbols(struct Elf *e, int which, struct sym_table *t,
		    unsigned flags);
/* Decompress .gnu_debugdata into a malloc'd buffer (xz). */
/* x86-64: the PLT's stubs named as perf synthesizes them: ".plt" for its
 * header (for all of .plt beside a .plt.sec), "name@plt" for each entry of
 * .plt.sec, or of .plt after its header, by .rela.plt's relocations in the
 * order of the GOT slots they fill (not the table's order: IRELATIVEs come
 * last there); an IRELATIVE's by the IFUNC at its resolver, named as @t
 * names it (@src's .symtab (which = 0) or .dynsym (1) says which are
 * IFUNCs), else "offset_0x<file offset>@plt"; and .plt.got's stubs by the
 * .rela.dyn relocation of the GOT slot each jumps through. Read from @e,
 * the file that runs (a debug file's .plt is NOBITS). Each ranked below
 * any symbol at the same address. Returns the count or an error. */
int sym_elf_plt(struct Elf *e, struct Elf *src, int which, struct sym_table *t);
int sym_elf_debugdata(struct Elf *e, uint8_t **out, size_t *len);
/* File offset -> link-time virtual address (through PT_LOAD). */
bool sym_elf_off_to_vaddr(const struct sym_elf_info *i, uint64_t off,
			  uint64_t *vaddr);
/* The Go pclntab names of an image into t (when it has no symtab). */
int sym_go_pclntab(struct Elf *e, struct sym_table *t);
/* Go's function table from raw .gopclntab bytes at text start textva. */
int sym_pclntab_parse(const uint8_t *p, size_t len, uint64_t textva,
		      struct sym_table *t);

/* Method names of a ReadyToRun .NET image (PE) into t, by RVA; its
 * sections into info->segs (file offset -> RVA). Returns the count, or
 * -RTD_E_NOTFOUND for a PE that is no R2R .NET image. */
int sym_r2r_parse(const uint8_t *p, size_t len, struct sym_elf_info *info,
		  struct sym_table *t);

/* ---- DWARF ---------------------------------------------------------------- */

struct sym_dwarf;
/* Open the DWARF of an Elf (NULL when it has none). */
struct sym_dwarf *sym_dwarf_open(struct Elf *e);
/* What opening it would hold: its debug sections' bytes, decompressed. */
uint64_t sym_dwarf_size(struct Elf *e);
void sym_dwarf_close(struct sym_dwarf *d);
struct sym_dwarf_frame {
	const char *name;    /* interned in t */
	const char *file;    /* interned in t */
	uint32_t line;
};
/* Frames at a link-time address, innermost first (inlined ones, then the
 * function). Returns the count (0 when DWARF has no scope there). Names are
 * copied into t's string pools. */
int sym_dwarf_frames(struct sym_dwarf *d, uint64_t vaddr,
		     struct sym_dwarf_frame *out, size_t max,
		     struct sym_table *strings, bool demangle);

/* ---- the symbolizer's state (symbolizer.c, shared with unwind.c) ---------- */

#include <libelf.h>
struct debuginfod_client;
struct sym_unwinder;

enum obj_kind { OBJ_FILE = 1, OBJ_KERNEL, OBJ_PERFMAP, OBJ_SPECIAL, OBJ_UNKNOWN };

struct sym_obj {
	uint8_t kind;
	bool loaded;
	bool dotnet;            /* perf map of a .NET process */
	bool warned;
	bool is_pe;             /* a ReadyToRun .NET image, named from it */
	bool shared_syms;       /* kernel: syms is the process-wide table */
	const char *path;       /* as the process names it (interned) */
	pid_t pid;              /* first process it was seen in */
	uint64_t dev, ino;
	uint64_t map_start, map_limit, map_pgoff;
	int fd;                 /* until loaded; -1 (a perf map's stays open) */
	uint64_t perfmap_read;  /* the perf map's bytes when last read */
	uint64_t perfmap_tried; /* monotonic ns: opening a missing map, last */
	char *perfmap_host;     /* perf map: path outside the container */
	/* files */
	Elf *elf;
	struct sym_elf_info info;
	Elf *dbg;               /* separate debug file or MiniDebugInfo */
	int dbg_fd;
	uint8_t *dbg_mem;
	size_t dbg_len;
	struct sym_dwarf *dw;
	uint64_t dw_bytes;      /* what dw holds, counted in st.dwarf_bytes */
	struct sym_table syms;
};

struct sym_map {
	uint64_t start, end, pgoff;
	uint64_t dev, ino;
	const char *path;       /* interned */
	int32_t obj;            /* -1 until an address in it is located */
};

struct sym_proc {
	pid_t pid;
	struct sym_map *m;
	size_t n, cap;
	int32_t perfmap;        /* object of its perf map, -1 */
	bool dotnet;            /* maps libcoreclr.so */
	unsigned gen;           /* bumped when its mappings change */
	struct sym_unwinder *uw; /* dwarf unwinding state, or NULL */
};

struct sym_loc {
	uint32_t obj;
	uint64_t off;
	uint64_t addr;
};

struct rtd_symbolizer {
	unsigned flags;
	char *debug_dirs;
	char *kallsyms;
	struct sym_obj **objs;
	size_t nobjs, objs_cap;
	rtd_map obj_by_key;
	struct sym_loc *locs;
	size_t nlocs, locs_cap;
	uint32_t *lht;          /* id + 1, 0 empty */
	size_t lht_size;
	rtd_map procs;
	pid_t last_pid;
	struct sym_proc *last_proc;
	int32_t kernel_obj, unknown_obj;
	struct sym_table strings; /* paths: live as long as the symbolizer */
	struct sym_table names;   /* names copied by resolves (demangled, module+0x...):
				   * freed by rtd_sym_keep_locations() */
	rtd_strmap paths;
	rtd_strmap build_ids;   /* path -> [len, id...] in strings */
	struct rtd_sym_stats st;
	rtd_sym_warn_fn warn;
	void *warn_ctx;
	struct debuginfod_client *dbgd;
	bool dbgd_tried;
	struct sym_loader *bg;  /* background loading, or NULL */
	uint64_t dwarf_max;     /* rtd_sym_opts.dwarf_max */
	char tmp[SYM_MAX_NAME + 128];
};


/* The process's state, read from /proc when first asked for. */
struct sym_proc *sym_proc_find(rtd_symbolizer *s, pid_t pid);
/* An object for a file mapping (opened when new). */
int32_t sym_map_object(rtd_symbolizer *s, struct sym_proc *p, struct sym_map *m);
/* Open the file of a file mapping as the process sees it (its root, or
 * /proc/PID/map_files for one deleted since), else the host's. */
int sym_open_mapping(pid_t pid, const struct sym_map *m);
void sym_unwinder_free(struct sym_unwinder *u);

/* ---- demangling ------------------------------------------------------------- */
/* A demangled copy in t's pools, or name itself when not mangled. */
const char *sym_demangle_into(struct sym_table *t, const char *name);

#endif /* RTD_SYMBOLS_INTERNAL_H */
