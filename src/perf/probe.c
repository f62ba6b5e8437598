/* SPDX-License-Identifier: MIT */
/*
 * probe.c - uprobes, uretprobes, kprobes and kretprobes.
 *
 * Two forms. With fetch arguments the probe is a tracefs dynamic event
 * (created with libtracefs in the group "rtdiag_<pid>", read as a
 * tracepoint, removed on close; groups of dead rtdiag processes are
 * removed when a monitor starts). Without, perf's uprobe/kprobe PMU takes
 * the location in attr.config1/config2 and nothing is left in tracefs.
 *
 * A uprobe's location is a file offset. A symbol's value is a virtual
 * address; the file offset is vaddr - p_vaddr + p_offset of the PT_LOAD
 * segment holding it (not the address itself, which is only right when a
 * segment's address equals its offset).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "common/file.h"
#include "common/guard.h"
#include "common/log.h"
#include "perf/internal.h"
#include "rtdiag/guard.h"

void rtd_perf_probe_clear(struct rtd_perf_probe *p)
{
	if (!p)
		return;
	free(p->target);
	free(p->symbol);
	free(p->fetchargs);
	free(p->name);
	memset(p, 0, sizeof(*p));
}

static bool sym_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '@' ||
	       c == '$';
}

static int parse_num(const char *s, uint64_t *v)
{
	char *end;
	if (!*s || !isdigit((unsigned char)*s))
		return -RTD_E_INVAL;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end)
		return -RTD_E_INVAL;
	*v = x;
	return 0;
}

int rtd_perf_probe_parse(enum rtd_perf_event_kind kind, const char *spec,
			 struct rtd_perf_probe *out)
{
	memset(out, 0, sizeof(*out));
	if (!spec || (kind != RTD_PERF_UPROBE && kind != RTD_PERF_KPROBE))
		return -RTD_E_INVAL;
	while (isspace((unsigned char)*spec))
		spec++;
	size_t loclen = strcspn(spec, " \t");
	const char *args = spec + loclen;
	while (isspace((unsigned char)*args))
		args++;
	char *loc = strndup(spec, loclen);
	if (!loc)
		return -ENOMEM;
	out->kind = kind;
	int r = 0;
	char *what = loc;
	if (kind == RTD_PERF_UPROBE) {
		char *c = strrchr(loc, ':');
		if (!c || c == loc || !c[1]) {
			r = -RTD_E_INVAL;
			goto out;
		}
		*c = 0;
		out->target = strdup(loc);
		what = c + 1;
	}
	size_t wl = strlen(what);
	if (wl > 7 && !strcmp(what + wl - 7, "%return")) {
		out->retprobe = true;
		what[wl - 7] = 0;
	}
	if (isdigit((unsigned char)what[0])) {
		r = parse_num(what, &out->addr);
	} else {
		char *plus = strchr(what, '+');
		if (plus) {
			*plus = 0;
			r = parse_num(plus + 1, &out->offset);
		}
		if (!*what)
			r = -RTD_E_INVAL;
		for (const char *p = what; *p && !r; p++)
			if (!sym_char(*p))
				r = -RTD_E_INVAL;
		if (!r)
			out->symbol = strdup(what);
	}
	if (!r && *args)
		out->fetchargs = strdup(args);
	if (!r && ((kind == RTD_PERF_UPROBE && !out->target) ||
		   (*args && !out->fetchargs)))
		r = -ENOMEM;
out:
	free(loc);
	if (r)
		rtd_perf_probe_clear(out);
	return r;
}

/* ---- ELF: symbol to file offset -------------------------------------------- */

