/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc_providers.h - EventPipe providers: dotnet-trace's
 * --providers, --clrevents and --profile, and the providers rtdiag's
 * own profiles need.
 */
#ifndef RTDIAG_IPC_PROVIDERS_H
#define RTDIAG_IPC_PROVIDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct rtd_ipc_provider - one provider of a session
 * @name: provider name, e.g. "Microsoft-Windows-DotNETRuntime"
 * @keywords: keyword mask
 * @level: 0 LogAlways .. 5 Verbose
 * @args: "key=value;key=value" arguments, or NULL
 * @filter_ids: event ids to enable (@filter_enable) or disable
 *              (CollectTracing5); NULL for no filter
 * @n_filter_ids: their count
 * @filter_enable: true: only @filter_ids are enabled
 */
struct rtd_ipc_provider {
	const char *name;
	uint64_t keywords;
	uint32_t level;
	const char *args;
	const uint32_t *filter_ids;
	uint32_t n_filter_ids;
	bool filter_enable;
};

/**
 * struct rtd_ipc_providers - a provider list (owns its strings and filter ids)
 * @v: the providers
 * @n: their count
 */
struct rtd_ipc_providers {
	struct rtd_ipc_provider *v;
	size_t n;
};

/**
 * rtd_ipc_providers_parse - parse dotnet-trace's --providers syntax
 * @spec: "Name[:Keywords[:Level[:Args]]],..." where Keywords is hex (0x
 *        optional; empty or absent: all), Level 0 to 5 or a name
 *        (Critical, Error, Warning, Informational, Verbose, LogAlways;
 *        empty or absent: Verbose; above 5 is refused, where dotnet-trace
 *        takes it as 5), Args "k=v;k=v" (may be double-quoted to hold ':'
 *        or ','; a value may be double-quoted to hold ';' or '='; a pair
 *        without '=' is refused)
 * @out: appended to (a provider named again replaces the earlier one)
 * @err: receives a message naming the offending part, may be NULL
 * @errlen: size of @err
 *
 * Returns: 0, -RTD_E_IPC_PROVIDER or -ENOMEM.
 */
RTD_API int rtd_ipc_providers_parse(const char *spec,
				    struct rtd_ipc_providers *out, char *err,
				    size_t errlen);

/**
 * rtd_ipc_providers_add_profile - add a dotnet-trace profile's providers
 * @name: "dotnet-common", "dotnet-sampled-thread-time" (dotnet-trace 10's
 *        default pair), "cpu-sampling" (dotnet-trace 9's CPU profile: the
 *        runtime's Default keywords and the sampler), "gc-verbose",
 *        "gc-collect" or "database"
 * @out: appended to
 *
 * Returns: 0, -RTD_E_NOTFOUND for an unknown profile, or -ENOMEM.
 */
RTD_API int rtd_ipc_providers_add_profile(const char *name,
					  struct rtd_ipc_providers *out);

/**
 * rtd_ipc_clrevents_parse - dotnet-trace's --clrevents keyword names
 * @list: names joined by '+' ("gc+jit+loader"), case-insensitive, as
 *        dotnet-trace's list (the runtime's ClrEtwAll.man keywords)
 * @keywords: receives the keyword mask of Microsoft-Windows-DotNETRuntime
 * @bad: receives the first unknown name (may be NULL)
 * @badlen: size of @bad
 *
 * Returns: 0, or -RTD_E_IPC_PROVIDER for an unknown or empty name.
 */
RTD_API int rtd_ipc_clrevents_parse(const char *list, uint64_t *keywords,
				    char *bad, size_t badlen);

/**
 * rtd_ipc_profile_names - the profiles rtd_ipc_providers_add_profile() knows
 *
 * Returns: a NULL-terminated static array of names.
 */
RTD_API const char *const *rtd_ipc_profile_names(void);

struct rtd_ipc_session_opts;

/* What a profile of rtdiag records (rtd_ipc_profile_request()). */
enum rtd_ipc_profile_kind {
	RTD_IPC_PROFILE_CPU = 1u << 0,       /* SampleProfiler thread samples */
	RTD_IPC_PROFILE_ALLOC = 1u << 1,     /* GC/AllocationTick */
	RTD_IPC_PROFILE_LOCK = 1u << 2,      /* Contention/Start, Stop */
	RTD_IPC_PROFILE_EXCEPTION = 1u << 3, /* Exception/Start (thrown) */
	RTD_IPC_PROFILE_WAIT = 1u << 4,      /* WaitHandleWait/Start, Stop */
};

/* Rundown keywords for names only: loader, JIT and ReadyToRun methods and
 * modules, without IL-to-native maps and GC settings. */
#define RTD_IPC_RUNDOWN_NAMES 0x80000138ull

/**
 * rtd_ipc_profile_request - the session a profile needs, and nothing more
 * @kinds: RTD_IPC_PROFILE_* bits (at least one)
 * @out: receives the providers (appended to)
 * @so: its providers are not touched; receives no_stackwalk (stacks are
 *      walked only when an event other than a sample needs one: the
 *      runtime's sampler sends its own), rundown_keyword
 *      (RTD_IPC_RUNDOWN_NAMES) and filters_optional
 *
 * Microsoft-Windows-DotNETRuntime is enabled for the keywords the kinds
 * need plus Jit, Loader and CompilationDiagnostic at Verbose
 * (MethodLoadVerbose and R2RGetEntryPoint are Verbose events: they name
 * the methods compiled or first run from precompiled code during the
 * session, so frames are named even without the end rundown), with a
 * CollectTracing5 event filter that lets through only the events a
 * profile reads (MethodLoadVerbose, R2RGetEntryPoint, ModuleLoad,
 * DomainModuleLoad and those of the kinds; for allocations also GCStart
 * and GCJoin_V2, which the Linux GC checks at every collection to decide
 * whether AllocationTick is on). The filter is optional: a runtime
 * before .NET 10 gets the keywords alone. Waits (RTD_IPC_PROFILE_WAIT)
 * are the WaitHandle keyword's WaitHandleWait/Start and Stop, which only
 * .NET 9 and later send (rtd_ipc_profile_supported()).
 *
 * Returns: 0, -RTD_E_INVAL for no kind, or -ENOMEM.
 */
RTD_API int rtd_ipc_profile_request(unsigned kinds,
				    struct rtd_ipc_providers *out,
				    struct rtd_ipc_session_opts *so);

/**
 * rtd_ipc_profile_supported - whether a runtime sends what a profile reads
 * @kind: one RTD_IPC_PROFILE_* bit
 * @clr_version: the runtime's product version as ProcessInfo2 gives it
 *               (struct rtd_ipc_process_info.clr_version, e.g.
 *               "10.0.12+a1b2c3"); NULL or "" when unknown
 * @why: receives the reason when the kind is not supported (may be NULL)
 * @whylen: size of @why
 *
 * Only waits depend on the version today: WaitHandleWait/Start and Stop
 * came with .NET 9; an older runtime accepts the keyword and sends
 * nothing, so a wait profile of it would be empty, not a profile of no
 * waits. An unknown version is taken to be supported.
 *
 * Returns: true when the runtime sends the kind's events.
 */
RTD_API bool rtd_ipc_profile_supported(unsigned kind, const char *clr_version,
				       char *why, size_t whylen);

/**
 * rtd_ipc_providers_clear - free a provider list
 * @p: the list; emptied
 */
RTD_API void rtd_ipc_providers_clear(struct rtd_ipc_providers *p);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_IPC_PROVIDERS_H */
