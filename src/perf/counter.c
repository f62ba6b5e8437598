/* SPDX-License-Identifier: MIT */
/*
 * counter.c - counting events: names, attrs, reads scaled by the time a
 * counter was enabled versus really running (multiplexed PMUs).
 *
 * read() layouts (include/uapi/linux/perf_event.h, "read_format"):
 * single: value, [time_enabled], [time_running], [id], [lost];
 * group:  nr, [time_enabled], [time_running], { value, [id], [lost] } x nr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/internal.h"
#include "rtdiag/perf_counter.h"

struct counter_name {
	const char *name;
	uint32_t type;
	uint64_t config;
};

static const struct counter_name counters[] = {
	{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
	{"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
	{"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
	{"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
	{"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
	{"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
	{"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
	{"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
	{"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS},
	{"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS},
	{"cgroup-switches", PERF_TYPE_SOFTWARE, 11 /* PERF_COUNT_SW_CGROUP_SWITCHES */},
	/* counts nothing: for the side-band records an event can carry
	 * (context switches, mappings) */
	{"dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY},
	{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
	{"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
	{"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
	{"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
	{"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
	{"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
	{"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
	{"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
	{"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
	{"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
};

const char *const *rtd_perf_counter_names(void)
{
	static const char *names[sizeof(counters) / sizeof(counters[0]) + 1];
	if (!names[0])
		for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
			names[i] = counters[i].name;
	return names;
}

/* "PMU/config=N,config1=N,config2=N/" */
static int raw_attr(const char *pmu_dir, const char *name,
		    struct perf_event_attr *a)
{
	const char *slash = strchr(name, '/');
	size_t nl = strlen(name);
	if (!slash || slash == name || name[nl - 1] != '/' ||
	    name + nl - 1 == slash)
		return -RTD_E_PERF_NOEVENT;
	char pmu[128], terms[256];
	if ((size_t)(slash - name) >= sizeof(pmu) ||
	    (size_t)(name + nl - 1 - slash - 1) >= sizeof(terms))
		return -RTD_E_INVAL;
	memcpy(pmu, name, (size_t)(slash - name));
	pmu[slash - name] = 0;
	size_t tl = (size_t)(name + nl - 1 - slash - 1);
	memcpy(terms, slash + 1, tl);
	terms[tl] = 0;
	uint32_t type;
	int r = perf_pmu_type(pmu_dir, pmu, &type);
	if (r)
		return r;
	a->type = type;
	char *save = NULL;
	for (char *t = strtok_r(terms, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		if (!eq)
			return -RTD_E_INVAL;
		*eq = 0;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(eq + 1, &end, 0);
		if (errno || *end || end == eq + 1)
			return -RTD_E_INVAL;
		if (!strcmp(t, "config"))
			a->config = v;
		else if (!strcmp(t, "config1"))
			a->config1 = v;
		else if (!strcmp(t, "config2"))
			a->config2 = v;
		else
			return -RTD_E_INVAL;
	}
	return 0;
}

int perf_counter_attr(const char *pmu_dir, const char *name,
		      struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	int r = -RTD_E_PERF_NOEVENT;
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		if (!strcmp(counters[i].name, name)) {
			a->type = counters[i].type;
			a->config = counters[i].config;
			r = 0;
			break;
		}
	}
	if (r)
		r = raw_attr(pmu_dir, name, a);
	a->read_format = RTD_PERF_FORMAT_TOTAL_TIME_ENABLED |
			 RTD_PERF_FORMAT_TOTAL_TIME_RUNNING | RTD_PERF_FORMAT_ID;
	return r;
}

int rtd_perf_monitor_add_counter(struct rtd_perf_monitor *m, const char *name,
				 struct rtd_perf_event *leader,
				 struct rtd_perf_event **out)
{
	if (out)
		*out = NULL;
	if (!m || !name)
		return -RTD_E_INVAL;
	m->errmsg[0] = 0;
	if (leader && (leader->m != m || leader->kind != RTD_PERF_COUNTER ||
		       leader->leader != leader))
		return perf_set_err(m, -RTD_E_INVAL,
				    "%s: the group leader must be a counter "
				    "that leads its group",
				    name);
	struct rtd_perf_event *ev = perf_event_alloc(m, RTD_PERF_COUNTER, name);
	if (!ev)
		return -ENOMEM;
	int r = perf_counter_attr(m->pmu_dir, name, &ev->attr);
	const char *colon = strchr(name, ':');
	if (r == -RTD_E_PERF_NOEVENT && colon && !strchr(name, '/')) {
		/* a tracepoint counts its hits, as perf stat -e sys:event */
		char sys[256], evn[256];
		size_t sl = (size_t)(colon - name);
		if (!sl || sl >= sizeof(sys) || strlen(colon + 1) >= sizeof(evn) ||
		    !colon[1]) {
			r = perf_set_err(m, -RTD_E_INVAL,
					 "%s: not a tracepoint name (want "
					 "subsystem:event)", name);
			goto fail;
		}
		memcpy(sys, name, sl);
		sys[sl] = 0;
		strcpy(evn, colon + 1);
		if (!m->tracefs[0]) {
			r = perf_set_err(m, -RTD_E_PERF_TRACEFS,
					 "%s: tracefs is not mounted (mount -t "
					 "tracefs nodev /sys/kernel/tracing)", name);
			goto fail;
		}
		if ((r = perf_tracepoint_load(m, ev, sys, evn)))
			goto fail;
		ev->attr.sample_type = 0;
		ev->attr.read_format = RTD_PERF_FORMAT_TOTAL_TIME_ENABLED |
				       RTD_PERF_FORMAT_TOTAL_TIME_RUNNING |
				       RTD_PERF_FORMAT_ID;
	} else if (r) {
		perf_set_err(m, r,
			     r == -RTD_E_PERF_NOTSUPP
				     ? "%s: no such PMU on this machine"
				     : "%s: unknown counter (see 'rtdiag perf list')",
			     name);
		goto fail;
	}
	if ((r = perf_counter_open(m, ev, leader)))
		goto fail;
	perf_counter_link(m, ev, out);
	return 0;
fail:
	perf_event_destroy(ev);
	return r;
}

void perf_counter_link(struct rtd_perf_monitor *m, struct rtd_perf_event *ev,
		       struct rtd_perf_event **out)
{
	if (ev->leader != ev)
		ev->leader->nmembers++;
	struct rtd_perf_event **pp = &m->events;
	while (*pp)
		pp = &(*pp)->next;
	*pp = ev;
	if (out)
		*out = ev;
}

int perf_counter_open(struct rtd_perf_monitor *m, struct rtd_perf_event *ev,
		      struct rtd_perf_event *leader)
{
	int r;
	const char *name = ev->name;
	ev->kind = RTD_PERF_COUNTER;
	ev->attr.inherit = !!(m->flags & RTD_PERF_INHERIT);
	if (leader) {
		ev->leader = leader;
	} else {
		ev->attr.read_format |= RTD_PERF_FORMAT_GROUP;
		ev->attr.disabled = !!(m->flags & (RTD_PERF_START_DISABLED |
						   RTD_PERF_ENABLE_ON_EXEC));
		ev->attr.enable_on_exec = !!(m->flags & RTD_PERF_ENABLE_ON_EXEC);
	}
	if ((r = perf_event_open_all(m, ev))) {
		if (r == -RTD_E_PERF_NOTSUPP && ev->attr.type == PERF_TYPE_HARDWARE)
			perf_set_err(m, r,
				     "%s: this machine has no hardware counters "
				     "(no CPU PMU: a VM without PMU passthrough?)",
				     name);
		return r;
	}
	return 0;
}

bool rtd_perf_event_user_only(const struct rtd_perf_event *ev)
{
	return ev && ev->attr.exclude_kernel;
}

static void scale(struct rtd_perf_count *c, uint64_t v, uint64_t en,
		  uint64_t run)
{
	c->raw += v;
	c->time_enabled += en;
	c->time_running += run;
	if (run && run < en) {
		c->scaled += (double)v * (double)en / (double)run;
		c->multiplexed = true;
	} else {
		c->scaled += (double)v;
	}
}

static int read_fd(int fd, uint64_t *buf, size_t n)
{
	ssize_t got = read(fd, buf, n * 8);
	if (got < 0)
		return -errno;
	if (got < 8)
		return -RTD_E_TRUNCATED;
	return (int)(got / 8);
}

int rtd_perf_group_count(struct rtd_perf_event *leader,
			 struct rtd_perf_count *out, size_t n)
{
	if (!leader || leader->kind != RTD_PERF_COUNTER ||
	    leader->leader != leader)
		return -RTD_E_INVAL;
	size_t members = 1 + leader->nmembers;
	uint64_t buf[3 + 2 * RTD_PERF_MAX_READ_VALUES];
	if (members > RTD_PERF_MAX_READ_VALUES)
		return -RTD_E_CAP;
	for (size_t i = 0; i < n; i++)
		memset(&out[i], 0, sizeof(out[i]));
	for (size_t f = 0; f < leader->nfds; f++) {
		if (leader->fds[f] < 0)
			continue;
		int got = read_fd(leader->fds[f], buf, 3 + 2 * members);
		if (got < 0)
			return perf_set_err(leader->m, got, "%s: read: %s",
					    leader->name, rtd_strerror(got));
		uint64_t nr = buf[0];
		if (nr > members || (uint64_t)got < 3 + 2 * nr)
			return -RTD_E_FORMAT;
		for (uint64_t i = 0; i < nr && i < n; i++)
			scale(&out[i], buf[3 + 2 * i], buf[1], buf[2]);
	}
	return (int)members;
}

int rtd_perf_event_count(struct rtd_perf_event *ev, struct rtd_perf_count *out)
{
	if (!ev || !out || ev->kind != RTD_PERF_COUNTER)
		return -RTD_E_INVAL;
	memset(out, 0, sizeof(*out));
	if (ev->leader == ev) {
		int r = rtd_perf_group_count(ev, out, 1);
		return r < 0 ? r : 0;
	}
	for (size_t f = 0; f < ev->nfds; f++) {
		uint64_t buf[4];
		if (ev->fds[f] < 0)
			continue;
		int got = read_fd(ev->fds[f], buf, 4);
		if (got < 0)
			return got;
		if (got < 3)
			return -RTD_E_FORMAT;
		scale(out, buf[0], buf[1], buf[2]);
	}
	return 0;
}