static int sym_vaddr(Elf *elf, const char *sym, uint64_t *vaddr)
{
	Elf_Scn *scn = NULL;
	int found = 0;
	/* .symtab first (it has local functions too), then .dynsym */
	for (int pass = 0; pass < 2 && !found; pass++) {
		Elf64_Word want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
		scn = NULL;
		while ((scn = elf_nextscn(elf, scn)) && !found) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want ||
			    !sh.sh_entsize)
				continue;
			Elf_Data *data = elf_getdata(scn, NULL);
			if (!data)
				continue;
			size_t n = sh.sh_size / sh.sh_entsize;
			for (size_t i = 0; i < n; i++) {
				GElf_Sym s;
				if (!gelf_getsym(data, (int)i, &s))
					break;
				if (s.st_shndx == SHN_UNDEF || !s.st_value)
					continue;
				int t = GELF_ST_TYPE(s.st_info);
				if (t != STT_FUNC && t != STT_GNU_IFUNC &&
				    t != STT_NOTYPE)
					continue;
				const char *nm =
					elf_strptr(elf, sh.sh_link, s.st_name);
				if (nm && !strcmp(nm, sym)) {
					*vaddr = s.st_value;
					found = 1;
					break;
				}
			}
		}
	}
	return found ? 0 : -RTD_E_NOTFOUND;
}

int perf_elf_sym_offset(const char *path, const char *sym, uint64_t vaddr,
			uint64_t *off)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -RTD_E_UNSUPPORTED;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int r = -RTD_E_FORMAT;
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	if (sym && (r = sym_vaddr(elf, sym, &vaddr)))
		goto out;
	size_t nph;
	r = -RTD_E_FORMAT;
	if (elf_getphdrnum(elf, &nph) != 0)
		goto out;
	r = -RTD_E_NOTFOUND;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			r = 0;
			break;
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return r;
}

/* ---- tracefs names and strings ---------------------------------------------- */

