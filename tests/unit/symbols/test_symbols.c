/* SPDX-License-Identifier: MIT */
/*
 * The symbols module: text parsers (/proc/PID/maps: tests/unit/common/test_maps.c), symbol tables, demangling, Go's
 * pclntab, and the symbolizer on this very test program (its own ELF
 * .symtab and DWARF, an inlined function, a JIT perf map of its own).
 */
#include "test_util.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "rtdiag/profile.h"
#include "symbols/internal.h"

static void kallsyms_text(void **state)
{
	(void)state;
	const char in[] = "ffffffff81000000 T _text\n"
			  "ffffffff81000100 t do_thing\n"
			  "ffffffff81000200 D some_data\n"
			  "ffffffff81000300 T next_fn\n"
			  "0000000000000000 T hidden\n"
			  "ffffffffc0001000 t mod_fn\t[ext4]\n";
	struct sym_table t = {0};
	size_t bad;
	assert_int_equal(sym_kallsyms_parse(in, sizeof(in) - 1, &t, &bad), 0);
	assert_int_equal(t.n, 4); /* data and the hidden one skipped */
	const struct sym_symbol *s = sym_table_find(&t, 0xffffffff81000150);
	assert_non_null(s);
	assert_string_equal(s->name, "do_thing");
	/* the data symbol ends nothing: do_thing runs up to next_fn */
	s = sym_table_find(&t, 0xffffffff81000250);
	assert_string_equal(s->name, "do_thing");
	s = sym_table_find(&t, 0xffffffffc0001010);
	assert_string_equal(s->name, "mod_fn [ext4]");
	assert_null(sym_table_find(&t, 0xffffffff80000000));
	sym_table_free(&t);
	const char badl[] = "ffffffff81000000 T ok\nzz T bad\n";
	assert_int_equal(sym_kallsyms_parse(badl, sizeof(badl) - 1, &t, &bad),
			 -RTD_E_FORMAT);
	assert_int_equal(bad, 2);
	sym_table_free(&t);
}

/* Of several names at one address, the one perf report and perf script
 * show (checked against Debian's perf 6.1 on this machine's libc, its
 * debug file and /proc/kallsyms). */
static void aliases_as_perf(void **state)
{
	(void)state;
	/* kallsyms: the last listed alias */
	const char ks[] = "ffffffff81000000 t __do_sys_vfork\n"
			  "ffffffff81000000 T __ia32_sys_vfork\n"
			  "ffffffff81000000 T __x64_sys_vfork\n"
			  "ffffffff81000100 T memcpy\n"
			  "ffffffff81000100 T __memcpy\n"
			  "ffffffff81000100 T __pi_memcpy\n";
	struct sym_table t = {0};
	size_t bad;
	assert_int_equal(sym_kallsyms_parse(ks, sizeof(ks) - 1, &t, &bad), 0);
	assert_string_equal(sym_table_find(&t, 0xffffffff81000010)->name, "__x64_sys_vfork");
	assert_string_equal(sym_table_find(&t, 0xffffffff81000110)->name, "__pi_memcpy");
	sym_table_free(&t);
	/* ELF: strong over weak, global over local, fewer leading
	 * underscores, the longest name, the first among equals */
	static const struct {
		unsigned bind;
		const char *name;
		uint64_t addr;
	} elf[] = {
		{SYM_BIND_LOCAL, "__GI___wait4", 0x1000}, {SYM_BIND_LOCAL, "__wait4", 0x1000},
		{SYM_BIND_WEAK, "wait4", 0x1000},
		{SYM_BIND_LOCAL, "__clock_nanosleep", 0x2000},
		{SYM_BIND_GLOBAL, "clock_nanosleep@GLIBC_2.2.5", 0x2000},
		{SYM_BIND_GLOBAL, "clock_nanosleep@@GLIBC_2.17", 0x2000},
		{SYM_BIND_LOCAL, "__libc_start_main_impl", 0x3000},
		{SYM_BIND_GLOBAL, "__libc_start_main@@GLIBC_2.34", 0x3000},
	};
	for (size_t i = 0; i < sizeof(elf) / sizeof(*elf); i++)
		assert_int_equal(sym_table_add_ranked(&t, elf[i].addr, 0x100, elf[i].name,
						      strlen(elf[i].name), true,
						      sym_alias_rank(elf[i].bind, elf[i].name,
								     strlen(elf[i].name))),
				 0);
	/* a size-0 label inside a function is the function's; one outside
	 * any names what follows it */
	assert_int_equal(sym_table_add(&t, 0x1010, 0, "inner_label", 11, true), 0);
	assert_int_equal(sym_table_add(&t, 0x4000, 0, "_dl_start_user", 14, true), 0);
	assert_int_equal(sym_table_add(&t, 0x4100, 0x10, "after", 5, true), 0);
	sym_table_finish(&t);
	assert_string_equal(sym_table_find(&t, 0x1020)->name, "__GI___wait4");
	assert_string_equal(sym_table_find(&t, 0x2000)->name, "clock_nanosleep@GLIBC_2.2.5");
	assert_string_equal(sym_table_find(&t, 0x3000)->name, "__libc_start_main@@GLIBC_2.34");
	assert_string_equal(sym_table_find(&t, 0x4010)->name, "_dl_start_user");
	sym_table_free(&t);
}

