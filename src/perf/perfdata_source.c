/* SPDX-License-Identifier: MIT */
/*
 * perfdata_source.c - a perf.data file as a record source
 * (rtdiag/perf_data.h, rtdiag/source.h).
 *
 * The decoder gives the file's records in time order; this follows the
 * address spaces they describe (MMAP/MMAP2, FORK, COMM with exec, EXIT)
 * in a symbolizer that never reads /proc (the recorded processes are
 * gone, and a pid may now be another process), and names each sample's
 * frames as it comes: kernel frames from kallsyms, user frames from the
 * files the mappings name, opened by path.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "perf/internal.h"
#include "rtdiag/perf_data.h"
#include "rtdiag/symbols.h"

#define PDS_MAX_THREADS (1u << 22) /* threads and processes followed */
#define PDS_MAX_DEPTH 1024u        /* addresses of one stack */
#define PDS_MAX_FIELDS 32u         /* a tracepoint's fields given out */
#define PDS_SCRATCH 8192u          /* their text, NUL-terminated */
#define PDS_OUT 4                  /* records one perf record becomes */

struct pthr {
	uint32_t pid;
	const char *name; /* interned; NULL: not known */
	const char *told; /* the name the last THREAD record gave */
	bool announced;
	bool off;         /* an off-CPU slice is open */
};

struct pds {
	rtd_perf_data *d;
	rtd_symbolizer *sym;
	rtd_intern *in;
	struct rtd_clock clock;
	rtd_map threads; /* tid -> struct pthr * */
	rtd_map procs;   /* pid -> the name the last PROCESS record gave */
	struct rtd_record out[PDS_OUT];
	int nout, iout;
	uint64_t ips[PDS_MAX_DEPTH];
	bool kern[PDS_MAX_DEPTH];
	struct rtd_rec_frame *frames;
	size_t fcap;
	struct rtd_field fields[PDS_MAX_FIELDS + 1];
	char scratch[PDS_SCRATCH];
	const char *cat_tp, *cat_offcpu, *cat_perf, *unit_count;
	const char *n_preempted, *n_waiting, *n_lost, *f_period, *f_lost;
	const char *ev_names[RTD_PERF_DATA_MAX_ATTRS];
};

static struct pthr *thread_of(struct pds *s, uint32_t pid, uint32_t tid, bool make)
{
	void *v;
	if (rtd_map_get(&s->threads, tid, &v))
		return v;
	if (!make)
		return NULL;
	struct pthr *t = calloc(1, sizeof(*t));
	if (!t || rtd_map_put(&s->threads, tid, t, NULL)) {
		free(t);
		return NULL;
	}
	t->pid = pid;
	return t;
}

static int str(struct pds *s, const char *v, const char **out)
{
	return rtd_intern_string(s->in, v, strlen(v), out);
}

static struct rtd_record *push(struct pds *s, unsigned kind, const struct rtd_perf_sample *smp,
			       uint32_t pid, uint64_t tid)
{
	struct rtd_record *r = &s->out[s->nout++];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->ts = (int64_t)smp->time;
	r->mono = rtd_clock_to_mono(&s->clock, r->ts);
	r->pid = pid;
	r->tid = tid;
	return r;
}

/* PROCESS and THREAD records for (pid, tid) before its first record, and
 * again when a name changed. */
static int announce(struct pds *s, const struct rtd_perf_sample *smp, uint32_t pid, uint32_t tid)
{
	struct pthr *t = thread_of(s, pid, tid, true);
	if (!t)
		return -ENOMEM;
	t->pid = pid;
	void *v = NULL;
	bool known = rtd_map_get(&s->procs, pid, &v);
	struct pthr *main = thread_of(s, pid, pid, false);
	const char *pname = main && main->name ? main->name : NULL;
	if (!known || (pname && v != pname)) {
		if (rtd_map_put(&s->procs, pid, (void *)pname, NULL))
			return -ENOMEM;
		push(s, RTD_REC_PROCESS, smp, pid, 0)->name = pname;
	}
	if (!t->announced || t->told != t->name) {
		t->announced = true;
		t->told = t->name;
		push(s, RTD_REC_THREAD, smp, pid, tid)->name = t->name;
	}
	return 0;
}

