/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/symbols.h - address -> name, for the processes of one machine.
 *
 * A symbolizer follows the address spaces of processes (their mappings, as
 * /proc/PID/maps or perf's MMAP2/FORK/EXEC/EXIT records describe them) and
 * names the code at an address the way perf report does, without perf:
 *
 *  - ELF .symtab and .dynsym; a separate debug file found by build-id
 *    (/usr/lib/debug/.build-id/xx/yyyy.debug) or .gnu_debuglink;
 *    MiniDebugInfo (.gnu_debugdata, xz, decompressed with liblzma);
 *    debuginfod (libdebuginfod, DEBUGINFOD_URLS) for binaries with neither;
 *  - DWARF (libdw): inlined functions as frames of their own, file:line;
 *  - the kernel from /proc/kallsyms (modules as [name]);
 *  - JIT code (.NET, node, ...) from the process's /tmp/perf-PID.map, read
 *    through its root and TMPDIR, under its pid in its own pid namespace;
 *  - Go binaries from their .gopclntab when they have no symbol table;
 *  - C++ and Rust names demangled (libiberty).
 *
 * Files are opened through /proc/PID/root, so a process in a container is
 * symbolized from its own filesystem; a file is opened when the first
 * address in it is located, so it survives the process's exit and a
 * deleted file is read through /proc/PID/map_files. An address no source
 * names comes back as "module+0xOFFSET" (file offset), never dropped.
 *
 * Two steps, so a profiler pays for names once per distinct address:
 * rtd_sym_locate() turns (pid, address) into a location id at sample time
 * (a mapping lookup, no file is parsed), and rtd_sym_resolve() names a
 * location later (symbol tables and DWARF are loaded on first use).
 *
 * Strings returned are owned by the symbolizer and valid until it is freed.
 * A symbolizer is used from one thread.
 */
#ifndef RTDIAG_SYMBOLS_H
#define RTDIAG_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtd_symbolizer rtd_symbolizer;

/* What kind of code a frame is (flame graph colours, profile frames). */
enum rtd_sym_kind {
	RTD_SYM_UNKNOWN = 0, /* no source named it */
	RTD_SYM_NATIVE,      /* ELF code: C, C++, Rust, ... */
	RTD_SYM_KERNEL,      /* the kernel or a kernel module */
	RTD_SYM_MANAGED,     /* .NET JIT or ReadyToRun code */
	RTD_SYM_GO,          /* a Go function */
	RTD_SYM_GO_RUNTIME,  /* Go's runtime.* */
	RTD_SYM_JIT,         /* other JIT code named by a perf map */
	RTD_SYM_RUNTIME,     /* a language runtime's own library: libcoreclr,
				libclrjit, libjvm, libpython... (named or not;
				rtd_sym_runtime_lib) */
};

/* Flags for rtd_sym_opts.flags. */
enum rtd_sym_flags {
	RTD_SYM_NO_DWARF = 1u << 0,      /* no inlined frames, no file:line */
	RTD_SYM_NO_DEBUGINFOD = 1u << 1, /* never ask a debuginfod server */
	RTD_SYM_NO_DEMANGLE = 1u << 2,   /* keep mangled names */
	RTD_SYM_NO_PROC_LOAD = 1u << 3,  /* never read /proc/PID/maps itself */
	/* keep symbol versions in names (memcpy@@GLIBC_2.14), as perf
	 * report and perf script show them */
	RTD_SYM_VERSIONED = 1u << 4,
};

/**
 * struct rtd_sym_opts - options for rtd_symbolizer_new()
 * @sz: sizeof(struct rtd_sym_opts)
 * @flags: RTD_SYM_* flags
 * @debug_dirs: folders holding separate debug files (NULL:
 *              "/usr/lib/debug"); ':'-separated
 * @kallsyms: kernel symbol file (NULL: /proc/kallsyms)
 * @debuginfod_urls: servers to ask (NULL: $DEBUGINFOD_URLS; "" none)
 * @dwarf_max: bytes of DWARF held at once (0: RTD_SYM_DWARF_MAX). libdw
 *             decompresses every debug section of a file when it opens
 *             it (libc's: ~10 MB); a file whose DWARF does not fit in
 *             what is left is named from its symbol table only (no
 *             inlined frames, no file:line), said once through the warn
 *             callback and counted in rtd_sym_stats' @dwarf_skipped
 */
struct rtd_sym_opts {
	size_t sz;
	unsigned flags;
	const char *debug_dirs;
	const char *kallsyms;
	const char *debuginfod_urls;
	uint64_t dwarf_max;
};

/* RTD_SYM_DWARF_MAX - the default of rtd_sym_opts.dwarf_max */
#define RTD_SYM_DWARF_MAX (8ull << 20)

/**
 * struct rtd_sym_frame - one named frame (rtd_sym_resolve())
 * @name: function name, demangled; never NULL ("module+0xOFFSET" or
 *        "[unknown]+0xADDR" when no source names it)
 * @module: the mapped file as the process names it, "[kernel.kallsyms]",
 *          "[name]" for a kernel module, "[jit]" for perf-map code,
 *          "[anon]" / "[unknown]"
 * @file: source file, or NULL
 * @line: source line, or 0
 * @addr: the address as first located (in the first process seen)
 * @offset: file offset for file-backed code, else the address
 * @sym_offset: bytes from the start of the symbol, when named
 * @build_id: the module's GNU build-id, or NULL
 * @build_id_len: its length
 * @map_start: the mapping's first address (in the first process seen)
 * @map_limit: the byte after its last
 * @map_pgoff: its file offset
 * @kind: an enum rtd_sym_kind value
 * @inlined: this frame was inlined into the next (outer) one
 * @named: a symbol source named it (false: @name is module+0xOFFSET)
 */
struct rtd_sym_frame {
	const char *name;
	const char *module;
	const char *file;
	uint32_t line;
	uint64_t addr;
	uint64_t offset;
	uint64_t sym_offset;
	const uint8_t *build_id;
	uint8_t build_id_len;
	uint64_t map_start, map_limit, map_pgoff;
	uint8_t kind;
	bool inlined;
	bool named;
};

/* Caps: objects (files, JIT maps) and locations of one symbolizer. */
#define RTD_SYM_MAX_OBJECTS 65536
#define RTD_SYM_MAX_LOCATIONS (1u << 24)
/* Cap on inlined frames returned for one address. */
#define RTD_SYM_MAX_INLINE 64

/**
 * rtd_symbolizer_new - create a symbolizer that knows no process yet
 * @opts: options, or NULL for defaults
 * @out: receives it
 *
 * Returns: 0, -RTD_E_INVAL or -ENOMEM.
 */
RTD_API int rtd_symbolizer_new(const struct rtd_sym_opts *opts,
			       rtd_symbolizer **out);

/**
 * rtd_symbolizer_free - free a symbolizer, its open files and strings
 * @s: symbolizer, or NULL
 */
RTD_API void rtd_symbolizer_free(rtd_symbolizer *s);

/**
 * rtd_sym_proc_load - read a process's mappings from /proc/PID/maps
 * @s: symbolizer
 * @pid: process id (as this machine's /proc sees it)
 *
 * Replaces what was known about @pid. rtd_sym_locate() does this itself
 * for a pid it has not seen (unless RTD_SYM_NO_PROC_LOAD).
 *
 * Returns: 0, -RTD_E_NOTFOUND when the process is gone, or a negative errno.
 */
RTD_API int rtd_sym_proc_load(rtd_symbolizer *s, pid_t pid);

/**
 * rtd_sym_proc_objects - load the symbols of every file a process runs code
 * from now, not when a first address in it is located
 * @s: symbolizer
 * @pid: process (its mappings read from /proc when not known yet)
 *
 * Each executable file mapping of @pid (not anonymous code, not perf
 * maps) gets its object, and the object's symbols are read: by the
 * background thread when one runs (rtd_sym_preload_start()), else before
 * this returns. A long recording calls it at its start so that its memory
 * is spent there, and not in a step at whatever minute a sample first
 * lands in a library (the flight recorder's flat RSS, issue #31).
 *
 * Returns: the number of objects new to @s (a file mapped several times
 * or already located counts once or not at all), -RTD_E_INVAL, or
 * -ENOMEM. Files that cannot be opened are skipped (their frames are
 * named module+offset, as when located).
 */
RTD_API int rtd_sym_proc_objects(rtd_symbolizer *s, pid_t pid);

/**
 * rtd_sym_perfmap_path - where a process's perf map is, seen from here
 * @pid: the process
 * @out: receives "/proc/PID/root" + its TMPDIR (/tmp without one) +
 *       "/perf-NSPID.map", NSPID being its pid in its own namespace
 * @n: size of @out
 *
 * Returns: 0, or -RTD_E_CAP when @out is too small.
 */
RTD_API int rtd_sym_perfmap_path(pid_t pid, char *out, size_t n);

/**
 * rtd_sym_file_build_id - the build id a file had when it was recorded
 * @s: symbolizer
 * @path: the file, as its mappings name it
 * @id: its GNU build id (a perf.data file's build-id table, or an MMAP2
 *      record that carries one)
 * @len: bytes of @id (1-20)
 *
 * A file of a recording read later may be gone or rebuilt. As perf report
 * does, a file that cannot be opened at @path, or whose build id is not
 * @id, is then looked up in perf's build-id cache: $PERF_BUILDID_DIR, else
 * $HOME/.debug, as .build-id/XX/REST/elf (and the older
 * .build-id/XX/REST, a link to the file). Found nowhere, its frames are
 * module+offset, as before.
 *
 * Returns: 0, -RTD_E_INVAL, or -ENOMEM.
 */
RTD_API int rtd_sym_file_build_id(rtd_symbolizer *s, const char *path,
				  const uint8_t *id, size_t len);

/**
 * rtd_sym_proc_mmap - a new mapping in a process (PERF_RECORD_MMAP2)
 * @s: symbolizer
 * @pid: process id
 * @start: first address
 * @len: length in bytes
 * @pgoff: file offset of @start
 * @path: file name as the kernel gives it ("//anon", "[vdso]", ...)
 * @dev: device (makedev(maj, min)), 0 when unknown
 * @ino: inode, 0 when unknown
 * @prot: PROT_* bits (only executable mappings matter)
 *
 * Returns: 0, -RTD_E_CAP or -ENOMEM.
 */
RTD_API int rtd_sym_proc_mmap(rtd_symbolizer *s, pid_t pid, uint64_t start,
			      uint64_t len, uint64_t pgoff, const char *path,
			      uint64_t dev, uint64_t ino, uint32_t prot);

/**
 * rtd_sym_proc_fork - a new process shares (a copy of) its parent's mappings
 * @s: symbolizer
 * @ppid: the parent
 * @pid: the child
 *
 * Returns: 0 or -ENOMEM.
 */
RTD_API int rtd_sym_proc_fork(rtd_symbolizer *s, pid_t ppid, pid_t pid);

/**
 * rtd_sym_proc_exec - a process replaced its image: forget its mappings
 * @s: symbolizer
 * @pid: process id
 */
RTD_API void rtd_sym_proc_exec(rtd_symbolizer *s, pid_t pid);

/**
 * rtd_sym_proc_exit - a process ended: forget it (what was located in it
 * stays resolvable)
 * @s: symbolizer
 * @pid: process id
 */
RTD_API void rtd_sym_proc_exit(rtd_symbolizer *s, pid_t pid);

/**
 * rtd_sym_locate - the location id of an address of a process
 * @s: symbolizer
 * @pid: process id (-1 or 0 with @kernel for kernel addresses)
 * @addr: the address
 * @kernel: a kernel address (from the kernel part of a callchain)
 *
 * Cheap: a mapping lookup and a hash; the file behind a mapping seen for
 * the first time is opened (not parsed). Equal (file, offset) pairs get
 * equal ids, whatever process they were seen in.
 *
 * Returns: the id (>= 0), -RTD_E_CAP, or -ENOMEM.
 */
RTD_API int64_t rtd_sym_locate(rtd_symbolizer *s, pid_t pid, uint64_t addr,
			       bool kernel);

/**
 * rtd_sym_nlocations - number of location ids handed out so far
 * @s: symbolizer
 *
 * Returns: the count; ids are 0 .. count-1.
 */
RTD_API size_t rtd_sym_nlocations(const rtd_symbolizer *s);

/**
 * rtd_sym_keep_locations - forget every location but those marked, and the
 * names resolves gave out
 * @s: symbolizer
 * @keep: @n bytes: non-zero at the ids to keep (ids at or past @n go)
 * @n: entries of @keep (and of @remap)
 * @remap: NULL, or @n entries: each id's new id, -1 when forgotten; the
 *         ids kept are renumbered 0 .. count-1 in their old order
 *
 * For a symbolizer that lives on (a flight recorder, an agent): each new
 * address a recording meets is a location, and each resolve copies its
 * names, so both grow for as long as the symbolizer lives. A caller that
 * copied what it needs calls this between windows. What was loaded (the
 * processes' mappings, the files' symbols and DWARF) stays. Every name,
 * file and module string rtd_sym_resolve() gave before is freed, except
 * the modules' paths.
 *
 * Returns: the number of locations kept, or -RTD_E_INVAL or -ENOMEM (the
 * hash of the locations not rebuilt: the symbolizer is unusable).
 */
RTD_API int rtd_sym_keep_locations(rtd_symbolizer *s, const uint8_t *keep, size_t n,
				   int64_t *remap);

/**
 * rtd_sym_runtime_lib - whether a file is a language runtime's own library
 * @path: a path or file name ("/usr/lib/dotnet/shared/.../libcoreclr.so")
 *
 * The runtimes' native code a profile of a managed, JVM or Python program
 * shows beside the program's: .NET's libcoreclr, libclrjit, libhostfxr,
 * libhostpolicy, libcoreclrtraceptprovider, libmscordaccore, libmscordbi
 * and libSystem.*.so; libjvm; libpython*; libruby*; libnode. Their frames
 * have kind RTD_SYM_RUNTIME, named or not.
 *
 * Returns: true for one of them.
 */
RTD_API bool rtd_sym_runtime_lib(const char *path);

/**
 * rtd_sym_resolve - name a location
 * @s: symbolizer
 * @loc: an id from rtd_sym_locate()
 * @out: frames, innermost first: inlined functions, then the function
 *       that contains them (the last entry is never @inlined)
 * @max: room in @out (RTD_SYM_MAX_INLINE + 1 is always enough)
 *
 * Loads the module's symbols and DWARF on first use. Never fails to name:
 * an address no source knows gets "module+0xOFFSET".
 *
 * Returns: the number of frames (>= 1), or -RTD_E_INVAL for a bad id.
 */
RTD_API int rtd_sym_resolve(rtd_symbolizer *s, int64_t loc,
			    struct rtd_sym_frame *out, size_t max);

/**
 * rtd_sym_resolve_addr - locate and resolve at once
 * @s: symbolizer
 * @pid: process id
 * @addr: address
 * @kernel: a kernel address
 * @out: frames as rtd_sym_resolve()
 * @max: room in @out
 *
 * Returns: as rtd_sym_resolve(), or the error of rtd_sym_locate().
 */
RTD_API int rtd_sym_resolve_addr(rtd_symbolizer *s, pid_t pid, uint64_t addr,
				 bool kernel, struct rtd_sym_frame *out,
				 size_t max);

/**
 * rtd_sym_preload_start - load symbols in a background thread as objects
 * are first located
 * @s: symbolizer
 *
 * From now on each file (and the kernel) is handed to a thread that reads
 * its symbol tables and DWARF while the caller goes on locating: a
 * profiler pays little for names when its recording ends. The caller may
 * go on calling rtd_sym_locate() and the rtd_sym_proc_*() functions;
 * rtd_sym_resolve(), rtd_sym_stats() and rtd_symbolizer_free() first wait
 * for the thread (rtd_sym_preload_finish()).
 *
 * Returns: 0, or a negative errno when the thread cannot start (then
 * symbols load when resolved, as without it).
 */
RTD_API int rtd_sym_preload_start(rtd_symbolizer *s);

/**
 * rtd_sym_preload_finish - wait until the background thread has loaded
 * every object handed to it, and stop it
 * @s: symbolizer (nothing happens without a background thread)
 */
RTD_API void rtd_sym_preload_finish(rtd_symbolizer *s);

/**
 * rtd_sym_unwind - walk a copy of a user stack with CFI (libdw)
 * @s: symbolizer (knows the process's mappings)
 * @pid: process
 * @tid: thread
 * @regs: user registers as perf samples them (PERF_SAMPLE_REGS_USER,
 *        x86-64: enum perf_event_x86_regs order), borrowed
 * @nregs: their count
 * @mask: the attr's sample_regs_user: which registers @regs holds
 * @stack: the copy of the stack from the stack pointer up (PERF_SAMPLE_
 *         STACK_USER), borrowed
 * @stack_len: its valid bytes (the sample's dyn_size)
 * @ips: receives the call chain, leaf first: the sampled address, then
 *       each caller's address to name it by (name each as it is, never
 *       one byte back): its return address minus one, which lies in its
 *       call, but for a frame a signal interrupted (the one above a
 *       signal frame, whose CIE says "S") the address it was at, as
 *       perf names them
 * @max: room in @ips
 *
 * Call frame information comes from each module's .eh_frame or
 * .debug_frame; where a module has none (JIT code, code built without
 * CFI) libdw's frame-pointer fallback goes on. The process's modules are
 * reported to libdw once and again only when its mappings change.
 *
 * Returns: the number of addresses (1 when only the sampled one could be
 * found), 0 when @regs hold no IP, or a negative error.
 */
RTD_API int rtd_sym_unwind(rtd_symbolizer *s, pid_t pid, pid_t tid,
			   const uint8_t *regs, uint32_t nregs, uint64_t mask,
			   const uint8_t *stack, uint64_t stack_len,
			   uint64_t *ips, size_t max);

/**
 * rtd_sym_demangle - demangle a C++ or Rust (legacy and v0) name
 * @name: a symbol name
 * @out: receives a malloc'd demangled name (caller frees), or NULL when
 *       @name is not mangled
 *
 * Returns: 0 or -ENOMEM.
 */
RTD_API int rtd_sym_demangle(const char *name, char **out);

/**
 * struct rtd_sym_stats - what a symbolizer did
 * @sz: sizeof(struct rtd_sym_stats), set by the caller
 * @processes: processes known now
 * @objects: files and maps seen
 * @objects_loaded: those whose symbols were loaded
 * @locations: location ids handed out
 * @symbols: ELF/pclntab/perf-map symbols loaded in all
 * @debug_files: separate debug files used (build-id, debuglink)
 * @debugdata: MiniDebugInfo sections used
 * @debuginfod: files fetched through debuginfod
 * @unnamed: resolved locations no source named
 * @dwarf_bytes: DWARF held now (its debug sections, decompressed)
 * @dwarf_skipped: files whose DWARF was not read: over @dwarf_max
 * @locations_held: location ids held now (rtd_sym_keep_locations() forgets)
 * @name_bytes: bytes held by the names resolves copied (demangled names,
 *              "module+0x..."): each resolve copies its names again, until
 *              rtd_sym_keep_locations() frees them
 */
struct rtd_sym_stats {
	size_t sz;
	uint64_t processes;
	uint64_t objects;
	uint64_t objects_loaded;
	uint64_t locations;
	uint64_t symbols;
	uint64_t debug_files;
	uint64_t debugdata;
	uint64_t debuginfod;
	uint64_t unnamed;
	uint64_t dwarf_bytes;
	uint64_t dwarf_skipped;
	uint64_t locations_held;
	uint64_t name_bytes;
};

/**
 * rtd_sym_stats - counters of a symbolizer
 * @s: symbolizer
 * @st: filled up to @st->sz bytes
 */
RTD_API void rtd_sym_stats(const rtd_symbolizer *s, struct rtd_sym_stats *st);

/**
 * typedef rtd_sym_warn_fn - told about a problem worth a line to the user
 * @msg: e.g. "pid 42: /usr/bin/app: cannot open (Permission denied)"
 * @ctx: the pointer given to rtd_sym_set_warn()
 */
typedef void (*rtd_sym_warn_fn)(const char *msg, void *ctx);

/**
 * rtd_sym_set_warn - set the callback for warnings (each said once)
 * @s: symbolizer
 * @fn: callback, or NULL
 * @ctx: passed to @fn
 */
RTD_API void rtd_sym_set_warn(rtd_symbolizer *s, rtd_sym_warn_fn fn,
			      void *ctx);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_SYMBOLS_H */
