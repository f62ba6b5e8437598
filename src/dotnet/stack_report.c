/* SPDX-License-Identifier: MIT */
/*
 * stack_report.c - where each sampled managed thread is, written as
 * 'dotnet-stack report' prints it (rtd_ipc_stack_report): the one writer
 * of 'rtdiag dotnet stack' and the flight recorder's stacks action.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "rtdiag/ipc_discovery.h"
#include "rtdiag/ipc_source.h"

struct report {
	FILE *out;
	pid_t pid;
};

/* One thread: its name when the thread is still there
 * ('Thread (0xD66) ".NET TP Worker":'), then its frames, leaf first, the
 * unnamed ones (native code, the runtime's helpers) in a row folded into
 * one "[Native Frames]" line, then a blank line. */
static int report_thread(void *ctx, uint64_t tid, const char *const *frames, size_t n)
{
	const struct report *r = ctx;
	char name[64];
	if (r->pid > 0 && rtd_ipc_thread_name(r->pid, tid, name, sizeof(name)) == 0 && name[0])
		fprintf(r->out, "Thread (0x%llX) \"%s\":\n", (unsigned long long)tid, name);
	else
		fprintf(r->out, "Thread (0x%llX):\n", (unsigned long long)tid);
	bool native = false;
	for (size_t i = 0; i < n; i++) {
		bool unnamed = !strcmp(frames[i], "?!?");
		if (!(unnamed && native))
			fprintf(r->out, "  %s\n", unnamed ? "[Native Frames]" : frames[i]);
		native = unnamed;
	}
	fputc('\n', r->out);
	return ferror(r->out) ? -EIO : 0;
}

RTD_API int rtd_ipc_stack_report(rtd_nettrace_profiler *p, pid_t pid, FILE *out)
{
	if (!p || !out)
		return -RTD_E_INVAL;
	struct report r = {.out = out, .pid = pid};
	return rtd_nettrace_profiler_thread_stacks(p, report_thread, &r);
}
