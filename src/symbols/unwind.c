/* SPDX-License-Identifier: MIT */
/*
 * unwind.c - call chains from a copy of the user stack (perf's
 * --call-graph dwarf), with libdw's unwinder as perf's util/unwind-libdw.c
 * uses it: the sample's registers are the initial frame, stack reads are
 * served from the copied bytes, and each module's CFI (.eh_frame, else
 * .debug_frame) finds the caller's frame; libdw falls back to frame
 * pointers where a module has no CFI.
 *
 * Unlike perf, which builds a Dwfl per sample and reports each module it
 * meets, one Dwfl per process is kept with every file mapping reported,
 * and rebuilt only when the process's mappings change: libdw then keeps
 * each module's parsed CFI across samples.
 */
#include <asm/perf_regs.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/optlib_dw.h"
#include "symbols/internal.h"

struct sym_unwinder {
	Dwfl *dwfl;
	unsigned gen;
	bool attached;
	bool failed;       /* no module could be reported: do not retry */
	/* the sample being unwound */
	pid_t tid;
	const uint8_t *regs;
	uint32_t nregs;
	uint64_t mask;
	const uint8_t *stack;
	uint64_t stack_len, sp;
	uint64_t *ips;
	size_t max, n;
	uint64_t last_pc[2]; /* the last two frames' pcs as libdw gave them */
	/* the last frame's stack pointer (its caller's CFA), if known */
	uint64_t last_sp;
	bool last_sp_known;
};

void sym_unwinder_free(struct sym_unwinder *u)
{
	if (!u)
		return;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	free(u);
}

static int no_elf(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr b,
		  char **file, Elf **elfp)
{
	(void)mod, (void)ud, (void)name, (void)b, (void)file, (void)elfp;
	return -1; /* every module is reported with its descriptor */
}

static int no_debuginfo(Dwfl_Module *mod, void **ud, const char *name,
			Dwarf_Addr b, const char *file, const char *link,
			GElf_Word crc, char **dbg)
{
	(void)mod, (void)ud, (void)name, (void)b, (void)file, (void)link,
		(void)crc, (void)dbg;
	return -1; /* .eh_frame is in the file itself; never a server */
}

/* libdw's own, through its table (a constant initializer cannot name it) */
static int section_address(Dwfl_Module *mod, void **ud, const char *name,
			   Dwarf_Addr base, const char *secname, GElf_Word shndx,
			   const GElf_Shdr *shdr, Dwarf_Addr *addr)
{
	return dwfl_offline_section_address(mod, ud, name, base, secname, shndx,
					    shdr, addr);
}

static const Dwfl_Callbacks offline_cb = {
	.find_elf = no_elf,
	.find_debuginfo = no_debuginfo,
	.section_address = section_address,
};

/* The value of perf register bit `reg` in the sample, if sampled. */
static bool reg_value(const struct sym_unwinder *u, unsigned reg, uint64_t *v)
{
	if (!(u->mask & (1ull << reg)))
		return false;
	unsigned idx = (unsigned)__builtin_popcountll(u->mask & ((1ull << reg) - 1));
	if (idx >= u->nregs)
		return false;
	memcpy(v, u->regs + 8 * (size_t)idx, 8);
	return true;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct sym_unwinder *u = arg;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl, (void)tid;
	*thread_argp = arg;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	(void)dwfl;
	struct sym_unwinder *u = arg;
	if (u->stack_len < 8 || addr < u->sp || addr - u->sp > u->stack_len - 8)
		return false;
	memcpy(result, u->stack + (addr - u->sp), 8);
	return true;
}

/* x86-64 DWARF register numbers 0-16 (SysV ABI, figure 3.36). */
static const unsigned dwarf_to_perf[17] = {
	PERF_REG_X86_AX, PERF_REG_X86_DX, PERF_REG_X86_CX, PERF_REG_X86_BX,
	PERF_REG_X86_SI, PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP,
	PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11,
	PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
	PERF_REG_X86_IP,
};

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct sym_unwinder *u = arg;
	Dwarf_Word r[17];
	for (unsigned i = 0; i < 17; i++) {
		uint64_t v = 0;
		reg_value(u, dwarf_to_perf[i], &v);
		r[i] = v;
	}
	if (!dwfl_thread_state_registers(thread, 0, 17, r))
		return false;
	dwfl_thread_state_register_pc(thread, r[16]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_cb = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* The load bias of a mapping: its address minus the link-time address. */
static bool map_bias(int fd, const struct sym_map *m, uint64_t *bias)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct sym_elf_info info;
	bool ok = false;
	if (e && sym_elf_info(e, &info) == 0) {
		uint64_t va;
		if (sym_elf_off_to_vaddr(&info, m->pgoff, &va)) {
			*bias = m->start - va;
			ok = true;
		}
		sym_elf_info_clear(&info);
	}
	if (e)
		elf_end(e);
	return ok;
}

static bool is_file_map(const struct sym_map *m)
{
	const char *p = m->path;
	return p[0] == '/' && strncmp(p, "/memfd:", 7) &&
	       strcmp(p, "/dev/zero") && strncmp(p, "/anon_hugepage", 14);
}


