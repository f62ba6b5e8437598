/* SPDX-License-Identifier: MIT */
/*
 * discover.c - finding targets and following them: every scan drops the
 * targets whose process is gone (a pid whose start time changed is a new
 * process), then adds the processes the specs select that are not
 * targets yet. A service that restarts is found again under its new pid,
 * with the same service name and pprof prefix.
 */
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/procev.h"
#include "common/buf.h"
#include "common/file.h"
#include "common/log.h"
#include "rtdiag/ipc_discovery.h"
#include "rtdiag/nettrace_profiler.h"

#define DOTNET_RECHECK_NS 15000000000ull /* a young native target may yet
					  * open its diagnostic socket */

static struct target *find_target(struct agent *a, pid_t pid)
{
	for (struct target *t = a->targets; t; t = t->next)
		if (t->pid == pid)
			return t;
	return NULL;
}

static bool prefix_taken(struct agent *a, const char *prefix)
{
	for (struct target *t = a->targets; t; t = t->next)
		if (!strcmp(t->prefix, prefix))
			return true;
	return false;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Expand the prefix template for t; a prefix another target has gets
 * "-PID" appended. */
static void make_prefix(struct agent *a, struct target *t)
{
	const char *tpl = a->c->pprof_prefix ? a->c->pprof_prefix : "";
	rtd_buf b;
	rtd_buf_init(&b, sizeof(t->prefix) - 16);
	for (const char *p = tpl; *p; p++) {
		char pid[16];
		const char *val = NULL;
		size_t skip = 0;
		if (!strncmp(p, "{service}", 9))
			val = t->service, skip = 9;
		else if (!strncmp(p, "{pid}", 5)) {
			snprintf(pid, sizeof(pid), "%d", (int)t->pid);
			val = pid, skip = 5;
		} else if (!strncmp(p, "{runtime}", 9))
			val = t->runtime, skip = 9;
		else if (!strncmp(p, "{exe}", 5))
			val = t->exe[0] ? base_name(t->exe) : "unknown", skip = 5;
		if (val) {
			rtd_buf_puts(&b, val);
			p += skip - 1;
		} else {
			rtd_buf_putc(&b, *p);
		}
	}
	snprintf(t->prefix, sizeof(t->prefix), "%s", rtd_buf_cstr(&b));
	rtd_buf_free(&b);
	if (prefix_taken(a, t->prefix)) {
		char alt[sizeof(t->prefix)];
		snprintf(alt, sizeof(alt), "%.*s-%d",
			 (int)(sizeof(alt) - 16), t->prefix, (int)t->pid);
		rtd_info("target %s pid %d: %s/debug/pprof is taken by another "
			 "process of the service; this one is at %s/debug/pprof",
			 t->service, (int)t->pid, t->prefix, alt);
		snprintf(t->prefix, sizeof(t->prefix), "%s", alt);
	}
}

static void add_sources(struct agent *a, struct target *t)
{
	bool dotnet = !strcmp(t->runtime, "dotnet");
	bool perf = !dotnet || a->c->dotnet_cpu == DOTNET_CPU_PERF;
	unsigned kinds = a->c->dotnet_kinds;
	if (dotnet && perf)
		kinds &= ~RTD_NETTRACE_PROFILE_CPU; /* perf samples it */
	/* perf first: for a .NET process it switches the runtime's perf map
	 * on over the diagnostics IPC, a call that waits for its answer. The
	 * EventPipe source's rundown session has the runtime's diagnostics
	 * thread write rundown events that only this loop reads: started
	 * first, the runtime answered the perf map call only after the
	 * call's 30 s timeout (measured: every .NET target, --dotnet-cpu
	 * perf, .NET 10) and the loop stood still meanwhile. */
	/* /block: .NET's wait events (src_eventpipe.c says when its runtime
	 * has none); a native program's off-CPU waits (src_perf.c) */
	if (!dotnet && !a->c->native_block)
		snprintf(t->nokind[PK_BLOCK], sizeof(t->nokind[PK_BLOCK]),
			 "native-block is off: a native program's waits "
			 "(off-CPU, from sched_switch) are not recorded");
	else if (dotnet && !(kinds & RTD_NETTRACE_PROFILE_WAIT))
		snprintf(t->nokind[PK_BLOCK], sizeof(t->nokind[PK_BLOCK]),
			 "waits are not among --dotnet-profiles");
	if (perf)
		target_add_source(a, t, &source_perf);
	if (!dotnet && a->c->native_block)
		target_add_source(a, t, &source_perf_offcpu);
	if (dotnet && (kinds || a->c->dotnet_counters))
		target_add_source(a, t, &source_eventpipe);
}

static bool has_dotnet_socket(pid_t pid)
{
	char path[512];
	return rtd_ipc_socket_find(pid, path, sizeof(path), NULL, 0) == 0;
}

/*
 * A process younger than this without a diagnostic socket is looked at
 * again at the next scan, not taken yet: a .NET runtime opens its socket
 * within its first second (0.2-0.75 s at load 12), and one found before
 * is taken for a native program, whose off-CPU source loads a BPF
 * program: 12 s of the agent's loop at load 30 (stack samples), no
 * stream read meanwhile, programs' exits held. Found by the proc
 * connector at their exec, programs came that early once the scan no
 * longer waited for each runtime's CollectTracing reply.
 */
#define YOUNG_NS 2000000000ull

static bool young_without_socket(const struct proc_stat *st, pid_t pid)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_BOOTTIME, &ts))
		return false;
	uint64_t up = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	uint64_t born = st->start_ticks * (1000000000ull / (uint64_t)proc_clk_tck());
	return up < born + YOUNG_NS && !has_dotnet_socket(pid);
}