static void perfmap_text(void **state)
{
	(void)state;
	const char in[] =
		"7F0000001000 40 instance void [Lib] NS.Type::Hot(int32)[Optimized]\r\n"
		"7F0000002000 20 stub<1> AllocateTemporaryEntryPoints<PRESTUB_METHOD>\n"
		"7F0000001000 10 int32 [Lib] NS.Type::Reused()[Tier0]\n"
		"0x7f0000003000 0x8 plain name\n"
		"7F0000004000 8 cut-sh"; /* a last line being written */
	struct sym_table t = {0};
	size_t bad;
	assert_int_equal(sym_perfmap_parse(in, sizeof(in) - 1, &t, &bad), 0);
	assert_int_equal(t.n, 4);
	/* the later line for the same address wins */
	const struct sym_symbol *s = sym_table_find(&t, 0x7f0000001004);
	assert_non_null(s);
	assert_string_equal(s->name, "int32 [Lib] NS.Type::Reused()[Tier0]");
	assert_null(sym_table_find(&t, 0x7f0000001010)); /* size 0x10 */
	s = sym_table_find(&t, 0x7f0000003004);
	assert_string_equal(s->name, "plain name");
	char out[256];
	assert_string_equal(sym_dotnet_name("instance void [Lib] NS.Type::Hot(int32)[Optimized]",
					    out, sizeof(out)),
			    "NS.Type.Hot(int32)");
	assert_string_equal(sym_dotnet_name("void [System.Private.CoreLib] System.Threading.Thread::StartCallback()[PreJIT]",
					    out, sizeof(out)),
			    "System.Threading.Thread.StartCallback()");
	assert_string_equal(sym_dotnet_name("class [System.Runtime]System.String [Lib] NS.G`1[System.Int32]::Get()",
					    out, sizeof(out)),
			    "NS.G`1[System.Int32].Get()");
	assert_null(sym_dotnet_name("stub<1> AllocateTemporaryEntryPoints<PRESTUB_METHOD>",
				    out, sizeof(out)));
	sym_table_free(&t);
	const char badl[] = "7f00 10 ok\nnot a line\n7f10 10 x\n";
	assert_int_equal(sym_perfmap_parse(badl, sizeof(badl) - 1, &t, &bad),
			 -RTD_E_FORMAT);
	assert_int_equal(bad, 2);
	sym_table_free(&t);
}

static void demangle(void **state)
{
	(void)state;
	char *d;
	assert_int_equal(rtd_sym_demangle("_ZN3foo3barEi", &d), 0);
	assert_string_equal(d, "foo::bar(int)");
	free(d);
	/* Rust legacy: the hash goes */
	rtd_sym_demangle("_ZN4core3fmt5write17h0123456789abcdefE", &d);
	assert_string_equal(d, "core::fmt::write");
	free(d);
	/* Rust v0 */
	rtd_sym_demangle("_RNvCs1234_7mycrate3foo", &d);
	assert_string_equal(d, "mycrate::foo");
	free(d);
	rtd_sym_demangle("main", &d);
	assert_null(d);
	rtd_sym_demangle("_Zgarbage", &d);
	assert_null(d);
}

