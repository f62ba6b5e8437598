/* SPDX-License-Identifier: MIT */
/* optlib_seccomp.h - libseccomp, opened on first use (see optlib.h): the
 * kernel's system call names for perf trace and the record stream. */
#ifndef RTD_COMMON_OPTLIB_SECCOMP_H
#define RTD_COMMON_OPTLIB_SECCOMP_H

#include <seccomp.h>

#include "common/optlib.h"

#define RTD_SECCOMP_FUNCS(X)                                                   \
	X(seccomp_syscall_resolve_num_arch) X(seccomp_syscall_resolve_name_arch)
RTD_OPTLIB_DECLARE(seccomp, RTD_SECCOMP_FUNCS)

#ifndef RTD_OPTLIB_DEFINING
#define seccomp_syscall_resolve_num_arch (*rtd__seccomp.seccomp_syscall_resolve_num_arch)
#define seccomp_syscall_resolve_name_arch (*rtd__seccomp.seccomp_syscall_resolve_name_arch)
#endif

#endif /* RTD_COMMON_OPTLIB_SECCOMP_H */
