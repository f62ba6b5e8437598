/* SPDX-License-Identifier: MIT */
/* optlib_dw.h - libdw (elfutils), opened on first use (see optlib.h):
 * source lines and inlined frames from DWARF, and unwinding of sampled
 * user stacks (libdwfl). */
#ifndef RTD_COMMON_OPTLIB_DW_H
#define RTD_COMMON_OPTLIB_DW_H

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "common/optlib.h"

#define RTD_DW_FUNCS(X)                                                        \
	X(dwarf_begin_elf) X(dwarf_end) X(dwarf_getaranges) X(dwarf_onearange) \
	X(dwarf_getarangeinfo) X(dwarf_get_units) X(dwarf_ranges)              \
	X(dwarf_dieoffset) X(dwarf_offdie) X(dwarf_tag) X(dwarf_child)         \
	X(dwarf_siblingof) X(dwarf_haspc) X(dwarf_getscopes)                   \
	X(dwarf_getscopes_die) X(dwarf_attr) X(dwarf_attr_integrate)           \
	X(dwarf_formudata) X(dwarf_formstring) X(dwarf_getsrc_die)             \
	X(dwarf_lineno) X(dwarf_linesrc) X(dwarf_getsrcfiles) X(dwarf_filesrc) \
	X(dwfl_begin) X(dwfl_end) X(dwfl_report_begin) X(dwfl_report_elf)      \
	X(dwfl_report_end) X(dwfl_offline_section_address)                     \
	X(dwfl_attach_state) X(dwfl_getthread_frames) X(dwfl_frame_pc)         \
	X(dwfl_frame_reg) X(dwfl_thread_state_registers)                       \
	X(dwfl_thread_state_register_pc) X(dwfl_addrmodule)                     \
	X(dwfl_module_eh_cfi) X(dwfl_module_dwarf_cfi) X(dwarf_cfi_addrframe)  \
	X(dwarf_frame_info)
RTD_OPTLIB_DECLARE(dw, RTD_DW_FUNCS)

#ifndef RTD_OPTLIB_DEFINING
#define dwarf_begin_elf (*rtd__dw.dwarf_begin_elf)
#define dwarf_end (*rtd__dw.dwarf_end)
#define dwarf_getaranges (*rtd__dw.dwarf_getaranges)
#define dwarf_onearange (*rtd__dw.dwarf_onearange)
#define dwarf_getarangeinfo (*rtd__dw.dwarf_getarangeinfo)
#define dwarf_get_units (*rtd__dw.dwarf_get_units)
#define dwarf_ranges (*rtd__dw.dwarf_ranges)
#define dwarf_dieoffset (*rtd__dw.dwarf_dieoffset)
#define dwarf_offdie (*rtd__dw.dwarf_offdie)
#define dwarf_tag (*rtd__dw.dwarf_tag)
#define dwarf_child (*rtd__dw.dwarf_child)
#define dwarf_siblingof (*rtd__dw.dwarf_siblingof)
#define dwarf_haspc (*rtd__dw.dwarf_haspc)
#define dwarf_getscopes (*rtd__dw.dwarf_getscopes)
#define dwarf_getscopes_die (*rtd__dw.dwarf_getscopes_die)
#define dwarf_attr (*rtd__dw.dwarf_attr)
#define dwarf_attr_integrate (*rtd__dw.dwarf_attr_integrate)
#define dwarf_formudata (*rtd__dw.dwarf_formudata)
#define dwarf_formstring (*rtd__dw.dwarf_formstring)
#define dwarf_getsrc_die (*rtd__dw.dwarf_getsrc_die)
#define dwarf_lineno (*rtd__dw.dwarf_lineno)
#define dwarf_linesrc (*rtd__dw.dwarf_linesrc)
#define dwarf_getsrcfiles (*rtd__dw.dwarf_getsrcfiles)
#define dwarf_filesrc (*rtd__dw.dwarf_filesrc)
#define dwfl_begin (*rtd__dw.dwfl_begin)
#define dwfl_end (*rtd__dw.dwfl_end)
#define dwfl_report_begin (*rtd__dw.dwfl_report_begin)
#define dwfl_report_elf (*rtd__dw.dwfl_report_elf)
#define dwfl_report_end (*rtd__dw.dwfl_report_end)
#define dwfl_offline_section_address (*rtd__dw.dwfl_offline_section_address)
#define dwfl_attach_state (*rtd__dw.dwfl_attach_state)
#define dwfl_getthread_frames (*rtd__dw.dwfl_getthread_frames)
#define dwfl_frame_pc (*rtd__dw.dwfl_frame_pc)
#define dwfl_frame_reg (*rtd__dw.dwfl_frame_reg)
#define dwfl_thread_state_registers (*rtd__dw.dwfl_thread_state_registers)
#define dwfl_thread_state_register_pc (*rtd__dw.dwfl_thread_state_register_pc)
#define dwfl_addrmodule (*rtd__dw.dwfl_addrmodule)
#define dwfl_module_eh_cfi (*rtd__dw.dwfl_module_eh_cfi)
#define dwfl_module_dwarf_cfi (*rtd__dw.dwfl_module_dwarf_cfi)
#define dwarf_cfi_addrframe (*rtd__dw.dwarf_cfi_addrframe)
#define dwarf_frame_info (*rtd__dw.dwarf_frame_info)
#endif

#endif /* RTD_COMMON_OPTLIB_DW_H */