/* A pclntab of the given magic with two functions. */
static size_t make_pclntab(uint8_t *b, uint32_t magic, uint64_t text)
{
	memset(b, 0, 512);
	memcpy(b, &magic, 4);
	b[6] = 1;
	b[7] = 8;
	uint64_t nfunc = 2;
	memcpy(b + 8, &nfunc, 8);
	const char names[] = "main.hot\0runtime.mallocgc";
	if (magic == 0xfffffffb) {
		/* functab at 16: {entry, funcoff} x2 + end; funcs at 100 */
		uint64_t ft[5] = {0x401000, 100, 0x401100, 120, 0x401200};
		memcpy(b + 16, ft, sizeof(ft));
		uint64_t e0 = 0x401000, e1 = 0x401100;
		int32_t n0 = 200, n1 = 209;
		memcpy(b + 100, &e0, 8);
		memcpy(b + 108, &n0, 4);
		memcpy(b + 120, &e1, 8);
		memcpy(b + 128, &n1, 4);
		memcpy(b + 200, names, sizeof(names));
		return 240;
	}
	/* 1.18+: nfunc nfiles textStart funcnameOffset cu filetab pctab pcln */
	uint64_t hdr[7] = {0, text, 200, 0, 0, 0, 300};
	memcpy(b + 16, hdr, sizeof(hdr));
	memcpy(b + 200, names, sizeof(names));
	uint32_t ft[5] = {0x0, 40, 0x100, 48, 0x200};
	memcpy(b + 300, ft, sizeof(ft));
	uint32_t f0[2] = {0x0, 0}, f1[2] = {0x100, 9};
	memcpy(b + 340, f0, 8);
	memcpy(b + 348, f1, 8);
	return 400;
}

static void pclntab(void **state)
{
	(void)state;
	uint8_t b[512];
	uint32_t magics[3] = {0xfffffffb, 0xfffffff0, 0xfffffff1};
	for (int i = 0; i < 3; i++) {
		size_t n = make_pclntab(b, magics[i], 0x401000);
		struct sym_table t = {0};
		assert_int_equal(sym_pclntab_parse(b, n, 0, &t), 2);
		sym_table_finish(&t);
		const struct sym_symbol *s = sym_table_find(&t, 0x401010);
		assert_non_null(s);
		assert_string_equal(s->name, "main.hot");
		s = sym_table_find(&t, 0x4011ff);
		assert_string_equal(s->name, "runtime.mallocgc");
		assert_null(sym_table_find(&t, 0x401200));
		sym_table_free(&t);
		/* every cut of the table is refused or read in part, never past */
		for (size_t cut = 0; cut < n; cut++) {
			int r = sym_pclntab_parse(b, cut, 0, &t);
			assert_true(r < 0 || r <= 2);
			sym_table_free(&t);
		}
	}
	b[0] = 0x12;
	struct sym_table t = {0};
	assert_int_equal(sym_pclntab_parse(b, 400, 0, &t), -RTD_E_FORMAT);
}

/* ---- the symbolizer on this program -------------------------------------------- */

static volatile uintptr_t captured;

