/* SPDX-License-Identifier: MIT */
/*
 * v2spec.c - the new Go trace format's event table (Go 1.22-1.26).
 *
 * Facts from golang/go src/internal/trace/tracev2/events.go and
 * internal/trace/version/version.go: Go 1.22 has events up to UserLog,
 * Go 1.23 (also written by 1.24) adds coroutine switches, GoStatusStack
 * and experimental batches, Go 1.25 the sync batch (Sync, ClockSnapshot)
 * and the reserved EndOfGeneration. Go 1.26 writes "go 1.26 trace" with
 * Go 1.25's table (no event was added to it).
 */
#include <string.h>

#include "gotrace/v2.h"

#define A(...) (const char *const[]){__VA_ARGS__}
#define N(...) (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))
/* name, args..., flags */
#define S(nm, fl, st0, st1, sr0, sr1, start, ...)                              \
	{nm, N(__VA_ARGS__), A(__VA_ARGS__), fl, {st0, st1}, {sr0, sr1}, start}
#define NOARGS(nm, fl) {nm, 0, NULL, fl, {-1, -1}, {-1, -1}, 0}

const struct v2_spec v2_specs[V2_MAX_TYPE + 1] = {
	[1] = S("EventBatch", 0, -1, -1, -1, -1, 0, "gen", "m", "time", "size"),
	[2] = NOARGS("Stacks", 0),
	[3] = S("Stack", V2_STACK, -1, -1, -1, -1, 0, "id", "nframes"),
	[4] = NOARGS("Strings", 0),
	[5] = S("String", V2_DATA, -1, -1, -1, -1, 0, "id"),
	[6] = NOARGS("CPUSamples", 0),
	[7] = S("CPUSample", 0, 4, -1, -1, -1, 0, "time", "m", "p", "g", "stack"),
	[8] = S("Frequency", 0, -1, -1, -1, -1, 0, "freq"),
	[9] = S("ProcsChange", V2_TIMED, 2, -1, -1, -1, 0, "dt", "procs_value", "stack"),
	[10] = S("ProcStart", V2_TIMED, -1, -1, -1, -1, 0, "dt", "p", "p_seq"),
	[11] = S("ProcStop", V2_TIMED, -1, -1, -1, -1, 0, "dt"),
	[12] = S("ProcSteal", V2_TIMED, -1, -1, -1, -1, 0, "dt", "p", "p_seq", "m"),
	[13] = S("ProcStatus", V2_TIMED, -1, -1, -1, -1, 0, "dt", "p", "pstatus"),
	[14] = S("GoCreate", V2_TIMED, 3, 2, -1, -1, 0, "dt", "new_g", "new_stack", "stack"),
	[15] = S("GoCreateSyscall", V2_TIMED, -1, -1, -1, -1, 0, "dt", "new_g"),
	[16] = S("GoStart", V2_TIMED, -1, -1, -1, -1, 0, "dt", "g", "g_seq"),
	[17] = S("GoDestroy", V2_TIMED, -1, -1, -1, -1, 0, "dt"),
	[18] = S("GoDestroySyscall", V2_TIMED, -1, -1, -1, -1, 0, "dt"),
	[19] = S("GoStop", V2_TIMED, 2, -1, 1, -1, 0, "dt", "reason_string", "stack"),
	[20] = S("GoBlock", V2_TIMED, 2, -1, 1, -1, 0, "dt", "reason_string", "stack"),
	[21] = S("GoUnblock", V2_TIMED, 3, -1, -1, -1, 0, "dt", "g", "g_seq", "stack"),
	[22] = S("GoSyscallBegin", V2_TIMED, 2, -1, -1, -1, 0, "dt", "p_seq", "stack"),
	[23] = S("GoSyscallEnd", V2_TIMED, -1, -1, -1, -1, 22, "dt"),
	[24] = S("GoSyscallEndBlocked", V2_TIMED, -1, -1, -1, -1, 22, "dt"),
	[25] = S("GoStatus", V2_TIMED, -1, -1, -1, -1, 0, "dt", "g", "m", "gstatus"),
	[26] = S("STWBegin", V2_TIMED, 2, -1, 1, -1, 0, "dt", "kind_string", "stack"),
	[27] = S("STWEnd", V2_TIMED, -1, -1, -1, -1, 26, "dt"),
	[28] = S("GCActive", V2_TIMED, -1, -1, -1, -1, 29, "dt", "gc_seq"),
	[29] = S("GCBegin", V2_TIMED, 2, -1, -1, -1, 0, "dt", "gc_seq", "stack"),
	[30] = S("GCEnd", V2_TIMED, -1, -1, -1, -1, 29, "dt", "gc_seq"),
	[31] = S("GCSweepActive", V2_TIMED, -1, -1, -1, -1, 32, "dt", "p"),
	[32] = S("GCSweepBegin", V2_TIMED, 1, -1, -1, -1, 0, "dt", "stack"),
	[33] = S("GCSweepEnd", V2_TIMED, -1, -1, -1, -1, 32, "dt", "swept_value", "reclaimed_value"),
	[34] = S("GCMarkAssistActive", V2_TIMED, -1, -1, -1, -1, 35, "dt", "g"),
	[35] = S("GCMarkAssistBegin", V2_TIMED, 1, -1, -1, -1, 0, "dt", "stack"),
	[36] = S("GCMarkAssistEnd", V2_TIMED, -1, -1, -1, -1, 35, "dt"),
	[37] = S("HeapAlloc", V2_TIMED, -1, -1, -1, -1, 0, "dt", "heapalloc_value"),
	[38] = S("HeapGoal", V2_TIMED, -1, -1, -1, -1, 0, "dt", "heapgoal_value"),
	[39] = S("GoLabel", V2_TIMED, -1, -1, 1, -1, 0, "dt", "label_string"),
	[40] = S("UserTaskBegin", V2_TIMED, 4, -1, 3, -1, 0, "dt", "task", "parent_task", "name_string", "stack"),
	[41] = S("UserTaskEnd", V2_TIMED, 2, -1, -1, -1, 0, "dt", "task", "stack"),
	[42] = S("UserRegionBegin", V2_TIMED, 3, -1, 2, -1, 0, "dt", "task", "name_string", "stack"),
	[43] = S("UserRegionEnd", V2_TIMED, 3, -1, 2, -1, 42, "dt", "task", "name_string", "stack"),
	[44] = S("UserLog", V2_TIMED, 4, -1, 2, 3, 0, "dt", "task", "key_string", "value_string", "stack"),
	[45] = S("GoSwitch", V2_TIMED, -1, -1, -1, -1, 0, "dt", "g", "g_seq"),
	[46] = S("GoSwitchDestroy", V2_TIMED, -1, -1, -1, -1, 0, "dt", "g", "g_seq"),
	[47] = S("GoCreateBlocked", V2_TIMED, 3, 2, -1, -1, 0, "dt", "new_g", "new_stack", "stack"),
	[48] = S("GoStatusStack", V2_TIMED, 4, -1, -1, -1, 0, "dt", "g", "m", "gstatus", "stack"),
	[49] = S("ExperimentalBatch", V2_DATA, -1, -1, -1, -1, 0, "exp", "gen", "m", "time"),
	[50] = NOARGS("Sync", 0),
	[51] = S("ClockSnapshot", V2_TIMED, -1, -1, -1, -1, 0, "dt", "mono", "sec", "nsec"),
	[52] = NOARGS("EndOfGeneration", 0),
	/* experimental (AllocFree), Go 1.23+ */
	[128] = S("Span", V2_TIMED | V2_EXP, -1, -1, -1, -1, 0, "dt", "id", "npages_value", "kindclass"),
	[129] = S("SpanAlloc", V2_TIMED | V2_EXP, -1, -1, -1, -1, 0, "dt", "id", "npages_value", "kindclass"),
	[130] = S("SpanFree", V2_TIMED | V2_EXP, -1, -1, -1, -1, 0, "dt", "id"),
	[131] = S("HeapObject", V2_TIMED | V2_EXP, -1, -1, -1, -1, 0, "dt", "id", "type"),
	[132] = S("HeapObjectAlloc", V2_TIMED | V2_EXP, -1, -1, -1, -1, 0, "dt", "id", "type"),
	[133] = S("HeapObjectFree", V2_TIMED | V2_EXP, -1, -1, -1, -1, 0, "dt", "id"),
	[134] = S("GoroutineStack", V2_TIMED | V2_EXP, -1, -1, -1, -1, 0, "dt", "id", "order"),
	[135] = S("GoroutineStackAlloc", V2_TIMED | V2_EXP, -1, -1, -1, -1, 0, "dt", "id", "order"),
	[136] = S("GoroutineStackFree", V2_TIMED | V2_EXP, -1, -1, -1, -1, 0, "dt", "id"),
};