static void on_comm(struct pds *s, const struct rtd_perf_sample *smp)
{
	/* an exec keeps the old mappings until new ones replace them, as
	 * perf's reading does: a sample inside execve() still names the old
	 * image's code */
	uint32_t pid = smp->rec.comm.pid, tid = smp->rec.comm.tid;
	struct pthr *t = thread_of(s, pid, tid, true);
	const char *nm;
	if (t && smp->rec.comm.comm && !str(s, smp->rec.comm.comm, &nm)) {
		t->pid = pid;
		t->name = nm;
	}
}

static void on_task(struct pds *s, const struct rtd_perf_sample *smp)
{
	uint32_t pid = smp->rec.task.pid, ppid = smp->rec.task.ppid;
	uint32_t tid = smp->rec.task.tid, ptid = smp->rec.task.ptid;
	if (smp->type == PERF_RECORD_EXIT) {
		if (pid == tid)
			rtd_sym_proc_exit(s->sym, (pid_t)pid);
		return;
	}
	if (pid != ppid)
		rtd_sym_proc_fork(s->sym, (pid_t)ppid, (pid_t)pid);
	struct pthr *parent = thread_of(s, ppid, ptid, false);
	struct pthr *t = thread_of(s, pid, tid, true);
	if (t) {
		t->pid = pid;
		if (parent && parent->name)
			t->name = parent->name;
	}
}

static const char *base_of(const char *p)
{
	const char *b = strrchr(p, '/');
	return b && b[1] ? b + 1 : p;
}

/* The sample's stack, leaf first, named: its call chain (the kernel part
 * and, with frame pointers, the user part), then with --call-graph dwarf
 * the user part unwound from the copy of its stack. */
static int stack_of(struct pds *s, const struct rtd_perf_data_event *e,
		    const struct rtd_perf_sample *smp, const struct rtd_stack **out)
{
	size_t n = 0;
	bool kernel = false;
	for (uint64_t i = 0; i < smp->callchain_nr && n < PDS_MAX_DEPTH; i++) {
		uint64_t ip = rtd_perf_u64_at(smp->callchain, i);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL;
			continue; /* user, or a guest's: not the kernel's */
		}
		/* a zero (the end of a broken frame-pointer chain) stays: perf
		 * shows it as [unknown] */
		s->kern[n] = kernel;
		s->ips[n++] = ip;
	}
	if (smp->regs_user_nr && smp->stack_user && n < PDS_MAX_DEPTH) {
		int k = rtd_sym_unwind(s->sym, (pid_t)smp->pid, (pid_t)smp->tid,
				       smp->regs_user, smp->regs_user_nr, e->sample_regs_user,
				       smp->stack_user, smp->stack_user_dyn_size, s->ips + n,
				       PDS_MAX_DEPTH - n);
		if (k > 0) {
			/* each caller already where perf unwinds (and prints)
			 * it: a return address minus one, the pc of a frame a
			 * signal interrupted */
			memset(s->kern + n, 0, (size_t)k);
			n += (size_t)k;
		}
	}
	if (!n && (smp->has & PERF_SAMPLE_IP)) {
		s->kern[0] = (smp->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
		s->ips[n++] = smp->ip;
	}
	size_t nf = 0;
	struct rtd_sym_frame sf[RTD_SYM_MAX_INLINE + 1];
	for (size_t i = 0; i < n; i++) {
		/* each address as it is, return addresses of a call chain
		 * too, as perf report and perf script name them (a call that
		 * is a function's last instruction names the next function) */
		uint64_t ip = s->ips[i];
		int64_t loc = rtd_sym_locate(s->sym, (pid_t)smp->pid, ip, s->kern[i]);
		int k = loc >= 0 ? rtd_sym_resolve(s->sym, loc, sf, RTD_SYM_MAX_INLINE + 1) : 0;
		if (k <= 0)
			continue;
		if (nf + (size_t)k > s->fcap) {
			size_t nc = (nf + (size_t)k) * 2;
			struct rtd_rec_frame *f = realloc(s->frames, nc * sizeof(*f));
			if (!f)
				return -ENOMEM;
			s->frames = f;
			s->fcap = nc;
		}
		for (int j = 0; j < k; j++) {
			s->frames[nf++] = (struct rtd_rec_frame){
				.ip = s->ips[i], .name = sf[j].name,
				.module = sf[j].module[0] == '/' ? base_of(sf[j].module)
								 : sf[j].module};
		}
	}
	if (nf > RTD_INTERN_MAX_DEPTH)
		nf = RTD_INTERN_MAX_DEPTH;
	*out = NULL;
	return nf ? rtd_intern_stack(s->in, s->frames, nf, out) : 0;
}