__attribute__((noinline)) static void capture(void)
{
	captured = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static inline __attribute__((always_inline)) void rtd_inlined_helper(void)
{
	capture();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void rtd_outer_function(void)
{
	rtd_inlined_helper();
	__asm__ volatile("" ::: "memory");
}

static void self_elf(void **state)
{
	(void)state;
	rtd_symbolizer *s;
	struct rtd_sym_opts o = {.sz = sizeof(o), .flags = RTD_SYM_NO_DEBUGINFOD};
	assert_int_equal(rtd_symbolizer_new(&o, &s), 0);
	rtd_outer_function();
	struct rtd_sym_frame f[RTD_SYM_MAX_INLINE + 1];
	/* the call's return address minus one is inside the call */
	int n = rtd_sym_resolve_addr(s, getpid(), captured - 1, false, f, 65);
	assert_true(n >= 1);
	for (int i = 0; i < n; i++)
		printf("frame %d: %s (%s:%u) %s%s\n", i, f[i].name,
		       f[i].file ? f[i].file : "?", f[i].line, f[i].module,
		       f[i].inlined ? " inlined" : "");
	assert_string_equal(f[n - 1].name, "rtd_outer_function");
	assert_false(f[n - 1].inlined);
	assert_int_equal(f[n - 1].kind, RTD_SYM_NATIVE);
	assert_non_null(strstr(f[n - 1].module, "test_symbols"));
	/* built with -g: DWARF names the inlined helper and its line */
	assert_int_equal(n, 2);
	assert_string_equal(f[0].name, "rtd_inlined_helper");
	assert_true(f[0].inlined);
	assert_non_null(f[0].file);
	assert_non_null(strstr(f[0].file, "test_symbols.c"));
	assert_true(f[0].line > 0);
	/* the same address again: the same location id */
	assert_int_equal(rtd_sym_locate(s, getpid(), captured - 1, false),
			 rtd_sym_locate(s, getpid(), captured - 1, false));
	/* libc's code, named from its .dynsym at least */
	n = rtd_sym_resolve_addr(s, getpid(), (uintptr_t)&getpid, false, f, 65);
	assert_true(n >= 1);
	assert_non_null(strstr(f[n - 1].module, "libc.so"));
	assert_true(f[n - 1].named);
	/* an address in no mapping */
	n = rtd_sym_resolve_addr(s, getpid(), 0x10, false, f, 65);
	assert_int_equal(n, 1);
	assert_false(f[0].named);
	assert_string_equal(f[0].name, "[unknown]+0x10");
	struct rtd_sym_stats st = {.sz = sizeof(st)};
	rtd_sym_stats(s, &st);
	assert_true(st.objects >= 2);
	assert_int_equal(st.locations, 3);
	rtd_symbolizer_free(s);
}

static void count_warn(const char *msg, void *ctx)
{
	printf("warn: %s\n", msg);
	if (strstr(msg, "DWARF"))
		(*(int *)ctx)++;
}

/* The DWARF held at once is capped (rtd_sym_opts.dwarf_max): under the
 * cap a file's inlined frames and lines; past it, its symbol table's
 * names only, said once, and the bytes held never above the cap. */
static void dwarf_cap(void **state)
{
	(void)state;
	rtd_outer_function();
	struct rtd_sym_frame f[RTD_SYM_MAX_INLINE + 1];
	struct rtd_sym_stats st = {.sz = sizeof(st)};
	int warned = 0;
	rtd_symbolizer *s;
	/* a cap this file's DWARF is over */
	struct rtd_sym_opts o = {.sz = sizeof(o), .flags = RTD_SYM_NO_DEBUGINFOD,
				 .dwarf_max = 64};
	assert_int_equal(rtd_symbolizer_new(&o, &s), 0);
	rtd_sym_set_warn(s, count_warn, &warned);
	int n = rtd_sym_resolve_addr(s, getpid(), captured - 1, false, f, 65);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].name, "rtd_outer_function");
	assert_false(f[0].inlined);
	assert_null(f[0].file);
	rtd_sym_stats(s, &st);
	assert_int_equal(st.dwarf_bytes, 0);
	assert_true(st.dwarf_skipped >= 1);
	assert_int_equal(warned, (int)st.dwarf_skipped);
	rtd_symbolizer_free(s);
	/* the default: this file's DWARF fits; whatever else is loaded
	 * (libc's debug file, when installed), never more than the cap */
	o.dwarf_max = 0;
	warned = 0;
	assert_int_equal(rtd_symbolizer_new(&o, &s), 0);
	rtd_sym_set_warn(s, count_warn, &warned);
	n = rtd_sym_resolve_addr(s, getpid(), captured - 1, false, f, 65);
	assert_int_equal(n, 2);
	assert_true(f[0].inlined);
	n = rtd_sym_resolve_addr(s, getpid(), (uintptr_t)&getpid, false, f, 65);
	assert_true(n >= 1);
	rtd_sym_stats(s, &st);
	printf("default cap: %llu bytes of DWARF held, %llu files skipped\n",
	       (unsigned long long)st.dwarf_bytes,
	       (unsigned long long)st.dwarf_skipped);
	assert_true(st.dwarf_bytes > 0);
	assert_true(st.dwarf_bytes <= RTD_SYM_DWARF_MAX);
	assert_int_equal(warned, (int)st.dwarf_skipped);
	rtd_symbolizer_free(s);
}