struct target *target_new(struct agent *a, pid_t pid, size_t spec,
			  const struct proc_info *pi,
			  const struct proc_stat *st)
{
	struct target *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->id = ++a->next_id;
	t->pid = pid;
	t->spec = spec;
	t->start_ticks = st->start_ticks;
	t->start_unix = (int64_t)a->boot_time +
			(int64_t)(st->start_ticks / (uint64_t)proc_clk_tck());
	t->st = *st;
	t->have_st = true;
	const struct agent_spec *sp = &a->c->specs[spec];
	if (sp->service)
		snprintf(t->service, sizeof(t->service), "%s", sp->service);
	else
		proc_service_name(pi, t->service, sizeof(t->service));
	snprintf(t->exe, sizeof(t->exe), "%s", pi->exe);
	snprintf(t->cgroup, sizeof(t->cgroup), "%s", pi->cgroup);
	rtd_agent_cgroup_parse(pi->cgroup, &t->ids);
	bool dotnet = has_dotnet_socket(pid);
	snprintf(t->runtime, sizeof(t->runtime), "%s",
		 dotnet ? "dotnet" : "native");
	if (!dotnet)
		t->recheck_until = mono_ns() + DOTNET_RECHECK_NS;
	t->win_start_unix_ns = unix_ns();
	return t;
}