/* A tracepoint's own fields (not the common_ ones), text copied out. */
static size_t tp_fields(struct pds *s, const struct rtd_perf_data_event *e,
			const struct rtd_perf_sample *smp)
{
	size_t nf = 0, used = 0;
	for (unsigned i = 0; i < e->nfields && nf < PDS_MAX_FIELDS; i++) {
		const struct rtd_perf_field *fd = &e->fields[i];
		struct rtd_perf_value v;
		if (!strncmp(fd->name, "common_", 7) || rtd_perf_data_field(e, smp, i, &v))
			continue;
		struct rtd_field *f = &s->fields[nf];
		memset(f, 0, sizeof(*f));
		if (str(s, fd->name, &f->name))
			continue;
		switch (v.kind) {
		case RTD_PERF_FIELD_INT:
			f->type = RTD_FIELD_I64;
			f->i = v.i;
			break;
		case RTD_PERF_FIELD_UINT:
			f->type = RTD_FIELD_U64;
			f->u = v.u;
			break;
		case RTD_PERF_FIELD_STRING: {
			size_t l = strnlen(v.str, v.len);
			if (l + 1 > PDS_SCRATCH - used)
				continue;
			memcpy(s->scratch + used, v.str, l);
			s->scratch[used + l] = 0;
			f->type = RTD_FIELD_STR;
			f->s = s->scratch + used;
			used += l + 1;
			break;
		}
		default:
			continue; /* byte arrays: not a value a timeline shows */
		}
		nf++;
	}
	return nf;
}

static int on_sample(struct pds *s, const struct rtd_perf_data_rec *r)
{
	const struct rtd_perf_sample *smp = r->s;
	const struct rtd_perf_data_event *e = rtd_perf_data_event(s->d, (size_t)(r->event < 0 ? 0 : r->event));
	if (!e || !(smp->has & PERF_SAMPLE_TID))
		return 0;
	if (smp->pid == 0 && smp->tid == 0 && e->type != PERF_TYPE_TRACEPOINT)
		return 0; /* the idle task: perf report shows it as swapper; no process */
	int rc = announce(s, smp, smp->pid, smp->tid);
	const struct rtd_stack *st;
	if (!rc)
		rc = stack_of(s, e, smp, &st);
	if (rc)
		return rc;
	size_t ev = (size_t)(r->event < 0 ? 0 : r->event);
	if (!s->ev_names[ev] && (rc = str(s, e->name, &s->ev_names[ev])))
		return rc;
	bool tp = e->type == PERF_TYPE_TRACEPOINT;
	struct rtd_record *o = push(s, tp ? RTD_REC_INSTANT : RTD_REC_SAMPLE, smp, smp->pid, smp->tid);
	o->name = s->ev_names[ev];
	o->stack = st;
	if (tp) {
		o->category = s->cat_tp;
		o->nfields = tp_fields(s, e, smp);
	} else {
		o->value = 1;
		o->unit = s->unit_count;
		s->fields[0] = (struct rtd_field){.name = s->f_period, .type = RTD_FIELD_U64,
						  .u = smp->period};
		o->nfields = 1;
	}
	o->fields = s->fields;
	return 0;
}