/* The names of resolved string arguments: the argument's without its
 * "_string" (which names the id). */
static const char *const sn_reason[] = {"reason"}, *const sn_kind[] = {"kind"},
		  *const sn_label[] = {"label"}, *const sn_name[] = {"name"},
		  *const sn_log[] = {"key", "value"};
const char *const *const v2_sargnames[V2_MAX_TYPE + 1] = {
	[19] = sn_reason, [20] = sn_reason, [26] = sn_kind, [39] = sn_label,
	[40] = sn_name, [42] = sn_name, [43] = sn_name, [44] = sn_log,
};

const struct v2_spec *v2_spec_for(unsigned type, int ver)
{
	unsigned max;
	switch (ver) {
	case 1022:
		max = 44; /* UserLog */
		break;
	case 1023:
		max = 49; /* ExperimentalBatch */
		break;
	case 1025:
	case 1026:
		max = 52;
		break;
	default:
		return NULL;
	}
	if (type == 0 || type > V2_MAX_TYPE)
		return NULL;
	if (type > max && !(type >= 128 && ver >= 1023))
		return NULL;
	const struct v2_spec *s = &v2_specs[type];
	return s->name ? s : NULL;
}

bool v2_version(int ver)
{
	return ver == 1022 || ver == 1023 || ver == 1025 || ver == 1026;
}

const char *rtd_gotrace_event_name(unsigned type, int version)
{
	if (version >= 1022) {
		const struct v2_spec *s = v2_spec_for(type, version);
		return s ? s->name : NULL;
	}
	if (type == 0 || type >= RTD_GO_EV_COUNT || v1_descs[type].minver > version)
		return NULL;
	return v1_descs[type].name;
}

int v2_type_by_name(const char *name, size_t len, int ver)
{
	for (unsigned t = 1; t <= V2_MAX_TYPE; t++) {
		const struct v2_spec *s = v2_spec_for(t, ver);
		if (s && strlen(s->name) == len && memcmp(s->name, name, len) == 0)
			return (int)t;
	}
	return -1;
}