int perf_probe_plan(const struct rtd_perf_probe *p, unsigned seq,
		    struct perf_probe_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->use_pmu = !p->fetchargs;
	char base[48];
	if (p->name)
		snprintf(base, sizeof(base), "%s", p->name);
	else if (p->symbol)
		snprintf(base, sizeof(base), "%s", p->symbol);
	else
		snprintf(base, sizeof(base), "%s_%llx",
			 p->kind == RTD_PERF_UPROBE ? "off" : "addr",
			 (unsigned long long)p->addr);
	for (char *c = base; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			*c = '_';
	if (isdigit((unsigned char)base[0]))
		base[0] = '_';
	snprintf(plan->event, sizeof(plan->event), "%s%s", base,
		 p->retprobe ? "_ret" : "");
	if (seq) {
		size_t l = strlen(plan->event);
		snprintf(plan->event + l, sizeof(plan->event) - l, "_%u", seq);
	}
	if (p->symbol && p->offset)
		snprintf(plan->display, sizeof(plan->display), "%s+0x%llx%s",
			 p->symbol, (unsigned long long)p->offset,
			 p->retprobe ? "%return" : "");
	else if (p->symbol)
		snprintf(plan->display, sizeof(plan->display), "%s%s",
			 p->symbol, p->retprobe ? "%return" : "");
	else
		snprintf(plan->display, sizeof(plan->display), "0x%llx%s",
			 (unsigned long long)p->addr,
			 p->retprobe ? "%return" : "");
	if (p->kind == RTD_PERF_UPROBE) {
		if (!p->target)
			return -RTD_E_INVAL;
		uint64_t off;
		/* a number is a virtual address as nm/objdump print it */
		int r = perf_elf_sym_offset(p->target, p->symbol, p->addr, &off);
		if (r)
			return r;
		plan->file_offset = off + p->offset;
		snprintf(plan->location, sizeof(plan->location), "%s:0x%llx",
			 p->target, (unsigned long long)plan->file_offset);
	} else if (p->kind == RTD_PERF_KPROBE) {
		if (p->symbol)
			snprintf(plan->location, sizeof(plan->location),
				 "%s+%llu", p->symbol,
				 (unsigned long long)p->offset);
		else
			snprintf(plan->location, sizeof(plan->location),
				 "0x%llx",
				 (unsigned long long)(p->addr + p->offset));
	} else {
		return -RTD_E_INVAL;
	}
	return 0;
}

int perf_probe_pmu_attr(const char *pmu_dir, const struct rtd_perf_probe *p,
			const struct perf_probe_plan *plan,
			struct perf_event_attr *attr)
{
	const char *pmu = p->kind == RTD_PERF_UPROBE ? "uprobe" : "kprobe";
	uint32_t type;
	int r = perf_pmu_type(pmu_dir, pmu, &type);
	if (r)
		return r;
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	if (p->retprobe) {
		unsigned bit;
		if ((r = perf_pmu_format_bit(pmu_dir, pmu, "retprobe", &bit)))
			return r;
		attr->config |= 1ull << bit;
	}
	/* config1/config2: uprobe_path/probe_offset, kprobe_func/probe_offset
	 * or kprobe_addr (kernel/events/core.c perf_uprobe_init etc.) */
	if (p->kind == RTD_PERF_UPROBE) {
		attr->config1 = (uint64_t)(uintptr_t)p->target;
		attr->config2 = plan->file_offset;
	} else if (p->symbol) {
		attr->config1 = (uint64_t)(uintptr_t)p->symbol;
		attr->config2 = p->offset;
	} else {
		attr->config1 = 0;
		attr->config2 = p->addr + p->offset;
	}
	return 0;
}

int perf_proc_starttime(pid_t pid, unsigned long long *ticks)
{
	return rtd_proc_stat(pid, NULL, ticks);
}

/*
 * Is the group "rtdiag_<pid>_<starttime>" (or the older "rtdiag_<pid>")
 * left by a process that is gone? A pid is reused: the process now at
 * that pid must also have started at that time to own the group. A zombie
 * is gone too, though kill(pid, 0) still succeeds on it until it is
 * reaped.
 */
bool perf_probe_group_stale(const char *sys)
{
	int pid = 0;
	unsigned long long start = 0;
	char tail = 0;
	int n = sscanf(sys, "rtdiag_%d_%llu%c", &pid, &start, &tail);
	if (n != 2) {
		n = sscanf(sys, "rtdiag_%d%c", &pid, &tail);
		if (n != 1)
			return false;
	}
	if (pid <= 0 || pid == getpid())
		return false;
	return !rtd_proc_alive(pid, start);
}

/* The guardian's undo of rtd_guard_probe() (common/guard.h): plain file
 * writes, no libtracefs, as it may run in the guardian. */
int perf_probe_undo(const char *tracefs, bool kprobe, const char *group,
		    const char *event)
{
	char path[512], cmd[300];
	snprintf(path, sizeof(path), "%s/%s_events", tracefs,
		 kprobe ? "kprobe" : "uprobe");
	int l = snprintf(cmd, sizeof(cmd), "-:%s/%s\n", group, event);
	if (l < 0 || (size_t)l >= sizeof(cmd))
		return -RTD_E_INVAL;
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, cmd, (size_t)l);
	int e = n < 0 ? errno : 0;
	close(fd);
	/* ENOENT: not there (removed already, or never created) */
	return n == l || e == ENOENT ? 0 : e ? -e : -EIO;
}

/* Remove probes in rtdiag groups whose process has gone. */
int perf_probe_cleanup_stale(const char *tracefs)
{
	(void)tracefs;
	struct tracefs_dynevent **all = tracefs_dynevent_get_all(
		TRACEFS_DYNEVENT_UPROBE | TRACEFS_DYNEVENT_URETPROBE |
			TRACEFS_DYNEVENT_KPROBE | TRACEFS_DYNEVENT_KRETPROBE,
		NULL);
	int removed = 0;
	for (size_t i = 0; all && all[i]; i++) {
		char *sys = NULL, *event = NULL;
		tracefs_dynevent_info(all[i], &sys, &event, NULL, NULL, NULL);
		if (sys && perf_probe_group_stale(sys)) {
			if (tracefs_dynevent_destroy(all[i], true) == 0)
				removed++;
			else
				rtd_warn("perf: probe %s/%s of a process that is "
					 "gone could not be removed (still in use?)",
					 sys, event ? event : "?");
		}
		free(sys);
		free(event);
	}
	tracefs_dynevent_list_free(all);
	return removed;
}