/* perf record --switch-events: a thread's time off the CPU as a slice. */
static int on_switch(struct pds *s, const struct rtd_perf_sample *smp)
{
	if (!(smp->has & PERF_SAMPLE_TID) || (!smp->pid && !smp->tid))
		return 0;
	bool out = smp->misc & PERF_RECORD_MISC_SWITCH_OUT;
	struct pthr *t = thread_of(s, smp->pid, smp->tid, true);
	if (!t)
		return -ENOMEM;
	if (out == t->off)
		return 0; /* a switch we saw the other half of already */
	int rc = announce(s, smp, smp->pid, smp->tid);
	if (rc)
		return rc;
	t->off = out;
	struct rtd_record *o = push(s, out ? RTD_REC_SLICE_BEGIN : RTD_REC_SLICE_END, smp,
				    smp->pid, smp->tid);
	if (out) {
		o->name = smp->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT ? s->n_preempted
									  : s->n_waiting;
		o->category = s->cat_offcpu;
	}
	return 0;
}

static int on_lost(struct pds *s, const struct rtd_perf_sample *smp)
{
	struct rtd_record *o = push(s, RTD_REC_INSTANT, smp, smp->pid, smp->tid);
	o->name = s->n_lost;
	o->category = s->cat_perf;
	s->fields[0] = (struct rtd_field){.name = s->f_lost, .type = RTD_FIELD_U64,
					  .u = smp->rec.lost.lost};
	o->fields = s->fields;
	o->nfields = 1;
	return 0;
}

static int pds_next(void *impl, struct rtd_record *rec)
{
	struct pds *s = impl;
	for (;;) {
		if (s->iout < s->nout) {
			*rec = s->out[s->iout++];
			return 1;
		}
		s->nout = s->iout = 0;
		struct rtd_perf_data_rec r;
		int rc = rtd_perf_data_next(s->d, &r);
		if (rc <= 0) {
			if (!rc)
				return 0;
			uint64_t off;
			const char *msg = rtd_perf_data_error(s->d, &off);
			return rtd_source_error(rec, rc, off, msg);
		}
		const struct rtd_perf_sample *smp = r.s;
		switch (smp->type) {
		case PERF_RECORD_COMM: on_comm(s, smp); break;
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT: on_task(s, smp); break;
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2: perf_sym_mmap(s->sym, smp); break;
		case PERF_RECORD_SAMPLE: rc = on_sample(s, &r); break;
		case PERF_RECORD_SWITCH:
		case PERF_RECORD_SWITCH_CPU_WIDE: rc = on_switch(s, smp); break;
		case PERF_RECORD_LOST: rc = on_lost(s, smp); break;
		default: break;
		}
		if (rc < 0)
			return rtd_source_error(rec, rc, r.offset, "following the recorded processes");
	}
}

static int pds_clock(void *impl, struct rtd_clock *out)
{
	*out = ((struct pds *)impl)->clock;
	return 0;
}

static void pds_free(void *impl)
{
	struct pds *s = impl;
	if (!s)
		return;
	rtd_map_free_vals(&s->threads);
	rtd_map_free(&s->threads);
	rtd_map_free(&s->procs);
	rtd_symbolizer_free(s->sym);
	rtd_intern_free(s->in);
	rtd_perf_data_free(s->d);
	free(s->frames);
	free(s);
}