/* (Re)build the process's Dwfl with every file mapping as a module. */
static int unwinder_build(struct sym_proc *p, struct sym_unwinder *u)
{
	if (!rtd_optlib_want_dw())
		return -RTD_E_NOLIB;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	u->dwfl = dwfl_begin(&offline_cb);
	u->attached = false;
	u->gen = p->gen;
	if (!u->dwfl)
		return -ENOMEM;
	dwfl_report_begin(u->dwfl);
	unsigned reported = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct sym_map *m = &p->m[i];
		if (!is_file_map(m))
			continue;
		int fd = sym_open_mapping(p->pid, m);
		uint64_t bias;
		if (fd < 0)
			continue;
		if (!map_bias(fd, m, &bias)) {
			close(fd);
			continue;
		}
		/* the name carries the address: a file mapped twice is two
		 * modules */
		char name[64];
		snprintf(name, sizeof(name), "%llx", (unsigned long long)m->start);
		if (dwfl_report_elf(u->dwfl, name, m->path, fd, bias, true))
			reported++;
		else
			close(fd);
	}
	dwfl_report_end(u->dwfl, NULL, NULL);
	if (!reported)
		return -RTD_E_NOTFOUND;
	if (!dwfl_attach_state(u->dwfl, NULL, p->pid, &thread_cb, u))
		return -RTD_E_UNSUPPORTED;
	u->attached = true;
	return 0;
}

/* Whether the code at pc is a signal frame (a sigreturn trampoline,
 * glibc's __restore_rt): its CIE has the "S" augmentation (the return
 * path a handler is given, so the frame above it is where the signal
 * interrupted the thread). */
static bool signal_frame_at(Dwfl *dwfl, Dwarf_Addr pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = mod ? dwfl_module_eh_cfi(mod, &bias) : NULL;
	if (mod && !cfi)
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
	Dwarf_Frame *fr = NULL;
	bool sig = false;
	if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &fr) == 0 &&
	    dwarf_frame_info(fr, NULL, NULL, &sig) < 0)
		sig = false;
	free(fr);
	return sig;
}

/* Each frame's address to name it by: a caller's return address minus
 * one, which lies in its call even when the call ends the function, but
 * the pc of the frame a signal interrupted as it is (the frame above a
 * signal frame: it was at that instruction, and one byte back from a
 * function's first instruction is the function before it), as perf
 * (6.12, its libunwind unwinder) names them.
 * dwfl_frame_pc()'s activation flag is also set on the signal frame
 * itself, whose return address is an ordinary one (glibc puts a nop
 * before __restore_rt for the byte back), so the flag only says where
 * to look: the frame below must be a signal frame. */
static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct sym_unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation = false;
	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	if (u->n >= u->max)
		return DWARF_CB_ABORT;
	/* No progress is the same return address at the same stack
	 * pointer (the CFA of the frame below): a recursive function
	 * repeats its return address at every level, each a frame further
	 * up the stack. Without the stack pointer, three in a row stop. */
	Dwarf_Word sp = 0;
	bool sp_known = dwfl_frame_reg(state, 7 /* rsp */, &sp) == 0;
	if (u->n && u->last_pc[0] == pc) {
		if (sp_known && u->last_sp_known) {
			if (sp == u->last_sp)
				return DWARF_CB_ABORT;
		} else if (u->n > 1 && u->last_pc[1] == pc) {
			return DWARF_CB_ABORT;
		}
	}
	u->last_sp = sp;
	u->last_sp_known = sp_known;
	u->last_pc[1] = u->last_pc[0];
	u->last_pc[0] = pc;
	bool exact = !u->n || (activation && signal_frame_at(u->dwfl, u->last_pc[1]));
	u->ips[u->n] = exact ? pc : pc - 1;
	u->n++;
	return DWARF_CB_OK;
}

int rtd_sym_unwind(rtd_symbolizer *s, pid_t pid, pid_t tid,
		   const uint8_t *regs, uint32_t nregs, uint64_t mask,
		   const uint8_t *stack, uint64_t stack_len, uint64_t *ips,
		   size_t max)
{
	if (!s || !regs || !ips || !max)
		return -RTD_E_INVAL;
	struct sym_unwinder probe = {.regs = regs, .nregs = nregs, .mask = mask};
	uint64_t ip, sp;
	if (!reg_value(&probe, PERF_REG_X86_IP, &ip) || !ip)
		return 0;
	ips[0] = ip;
	if (!reg_value(&probe, PERF_REG_X86_SP, &sp) || !stack || !stack_len)
		return 1;
	struct sym_proc *p = sym_proc_find(s, pid);
	if (!p)
		return 1;
	if (!p->uw) {
		p->uw = calloc(1, sizeof(*p->uw));
		if (!p->uw)
			return 1;
		p->uw->gen = p->gen - 1;
	}
	struct sym_unwinder *u = p->uw;
	if (u->gen != p->gen) {
		u->failed = unwinder_build(p, u) != 0;
	}
	if (u->failed || !u->attached)
		return 1;
	u->tid = tid;
	u->regs = regs;
	u->nregs = nregs;
	u->mask = mask;
	u->stack = stack;
	u->stack_len = stack_len;
	u->sp = sp;
	u->ips = ips;
	u->max = max;
	u->n = 0;
	u->last_sp_known = false;
	dwfl_getthread_frames(u->dwfl, tid, frame_cb, u);
	u->stack = NULL;
	u->regs = NULL;
	return u->n ? (int)u->n : 1;
}