/* A library by its name ("libc.so.6", "libc") in a process's mappings:
 * the path as that process maps it (through its root). */
struct lib_find {
	int pid;
	const char *name;
	char *out;
	size_t n;
};

static int on_lib_line(const struct rtd_maps_entry *e, void *ctx)
{
	struct lib_find *lf = ctx;
	const char *sl = memchr(e->path, '/', e->path_len);
	if (!sl)
		return 0;
	char path[PATH_MAX];
	size_t pl = e->path_len - (size_t)(sl - e->path);
	if (pl >= sizeof(path))
		return 0;
	memcpy(path, sl, pl);
	path[pl] = 0;
	const char *base = strrchr(path, '/') + 1;
	size_t nl = strlen(lf->name);
	/* "libc.so.6" exactly, or "libc" / "libc.so" as a prefix up
	 * to the ".so" part */
	if (strcmp(base, lf->name) &&
	    (strncmp(base, lf->name, nl) || (base[nl] != '.' && base[nl] != '-') ||
	     !strstr(base, ".so")))
		return 0;
	if (!rtd_proc_root_path(lf->out, lf->n, lf->pid, "%s", path) &&
	    access(lf->out, R_OK) == 0)
		return 1;
	snprintf(lf->out, lf->n, "%s", path);
	return access(lf->out, R_OK) == 0;
}

static bool lib_in_maps(int pid, const char *name, char *out, size_t n)
{
	struct lib_find lf = {pid, name, out, n};
	size_t bad;
	return pid > 0 && rtd_proc_maps(pid, on_lib_line, &lf, &bad) == 1;
}

/* A library by its name through the loader's cache (ldconfig -p), as
 * the dynamic loader would find it. */
static bool lib_in_ld_cache(const char *name, char *out, size_t n)
{
	FILE *f = popen("/sbin/ldconfig -p 2>/dev/null", "r");
	if (!f)
		return false;
	char line[PATH_MAX + 256];
	bool found = false;
	size_t nl = strlen(name);
	while (fgets(line, sizeof(line), f)) {
		/* "\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6" */
		char *s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		char *arrow = strstr(s, " => ");
		if (found || !arrow || !strstr(line, "x86-64"))
			continue;
		size_t kl = strcspn(s, " ");
		bool match = (kl == nl && !strncmp(s, name, nl)) ||
			     (kl > nl && !strncmp(s, name, nl) && s[nl] == '.');
		if (match) {
			arrow[4 + strcspn(arrow + 4, "\n")] = 0;
			snprintf(out, n, "%s", arrow + 4);
			found = access(out, R_OK) == 0;
		}
	}
	pclose(f);
	return found;
}

static int resolve_target(struct rtd_perf_monitor *m, struct rtd_perf_probe *p)
{
	/* a bare name: a library the target maps, the loader's cache, then
	 * PATH as a shell would (perf probe -x does the same) */
	char buf[PATH_MAX];
	bool lib = !strchr(p->target, '/') &&
		   (strstr(p->target, ".so") || !strncmp(p->target, "lib", 3));
	bool found_lib = false;
	if (lib) {
		for (size_t i = 0; i < m->ntargets && !found_lib && !m->cgroup_scope &&
				   m->targets[i] > 0 && i < 64;
		     i++)
			found_lib = lib_in_maps(m->targets[i], p->target, buf,
						sizeof(buf));
		if (!found_lib)
			found_lib = lib_in_ld_cache(p->target, buf, sizeof(buf));
	}
	if (found_lib) {
		/* realpath below */
	} else if (!strchr(p->target, '/')) {
		const char *path = getenv("PATH");
		bool found = false;
		while (path && *path && !found) {
			size_t l = strcspn(path, ":");
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)l, path,
				 p->target);
			found = access(buf, X_OK) == 0;
			path += l + (path[l] == ':');
		}
		if (!found)
			return perf_set_err(m, -RTD_E_NOTFOUND,
					    lib ? "%s: not found in the target's "
						  "mappings, the loader cache "
						  "(ldconfig -p) or PATH"
						: "%s: not found in PATH",
					    p->target);
	} else {
		snprintf(buf, sizeof(buf), "%s", p->target);
	}
	char *real = realpath(buf, NULL);
	if (!real)
		return perf_set_err(m, -RTD_E_NOTFOUND, "%s: %s", buf,
				    strerror(errno));
	free(p->target);
	p->target = real;
	return 0;
}

