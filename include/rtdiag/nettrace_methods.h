/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/nettrace_methods.h - names of managed code: a table of the
 * methods and modules an EventPipe stream names, looked up by address.
 */
#ifndef RTDIAG_NETTRACE_METHODS_H
#define RTDIAG_NETTRACE_METHODS_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtd_nettrace_event;

typedef struct rtd_nettrace_methods rtd_nettrace_methods;

/**
 * rtd_nettrace_methods_new - an empty table of method names
 *
 * The table learns methods from the trace's own events
 * (rtd_nettrace_methods_event()): MethodLoadVerbose as methods are
 * jitted, MethodDCStart/StopVerbose from the rundown, R2RGetEntryPoint
 * for precompiled (ReadyToRun) code (no size given: it runs to the next
 * method known, at most 64 KiB; a sized record at its address wins, as
 * in the nettrace profiler's profiles), and module names from
 * ModuleLoad / ModuleDCStart/Stop. Lookups may interleave with
 * learning. Caps: 16 M methods, 256 MiB of names (-RTD_E_CAP).
 *
 * Returns: the table, or NULL when out of memory.
 */
RTD_API rtd_nettrace_methods *rtd_nettrace_methods_new(void);

/**
 * rtd_nettrace_methods_free - free a method table
 * @m: the table; NULL does nothing
 */
RTD_API void rtd_nettrace_methods_free(rtd_nettrace_methods *m);

/**
 * rtd_nettrace_methods_event - learn from one event
 * @m: the table
 * @ev: any event; those that name no method or module are ignored
 *
 * Returns: 0, -ENOMEM or -RTD_E_CAP.
 */
RTD_API int rtd_nettrace_methods_event(rtd_nettrace_methods *m,
				       const struct rtd_nettrace_event *ev);

/**
 * rtd_nettrace_methods_name - the method whose code holds an address
 * @m: the table
 * @ip: a code address (a stack frame)
 *
 * Returns: "module!Namespace.Method(signature)" (without "module!" when
 * the module is unknown), valid until the next call on @m; NULL when no
 * method learnt so far covers @ip. The latest definition of an address
 * wins.
 */
RTD_API const char *rtd_nettrace_methods_name(rtd_nettrace_methods *m,
					      uint64_t ip);

/**
 * rtd_nettrace_methods_count - methods learnt
 * @m: the table
 *
 * Returns: the count.
 */
RTD_API size_t rtd_nettrace_methods_count(const rtd_nettrace_methods *m);

/**
 * rtd_nettrace_methods_learn_fd - learn every method a whole file names
 * @m: the table
 * @fd: an EventPipe stream (.nettrace, .netperf) open for reading, a
 *      regular file: it is read from offset 0 with pread(), so its
 *      offset does not move
 *
 * A first pass for a reader that names frames as it goes: the rundown
 * that names what was jitted before the session comes at the stream's
 * end. Damaged bytes end the pass quietly, with what came before them
 * learnt: the pass that reads the events reports the damage.
 *
 * Returns: 0; -ENOMEM or -RTD_E_CAP (the table's caps: what came before
 * is kept); a read's -errno (-ESPIPE for a pipe); -RTD_E_INVAL (no @m, or
 * @fd negative).
 */
RTD_API int rtd_nettrace_methods_learn_fd(rtd_nettrace_methods *m, int fd);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_NETTRACE_METHODS_H */