/* Symbols loaded by the background thread give the same names. */
static void preload(void **state)
{
	(void)state;
	rtd_symbolizer *s;
	assert_int_equal(rtd_symbolizer_new(NULL, &s), 0);
	assert_int_equal(rtd_sym_preload_start(s), 0);
	rtd_outer_function();
	int64_t a = rtd_sym_locate(s, getpid(), captured - 1, false);
	int64_t b = rtd_sym_locate(s, getpid(), (uintptr_t)&getpid, false);
	assert_true(a >= 0 && b >= 0);
	rtd_sym_preload_finish(s);
	struct rtd_sym_stats st = {.sz = sizeof(st)};
	rtd_sym_stats(s, &st);
	assert_true(st.objects_loaded >= 2); /* this program and libc, in the thread */
	struct rtd_sym_frame f[RTD_SYM_MAX_INLINE + 1];
	int n = rtd_sym_resolve(s, a, f, RTD_SYM_MAX_INLINE + 1);
	assert_true(n >= 1);
	assert_string_equal(f[n - 1].name, "rtd_outer_function");
	n = rtd_sym_resolve(s, b, f, RTD_SYM_MAX_INLINE + 1);
	assert_true(f[n - 1].named);
	rtd_sym_preload_finish(s); /* twice: nothing */
	rtd_symbolizer_free(s);
	/* freed while loading: waits for the thread */
	assert_int_equal(rtd_symbolizer_new(NULL, &s), 0);
	assert_int_equal(rtd_sym_preload_start(s), 0);
	rtd_sym_locate(s, getpid(), captured - 1, false);
	rtd_symbolizer_free(s);
}

/* Every file this process runs code from, loaded before any address in
 * it is located: locating and naming one later reads nothing more (a
 * long recording's memory is spent at its start, issue #31). */
static void proc_objects(void **state)
{
	(void)state;
	rtd_symbolizer *s;
	assert_int_equal(rtd_symbolizer_new(NULL, &s), 0);
	assert_int_equal(rtd_sym_proc_objects(s, 0), -RTD_E_INVAL);
	assert_int_equal(rtd_sym_proc_objects(NULL, getpid()), -RTD_E_INVAL);
	int n = rtd_sym_proc_objects(s, getpid());
	assert_true(n >= 2); /* this program and libc at least */
	assert_int_equal(rtd_sym_proc_objects(s, getpid()), 0); /* known now */
	struct rtd_sym_stats a = {.sz = sizeof(a)}, b = {.sz = sizeof(b)};
	rtd_sym_stats(s, &a);
	assert_true(a.objects_loaded >= 2 && a.symbols > 0);
	struct rtd_sym_frame f[RTD_SYM_MAX_INLINE + 1];
	int k = rtd_sym_resolve_addr(s, getpid(), (uintptr_t)&getpid, false, f,
				     RTD_SYM_MAX_INLINE + 1);
	assert_true(k >= 1 && f[k - 1].named);
	rtd_sym_stats(s, &b);
	assert_int_equal(b.objects, a.objects);
	assert_int_equal(b.objects_loaded, a.objects_loaded);
	assert_int_equal(b.symbols, a.symbols);
	rtd_symbolizer_free(s);
	/* with the background thread: queued to it, loaded by the finish */
	assert_int_equal(rtd_symbolizer_new(NULL, &s), 0);
	assert_int_equal(rtd_sym_preload_start(s), 0);
	assert_int_equal(rtd_sym_proc_objects(s, getpid()), n);
	rtd_sym_preload_finish(s);
	rtd_sym_stats(s, &b);
	assert_int_equal(b.objects_loaded, a.objects_loaded);
	assert_int_equal(b.symbols, a.symbols);
	rtd_symbolizer_free(s);
}