static int probe_add(struct rtd_perf_monitor *m,
		     const struct rtd_perf_probe *probe,
		     struct rtd_perf_event *leader, bool count,
		     struct rtd_perf_event **out);

int rtd_perf_monitor_add_probe(struct rtd_perf_monitor *m,
			       const struct rtd_perf_probe *probe,
			       struct rtd_perf_event **out)
{
	return probe_add(m, probe, NULL, false, out);
}

int rtd_perf_monitor_add_probe_counter(struct rtd_perf_monitor *m,
				       const struct rtd_perf_probe *probe,
				       struct rtd_perf_event *leader,
				       struct rtd_perf_event **out)
{
	if (m && leader && (leader->m != m || leader->kind != RTD_PERF_COUNTER ||
			    leader->leader != leader))
		return perf_set_err(m, -RTD_E_INVAL,
				    "the group leader must be a counter that "
				    "leads its group");
	return probe_add(m, probe, leader, true, out);
}

/* The probe's own copies of its strings: the target is replaced by its
 * real path. */
static void probe_copy(struct rtd_perf_probe *p,
		       const struct rtd_perf_probe *probe)
{
	*p = *probe;
	p->target = probe->target ? strdup(probe->target) : NULL;
	p->symbol = probe->symbol ? strdup(probe->symbol) : NULL;
	p->fetchargs = probe->fetchargs ? strdup(probe->fetchargs) : NULL;
	p->name = probe->name ? strdup(probe->name) : NULL;
}

/* Where the probe goes (the uprobe's file resolved first), with the
 * message a person needs when a symbol or address is not there. */
static int probe_locate(struct rtd_perf_monitor *m, struct rtd_perf_probe *p,
			struct perf_probe_plan *plan)
{
	int r = 0;
	if (p->kind == RTD_PERF_UPROBE &&
	    (!p->target || (r = resolve_target(m, p))))
		return r;
	r = perf_probe_plan(p, m->probe_seq, plan);
	if (r && p->kind == RTD_PERF_UPROBE)
		perf_set_err(m, r, "%s: %s%s: %s", p->target,
			     p->symbol ? "symbol " : "address ", plan->display,
			     r == -RTD_E_NOTFOUND
				     ? "not found in .symtab or .dynsym "
				       "(or outside any loaded segment)"
				     : rtd_strerror(r));
	return r;
}

/* Count instead of sample: the attr of a counter. */
static void as_counter(struct rtd_perf_event *ev)
{
	ev->attr.sample_type = 0;
	ev->attr.sample_period = 0;
	ev->attr.read_format = RTD_PERF_FORMAT_TOTAL_TIME_ENABLED |
			       RTD_PERF_FORMAT_TOTAL_TIME_RUNNING |
			       RTD_PERF_FORMAT_ID;
}

/* Without fetch arguments: perf's uprobe/kprobe PMU, nothing in tracefs.
 * *evp is set as soon as the event exists (the caller frees it on
 * failure). */