/* A target's process exited (or was replaced under its pid). */
static void drop_target(struct agent *a, struct target *t, const char *why)
{
	target_take(a, t);
	target_finish_pulls(a, t, 0, true);
	target_close_window(a, t, unix_ns());
	const struct agent_spec *sp = &a->c->specs[t->spec];
	rtd_info("target %s pid %d %s%s", t->service, (int)t->pid, why,
		 sp->kind == SPEC_PID ? " (a pid= target is not followed to a "
					"new process; name= or cgroup= are)"
				      : "");
	pthread_mutex_lock(&a->lock);
	for (struct target **pp = &a->targets; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	a->ntargets--;
	a->st.targets = a->ntargets;
	a->st.targets_exited++;
	pthread_mutex_unlock(&a->lock);
	agent_flight_drop(a, t);
	target_free(t);
}

static void add_target(struct agent *a, pid_t pid, size_t spec,
		       const struct proc_info *pi, const struct proc_stat *st)
{
	if (a->ntargets >= a->c->max_targets) {
		if (!a->logged_max_targets)
			rtd_warn("max-targets %u reached: pid %d (%s) and later "
				 "processes are not profiled",
				 a->c->max_targets, (int)pid, pi->comm);
		a->logged_max_targets = true;
		return;
	}
	struct target *t = target_new(a, pid, spec, pi, st);
	if (!t)
		return;
	make_prefix(a, t);
	add_sources(a, t);
	agent_flight_start(a, t);
	/* its first window starts when its sources do: starting them (the
	 * IPC handshakes, a session's start) took 3 s at load 20, and a 1 s
	 * window then claimed 3 s it had not sampled */
	t->win_start_unix_ns = unix_ns();
	char what[300];
	spec_text(&a->c->specs[spec], what, sizeof(what));
	rtd_info("target %s pid %d (%s%s%s) found by %s: pprof at %s/debug/pprof",
		 t->service, (int)pid, t->runtime,
		 t->ids.container_id[0] ? ", container " : "",
		 t->ids.container_id[0] ? t->ids.container_id : "", what,
		 t->prefix);
	pthread_mutex_lock(&a->lock);
	t->next = a->targets;
	a->targets = t;
	a->ntargets++;
	a->st.targets = a->ntargets;
	a->st.targets_seen++;
	pthread_mutex_unlock(&a->lock);
	agent_drain(a); /* the others' streams, before the next handshake */
}

/* A native target may have been found before its runtime opened the
 * diagnostic socket: look again while it is young. */
static void recheck_runtime(struct agent *a, struct target *t, uint64_t now)
{
	if (!t->recheck_until)
		return;
	if (now > t->recheck_until) {
		t->recheck_until = 0;
		return;
	}
	if (!has_dotnet_socket(t->pid))
		return;
	t->recheck_until = 0;
	pthread_mutex_lock(&a->lock);
	snprintf(t->runtime, sizeof(t->runtime), "dotnet");
	pthread_mutex_unlock(&a->lock);
	rtd_info("target %s pid %d: a .NET runtime", t->service, (int)t->pid);
	/* its perf source was started as a native program's, the perf map
	 * left off: for .NET CPU from perf it starts again with the map on
	 * (else every JIT frame stays unnamed), its samples taken first */
	if (a->c->dotnet_cpu == DOTNET_CPU_PERF) {
		target_take(a, t);
		for (size_t i = 0; i < t->nsrc; i++)
			if (t->src[i]->ops == &source_perf) {
				t->src[i]->ops->free(t->src[i]);
				free(t->src[i]);
				memmove(&t->src[i], &t->src[i + 1],
					(t->nsrc - i - 1) * sizeof(t->src[0]));
				t->nsrc--;
				break;
			}
	}
	add_sources(a, t);
	agent_drain(a);
}

/*
 * What one scan knows: the .NET processes (one rtd_ipc_list() per scan,
 * not one socket search per process), and the processes seen before that
 * no name= or cgroup= spec selected. Such a process is not read again while
 * its start time and name stay (an exec changes the name) for up to
 * SCAN_RECHECK_NS (a process moved to another cgroup keeps both), so a
 * scan of a busy host reads two small files per process, not five.
 */
#define SCAN_RECHECK_NS 30000000000ull

struct seen {
	uint64_t start_ticks;
	uint64_t checked_ns;
	uint64_t gen;
	char comm[32];
};

#define SCAN_YOUNG_MAX 64

struct scan {
	rtd_map dotnet; /* pid -> (void *)1 */
	bool have_dotnet;
	uint64_t now;
	pid_t young[SCAN_YOUNG_MAX]; /* selected, looked at again next scan */
	size_t nyoung;
	bool young_over;             /* more: the next scan walks /proc */
};

static bool spec_selects(const struct scan *sc, const struct agent_spec *sp,
			 pid_t pid, const struct proc_info *pi)
{
	switch (sp->kind) {
	case SPEC_PID:
		return sp->pid == pid;
	case SPEC_NAME:
		return proc_name_match(sp, pi);
	case SPEC_CGROUP:
		return pi->cgroup[0] && proc_cgroup_match(sp->arg, pi->cgroup);
	case SPEC_DOTNET:
		return sc->have_dotnet ? rtd_map_get(&sc->dotnet, (uint64_t)pid, NULL)
				       : has_dotnet_socket(pid);
	}
	return false;
}

static void read_comm(struct agent *a, pid_t pid, char *out, size_t len)
{
	out[0] = 0;
	if (rtd_proc_comm_at(a->c->proc_dir, (int)pid, 0, out, len) < 0)
		out[0] = 0;
}

/* Consider one process not yet a target. */
static void consider(struct agent *a, struct scan *sc, pid_t pid)
{
	struct proc_stat st;
	if (proc_stat_read(a->c->proc_dir, pid, &st))
		return;
	/* the specs that need no names first: pid=, dotnet */
	bool cheap = false, costly = false;
	for (size_t i = 0; i < a->c->nspecs; i++) {
		enum spec_kind k = a->c->specs[i].kind;
		if (k == SPEC_PID || k == SPEC_DOTNET)
			cheap |= spec_selects(sc, &a->c->specs[i], pid, NULL);
		else
			costly = true;
	}
	char comm[32];
	struct seen *sn = NULL;
	if (!cheap && costly) {
		void *v;
		read_comm(a, pid, comm, sizeof(comm));
		if (rtd_map_get(&a->seen, (uint64_t)pid, &v)) {
			sn = v;
			if (sn->start_ticks == st.start_ticks &&
			    !strcmp(sn->comm, comm) &&
			    sc->now - sn->checked_ns < SCAN_RECHECK_NS) {
				sn->gen = a->scan_gen;
				return; /* seen, selected by none */
			}
		}
	}
	if (!cheap && !costly)
		return;
	struct proc_info pi;
	if (proc_info_read(a->c->proc_dir, pid, &pi))
		return;
	if (!pi.exe[0] && !pi.arg0[0])
		return; /* a kernel thread */
	for (size_t i = 0; i < a->c->nspecs; i++)
		if (spec_selects(sc, &a->c->specs[i], pid, &pi)) {
			if (young_without_socket(&st, pid)) {
				if (sc->nyoung < SCAN_YOUNG_MAX)
					sc->young[sc->nyoung++] = pid;
				else
					sc->young_over = true;
				a->scan_soon = true;
				return;
			}
			add_target(a, pid, i, &pi, &st);
			if (sn)
				free(rtd_map_del(&a->seen, (uint64_t)pid));
			return;
		}
	if (!costly)
		return;
	if (!sn) {
		sn = calloc(1, sizeof(*sn));
		if (!sn || rtd_map_put(&a->seen, (uint64_t)pid, sn, NULL)) {
			free(sn);
			return;
		}
	}
	sn->start_ticks = st.start_ticks;
	sn->checked_ns = sc->now;
	sn->gen = a->scan_gen;
	snprintf(sn->comm, sizeof(sn->comm), "%s", comm);
}

/* Forget the processes the last walk did not see. */
static void prune_seen(struct agent *a)
{
	size_t it = 0;
	uint64_t k;
	void *v;
	while (rtd_map_next(&a->seen, &it, &k, &v)) {
		struct seen *sn = v;
		if (sn->gen != a->scan_gen) {
			rtd_map_del(&a->seen, k);
			free(sn);
		}
	}
}

void agent_seen_free(struct agent *a)
{
	rtd_map_free_vals(&a->seen);
	procev_close(a->procev_fd);
	a->procev_fd = -1;
	free(a->changed);
	a->changed = NULL;
}

/* the processes one scan looks at, from events; past it /proc is walked */
#define AGENT_MAX_CHANGED 4096
/* /proc is walked anyway every this many scans: what no event tells (a
 * process moved to another cgroup) is seen within that */
#define WALK_EVERY_SCANS 30

void agent_procev_start(struct agent *a)
{
	a->procev_fd = -1;
	bool walk = false;
	for (size_t i = 0; i < a->c->nspecs; i++)
		walk |= a->c->specs[i].kind == SPEC_NAME ||
			a->c->specs[i].kind == SPEC_CGROUP;
	if (!walk)
		return; /* pid= and dotnet specs walk nothing */
	a->changed = calloc(AGENT_MAX_CHANGED, sizeof(*a->changed));
	if (!a->changed)
		return;
	int fd = procev_open();
	if (fd < 0) {
		rtd_info("discovery walks %s every scan: no process events "
			 "from the kernel (netlink proc connector: %s)",
			 a->c->proc_dir, strerror(-fd));
		return;
	}
	a->procev_fd = fd;
	a->changed_all = true; /* the first scan walks /proc */
}

static void on_procev(void *ctx, enum procev_kind k, pid_t pid)
{
	struct agent *a = ctx;
	if (k == PROCEV_EXIT) {
		/* a process selected by no spec is forgotten at once */
		free(rtd_map_del(&a->seen, (uint64_t)pid));
		return;
	}
	if (a->nchanged && a->changed[a->nchanged - 1] == pid)
		return; /* a fork then its exec */
	if (a->nchanged >= AGENT_MAX_CHANGED)
		a->changed_all = true;
	else
		a->changed[a->nchanged++] = pid;
}

/* Should this scan walk /proc, or look at the changed processes only? */
static bool walk_all(struct agent *a, uint64_t now)
{
	if (a->procev_fd < 0)
		return true;
	if (a->c->proc_dir && strcmp(a->c->proc_dir, "/proc"))
		return true; /* events name this system's pids, not those */
	int r = procev_read(a->procev_fd, on_procev, a);
	if (r < 0) {
		rtd_warn("process events: %s: discovery walks /proc every "
			 "scan from now on", strerror(-r));
		procev_close(a->procev_fd);
		a->procev_fd = -1;
		return true;
	}
	if (r > 0 || a->changed_all || now >= a->next_walk_ns)
		return true;
	return false;
}

void agent_scan(struct agent *a)
{
	struct scan sc = {.now = mono_ns()};
	bool dropped = false;
	/* 1. the gone */
	for (struct target *t = a->targets, *next; t; t = next) {
		next = t->next;
		struct proc_stat st;
		int rc = proc_stat_read(a->c->proc_dir, t->pid, &st);
		if (rc == 0 && st.start_ticks == t->start_ticks) {
			recheck_runtime(a, t, sc.now);
			continue;
		}
		drop_target(a, t, rc ? "exited" : "exited (its pid is reused)");
		dropped = true;
	}
	/* a target's sources and symbols freed: hand the memory back (the
	 * threads' arenas keep it otherwise; 152 short-lived targets left
	 * the agent at 72-92 MB where it started at 14) */
	if (dropped)
		malloc_trim(0);
	/* 2. the new */
	bool walk = false, dotnet = false;
	for (size_t i = 0; i < a->c->nspecs; i++) {
		enum spec_kind k = a->c->specs[i].kind;
		dotnet |= k == SPEC_DOTNET;
		walk |= k == SPEC_NAME || k == SPEC_CGROUP;
	}
	pid_t self = getpid();
	struct rtd_ipc_proc *v = NULL;
	size_t n = 0;
	rtd_map_init(&sc.dotnet, 1u << 20);
	if (dotnet && rtd_ipc_list(&v, &n) == 0) {
		sc.have_dotnet = true;
		for (size_t i = 0; i < n; i++)
			rtd_map_put(&sc.dotnet, (uint64_t)v[i].pid, (void *)1, NULL);
	}
	for (size_t i = 0; i < a->c->nspecs; i++) {
		const struct agent_spec *sp = &a->c->specs[i];
		if (sp->kind == SPEC_PID && !find_target(a, sp->pid))
			consider(a, &sc, sp->pid);
	}
	bool all = walk_all(a, sc.now);
	if (walk && !all) {
		for (size_t i = 0; i < a->nchanged; i++) {
			pid_t pid = a->changed[i];
			if (pid == self || find_target(a, pid))
				continue;
			/* it changed: what was seen of it no longer holds */
			free(rtd_map_del(&a->seen, (uint64_t)pid));
			consider(a, &sc, pid);
		}
	} else if (walk) {
		a->next_walk_ns = sc.now + WALK_EVERY_SCANS * a->c->scan_ns;
		a->scan_gen++;
		DIR *d = opendir(a->c->proc_dir);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			char *end;
			long pid = strtol(e->d_name, &end, 10);
			if (*end || pid <= 0 || pid == self ||
			    find_target(a, (pid_t)pid))
				continue;
			consider(a, &sc, (pid_t)pid);
		}
		if (d)
			closedir(d);
		prune_seen(a);
	} else if (dotnet) {
		for (size_t i = 0; i < n; i++)
			if (v[i].pid != self && !find_target(a, v[i].pid))
				consider(a, &sc, v[i].pid);
	}
	a->nchanged = 0;
	a->changed_all = sc.young_over;
	for (size_t i = 0; i < sc.nyoung; i++) {
		if (a->changed && a->nchanged < AGENT_MAX_CHANGED)
			a->changed[a->nchanged++] = sc.young[i];
		else
			a->changed_all = true;
	}
	free(v);
	rtd_map_free(&sc.dotnet);
}