/* JIT code: an anonymous executable mapping named by a perf map. */
static void self_perfmap(void **state)
{
	(void)state;
	void *code = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(code != MAP_FAILED);
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%lx 100 jitted_function\n", (unsigned long)(uintptr_t)code);
	fclose(f);
	rtd_symbolizer *s;
	assert_int_equal(rtd_symbolizer_new(NULL, &s), 0);
	struct rtd_sym_frame fr[4];
	int n = rtd_sym_resolve_addr(s, getpid(), (uintptr_t)code + 0x10, false,
				     fr, 4);
	assert_int_equal(n, 1);
	assert_string_equal(fr[0].name, "jitted_function");
	assert_string_equal(fr[0].module, "[jit]");
	assert_int_equal(fr[0].kind, RTD_SYM_JIT);
	assert_int_equal(fr[0].sym_offset, 0x10);
	n = rtd_sym_resolve_addr(s, getpid(), (uintptr_t)code + 0x200, false,
				 fr, 4);
	assert_false(fr[0].named);
	assert_non_null(strstr(fr[0].name, "[anon]+0x"));
	/* the runtime appends what it compiles later: a symbolizer that
	 * lives on reads the grown map for an address it does not name */
	f = fopen(path, "a");
	assert_non_null(f);
	fprintf(f, "%lx 100 compiled_later\n",
		(unsigned long)(uintptr_t)code + 0x200);
	fclose(f);
	n = rtd_sym_resolve_addr(s, getpid(), (uintptr_t)code + 0x200, false,
				 fr, 4);
	assert_string_equal(fr[0].name, "compiled_later");
	n = rtd_sym_resolve_addr(s, getpid(), (uintptr_t)code + 0x210, false,
				 fr, 4);
	assert_int_equal(n, 1);
	assert_true(fr[0].named);
	assert_string_equal(fr[0].name, "compiled_later");
	n = rtd_sym_resolve_addr(s, getpid(), (uintptr_t)code + 0x10, false,
				 fr, 4);
	assert_string_equal(fr[0].name, "jitted_function");
	rtd_symbolizer_free(s);
	unlink(path);
	munmap(code, 4096);
}

/* Mappings from records: mmap over a part, fork, exec, exit. */
static void proc_records(void **state)
{
	(void)state;
	rtd_symbolizer *s;
	struct rtd_sym_opts o = {.sz = sizeof(o), .flags = RTD_SYM_NO_PROC_LOAD};
	assert_int_equal(rtd_symbolizer_new(&o, &s), 0);
	pid_t p = 999999;
	assert_int_equal(rtd_sym_proc_mmap(s, p, 0x10000, 0x10000, 0,
					   "/nonexistent/a", 1, 11, PROT_EXEC), 0);
	/* a new mapping in the middle splits the first */
	assert_int_equal(rtd_sym_proc_mmap(s, p, 0x14000, 0x1000, 0x3000,
					   "/nonexistent/b", 1, 12, PROT_EXEC), 0);
	struct rtd_sym_frame f[4];
	rtd_sym_resolve_addr(s, p, 0x12000, false, f, 4);
	assert_string_equal(f[0].name, "a+0x2000");
	assert_string_equal(f[0].module, "/nonexistent/a");
	rtd_sym_resolve_addr(s, p, 0x14010, false, f, 4);
	assert_string_equal(f[0].name, "b+0x3010");
	rtd_sym_resolve_addr(s, p, 0x16000, false, f, 4);
	assert_string_equal(f[0].name, "a+0x6000"); /* the tail keeps its offset */
	/* a child sees its parent's mappings; after exec, none */
	assert_int_equal(rtd_sym_proc_fork(s, p, p + 1), 0);
	rtd_sym_resolve_addr(s, p + 1, 0x14010, false, f, 4);
	assert_string_equal(f[0].name, "b+0x3010");
	rtd_sym_proc_exec(s, p + 1);
	rtd_sym_resolve_addr(s, p + 1, 0x14010, false, f, 4);
	assert_string_equal(f[0].name, "[unknown]+0x14010");
	/* non-executable mappings are ignored */
	assert_int_equal(rtd_sym_proc_mmap(s, p, 0x40000, 0x1000, 0, "/x", 0, 0,
					   PROT_READ), 0);
	rtd_sym_resolve_addr(s, p, 0x40000, false, f, 4);
	assert_string_equal(f[0].name, "[unknown]+0x40000");
	rtd_sym_proc_exit(s, p);
	/* located before the exit: still resolvable */
	int64_t id = rtd_sym_locate(s, p + 1, 0x1, false);
	assert_true(id >= 0);
	assert_int_equal(rtd_sym_resolve(s, id, f, 4), 1);
	assert_int_equal(rtd_sym_resolve(s, 1 << 30, f, 4), -RTD_E_INVAL);
	rtd_symbolizer_free(s);
}