static int probe_open_pmu(struct rtd_perf_monitor *m,
			  const struct rtd_perf_probe *p,
			  const struct perf_probe_plan *plan,
			  const char *display, struct rtd_perf_event *leader,
			  bool count, struct rtd_perf_event **evp)
{
	const char *what = p->kind == RTD_PERF_UPROBE ? "uprobe" : "kprobe";
	char name[400];
	snprintf(name, sizeof(name), "%s:%s",
		 p->retprobe ? (p->kind == RTD_PERF_UPROBE ? "uretprobe"
							   : "kretprobe")
			     : what,
		 plan->event);
	struct rtd_perf_event *ev = *evp = perf_event_alloc(m, p->kind, name);
	if (!ev)
		return -ENOMEM;
	int r = perf_probe_pmu_attr(m->pmu_dir, p, plan, &ev->attr);
	if (r == -RTD_E_PERF_NOTSUPP)
		return perf_set_err(m, r,
				    "%s: this kernel has no %s PMU (%s/%s is "
				    "missing: CONFIG_%s_EVENTS is off)",
				    display, what, m->pmu_dir, what,
				    p->kind == RTD_PERF_UPROBE ? "UPROBE"
							       : "KPROBE");
	if (r)
		return r;
	if (count) {
		as_counter(ev);
		return perf_counter_open(m, ev, leader);
	}
	return perf_event_open_all(m, ev);
}

/* tracefs's <kind>_events must be there and writable to create one. */
static int probe_tracefs_check(struct rtd_perf_monitor *m, const char *what,
			       const char *display)
{
	char evfile[PATH_MAX + 16];
	snprintf(evfile, sizeof(evfile), "%s/%s_events", m->tracefs, what);
	if (m->tracefs[0] && access(evfile, W_OK) == 0)
		return 0;
	int e = errno;
	if (m->tracefs[0] && (e == EACCES || e == EPERM || e == EROFS))
		return perf_set_err(m, -EACCES,
				    "%s: permission denied: creating a %s "
				    "needs root (%s is writable by root "
				    "only); run as root, or use the %s "
				    "without fetch arguments (perf's PMU "
				    "form) with CAP_PERFMON",
				    display, what, evfile, what);
	return perf_set_err(m, -RTD_E_PERF_NOTSUPP,
			    "%s: this kernel has no %s events (%s is missing)",
			    display, what, evfile);
}

/* The tracefs dynamic event for the probe, created; NULL with *err set
 * (and the message) when it is not. */
static struct tracefs_dynevent *probe_dynevent(struct rtd_perf_monitor *m,
					       const struct rtd_perf_probe *p,
					       const struct perf_probe_plan *plan,
					       const char *display, int *err)
{
	const char *what = p->kind == RTD_PERF_UPROBE ? "uprobe" : "kprobe";
	const char *g = m->probe_group;
	struct tracefs_dynevent *dyn;
	if (p->kind == RTD_PERF_UPROBE)
		dyn = p->retprobe
			      ? tracefs_uretprobe_alloc(g, plan->event, p->target,
							plan->file_offset,
							p->fetchargs)
			      : tracefs_uprobe_alloc(g, plan->event, p->target,
						     plan->file_offset,
						     p->fetchargs);
	else
		dyn = p->retprobe
			      ? tracefs_kretprobe_alloc(g, plan->event,
							plan->location,
							p->fetchargs, 0)
			      : tracefs_kprobe_alloc(g, plan->event,
						     plan->location,
						     p->fetchargs);
	if (!dyn) {
		*err = -ENOMEM;
		return NULL;
	}
	if (tracefs_dynevent_create(dyn) != 0) {
		char *elog = tracefs_error_last(NULL);
		*err = perf_set_err(m, -RTD_E_PERF_PROBE,
				    "%s: tracefs rejected the %s '%s %s'%s%s",
				    display, what, plan->location, p->fetchargs,
				    elog ? ": " : "", elog ? elog : "");
		free(elog);
		tracefs_dynevent_free(dyn);
		return NULL;
	}
	return dyn;
}

/* With fetch arguments: a tracefs dynamic event in the monitor's group,
 * read as a tracepoint and removed with the event. *evp as above. */
