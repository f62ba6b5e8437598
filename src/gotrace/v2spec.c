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
/* the table's helper words (rtdiag/gotrace_events.h) */
#define RTD_GOTRACE_ARGS(...) N(__VA_ARGS__), A(__VA_ARGS__)
#define RTD_GOTRACE_NOARGS 0, NULL
#define AT_(i, j, ...) {i, j}
#define RTD_GOTRACE_AT(...) AT_(__VA_ARGS__, -1, -1)
#define RTD_GOTRACE_NONE {-1, -1}
#define KIND_UNTIMED 0
#define KIND_FRAMES V2_STACK
#define KIND_DATA V2_DATA
#define KIND_TIMED V2_TIMED
#define KIND_EXP (V2_TIMED | V2_EXP)
#define SPEC(id, num, name, kind, start, args, stacks, strs, sargs)                   \
	[RTD_GO2_EV_##id] = {name, args, KIND_##kind, RTD_GO2_EV_##start, stacks, strs, sargs},

const struct v2_spec v2_specs[V2_MAX_TYPE + 1] = {RTD_GOTRACE2_EVENTS(SPEC)};

const struct v2_spec *v2_spec_for(unsigned type, int ver)
{
	unsigned max;
	switch (ver) {
	case 1022:
		max = RTD_GO2_EV_USER_LOG;
		break;
	case 1023:
		max = RTD_GO2_EV_EXPERIMENTAL_BATCH;
		break;
	case 1025:
	case 1026:
		max = RTD_GO2_EV_END_OF_GENERATION;
		break;
	default:
		return NULL;
	}
	if (type == 0 || type > V2_MAX_TYPE)
		return NULL;
	if (type > max && !(type >= RTD_GO2_EV_SPAN && ver >= 1023))
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