/* A symbolizer that lives on forgets the locations and names it was told
 * to: 100,000 new addresses of this process (the kind a runtime's unnamed
 * code gives without end), each located and named, and every 1,000 all
 * but the one this program's function is at are forgotten. It holds at
 * most 1,001 locations and their names, not 100,001; the one kept keeps
 * its name under its new id, and an address located again is named as
 * before. */
static void keep_locations(void **state)
{
	(void)state;
	rtd_symbolizer *s;
	assert_int_equal(rtd_symbolizer_new(NULL, &s), 0);
	rtd_outer_function();
	int64_t fn = rtd_sym_locate(s, getpid(), captured - 1, false);
	assert_true(fn >= 0);
	struct rtd_sym_frame f[RTD_SYM_MAX_INLINE + 1];
	int n = rtd_sym_resolve(s, fn, f, RTD_SYM_MAX_INLINE + 1);
	assert_string_equal(f[n - 1].name, "rtd_outer_function");
	uint8_t keep[1024];
	int64_t remap[1024];
	uint64_t max_held = 0, max_names = 0;
	for (uint64_t i = 0; i < 100000; i++) {
		/* no mapping there: "[unknown]+0x...", a name of its own */
		int64_t id = rtd_sym_locate(s, getpid(), 0x10000 + 16 * i, false);
		assert_true(id >= 0);
		assert_int_equal(rtd_sym_resolve(s, id, f, RTD_SYM_MAX_INLINE + 1), 1);
		struct rtd_sym_stats st = {.sz = sizeof(st)};
		rtd_sym_stats(s, &st);
		if (st.locations_held > max_held)
			max_held = st.locations_held;
		if (st.name_bytes > max_names)
			max_names = st.name_bytes;
		if (rtd_sym_nlocations(s) < 1001)
			continue;
		size_t nloc = rtd_sym_nlocations(s);
		assert_true(nloc <= 1024);
		memset(keep, 0, sizeof(keep));
		keep[fn] = 1;
		assert_int_equal(rtd_sym_keep_locations(s, keep, nloc, remap), 1);
		assert_int_equal(remap[fn], 0);
		assert_int_equal(remap[nloc - 1], -1);
		fn = remap[fn];
		assert_int_equal(rtd_sym_nlocations(s), 1);
	}
	struct rtd_sym_stats st = {.sz = sizeof(st)};
	rtd_sym_stats(s, &st);
	assert_true(st.locations >= 100001); /* handed out */
	assert_true(max_held <= 1001);
	/* 1,000 names of ~25 bytes: two 64 KiB blocks at most */
	assert_true(max_names <= 128u << 10);
	n = rtd_sym_resolve(s, fn, f, RTD_SYM_MAX_INLINE + 1);
	assert_string_equal(f[n - 1].name, "rtd_outer_function");
	/* located again: the same id, the same name */
	assert_int_equal(rtd_sym_locate(s, getpid(), captured - 1, false), fn);
	int64_t id = rtd_sym_locate(s, getpid(), 0x10000, false);
	assert_int_equal(rtd_sym_resolve(s, id, f, 1), 1);
	assert_string_equal(f[0].name, "[unknown]+0x10000");
	assert_int_equal(rtd_sym_keep_locations(s, NULL, 3, NULL), -RTD_E_INVAL);
	assert_int_equal(rtd_sym_keep_locations(NULL, keep, 1, NULL), -RTD_E_INVAL);
	assert_int_equal(rtd_sym_keep_locations(s, NULL, 0, NULL), 0); /* all go */
	assert_int_equal(rtd_sym_nlocations(s), 0);
	rtd_symbolizer_free(s);
}