static int probe_open_tracefs(struct rtd_perf_monitor *m,
			      const struct rtd_perf_probe *p,
			      const struct perf_probe_plan *plan,
			      const char *display,
			      struct rtd_perf_event *leader, bool count,
			      struct rtd_perf_event **evp)
{
	const char *what = p->kind == RTD_PERF_UPROBE ? "uprobe" : "kprobe";
	int r = probe_tracefs_check(m, what, display);
	if (r)
		return r;
	/* registered before it is created: the guardian removes it however
	 * this process ends */
	unsigned gid = 0;
	r = rtd_guard_probe(m->tracefs, p->kind == RTD_PERF_KPROBE,
			    m->probe_group, plan->event, &gid);
	if (r)
		return perf_set_err(m, r, "%s: %s", display, rtd_strerror(r));
	struct tracefs_dynevent *dyn = probe_dynevent(m, p, plan, display, &r);
	if (!dyn) {
		rtd_guard_forget(gid);
		return r;
	}
	char name[400];
	snprintf(name, sizeof(name), "%s:%s", m->probe_group, plan->event);
	struct rtd_perf_event *ev = *evp = perf_event_alloc(m, p->kind, name);
	if (!ev) {
		if (tracefs_dynevent_destroy(dyn, true) == 0)
			rtd_guard_forget(gid);
		tracefs_dynevent_free(dyn);
		return -ENOMEM;
	}
	ev->dyn = dyn; /* removed with the event from now on */
	ev->guard_id = gid;
	if (count) {
		r = perf_tracepoint_load(m, ev, m->probe_group, plan->event);
		as_counter(ev);
		if (!r)
			r = perf_counter_open(m, ev, leader);
		return r;
	}
	r = perf_add_tracepoint_named(m, m->probe_group, plan->event, NULL, ev);
	ev->kind = p->kind;
	return r;
}

/* The opened probe joins the monitor: a counter in its group, a sampled
 * event at the end of the event list. */
static void probe_link(struct rtd_perf_monitor *m, struct rtd_perf_event *ev,
		       bool count, struct rtd_perf_event **out)
{
	if (count) {
		perf_counter_link(m, ev, out);
		return;
	}
	struct rtd_perf_event **pp = &m->events;
	while (*pp)
		pp = &(*pp)->next;
	*pp = ev;
	if (out)
		*out = ev;
}

static int probe_add(struct rtd_perf_monitor *m,
		     const struct rtd_perf_probe *probe,
		     struct rtd_perf_event *leader, bool count,
		     struct rtd_perf_event **out)
{
	if (out)
		*out = NULL;
	if (!m || !probe)
		return -RTD_E_INVAL;
	m->errmsg[0] = 0;
	struct rtd_perf_probe p;
	probe_copy(&p, probe);
	struct rtd_perf_event *ev = NULL;
	struct perf_probe_plan plan;
	const char *what = p.kind == RTD_PERF_UPROBE ? "uprobe" : "kprobe";
	int r = probe_locate(m, &p, &plan);
	if (r)
		goto fail;
	m->probe_seq++;
	char display[300];
	snprintf(display, sizeof(display), "%s%s%s",
		 p.kind == RTD_PERF_UPROBE ? p.target : "",
		 p.kind == RTD_PERF_UPROBE ? ":" : "", plan.display);
	r = plan.use_pmu
		    ? probe_open_pmu(m, &p, &plan, display, leader, count, &ev)
		    : probe_open_tracefs(m, &p, &plan, display, leader, count,
					 &ev);
	if (r)
		goto fail;
	ev->symbol = strdup(display);
	if (!ev->symbol) {
		r = -ENOMEM;
		goto fail;
	}
	probe_link(m, ev, count, out);
	rtd_perf_probe_clear(&p);
	return 0;
fail:
	if (!m->errmsg[0])
		perf_set_err(m, r, "%s: %s", what, rtd_strerror(r));
	perf_event_destroy(ev);
	rtd_perf_probe_clear(&p);
	return r;
}