static const struct rtd_source_ops pds_ops = {
	.sz = sizeof(struct rtd_source_ops),
	.name = "perf.data",
	.next = pds_next,
	.clock = pds_clock,
	.free = pds_free,
};

rtd_source *rtd_perf_data_source(rtd_perf_data *d, const struct rtd_perf_data_source_opts *opts,
				 int *err)
{
	struct rtd_perf_data_source_opts o;
	int rc = d ? rtd_opts_copy(&o, sizeof(o), opts,
				   RTD_OPTS_END(rtd_perf_data_source_opts, kallsyms))
		   : -RTD_E_INVAL;
	struct pds *s = rc ? NULL : calloc(1, sizeof(*s));
	if (!rc && !s)
		rc = -ENOMEM;
	if (rc) {
		rtd_perf_data_free(d);
		if (err)
			*err = rc;
		return NULL;
	}
	s->d = d;
	rtd_map_init(&s->threads, PDS_MAX_THREADS);
	rtd_map_init(&s->procs, PDS_MAX_THREADS);
	/* perf's names: versions kept (clock_nanosleep@GLIBC_2.2.5) */
	struct rtd_sym_opts so = {.sz = sizeof(so),
				  .flags = o.sym_flags | RTD_SYM_NO_PROC_LOAD | RTD_SYM_VERSIONED,
				  .kallsyms = o.kallsyms};
	s->in = rtd_intern_new();
	rc = s->in ? rtd_symbolizer_new(&so, &s->sym) : -ENOMEM;
	/* the files' build ids as recorded: a file since rebuilt or removed
	 * is then read from perf's build-id cache, as perf report does */
	size_t nb = 0;
	const struct rtd_perf_data_build_id *b = rc ? NULL : rtd_perf_data_build_ids(d, &nb);
	for (size_t i = 0; b && !rc && i < nb; i++)
		if (b[i].path && b[i].path[0] == '/' && b[i].len)
			rc = rtd_sym_file_build_id(s->sym, b[i].path, b[i].id, b[i].len);
	const struct {
		const char **dst;
		const char *v;
	} names[] = {
		{&s->cat_tp, "tracepoint"}, {&s->cat_offcpu, "off-cpu"}, {&s->cat_perf, "perf"},
		{&s->unit_count, "count"}, {&s->n_preempted, "preempted"},
		{&s->n_waiting, "waiting"}, {&s->n_lost, "lost"}, {&s->f_period, "period"},
		{&s->f_lost, "lost"},
	};
	for (size_t i = 0; !rc && i < sizeof(names) / sizeof(*names); i++)
		rc = str(s, names[i].v, names[i].dst);
	/* the clock: -k monotonic makes it CLOCK_MONOTONIC; clock data
	 * anchors it to wall time (perf record -k, kernel 5.x perf) */
	const struct rtd_perf_data_info *in = rtd_perf_data_info(d);
	s->clock = (struct rtd_clock){.domain = RTD_CLOCK_MONOTONIC, .freq = 1000000000ull,
				      .mono_error_ns = RTD_CLOCK_ERROR_UNKNOWN,
				      .wall_error_ns = RTD_CLOCK_ERROR_UNKNOWN};
	if (in->clockid == 1 /* CLOCK_MONOTONIC */) {
		s->clock.flags |= RTD_CLOCK_HAS_MONO;
		s->clock.mono_error_ns = 0;
	}
	if (in->clock_wall_ns && in->clockid >= 0) {
		s->clock.flags |= RTD_CLOCK_HAS_WALL;
		s->clock.ref_ts = (int64_t)in->clock_ref_ns;
		s->clock.ref_wall = (int64_t)in->clock_wall_ns;
		s->clock.ref_mono = (int64_t)in->clock_ref_ns;
	}
	rtd_source *src = rc ? NULL : rtd_source_new(&pds_ops, s);
	if (!src) {
		pds_free(s);
		if (err)
			*err = rc ? rc : -ENOMEM;
	}
	return src;
}