static void kernel_addr(void **state)
{
	(void)state;
	char path[] = "/tmp/rtd-kallsyms-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char k[] = "ffffffff81000000 T _text\nffffffff81001000 T schedule\n"
			 "ffffffff81002000 T other\nffffffffc0000000 t fn\t[kvm]\n";
	assert_int_equal(write(fd, k, sizeof(k) - 1), (ssize_t)sizeof(k) - 1);
	close(fd);
	struct rtd_sym_opts o = {.sz = sizeof(o), .kallsyms = path};
	rtd_symbolizer *s;
	assert_int_equal(rtd_symbolizer_new(&o, &s), 0);
	struct rtd_sym_frame f[2];
	assert_int_equal(rtd_sym_resolve_addr(s, -1, 0xffffffff81001010, true, f, 2), 1);
	assert_string_equal(f[0].name, "schedule");
	assert_string_equal(f[0].module, "[kernel.kallsyms]");
	assert_int_equal(f[0].kind, RTD_SYM_KERNEL);
	rtd_sym_resolve_addr(s, -1, 0xffffffffc0000004, true, f, 2);
	assert_string_equal(f[0].name, "fn");
	assert_string_equal(f[0].module, "[kvm]");
	rtd_symbolizer_free(s);
	unlink(path);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static const char *kname(rtd_symbolizer *s, uint64_t addr)
{
	static struct rtd_sym_frame f[2];
	assert_int_equal(rtd_sym_resolve_addr(s, -1, addr, true, f, 2), 1);
	return f[0].name;
}

/* Symbolizers of one kallsyms file share its symbols: read by the first
 * that needs them, kept while any holds them (the second sees them even
 * after the file changed and after the first is freed), read again once
 * the last is gone; another file gets a table of its own. */
static void kernel_shared(void **state)
{
	(void)state;
	char path[] = "/tmp/rtd-kallsyms-XXXXXX", other[] = "/tmp/rtd-kallsyms-XXXXXX";
	close(mkstemp(path));
	close(mkstemp(other));
	write_file(path, "ffffffff81000000 T _text\nffffffff81001000 T schedule\n"
			 "ffffffff81002000 T other\n");
	write_file(other, "ffffffff81001000 T elsewhere\nffffffff81002000 T x\n");
	struct rtd_sym_opts o = {.sz = sizeof(o), .kallsyms = path};
	struct rtd_sym_opts o2 = {.sz = sizeof(o2), .kallsyms = other};
	rtd_symbolizer *a, *b, *c, *d;
	assert_int_equal(rtd_symbolizer_new(&o, &a), 0);
	assert_int_equal(rtd_symbolizer_new(&o, &b), 0);
	assert_int_equal(rtd_symbolizer_new(&o2, &d), 0);
	assert_string_equal(kname(a, 0xffffffff81001010), "schedule");
	write_file(path, "ffffffff81001000 T renamed\nffffffff81002000 T other\n");
	assert_string_equal(kname(b, 0xffffffff81001010), "schedule"); /* shared */
	assert_string_equal(kname(d, 0xffffffff81001010), "elsewhere"); /* its own */
	rtd_symbolizer_free(a);
	assert_string_equal(kname(b, 0xffffffff81001020), "schedule");
	rtd_symbolizer_free(b);
	assert_int_equal(rtd_symbolizer_new(&o, &c), 0);
	assert_string_equal(kname(c, 0xffffffff81001010), "renamed"); /* read again */
	rtd_symbolizer_free(c);
	rtd_symbolizer_free(d);
	unlink(path);
	unlink(other);
}

/* #32 item 5: the runtimes' own libraries are the "runtime" kind. */
static void runtime_libs(void **state)
{
	(void)state;
	static const char *const yes[] = {
		"/usr/lib/dotnet/shared/Microsoft.NETCore.App/8.0.11/libcoreclr.so",
		"libclrjit.so", "/x/libSystem.Native.so", "libhostfxr.so",
		"/usr/lib/jvm/java-17/lib/server/libjvm.so",
		"/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
	};
	static const char *const no[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6", "coreclr", "libcoreclr",
		"/opt/app/libmyruntime.so", "[anon]", "", "libSystem.Native.dll",
	};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(rtd_sym_runtime_lib(yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(rtd_sym_runtime_lib(no[i]));
	assert_false(rtd_sym_runtime_lib(NULL));
	assert_string_equal(rtd_frame_kind_name(RTD_FRAME_RUNTIME), "runtime");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kallsyms_text),
		cmocka_unit_test(kernel_shared),
		cmocka_unit_test(aliases_as_perf),
		cmocka_unit_test(perfmap_text),
		cmocka_unit_test(demangle),
		cmocka_unit_test(pclntab),
		cmocka_unit_test(self_elf),
		cmocka_unit_test(dwarf_cap),
		cmocka_unit_test(preload),
		cmocka_unit_test(proc_objects),
		cmocka_unit_test(self_perfmap),
		cmocka_unit_test(proc_records),
		cmocka_unit_test(kernel_addr),
		cmocka_unit_test(runtime_libs),
		cmocka_unit_test(keep_locations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
