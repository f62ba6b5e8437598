/* SPDX-License-Identifier: MIT */
/*
 * profiler.c - a sampling CPU profiler for any process: a sampler on the
 * monitor, the records that say where code is fed to a symbolizer as they
 * arrive in time order, and each sample's stack kept as location ids in a
 * call tree (one node per distinct stack prefix, per thread). Names are
 * found once per distinct location after the run, when the profile is
 * built, so the cost of symbols does not grow with the sample count.
 *
 * .NET: a scoped process that maps libcoreclr.so gets its perf map
 * switched on over the diagnostics IPC (with the methods already compiled,
 * as the runtime writes them on enabling) unless the environment already
 * turns it on; rtd_perf_profiler_free() switches it off again.
 *
 * Off-CPU (RTD_PERF_PROF_OFF_CPU): the same call tree, fed by the
 * sched:sched_switch samples of the scoped threads (their stack as they
 * leave the CPU, a node of the tree kept pending per thread, offcpu.c)
 * and ended by each thread's switch-in record: a node's count is its
 * waits, its period their summed delay. Under each thread's root a node
 * holds the wait's state (S, D, R, T), written as a "state" label.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "common/file.h"
#include "common/stats.h"
#include "common/buf.h"
#include "common/log.h"
#include "perf/internal.h"
#include "perf/offcpu.h"
#include "perf/offcpu_bpf.h"
#include <linux/types.h>
#include "perf/bpf/offcpu_maps.h"
#include "rtdiag/guard.h"
#include "rtdiag/ipc_client.h"
#include "rtdiag/ipc_process.h"
#include "rtdiag/perf_data.h"
#include "rtdiag/perf_profiler.h"
#include "rtdiag/perf_sampler.h"
#include "rtdiag/source.h"

/* Cap on call tree nodes (distinct stack prefixes); past it stacks are cut. */
#define PROF_MAX_NODES (1u << 24)
#define PROF_MAX_THREADS 65536
#define PROF_MAX_DEPTH 1024
/* a node's path: the thread, the state (off-CPU) and the stack */
#define PROF_PATH (PROF_MAX_DEPTH + 2)
#define PROF_MAX_DOTNET 64
/* The symbolizer's locations are cut back to those the call tree still
 * uses when a restart finds more than twice what the last cut kept, and
 * this many at least; or when the names its resolves copied pass
 * PROF_NAME_BYTES (a take names its locations again each time). */
#define PROF_TRIM_LOCATIONS 512u
#define PROF_NAME_BYTES (4u << 20)
#define THREAD_KEY 0x80000000u
/* off-CPU: a wait's state (thread indexes stay below PROF_MAX_THREADS) */
#define STATE_KEY (THREAD_KEY | 0x40000000u)

struct pnode {
	uint32_t parent;
	uint32_t key;     /* location id, or THREAD_KEY | thread index */
	uint64_t count;   /* samples whose leaf this is */
	uint64_t period;  /* their summed period (ns for cpu-clock) */
};

struct pthread {
	uint32_t pid, tid;
	char comm[16];
};

struct dotnet_on {
	pid_t pid;
};

struct rtd_perf_profiler {
	struct rtd_perf_monitor *m;
	rtd_symbolizer *sym;
	struct rtd_perf_event *ev;
	enum rtd_perf_callgraph cg;
	unsigned flags;
	struct pnode *nodes;
	size_t nnodes, cap;
	uint32_t *ht;     /* node index + 1; 0 empty */
	size_t htsize;
	struct pthread *threads;
	size_t nthreads, tcap;
	rtd_map tid_index; /* tid -> thread index + 1 */
	rtd_map comms;     /* pid -> char[16] (malloc'd), the process name */
	rtd_strmap modules; /* frame name -> module, for tables */
	struct rtd_perf_profiler_stats st;
	pid_t dotnet[PROF_MAX_DOTNET];
	unsigned dotnet_guard[PROF_MAX_DOTNET]; /* rtd_guard ids */
	unsigned ndotnet;
	/* RTD_PERF_PROF_DOTNET_BEGIN: EnablePerfMap sent, its reply to come */
	struct perfmap_ask {
		pid_t pid;
		unsigned guard;
		rtd_ipc_client *c;
		rtd_ipc_call *call;
	} dotnet_ask[PROF_MAX_DOTNET];
	unsigned nask;
	uint64_t ips[PROF_MAX_DEPTH];
	uint8_t kern[PROF_MAX_DEPTH];
	uint32_t path[PROF_PATH];
	unsigned freq;
	size_t npids;
	pid_t pid0;
	bool offcpu;            /* RTD_PERF_PROF_OFF_CPU */
	unsigned states;        /* RTD_PERF_OFFCPU_* kept */
	int state_field;        /* sched_switch's prev_state, -1 unknown */
	struct offcpu oc;
	struct offcpu_bpf *bpf; /* off-CPU through BPF, else NULL */
	enum rtd_perf_offcpu_via via;
	uint64_t bpf_nostack;   /* BPF: stacks not kept (the map full) */
	uint64_t bpf_read_ns;   /* BPF: when the totals being read were read */
	char via_why[256];      /* why not BPF */
	uint64_t iter_lo, iter_hi; /* __traceiter_sched_switch, [lo, hi) */
	uint64_t entry_lo, entry_hi; /* the kernel's entry text, [lo, hi) */
	int64_t start_ns;       /* CLOCK_REALTIME at the start */
	uint64_t start_mono, end_ns; /* CLOCK_MONOTONIC: run()'s span */
	FILE *kept;       /* RTD_PERF_PROF_KEEP_SAMPLES: struct kept_sample */
	struct rtd_perf_data_writer *dw; /* rtd_perf_profiler_write_data() */
	bool drained;     /* rtd_perf_profiler_drain() was called: the runs
			   * are windows of one recording (one start) */
	/* drains: each location's frames, named once for the recording
	 * (the symbolizer copies a name at every resolve: naming the same
	 * locations every window grew its string table with time) */
	struct loc_frames *named_lf;
	uint8_t *named;         /* named[loc]: resolved (named_lf valid) */
	size_t named_nloc;
	struct rtd_frame *named_frames;
	size_t named_n, named_cap;
	size_t locs_kept;       /* locations kept by the last trim */
	/* a walk's scratch, kept from one drain to the next: a drain
	 * every 50 ms allocating and freeing 3 MB moved the top of
	 * malloc's heap up and down (RSS in steps, issue #31) */
	struct rtd_frame *walk_stack;
	struct kept_sample *walk_buf;
	uint8_t *walk_need;     /* a drain's marks, walk_need_cap of them */
	size_t walk_need_cap;
	/* naming's scratch, kept too: name_all()'s resolved frames (its
	 * first block alone 400 KB, made and freed at each drain that met
	 * a new location), and a drain's new names before they join
	 * named_frames (issue #31) */
	struct rtd_sym_frame *name_sfr;
	size_t name_sfr_cap;
	struct rtd_frame *name_fr;
	size_t name_fr_cap;
	struct loc_frames *name_lf;
	size_t name_lf_cap;
	size_t named_loc_cap;   /* named_lf and named hold this many */
	bool modules_stale;     /* a trim freed the names modules' keys
				 * came from: the next profile starts over */
	char errmsg[1024];
};

/* A sample kept for rtd_perf_profiler_each_sample(): its time and its
 * leaf's call tree node (the path to the root is its stack and thread);
 * off-CPU, a wait: its switch-out time, its node (under its state) and
 * its length. */
struct kept_sample {
	uint64_t time;
	uint32_t node;
	uint32_t flags; /* KEPT_OPEN */
	uint64_t dur;
	uint64_t count; /* BPF's total of @count waits (WAIT_TOTALS), or 0 */
};
#define KEPT_OPEN 1u /* a wait closed at the stop (rtd_perf_profiler_close_waits) */
#define WALK_BUF 4096u /* kept samples read at a time */

static _Thread_local char new_errmsg[1024];

static int prof_err(struct rtd_perf_profiler *p, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int prof_err(struct rtd_perf_profiler *p, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (p)
		rtd_verrf(p->errmsg, sizeof(p->errmsg), err, fmt, ap);
	else
		rtd_verrf(new_errmsg, sizeof(new_errmsg), err, fmt, ap);
	va_end(ap);
	return err;
}

const char *rtd_perf_profiler_errmsg(const struct rtd_perf_profiler *p)
{
	return p ? p->errmsg : new_errmsg;
}

/* ---- the call tree ---------------------------------------------------------- */

static uint64_t node_hash(uint32_t parent, uint32_t key)
{
	return rtd_hash_u64(((uint64_t)parent << 32) | key);
}

/* The hash of the nodes, built again at @ns slots (a power of two). */
static int ht_build(struct rtd_perf_profiler *p, size_t ns)
{
	uint32_t *t = calloc(ns, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 1; i < p->nnodes; i++) {
		size_t h = node_hash(p->nodes[i].parent, p->nodes[i].key) & (ns - 1);
		while (t[h])
			h = (h + 1) & (ns - 1);
		t[h] = (uint32_t)i + 1;
	}
	free(p->ht);
	p->ht = t;
	p->htsize = ns;
	return 0;
}

static int ht_grow(struct rtd_perf_profiler *p)
{
	return ht_build(p, p->htsize ? p->htsize * 2 : 1u << 12);
}

/* The child of parent with this key, created when missing; 0 at the cap. */
static uint32_t child(struct rtd_perf_profiler *p, uint32_t parent,
		      uint32_t key)
{
	if ((p->nnodes + 1) * 2 > p->htsize && ht_grow(p))
		return 0;
	size_t h = node_hash(parent, key) & (p->htsize - 1);
	while (p->ht[h]) {
		uint32_t i = p->ht[h] - 1;
		if (p->nodes[i].parent == parent && p->nodes[i].key == key)
			return i;
		h = (h + 1) & (p->htsize - 1);
	}
	if (p->nnodes >= PROF_MAX_NODES)
		return 0;
	if (p->nnodes == p->cap) {
		size_t nc = p->cap * 2;
		struct pnode *nv = realloc(p->nodes, nc * sizeof(*nv));
		if (!nv)
			return 0;
		p->nodes = nv;
		p->cap = nc;
	}
	uint32_t i = (uint32_t)p->nnodes++;
	p->nodes[i] = (struct pnode){parent, key, 0, 0};
	p->ht[h] = i + 1;
	p->st.nodes = p->nnodes - 1;
	return i;
}

static uint32_t thread_index(struct rtd_perf_profiler *p, uint32_t pid,
			     uint32_t tid)
{
	void *v;
	if (rtd_map_get(&p->tid_index, tid, &v)) {
		uint32_t i = (uint32_t)((uintptr_t)v - 1);
		if (p->threads[i].pid == pid)
			return i;
	}
	if (p->nthreads >= PROF_MAX_THREADS)
		return 0; /* the first thread takes the rest */
	struct pthread *nt = rtd_grow(p->threads, &p->tcap, p->nthreads + 1,
				      sizeof(*nt), 64);
	if (!nt)
		return 0;
	p->threads = nt;
	struct pthread *t = &p->threads[p->nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	rtd_proc_comm((int)pid, (int)tid, t->comm, sizeof(t->comm));
	rtd_map_put(&p->tid_index, tid, (void *)(uintptr_t)(p->nthreads + 1),
		    NULL);
	return (uint32_t)p->nthreads++;
}

/* ---- records ------------------------------------------------------------------ */

static void on_comm(struct rtd_perf_profiler *p, const struct rtd_perf_sample *s)
{
	p->st.comms++;
	if (s->misc & PERF_RECORD_MISC_COMM_EXEC)
		rtd_sym_proc_exec(p->sym, (pid_t)s->rec.comm.pid);
	void *v;
	if (rtd_map_get(&p->tid_index, s->rec.comm.tid, &v)) {
		struct pthread *t = &p->threads[(uintptr_t)v - 1];
		if (t->pid == s->rec.comm.pid)
			snprintf(t->comm, sizeof(t->comm), "%s", s->rec.comm.comm);
	}
}

void perf_sym_mmap(rtd_symbolizer *sym, const struct rtd_perf_sample *s)
{
	if ((int32_t)s->rec.mmap.pid <= 0)
		return; /* the kernel's own */
	uint32_t prot = PROT_EXEC;
	uint64_t dev = 0, ino = 0;
	if (s->type == PERF_RECORD_MMAP2) {
		prot = s->rec.mmap.prot;
		if (!(s->misc & RTD_PERF_MISC_MMAP_BUILD_ID)) {
			dev = makedev(s->rec.mmap.maj, s->rec.mmap.min);
			ino = s->rec.mmap.ino;
		}
	} else if (s->misc & PERF_RECORD_MISC_MMAP_DATA) {
		return;
	}
	rtd_sym_proc_mmap(sym, (pid_t)s->rec.mmap.pid, s->rec.mmap.addr,
			  s->rec.mmap.len, s->rec.mmap.pgoff,
			  s->rec.mmap.filename ? s->rec.mmap.filename : "", dev,
			  ino, prot);
}

static void on_mmap(struct rtd_perf_profiler *p, const struct rtd_perf_sample *s)
{
	p->st.mmaps++;
	perf_sym_mmap(p->sym, s);
}

static bool is_kernel_ip(uint64_t ip)
{
	return ip >= 0xffff800000000000ull; /* x86-64 kernel half */
}

static uint32_t ips_node(struct rtd_perf_profiler *p, uint32_t pid,
			 uint32_t tid, size_t n, size_t unwound, uint32_t state_key);

/* A kernel frame of the tracing call path itself, not of the traced
 * thread: BPF's (its programs, bpf_trace_run) and a tracepoint's iterator,
 * which stands between __schedule and the probes when more than one is
 * attached to sched_switch (another perf or BPF user beside us: the perf
 * path's chains then began at __traceiter_sched_switch). */
static bool trace_own_frame(struct rtd_perf_profiler *p, uint64_t ip)
{
	static const char *const own[] = {"bpf_prog_", "bpf_trace_run",
					  "__bpf_trace_", "__traceiter_"};
	struct rtd_sym_frame fr[RTD_SYM_MAX_INLINE + 1];
	int64_t loc = rtd_sym_locate(p->sym, 0, ip, true);
	int n = loc < 0 ? 0 : rtd_sym_resolve(p->sym, loc, fr, RTD_SYM_MAX_INLINE + 1);
	for (size_t i = 0; n > 0 && i < sizeof(own) / sizeof(own[0]); i++)
		if (!strncmp(fr[n - 1].name, own[i], strlen(own[i])))
			return true;
	return false;
}

/* From kallsyms, in one scan that stops as soon as it has what it needs:
 * the kernel's entry text, [__entry_text_start, __entry_text_end) (its
 * first lines: the interrupt and exception entries, whose caller in a
 * chain is the address the CPU was interrupted at); and with @iter, where
 * __traceiter_sched_switch lies, up to the next symbol (the perf path's
 * switches begin there while another probe is on the tracepoint). A range
 * not found stays [0, 0) (no kernel addresses shown, an older kernel). */
struct kranges {
	struct rtd_perf_profiler *p;
	bool iter, in_iter;
};

static bool ksym_is(const struct rtd_ksym *k, const char *name)
{
	return !k->mod && k->name_len == strlen(name) && !memcmp(k->name, name, k->name_len);
}

static int kernel_range_line(const struct rtd_ksym *k, void *ctx)
{
	struct kranges *kr = ctx;
	struct rtd_perf_profiler *p = kr->p;
	if (kr->in_iter) {
		if (k->addr > p->iter_lo) {
			p->iter_hi = k->addr;
			return 1;
		}
		return 0;
	}
	if (!k->addr)
		return 0;
	if (ksym_is(k, "__entry_text_start"))
		p->entry_lo = k->addr;
	else if (ksym_is(k, "__entry_text_end"))
		p->entry_hi = k->addr;
	else if (kr->iter && ksym_is(k, "__traceiter_sched_switch")) {
		p->iter_lo = k->addr;
		kr->in_iter = true;
	}
	return !kr->iter && p->entry_lo && p->entry_hi;
}

static void kernel_ranges(struct rtd_perf_profiler *p, const char *kallsyms, bool iter)
{
	struct kranges kr = {p, iter, false};
	size_t bad;
	(void)rtd_kallsyms_read(kallsyms, kernel_range_line, &kr, &bad);
	if (kr.in_iter && p->iter_hi <= p->iter_lo)
		p->iter_hi = p->iter_lo + 256; /* the last symbol: a small function */
	if (p->entry_hi <= p->entry_lo)
		p->entry_lo = p->entry_hi = 0;
}

/* The call tree node of a sample's stack, under its thread's root and
 * (off-CPU) a node of its state; 0 when the tree is full. */
static uint32_t stack_node(struct rtd_perf_profiler *p,
			   const struct rtd_perf_sample *s, uint32_t state_key)
{
	size_t n = 0, unwound = PROF_MAX_DEPTH;
	bool kernel = false;
	for (uint64_t i = 0; i < s->callchain_nr && n < PROF_MAX_DEPTH; i++) {
		uint64_t ip = rtd_perf_u64_at(s->callchain, i);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL;
			if (ip != (uint64_t)PERF_CONTEXT_KERNEL &&
			    ip != (uint64_t)PERF_CONTEXT_USER)
				kernel = false; /* guest/hv: not ours to name */
			continue;
		}
		if (!ip)
			continue; /* the end of a broken frame-pointer chain */
		/* off-CPU: a switch's chain starts where the thread left the
		 * CPU, not in the tracepoint's iterator (an address range read
		 * once: naming here would stop the symbolizer's loading thread
		 * and hold the reader up, ~1 s under ASan, threads ending
		 * meanwhile nameless) */
		if (state_key && !n && kernel && ip >= p->iter_lo && ip < p->iter_hi)
			continue;
		p->kern[n] = kernel;
		p->ips[n++] = ip;
	}
	if (p->cg == RTD_PERF_CG_DWARF && s->regs_user_nr && s->stack_user) {
		int k = rtd_sym_unwind(p->sym, (pid_t)s->pid, (pid_t)s->tid,
				       s->regs_user, s->regs_user_nr,
				       p->ev->attr.sample_regs_user,
				       s->stack_user, s->stack_user_dyn_size,
				       p->ips + n, PROF_MAX_DEPTH - n);
		if (k > 0) {
			if (k == 1)
				p->st.unwind_failed++;
			memset(p->kern + n, 0, (size_t)k);
			unwound = n;
			n += (size_t)k;
		}
	}
	if (!n) {
		p->kern[0] = is_kernel_ip(s->ip);
		p->ips[n++] = s->ip;
	}
	return ips_node(p, s->pid, s->tid, n, unwound, state_key);
}

/* The node of the stack in p->ips/p->kern (n frames, leaf first; those
 * from `unwound` on came from rtd_sym_unwind(), its callers already at
 * the address to name them by). */
static uint32_t ips_node(struct rtd_perf_profiler *p, uint32_t pid,
			 uint32_t tid, size_t n, size_t unwound, uint32_t state_key)
{
	if (n && p->kern[0])
		p->st.kernel_samples++;
	/* root first; a return address minus one lies in its call. Where
	 * the thread was interrupted is no return address: the leaf, the
	 * first user frame under kernel ones, and a kernel frame under an
	 * entry of the kernel's entry text (an interrupt taken in the kernel):
	 * a page fault on a function's first instruction is at its first
	 * byte, and one byte back names the function before it (the
	 * unwinder says so of a frame a signal interrupted) */
	uint32_t node = child(p, 0, THREAD_KEY | thread_index(p, pid, tid));
	if (state_key && node)
		node = child(p, node, state_key);
	if (!node)
		return 0;
	for (size_t i = n; i-- > 0;) {
		bool exact = !i || i > unwound || (p->kern[i - 1] &&
				    (!p->kern[i] || (p->ips[i - 1] >= p->entry_lo &&
						     p->ips[i - 1] < p->entry_hi)));
		uint64_t ip = p->ips[i] - (exact ? 0 : 1);
		int64_t loc = rtd_sym_locate(p->sym, (pid_t)pid, ip, p->kern[i]);
		if (loc < 0)
			continue;
		uint32_t c = child(p, node, (uint32_t)loc);
		if (!c) {
			p->st.truncated++;
			break;
		}
		node = c;
	}
	return node;
}

/* Keep a sample (or a wait: its start and length) for
 * rtd_perf_profiler_each_sample(), when asked to. */
static int keep(struct rtd_perf_profiler *p, uint64_t time, uint32_t node,
		uint64_t dur)
{
	struct kept_sample k = {time, node, 0, dur, 0};
	if (p->kept && fwrite(&k, sizeof(k), 1, p->kept) != 1)
		return prof_err(p, -EIO, "keeping a sample: %s", strerror(errno));
	return 0;
}

static int on_sample(struct rtd_perf_profiler *p, const struct rtd_perf_sample *s)
{
	p->st.samples++;
	uint32_t node = stack_node(p, s, 0);
	p->nodes[node].count++;
	p->nodes[node].period += s->period;
	return keep(p, s->time, node, 0);
}

/* ---- off-CPU ---------------------------------------------------------------- */

int rtd_perf_profiler_close_waits(struct rtd_perf_profiler *p, uint64_t end_ns)
{
	if (!p || !p->offcpu)
		return 0;
	int n = 0;
	size_t it = 0;
	uint32_t tid;
	struct offcpu_pending *w;
	while (offcpu_next(&p->oc, &it, &tid, &w)) {
		uint64_t out = w->out_ns, node = w->node;
		w->out_ns = 0; /* no longer pending */
		if (!node || end_ns <= out)
			continue;
		uint64_t d = end_ns - out;
		p->nodes[node].count++;
		p->nodes[node].period += d;
		struct kept_sample k = {out, (uint32_t)node, KEPT_OPEN, d, 0};
		if (p->kept && fwrite(&k, sizeof(k), 1, p->kept) != 1)
			return prof_err(p, -EIO, "keeping a sample: %s", strerror(errno));
		n++;
	}
	return n;
}

static unsigned state_bit(unsigned state)
{
	static const unsigned bits[OFFCPU_NSTATES] = {
		RTD_PERF_OFFCPU_SLEEP, RTD_PERF_OFFCPU_DISK,
		RTD_PERF_OFFCPU_PREEMPTED, RTD_PERF_OFFCPU_OTHER};
	return state < OFFCPU_NSTATES ? bits[state] : 0;
}

/* A scoped thread leaves the CPU: its stack becomes its pending wait. */
static int on_switch_out(struct rtd_perf_profiler *p,
			 const struct rtd_perf_sample *s)
{
	if (!s->tid)
		return 0; /* the idle task (system-wide) */
	p->st.samples++;
	struct rtd_perf_value v;
	unsigned state = OFFCPU_SLEEP;
	if (p->state_field >= 0 &&
	    rtd_perf_sample_field_at(s, (unsigned)p->state_field, &v) == 0)
		state = offcpu_state_of(v.i);
	uint32_t node = 0;
	/* a state not kept is still paired, for the totals */
	if (state_bit(state) & p->states)
		node = stack_node(p, s, STATE_KEY | state);
	offcpu_out(&p->oc, s->tid, s->time, node, state);
	return 0;
}

/* A thread runs again: its wait ends (kept, with when it began, for
 * rtd_perf_profiler_each_sample()). */
static int on_switch(struct rtd_perf_profiler *p, const struct rtd_perf_sample *s)
{
	if ((s->misc & PERF_RECORD_MISC_SWITCH_OUT) || !s->tid)
		return 0;
	struct offcpu_pending w;
	uint64_t delay;
	if (!offcpu_in(&p->oc, s->tid, s->time, &w, &delay) || !w.node)
		return 0;
	p->nodes[w.node].count++;
	p->nodes[w.node].period += delay;
	return keep(p, w.out_ns, w.node, delay);
}

/* A kernel frame of the BPF call path (the program, the tracepoint's
 * trampoline), not of the thread: the perf path's chains start at the
 * scheduler. */

/* BPF: the waits that ended since the last read, into the call tree. */
static int on_bpf_wait(const struct offcpu_bpf_wait *w, void *ctx)
{
	struct rtd_perf_profiler *p = ctx;
	unsigned state = offcpu_state_of(w->state);
	if (state >= OFFCPU_NSTATES)
		return 0;
	p->oc.waits += w->count;
	p->oc.count[state] += w->count;
	p->oc.ns[state] += w->ns;
	if (!(state_bit(state) & p->states))
		return 0;
	/* as a perf call chain: kernel frames, then user ones, leaf first */
	size_t n = 0, k0 = 0;
	/* per stack: the call path's frames are not the same in every stack
	 * (a run beside two busy loops kept __traceiter_sched_switch as the
	 * leaf of every chain when they were counted once, on the first) */
	while (k0 < w->nk && trace_own_frame(p, w->kips[k0]))
		k0++;
	for (size_t i = k0; i < w->nk && n < PROF_MAX_DEPTH; i++) {
		p->kern[n] = 1;
		p->ips[n++] = w->kips[i];
	}
	for (size_t i = 0; i < w->nu && n < PROF_MAX_DEPTH; i++) {
		p->kern[n] = 0;
		p->ips[n++] = w->uips[i];
	}
	if (p->cg == RTD_PERF_CG_NONE && n > 1)
		n = 1; /* the address only, as the perf path's samples */
	uint32_t node = ips_node(p, w->pid, w->tid, n, n, STATE_KEY | state);
	void *v;
	if (rtd_map_get(&p->tid_index, w->tid, &v)) {
		struct pthread *t = &p->threads[(uintptr_t)v - 1];
		if (!t->comm[0])
			snprintf(t->comm, sizeof(t->comm), "%s", w->comm);
	}
	if (!node)
		return 0;
	p->nodes[node].count += w->count;
	p->nodes[node].period += w->ns;
	/* WAIT_TOTALS: kept as the total it is, stamped with the read */
	struct kept_sample k = {p->bpf_read_ns, node, 0, w->ns, w->count};
	if (p->kept && fwrite(&k, sizeof(k), 1, p->kept) != 1)
		return prof_err(p, -EIO, "keeping a wait total: %s", strerror(errno));
	return 0;
}

/* BPF: read the kernel's totals (of one process, or all: pid 0) while
 * the mappings of their processes are known to the symbolizer. */
static int bpf_read(struct rtd_perf_profiler *p, uint32_t pid)
{
	if (!p->bpf)
		return 0;
	p->bpf_read_ns = rtd_now_ns();
	int r = offcpu_bpf_read(p->bpf, pid, on_bpf_wait, p);
	uint64_t c[OFFCPU_BPF_NSTATS];
	offcpu_bpf_counters(p->bpf, c, OFFCPU_BPF_NSTATS);
	p->st.samples = c[OFFCPU_BPF_OUTS];
	p->oc.dropped = c[OFFCPU_BPF_LOST];
	p->oc.replaced = c[OFFCPU_BPF_REPLACED]; /* waits with no end known */
	p->bpf_nostack = c[OFFCPU_BPF_NOSTACK];
	if (r)
		return prof_err(p, r, "reading the off-CPU BPF maps: %s",
				rtd_strerror(r));
	return 0;
}

static int on_record(const struct rtd_perf_sample *s, void *ctx)
{
	struct rtd_perf_profiler *p = ctx;
	if (p->dw && s->bytes) {
		int e = rtd_perf_data_writer_record(p->dw, s->bytes, s->size);
		if (e)
			return prof_err(p, e, "writing perf.data: %s", rtd_strerror(e));
	}
	/* BPF: a process's waits are named before its mappings go. Only
	 * its own: records arrive late, the maps hold the present, and a
	 * newer process's mappings may not have arrived yet. (A process
	 * that execs keeps its waits from before the exec until it exits
	 * or the profile is built: they are named in the new image.) */
	if (p->bpf && s->type == PERF_RECORD_EXIT &&
	    s->rec.task.pid == s->rec.task.tid)
		bpf_read(p, s->rec.task.pid);
	switch (s->type) {
	case PERF_RECORD_SAMPLE:
		if (s->event == p->ev && p->bpf)
			break;
		if (s->event == p->ev)
			return p->offcpu ? on_switch_out(p, s) : on_sample(p, s);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (p->offcpu && !p->bpf)
			return on_switch(p, s);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		on_mmap(p, s);
		break;
	case PERF_RECORD_COMM:
		on_comm(p, s);
		break;
	case PERF_RECORD_FORK:
		p->st.forks++;
		if (s->rec.task.pid != s->rec.task.ppid)
			rtd_sym_proc_fork(p->sym, (pid_t)s->rec.task.ppid,
					  (pid_t)s->rec.task.pid);
		break;
	case PERF_RECORD_EXIT:
		p->st.exits++;
		if (p->offcpu && !p->bpf)
			offcpu_exit(&p->oc, s->rec.task.tid);
		if (s->rec.task.pid == s->rec.task.tid)
			rtd_sym_proc_exit(p->sym, (pid_t)s->rec.task.pid);
		break;
	default:
		break;
	}
	return 0;
}

/* The process a thread belongs to (its Tgid), 0 when it is gone. */
static pid_t tgid_of(int tid)
{
	long long t = rtd_proc_status_num(tid, "Tgid");
	return t > 0 ? (pid_t)t : 0;
}

int rtd_perf_profiler_write_data(struct rtd_perf_profiler *p, struct rtd_perf_data_writer *w)
{
	if (!p || !w)
		return -RTD_E_INVAL;
	if (p->offcpu && p->via == RTD_PERF_OFFCPU_VIA_BPF)
		return -RTD_E_UNSUPPORTED; /* its switches stay in the kernel:
					    * RTD_PERF_PROF_EACH_RECORD */
	for (struct rtd_perf_event *ev = p->m->events; ev; ev = ev->next) {
		uint64_t *ids = calloc(ev->nfds ? ev->nfds : 1, sizeof(*ids));
		size_t n = 0;
		if (!ids)
			return -ENOMEM;
		for (size_t i = 0; i < ev->nfds; i++)
			if (ev->fds[i] >= 0)
				ids[n++] = ev->ids[i];
		int rc = rtd_perf_data_writer_event(w, &ev->attr, ev->name, ids, n);
		free(ids);
		if (rc)
			return rc;
	}
	struct rtd_perf_monitor *m = p->m;
	p->dw = w;
	/* -- COMMAND: the kernel writes the program's mappings as it execs;
	 * the child's image before its exec would be a stale one (perf's
	 * reader keeps a process's maps across its exec) */
	if (m->flags & RTD_PERF_ENABLE_ON_EXEC)
		return rtd_perf_data_writer_synthesize(w, 0);
	if (m->cgroup_scope || (m->ntargets == 1 && m->targets[0] == -1))
		return rtd_perf_data_writer_synthesize(w, -1);
	pid_t done[64];
	size_t ndone = 0;
	for (size_t i = 0; i < m->ntargets; i++) {
		pid_t pid = tgid_of(m->targets[i]);
		bool seen = !pid;
		for (size_t k = 0; k < ndone && !seen; k++)
			seen = done[k] == pid;
		if (seen)
			continue;
		if (ndone < sizeof(done) / sizeof(*done))
			done[ndone++] = pid;
		int rc = rtd_perf_data_writer_synthesize(w, pid);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- .NET perf maps ------------------------------------------------------------- */

static int on_coreclr_line(const struct rtd_maps_entry *e, void *ctx)
{
	(void)ctx;
	return memmem(e->path, e->path_len, "/libcoreclr.so", 14) != NULL;
}

static bool maps_coreclr(pid_t pid)
{
	size_t bad;
	return pid > 0 && rtd_proc_maps(pid, on_coreclr_line, NULL, &bad) == 1;
}

/*
 * DOTNET_PerfMapEnabled (or COMPlus_) set to non-zero in its environment:
 * CLRConfig reads DOTNET_ before COMPlus_, each as getenv does
 */
static bool env_perfmap_on(pid_t pid)
{
	char v[32];
	if (rtd_proc_env(pid, "DOTNET_PerfMapEnabled", v, sizeof(v)) <= 0 &&
	    rtd_proc_env(pid, "COMPlus_PerfMapEnabled", v, sizeof(v)) <= 0)
		return false;
	return v[0] != '0';
}

/*
 * The perf map's request answered (rc 0: the map is on) or given up. A
 * request without a reply (the runtime stopped or too busy: the
 * synchronous call's 30 s passed) may still be carried out when the
 * runtime goes on: its guard stays, and undoes it when rtdiag ends.
 */
static void dotnet_answered(struct rtd_perf_profiler *p, pid_t pid, unsigned id,
			    int rc, rtd_ipc_client *c)
{
	if (!rc) {
		p->dotnet_guard[p->ndotnet] = id;
		p->dotnet[p->ndotnet++] = pid;
		p->st.dotnet_perfmaps = p->ndotnet;
		return;
	}
	rtd_warn("pid %d: switching the perf map on: %s", (int)pid,
		 rtd_ipc_client_errmsg(c));
	if (rc != -RTD_E_IPC_TIMEOUT)
		rtd_guard_forget(id);
}

static void dotnet_enable(struct rtd_perf_profiler *p, pid_t pid)
{
	if (p->ndotnet + p->nask >= PROF_MAX_DOTNET || !maps_coreclr(pid) ||
	    env_perfmap_on(pid))
		return;
	int err = 0;
	rtd_ipc_client *c = rtd_ipc_client_new(pid, NULL, &err);
	if (!c) {
		rtd_warn("pid %d: .NET without a diagnostic socket: JIT frames "
			 "stay unnamed (%s)", (int)pid, rtd_ipc_errmsg_last());
		return;
	}
	/* registered before it is switched on: the guardian switches it
	 * off, and removes the map, however this process ends */
	char map[PATH_MAX];
	unsigned id = 0;
	int r = rtd_sym_perfmap_path(pid, map, sizeof(map));
	if (!r)
		r = rtd_guard_perfmap(pid, map, &id);
	if (r) {
		rtd_warn("pid %d: the perf map is not switched on: %s", (int)pid,
			 rtd_strerror(r));
		rtd_ipc_client_free(c);
		return;
	}
	if (p->flags & RTD_PERF_PROF_DOTNET_BEGIN) {
		/* the reply is read when it comes (the caller polls): a
		 * stopped runtime holds no one; JIT frames are named from
		 * when its map is written (the symbolizer reads it late) */
		rtd_ipc_call *k = rtd_ipc_perfmap_enable_begin(c, RTD_IPC_PERFMAP_PERFMAP,
							       &err);
		if (k) {
			p->dotnet_ask[p->nask++] =
				(struct perfmap_ask){pid, id, c, k};
			return;
		}
		r = err;
	} else {
		r = rtd_ipc_perfmap_enable(c, RTD_IPC_PERFMAP_PERFMAP);
	}
	dotnet_answered(p, pid, id, r, c);
	rtd_ipc_client_free(c);
}

RTD_API int rtd_perf_profiler_perfmap_fd(const struct rtd_perf_profiler *p)
{
	return p && p->nask ? rtd_ipc_call_fd(p->dotnet_ask[0].call) : -1;
}

RTD_API int rtd_perf_profiler_perfmap_answer(struct rtd_perf_profiler *p)
{
	if (!p)
		return 0;
	for (unsigned i = 0; i < p->nask;) {
		struct perfmap_ask *k = &p->dotnet_ask[i];
		int rc = rtd_ipc_call_answer(k->call);
		if (rc == 1) {
			i++;
			continue;
		}
		dotnet_answered(p, k->pid, k->guard, rc, k->c);
		rtd_ipc_call_free(k->call);
		rtd_ipc_client_free(k->c);
		*k = p->dotnet_ask[--p->nask];
	}
	return (int)p->nask;
}

/* Off again, and the map files the runtime wrote for it removed. */
static void dotnet_disable_all(struct rtd_perf_profiler *p)
{
	for (unsigned i = 0; i < p->ndotnet; i++) {
		int r = rtd_guard_undo(p->dotnet_guard[i]);
		if (r)
			rtd_warn("pid %d: switching the perf map off again: %s",
				 (int)p->dotnet[i], rtd_strerror(r));
	}
	p->ndotnet = 0;
	/* a request still unanswered may be carried out later: its guard
	 * stays, and undoes it when rtdiag ends (undone here, a stopped
	 * runtime would hold this 40 s) */
	for (unsigned i = 0; i < p->nask; i++) {
		rtd_ipc_call_free(p->dotnet_ask[i].call);
		rtd_ipc_client_free(p->dotnet_ask[i].c);
	}
	p->nask = 0;
}

/* ---- life cycle ----------------------------------------------------------------- */

/* Off-CPU: BPF when asked for or possible, else perf with the reason. */
static int offcpu_path(struct rtd_perf_profiler *p,
		       const struct rtd_perf_profiler_opts *o,
		       const struct rtd_perf_sampler_opts *so)
{
	const char *no = NULL;
	bool ask = o->offcpu_via == RTD_PERF_OFFCPU_VIA_BPF;
	p->via = RTD_PERF_OFFCPU_VIA_PERF;
	if (o->offcpu_via == RTD_PERF_OFFCPU_VIA_PERF) {
		snprintf(p->via_why, sizeof(p->via_why), "asked for");
		return 0;
	}
	if (o->offcpu_via > RTD_PERF_OFFCPU_VIA_PERF)
		return prof_err(p, -RTD_E_INVAL, "bad offcpu_via %u", o->offcpu_via);
	if ((o->flags & RTD_PERF_PROF_KEEP_SAMPLES) && !(o->flags & RTD_PERF_PROF_WAIT_TOTALS))
		no = "a timeline needs each wait's own time (BPF keeps totals)";
	else if (o->flags & RTD_PERF_PROF_EACH_RECORD)
		no = "a perf.data file holds each switch (BPF keeps totals)";
	else if (so->callgraph == RTD_PERF_CG_DWARF)
		no = "--call-graph dwarf: BPF takes frame-pointer stacks only";
	else if (o->ncgroups)
		no = "cgroups: the BPF path follows processes";
	if (no) {
		snprintf(p->via_why, sizeof(p->via_why), "%s", no);
		return ask ? prof_err(p, -RTD_E_UNSUPPORTED, "off-CPU through "
				      "BPF: %s", no) : 0;
	}
	struct offcpu_bpf_opts bo = {0};
	bo.pids = o->pids;
	bo.npids = o->npids;
	bo.on_exec = o->flags & RTD_PERF_PROF_ENABLE_ON_EXEC;
	bo.no_kernel = so->exclude_kernel || so->no_kernel_frames;
	int r = offcpu_bpf_new(&bo, &p->bpf, p->via_why, sizeof(p->via_why));
	if (r)
		return ask ? prof_err(p, r, "off-CPU through BPF: %s",
				      p->via_why) : 0;
	p->via = RTD_PERF_OFFCPU_VIA_BPF;
	p->via_why[0] = 0;
	return 0;
}

enum rtd_perf_offcpu_via
rtd_perf_profiler_offcpu_via(const struct rtd_perf_profiler *p,
			     const char **why)
{
	if (why)
		*why = p && p->offcpu ? p->via_why : "";
	return p && p->offcpu ? p->via : RTD_PERF_OFFCPU_VIA_AUTO;
}

int rtd_perf_profiler_new(const struct rtd_perf_profiler_opts *opts,
			  struct rtd_perf_profiler **out)
{
	struct rtd_perf_profiler_opts o;
	*out = NULL;
	new_errmsg[0] = 0;
	if (!opts || rtd_opts_copy(&o, sizeof(o), opts,
				   RTD_OPTS_END(rtd_perf_profiler_opts, offcpu_states)))
		return prof_err(NULL, -RTD_E_INVAL, "bad profiler options");
	if ((o.flags & RTD_PERF_PROF_TOTALS) && (o.flags & RTD_PERF_PROF_OFF_CPU))
		return prof_err(NULL, -RTD_E_INVAL, "RTD_PERF_PROF_TOTALS is for CPU profiles "
				"(off-CPU: RTD_PERF_PROF_WAIT_TOTALS)");
	struct rtd_perf_profiler *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	int r = 0;
	p->flags = o.flags;
	p->offcpu = o.flags & RTD_PERF_PROF_OFF_CPU;
	p->states = o.offcpu_states ? o.offcpu_states & RTD_PERF_OFFCPU_ALL
				    : RTD_PERF_OFFCPU_WAITS;
	p->state_field = -1;
	offcpu_init(&p->oc, PROF_MAX_THREADS);
	p->cap = 1024;
	p->nodes = malloc(p->cap * sizeof(*p->nodes));
	if (!p->nodes) {
		free(p);
		return -ENOMEM;
	}
	p->nodes[0] = (struct pnode){0, 0, 0, 0};
	p->nnodes = 1;
	rtd_map_init(&p->tid_index, PROF_MAX_THREADS);
	rtd_map_init(&p->comms, 0);
	rtd_strmap_init(&p->modules, 0);
	if (o.flags & RTD_PERF_PROF_KEEP_SAMPLES) {
		/* on disk, not in memory: a long recording stays bounded */
		p->kept = tmpfile();
		if (!p->kept) {
			r = prof_err(p, -errno, "a temporary file for the samples: %s",
				     strerror(errno));
			goto fail;
		}
	}
	for (size_t i = 0; i < o.npids; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/proc/%d", (int)o.pids[i]);
		if (o.pids[i] <= 0 || access(path, F_OK) != 0) {
			r = prof_err(p, -RTD_E_NOTFOUND, "pid %d: no such process",
				     (int)o.pids[i]);
			goto fail;
		}
	}
	r = rtd_symbolizer_new(o.sym, &p->sym);
	if (r)
		goto fail;
	/* names are read while recording, not after it */
	rtd_sym_preload_start(p->sym);
	if (!(o.flags & RTD_PERF_PROF_NO_DOTNET))
		for (size_t i = 0; i < o.npids; i++)
			dotnet_enable(p, o.pids[i]);
	/* the caller's sampler options at this version's size (the one
	 * check), read by the off-CPU choice and the monitor's events */
	struct rtd_perf_sampler_opts so;
	if (rtd_opts_copy(&so, sizeof(so), o.sampler,
			  RTD_OPTS_END(rtd_perf_sampler_opts, no_kernel_frames))) {
		r = prof_err(NULL, -RTD_E_INVAL, "bad sampler options");
		goto fail;
	}
	if (p->offcpu) {
		r = offcpu_path(p, &o, &so);
		if (r)
			goto fail;
	}
	kernel_ranges(p, o.sym ? o.sym->kallsyms : NULL, p->offcpu && !p->bpf);
	struct rtd_perf_opts mo = {.sz = sizeof(mo)};
	mo.pids = o.pids;
	mo.npids = o.npids;
	mo.cgroups = o.cgroups;
	mo.ncgroups = o.ncgroups;
	/* off-CPU: a sample with its stack at every switch of every scoped
	 * thread, bursts of thousands a second system-wide: 2 MB rings at
	 * least; else perf's default */
	mo.ring_pages = o.ring_pages ? o.ring_pages
				     : rtd_perf_default_ring_pages();
	if (!o.ring_pages && (o.flags & RTD_PERF_PROF_OFF_CPU) && !p->bpf &&
	    mo.ring_pages < 512)
		mo.ring_pages = 512;
	mo.flags = o.npids ? RTD_PERF_INHERIT : 0;
	/* BPF: the monitor only carries mappings and names: CPU-wide, so
	 * that no event of ours sits in the target's own context and slows
	 * its every switch (+43% on the ping-pong, offcpu_floor.sh) */
	if (p->bpf)
		mo.flags |= RTD_PERF_SCOPE_CPU_WIDE;
	if (o.flags & RTD_PERF_PROF_ENABLE_ON_EXEC)
		mo.flags |= RTD_PERF_ENABLE_ON_EXEC;
	if (o.flags & RTD_PERF_PROF_READER_THREAD)
		mo.flags |= RTD_PERF_READER_THREAD;
	r = rtd_perf_monitor_new(&mo, &p->m);
	if (r) {
		prof_err(p, r, "setting up perf_event: %s%s", rtd_strerror(r),
			 o.ncgroups && r == -RTD_E_NOTFOUND
				 ? " (no such cgroup: give a path relative to "
				   "the cgroup v2 mount, or an absolute one)"
				 : "");
		goto fail;
	}
	if (p->bpf) {
		/* the waits are summed in the kernel: the monitor carries
		 * the records that say where code is, on an event that
		 * never samples */
		so.event = "dummy";
		so.freq = 0;
		so.period = 1;
		so.context_switch = false;
		p->cg = so.callgraph;
		so.callgraph = RTD_PERF_CG_NONE;
		so.exclude_kernel = false;
	} else if (p->offcpu) {
		/* every switch of a scoped thread, and when it runs again */
		so.event = "sched:sched_switch";
		so.freq = 0;
		so.period = 0;
		so.context_switch = true;
		/* switches are taken in the kernel: user space only is
		 * a matter of the stacks */
		if (so.exclude_kernel) {
			so.exclude_kernel = false;
			so.no_kernel_frames = true;
		}
	}
	if (!p->bpf)
		p->cg = so.callgraph;
	p->freq = so.period || p->offcpu ? 0 : (so.freq ? so.freq : 99);
	p->npids = o.npids;
	p->pid0 = o.npids ? o.pids[0] : 0;
	/* the processes' mappings now, before the records of new ones */
	for (size_t i = 0; i < o.npids; i++) {
		rtd_sym_proc_load(p->sym, o.pids[i]);
		/* a ring for a long time: every file's symbols now (in the
		 * background), so memory does not step up later at the
		 * first sample in a library */
		if (o.flags & RTD_PERF_PROF_ALL_SYMBOLS)
			rtd_sym_proc_objects(p->sym, o.pids[i]);
	}
	r = rtd_perf_monitor_add_sampler(p->m, &so, &p->ev);
	if (r) {
		prof_err(p, r, "%s", rtd_perf_monitor_errmsg(p->m));
		goto fail;
	}
	p->st.user_only = rtd_perf_monitor_user_only(p->m);
	for (unsigned i = 0; p->offcpu && !p->bpf &&
			     i < rtd_perf_event_nfields(p->ev); i++) {
		const struct rtd_perf_field *f = rtd_perf_event_field(p->ev, i);
		if (f && !strcmp(f->name, "prev_state"))
			p->state_field = (int)i;
	}
	*out = p;
	return 0;
fail:
	if (!new_errmsg[0])
		snprintf(new_errmsg, sizeof(new_errmsg), "%s",
			 p->errmsg[0] ? p->errmsg : rtd_strerror(r));
	rtd_perf_profiler_free(p);
	return r;
}

struct rtd_perf_monitor *rtd_perf_profiler_monitor(struct rtd_perf_profiler *p)
{
	return p ? p->m : NULL;
}

rtd_symbolizer *rtd_perf_profiler_symbolizer(struct rtd_perf_profiler *p)
{
	return p ? p->sym : NULL;
}

int rtd_perf_profiler_run(struct rtd_perf_profiler *p)
{
	if (!p)
		return -RTD_E_INVAL;
	if (!p->drained || !p->start_mono) {
		struct timespec rt;
		clock_gettime(CLOCK_REALTIME, &rt);
		p->start_ns = (int64_t)rt.tv_sec * 1000000000ll + rt.tv_nsec;
		p->start_mono = rtd_now_ns();
	}
	int r = rtd_perf_monitor_run(p->m, on_record, p);
	/* BPF: the waits that ended by now, the run's end: not at a later
	 * take or profile, which would move the waits ended in between
	 * into this window (an agent's delta of 3.00 s held 3.09 s of
	 * sleep under ASan, where a take comes late) */
	int rb = bpf_read(p, 0);
	p->end_ns = rtd_now_ns();
	if (!r)
		r = rb;
	struct rtd_perf_stats st = {.sz = sizeof(st)};
	rtd_perf_monitor_stats(p->m, &st);
	p->st.lost = st.lost + st.lost_samples;
	if (r < 0 && !rb)
		prof_err(p, r, "%s", rtd_perf_monitor_errmsg(p->m));
	return r < 0 ? r : 0;
}

const char *rtd_perf_profiler_frame_module(struct rtd_perf_profiler *p,
					   const char *name)
{
	void *v = NULL;
	if (!p || !name || !rtd_strmap_get(&p->modules, name, strlen(name), &v))
		return NULL;
	return v;
}

void rtd_perf_profiler_stats(const struct rtd_perf_profiler *p,
			     struct rtd_perf_profiler_stats *st)
{
	if (!p)
		return;
	struct rtd_perf_profiler_stats t = p->st;
	struct rtd_sym_stats ss = {.sz = sizeof(ss)};
	rtd_sym_stats(p->sym, &ss);
	t.processes = ss.processes;
	t.run_start = p->start_mono;
	t.run_end = p->end_ns;
	t.offcpu_waits = p->oc.waits;
	t.offcpu_unpaired = p->oc.unpaired + p->oc.replaced + p->oc.dropped;
	t.truncated += p->bpf_nostack; /* waits kept without their stack */
	for (int i = 0; i < OFFCPU_NSTATES; i++)
		t.offcpu_ns[i] = p->oc.ns[i];
	rtd_stats_copy(st, &t, sizeof(t));
}

void rtd_perf_profiler_free(struct rtd_perf_profiler *p)
{
	if (!p)
		return;
	rtd_perf_monitor_free(p->m);
	offcpu_bpf_free(p->bpf);
	dotnet_disable_all(p);
	rtd_symbolizer_free(p->sym);
	rtd_map_free_vals(&p->comms);
	rtd_strmap_free(&p->modules);
	rtd_map_free(&p->tid_index);
	offcpu_free(&p->oc);
	free(p->threads);
	free(p->nodes);
	free(p->ht);
	if (p->kept)
		fclose(p->kept);
	free(p->named_lf);
	free(p->named);
	free(p->named_frames);
	free(p->walk_stack);
	free(p->walk_buf);
	free(p->walk_need);
	free(p->name_sfr);
	free(p->name_fr);
	free(p->name_lf);
	free(p);
}

/* ---- the profile ------------------------------------------------------------------ */

/* Frames of a location (inlined ones expanded), innermost first. */
struct loc_frames {
	uint32_t first; /* index into the frames array */
	uint16_t n;
};

static uint8_t frame_kind(uint8_t k)
{
	switch (k) {
	case RTD_SYM_NATIVE: return RTD_FRAME_NATIVE;
	case RTD_SYM_KERNEL: return RTD_FRAME_KERNEL;
	case RTD_SYM_MANAGED: return RTD_FRAME_MANAGED;
	case RTD_SYM_GO: return RTD_FRAME_GO;
	case RTD_SYM_GO_RUNTIME: return RTD_FRAME_GO_RUNTIME;
	case RTD_SYM_JIT: return RTD_FRAME_INTERPRETED;
	case RTD_SYM_RUNTIME: return RTD_FRAME_RUNTIME;
	default: return RTD_FRAME_UNKNOWN;
	}
}

static const char *base_of(const char *p)
{
	const char *b = strrchr(p, '/');
	return b && b[1] ? b + 1 : p;
}

/* One resolved symbolizer frame as a profile frame (a mapping for files). */
static int to_frame(struct rtd_perf_profiler *p, rtd_profile *prof,
		    const struct rtd_sym_frame *sf, struct rtd_frame *out)
{
	memset(out, 0, sizeof(*out));
	out->name = sf->name;
	out->module = sf->module[0] == '/' ? base_of(sf->module) : sf->module;
	out->file = sf->file;
	out->line = sf->line;
	out->addr = sf->addr;
	out->kind = frame_kind(sf->kind);
	out->inlined = sf->inlined;
	if (prof && sf->module[0] == '/' && sf->map_limit > sf->map_start) {
		char hex[2 * 64 + 1];
		rtd_hex_lower(hex, sf->build_id, sf->build_id_len < 64 ? sf->build_id_len : 64);
		int id = rtd_profile_add_mapping(prof, sf->map_start, sf->map_limit,
						 sf->map_pgoff, sf->module,
						 sf->build_id_len ? hex : NULL);
		if (id > 0)
			out->mapping = (uint32_t)id;
		/* unnamed file code: the model writes module+0xOFFSET, and
		 * pprof keeps the address for later symbolization */
		if (!sf->named && id > 0)
			out->name = NULL;
	}
	(void)p;
	return 0;
}

static rtd_profile *new_profile(struct rtd_perf_profiler *p)
{
	static const struct rtd_profile_type types[2] = {
		{"samples", "count"}, {"cpu", "nanoseconds"}};
	/* Go's block profile */
	static const struct rtd_profile_type otypes[2] = {
		{"contentions", "count"}, {"delay", "nanoseconds"}};
	struct rtd_profile_opts po = {.sz = sizeof(po)};
	po.types = p->offcpu ? otypes : types;
	po.ntypes = 2;
	po.default_type = 1;
	po.period_type = p->offcpu ? otypes[0] : types[1];
	if (p->offcpu)
		po.period = 1;
	else if (p->freq)
		po.period = 1000000000ll / p->freq;
	rtd_profile *prof = rtd_profile_new2(&po);
	if (!prof)
		return NULL;
	struct rtd_profile_meta m = {.sz = sizeof(m)};
	m.source = p->offcpu ? "perf off-cpu" : "perf";
	m.time_nanos = p->start_ns;
	m.duration_nanos = p->end_ns > p->start_mono ? (int64_t)(p->end_ns - p->start_mono) : 0;
	char comm[64] = "";
	if (p->npids == 1) {
		m.pid = p->pid0;
		if (rtd_proc_comm((int)p->pid0, 0, comm, sizeof(comm)) > 0) {
			m.process = comm;
		} else if (p->nthreads) {
			m.process = p->threads[0].comm;
		}
	}
	rtd_profile_set_meta(prof, &m);
	return prof;
}

/* @buf holding @n of @size bytes: grown to twice that (@min at least) when
 * short, else left; NULL when it cannot grow (the buffer stays as it was). */
static void *scratch(void **buf, size_t *cap, size_t n, size_t size, size_t min)
{
	if (n <= *cap)
		return *buf;
	size_t nc = *cap > min ? *cap : min;
	while (nc < n)
		nc *= 2;
	void *nv = realloc(*buf, nc * size);
	if (!nv)
		return NULL;
	*buf = nv;
	*cap = nc;
	return nv;
}

/* Name every location (only those marked in need, when given), once each
 * in id order so each file is loaded once: lf[loc] gives its frames in
 * *framesp, innermost first. With prof, file code gets its mapping there.
 * *framesp is the caller's to free, or with @kept the profiler's scratch
 * (valid until the next call). */
static int name_all(struct rtd_perf_profiler *p, rtd_profile *prof,
		    const uint8_t *need, struct loc_frames *lf,
		    struct rtd_frame **framesp, bool modules, bool kept)
{
	size_t nloc = rtd_sym_nlocations(p->sym);
	/* every location once, in id order: each file is loaded once */
	struct rtd_sym_frame *sfr = p->name_sfr;
	size_t nsfr = 0;
	struct rtd_sym_frame fr[RTD_SYM_MAX_INLINE + 1];
	for (size_t i = 0; i < nloc; i++) {
		if (need && !need[i])
			continue;
		int n = rtd_sym_resolve(p->sym, (int64_t)i, fr, RTD_SYM_MAX_INLINE + 1);
		if (n < 1) {
			lf[i] = (struct loc_frames){0, 0};
			continue;
		}
		if (!(sfr = scratch((void **)&p->name_sfr, &p->name_sfr_cap, nsfr + (size_t)n,
				    sizeof(*sfr), 256)))
			return -ENOMEM;
		lf[i].first = (uint32_t)nsfr;
		lf[i].n = (uint16_t)n;
		memcpy(sfr + nsfr, fr, (size_t)n * sizeof(*fr));
		nsfr += (size_t)n;
	}
	/* pprof takes the first mapping for the program: the executable is
	 * the file mapped lowest (a library's addresses are above it) */
	const struct rtd_sym_frame *lowest = NULL;
	for (size_t i = 0; i < nsfr; i++)
		if (sfr[i].module[0] == '/' && sfr[i].map_limit > sfr[i].map_start &&
		    (!lowest || sfr[i].map_start < lowest->map_start))
			lowest = &sfr[i];
	struct rtd_frame *frames =
		kept ? scratch((void **)&p->name_fr, &p->name_fr_cap, nsfr ? nsfr : 1,
			       sizeof(*frames), 256)
		     : malloc((nsfr ? nsfr : 1) * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	if (lowest)
		to_frame(p, prof, lowest, &frames[0]);
	for (size_t i = 0; i < nsfr; i++) {
		to_frame(p, prof, &sfr[i], &frames[i]);
		size_t nl = strlen(sfr[i].name);
		if (modules && !rtd_strmap_get(&p->modules, sfr[i].name, nl, NULL))
			rtd_strmap_put(&p->modules, sfr[i].name, nl,
				       (void *)sfr[i].module);
	}

	*framesp = frames;
	return 0;
}

/* The profile of the call tree's samples. With only_sampled, only the
 * locations on sampled paths are named (a take names what it needs; the
 * symbolizer keeps what it loaded). */
static int build(struct rtd_perf_profiler *p, rtd_profile **out,
		 bool only_sampled)
{
	*out = NULL;
	if (!p)
		return -RTD_E_INVAL;
	size_t nloc = rtd_sym_nlocations(p->sym);
	struct loc_frames *lf = calloc(nloc ? nloc : 1, sizeof(*lf));
	uint8_t *need = only_sampled ? calloc(nloc ? nloc : 1, 1) : NULL;
	struct rtd_frame *frames = NULL;
	if (only_sampled && need && lf) {
		for (size_t i = 1; i < p->nnodes; i++) {
			if (!p->nodes[i].count)
				continue;
			for (uint32_t k = (uint32_t)i; k; k = p->nodes[k].parent) {
				uint32_t key = p->nodes[k].key;
				if (!(key & THREAD_KEY) && key < nloc)
					need[key] = 1;
			}
		}
	}

	struct rtd_frame *stack = malloc(sizeof(*stack) *
					 (PROF_MAX_DEPTH * (RTD_SYM_MAX_INLINE + 1) + 1));
	rtd_profile *prof = new_profile(p);
	int r = 0;
	if (!lf || !stack || !prof || (only_sampled && !need)) {
		r = -ENOMEM;
		goto done;
	}
	if (p->modules_stale) {
		rtd_strmap_free(&p->modules);
		rtd_strmap_init(&p->modules, 0);
		p->modules_stale = false;
	}
	r = name_all(p, prof, need, lf, &frames, true, false);
	if (r)
		goto done;
	/* each node with samples: its path from the root, a sample of its
	 * thread */
	for (size_t i = 1; i < p->nnodes; i++) {
		if (!p->nodes[i].count)
			continue;
		size_t depth = 0;
		for (uint32_t k = (uint32_t)i; k && depth < PROF_PATH;
		     k = p->nodes[k].parent)
			p->path[depth++] = k;
		size_t ns = 0;
		const struct pthread *t = NULL;
		const char *state = NULL;
		for (size_t d = depth; d-- > 0;) {
			uint32_t key = p->nodes[p->path[d]].key;
			if ((key & STATE_KEY) == STATE_KEY) {
				state = offcpu_state_name(key & 0xffu);
				continue;
			}
			if (key & THREAD_KEY) {
				t = &p->threads[key & ~THREAD_KEY];
				continue;
			}
			const struct loc_frames *l = &lf[key];
			/* root first: the function, then what was inlined into it */
			for (size_t k = l->n; k-- > 0;)
				stack[ns++] = frames[l->first + k];
		}
		int64_t values[2] = {(int64_t)p->nodes[i].count,
				     (int64_t)p->nodes[i].period};
		struct rtd_sample smp = {.sz = sizeof(smp)};
		smp.frames = stack;
		smp.nframes = ns;
		smp.values = values;
		smp.nvalues = 2;
		struct rtd_label lab = {.key = "state", .str = state};
		if (state) {
			smp.labels = &lab;
			smp.nlabels = 1;
		}
		if (t) {
			smp.pid = t->pid;
			smp.tid = t->tid;
			smp.thread = t->comm[0] ? t->comm : NULL;
		}
		r = rtd_profile_add_sample(prof, &smp);
		if (r)
			goto done;
	}
	*out = prof;
	prof = NULL;
done:
	rtd_profile_free(prof);
	free(lf);
	free(need);
	free(frames);
	free(stack);
	return r;
}

/* After a restart: when the symbolizer holds more locations than twice
 * what the last trim kept (PROF_TRIM_LOCATIONS at least), or its copied
 * names pass PROF_NAME_BYTES, it keeps only those the tree still uses
 * (the open waits' paths), renumbered in the tree; the names a drain
 * kept go with the symbolizer's. Each new address a recording meets (a
 * runtime's unnamed native code, the kernel's paths) was a location,
 * its names and its frames for the profiler's life. */
static int trim_locations(struct rtd_perf_profiler *p)
{
	size_t nloc = rtd_sym_nlocations(p->sym);
	size_t bound = 2 * p->locs_kept > PROF_TRIM_LOCATIONS ? 2 * p->locs_kept
							       : PROF_TRIM_LOCATIONS;
	struct rtd_sym_stats ss = {.sz = sizeof(ss)};
	rtd_sym_stats(p->sym, &ss);
	if (nloc <= bound && ss.name_bytes <= PROF_NAME_BYTES)
		return 0;
	uint8_t *keep = calloc(nloc ? nloc : 1, 1);
	int64_t *remap = malloc((nloc ? nloc : 1) * sizeof(*remap));
	int r = keep && remap ? 0 : -ENOMEM;
	for (size_t i = 1; !r && i < p->nnodes; i++) {
		uint32_t key = p->nodes[i].key;
		if (!(key & THREAD_KEY) && key < nloc)
			keep[key] = 1;
	}
	int k = r ? r : rtd_sym_keep_locations(p->sym, keep, nloc, remap);
	if (k < 0) {
		r = prof_err(p, k, "trimming the symbolizer's locations: %s", rtd_strerror(k));
	} else {
		for (size_t i = 1; i < p->nnodes; i++) {
			uint32_t key = p->nodes[i].key;
			if (!(key & THREAD_KEY) && key < nloc)
				p->nodes[i].key = (uint32_t)remap[key];
		}
		p->locs_kept = (size_t)k;
		p->st.location_trims++;
		/* the keys changed: so did their places */
		r = p->htsize ? ht_build(p, p->htsize) : 0;
		/* the names go, their buffers stay (made again at each
		 * trim, they were blocks of new sizes in the heap) */
		p->named_nloc = p->named_n = 0;
		p->modules_stale = true;
	}
	free(keep);
	free(remap);
	return r;
}

/* The call tree restarts empty: memory follows the stacks of one take or
 * window. The off-CPU waits still open keep their paths, put back into
 * the new tree. Then the symbolizer's locations are trimmed when they
 * passed their bound. Returns 0 or a negative error (-ENOMEM). */
static int tree_restart(struct rtd_perf_profiler *p)
{
	/* off-CPU: the paths of the waits still open, to put them back
	 * into the new tree (each path: its length, then its keys root
	 * first; a location id may be 0) */
	uint32_t *keep = NULL;
	size_t nkeep = 0, kcap = 0;
	size_t it = 0;
	uint32_t tid;
	struct offcpu_pending *w;
	while (p->offcpu && offcpu_next(&p->oc, &it, &tid, &w)) {
		if (!w->node)
			continue;
		size_t depth = 0;
		for (uint32_t k = w->node; k && depth < PROF_PATH; k = p->nodes[k].parent)
			p->path[depth++] = p->nodes[k].key;
		uint32_t *nk = rtd_grow(keep, &kcap, nkeep + depth + 1,
					sizeof(*nk), 256);
		if (!nk) {
			w->node = 0; /* that wait is not counted */
			continue;
		}
		keep = nk;
		keep[nkeep++] = (uint32_t)depth;
		for (size_t d = depth; d-- > 0;)
			keep[nkeep++] = p->path[d];
	}
	/* the tree restarts: memory follows the stacks of one take */
	p->nnodes = 1;
	p->nodes[0].count = 0;
	p->nodes[0].period = 0;
	if (p->ht)
		memset(p->ht, 0, p->htsize * sizeof(*p->ht));
	p->st.nodes = 0;
	it = 0;
	size_t k = 0;
	while (p->offcpu && k < nkeep && offcpu_next(&p->oc, &it, &tid, &w)) {
		if (!w->node)
			continue;
		uint32_t node = 0;
		bool full = false;
		size_t end = k + 1 + keep[k];
		for (k++; k < end; k++) {
			if (!full && !(node = child(p, node, keep[k])))
				full = true; /* the tree's cap: not counted */
		}
		w->node = full ? 0 : node;
	}
	free(keep);
	return trim_locations(p);
}

int rtd_perf_profiler_profile(struct rtd_perf_profiler *p, rtd_profile **out)
{
	return build(p, out, false);
}

int rtd_perf_profiler_take(struct rtd_perf_profiler *p, rtd_profile **out)
{
	int r = build(p, out, true);
	if (r)
		return r;
	if ((r = tree_restart(p)))
		return r;
	if (p->kept && (fflush(p->kept) || ftruncate(fileno(p->kept), 0) ||
			fseek(p->kept, 0, SEEK_SET)))
		return prof_err(p, -EIO, "dropping the kept samples: %s",
				strerror(errno));
	return 0;
}

/* Mark the locations of the kept samples' stacks in @need (a drain names
 * only those: what one window sampled, not everything seen so far). */
static int need_kept(struct rtd_perf_profiler *p, uint8_t *need, size_t nloc,
		     struct kept_sample *buf)
{
	if (fflush(p->kept) || fseek(p->kept, 0, SEEK_SET))
		return prof_err(p, -EIO, "reading the kept samples: %s", strerror(errno));
	size_t got;
	while ((got = fread(buf, sizeof(*buf), WALK_BUF, p->kept)) > 0)
		for (size_t i = 0; i < got; i++) {
			size_t depth = 0;
			for (uint32_t k = buf[i].node;
			     k && k < p->nnodes && depth++ <= PROF_PATH;
			     k = p->nodes[k].parent)
				if (!(p->nodes[k].key & THREAD_KEY) && p->nodes[k].key < nloc)
					need[p->nodes[k].key] = 1;
		}
	if (ferror(p->kept))
		return prof_err(p, -EIO, "reading the kept samples: %s", strerror(errno));
	return 0;
}

/* Name the locations in @need not named before in this recording, into
 * p->named_lf / p->named_frames (kept until the profiler is freed:
 * memory follows the distinct locations, as the symbolizer's own). */
static int name_new(struct rtd_perf_profiler *p, uint8_t *need, size_t nloc)
{
	if (!nloc)
		return 0;
	if (nloc > p->named_nloc) {
		/* grown by doubling: a realloc to each drain's count of
		 * locations was a block of a new size every drain */
		if (nloc > p->named_loc_cap) {
			size_t cap = p->named_loc_cap;
			if (!scratch((void **)&p->named_lf, &cap, nloc, sizeof(*p->named_lf), 1024))
				return -ENOMEM;
			cap = p->named_loc_cap;
			if (!scratch((void **)&p->named, &cap, nloc, 1, 1024))
				return -ENOMEM;
			p->named_loc_cap = cap;
		}
		memset(p->named_lf + p->named_nloc, 0,
		       (nloc - p->named_nloc) * sizeof(*p->named_lf));
		memset(p->named + p->named_nloc, 0, nloc - p->named_nloc);
		p->named_nloc = nloc;
	}
	bool any = false;
	for (size_t i = 0; i < nloc; i++) {
		if (need[i] && p->named[i])
			need[i] = 0;
		any |= need[i] != 0;
	}
	if (!any)
		return 0;
	struct loc_frames *lf =
		scratch((void **)&p->name_lf, &p->name_lf_cap, nloc, sizeof(*lf), 1024);
	struct rtd_frame *frames = NULL;
	int r = lf ? name_all(p, NULL, need, lf, &frames, false, true) : -ENOMEM;
	size_t add = 0;
	for (size_t i = 0; !r && i < nloc; i++)
		if (need[i])
			add += lf[i].n;
	struct rtd_frame *nf = NULL;
	if (!r && p->named_n + add > p->named_cap) {
		size_t cap = p->named_cap ? p->named_cap : 4096;
		while (cap < p->named_n + add)
			cap *= 2;
		if (!(nf = realloc(p->named_frames, cap * sizeof(*nf))))
			r = -ENOMEM;
		else {
			p->named_frames = nf;
			p->named_cap = cap;
		}
	}
	for (size_t i = 0; !r && i < nloc; i++) {
		if (!need[i])
			continue;
		p->named[i] = 1;
		p->named_lf[i] = (struct loc_frames){(uint32_t)p->named_n, lf[i].n};
		memcpy(p->named_frames + p->named_n, frames + lf[i].first,
		       lf[i].n * sizeof(*frames));
		p->named_n += lf[i].n;
	}
	return r;
}

/* The sample of call-tree node @node to @fn: its stack leaf first, up the
 * tree to its thread (named frames @fr by location @lfr), its state and
 * thread; @smp has its time and counts already. */
static int give_node(struct rtd_perf_profiler *p, uint32_t node, size_t nloc,
		     const struct loc_frames *lfr, const struct rtd_frame *fr,
		     struct rtd_perf_profiler_sample *smp, rtd_perf_profiler_sample_fn fn,
		     void *ctx)
{
	struct rtd_frame *stack = p->walk_stack;
	size_t ns = 0, depth = 0;
	const struct pthread *t = NULL;
	for (uint32_t k = node; k && k < p->nnodes && depth++ <= PROF_MAX_DEPTH;
	     k = p->nodes[k].parent) {
		uint32_t key = p->nodes[k].key;
		if ((key & STATE_KEY) == STATE_KEY) {
			smp->state = offcpu_state_name(key & 0xffu);
			continue;
		}
		if (key & THREAD_KEY) {
			if ((key & ~THREAD_KEY) < p->nthreads)
				t = &p->threads[key & ~THREAD_KEY];
			continue;
		}
		if (key >= nloc)
			continue;
		const struct loc_frames *l = &lfr[key];
		for (size_t j = 0; j < l->n; j++)
			stack[ns++] = fr[l->first + j];
	}
	smp->frames = stack;
	smp->nframes = ns;
	if (t) {
		smp->pid = t->pid;
		smp->tid = t->tid;
		smp->thread = t->comm[0] ? t->comm : NULL;
		void *v;
		if (rtd_map_get(&p->tid_index, t->pid, &v) &&
		    p->threads[(uintptr_t)v - 1].pid == t->pid &&
		    p->threads[(uintptr_t)v - 1].comm[0])
			smp->process = p->threads[(uintptr_t)v - 1].comm;
	}
	return fn(smp, ctx);
}

/* Mark the locations on the path of every call-tree node with samples
 * (RTD_PERF_PROF_TOTALS: what a drain hands out). */
static void need_nodes(struct rtd_perf_profiler *p, uint8_t *need, size_t nloc)
{
	for (size_t i = 1; i < p->nnodes; i++) {
		if (!p->nodes[i].count)
			continue;
		size_t depth = 0;
		for (uint32_t k = (uint32_t)i; k && k < p->nnodes && depth++ <= PROF_PATH;
		     k = p->nodes[k].parent)
			if (!(p->nodes[k].key & THREAD_KEY) && p->nodes[k].key < nloc)
				need[p->nodes[k].key] = 1;
	}
}

/* RTD_PERF_PROF_TOTALS: the call tree's counts since the last drain, one
 * sample per thread and stack (as a take's profile has them), then the
 * tree restarts. */
static int drain_totals(struct rtd_perf_profiler *p, rtd_perf_profiler_sample_fn fn,
			void *ctx)
{
	size_t nloc = rtd_sym_nlocations(p->sym);
	scratch((void **)&p->walk_need, &p->walk_need_cap, nloc, 1, 1024);
	if (!p->walk_stack)
		p->walk_stack = malloc(sizeof(*p->walk_stack) *
				       (PROF_MAX_DEPTH * (RTD_SYM_MAX_INLINE + 1) + 1));
	uint8_t *need = p->walk_need_cap >= nloc ? p->walk_need : NULL;
	if (!p->walk_stack || (nloc && !need))
		return -ENOMEM;
	p->drained = true;
	if (nloc)
		memset(need, 0, nloc);
	need_nodes(p, need, nloc);
	int r = name_new(p, need, nloc);
	for (size_t i = 1; !r && i < p->nnodes; i++) {
		if (!p->nodes[i].count)
			continue;
		struct rtd_perf_profiler_sample smp = {.sz = sizeof(smp)};
		smp.time = p->end_ns;
		smp.count = p->nodes[i].count;
		smp.duration = p->nodes[i].period;
		r = give_node(p, (uint32_t)i, nloc, p->named_lf, p->named_frames, &smp, fn, ctx);
	}
	return r ? r : tree_restart(p);
}

static int walk_kept(struct rtd_perf_profiler *p, rtd_perf_profiler_sample_fn fn,
		     void *ctx, bool drain)
{
	if (!p || !fn)
		return -RTD_E_INVAL;
	if (!p->kept)
		return prof_err(p, -RTD_E_STATE, "the profiler keeps no samples "
				"(RTD_PERF_PROF_KEEP_SAMPLES)");
	size_t nloc = rtd_sym_nlocations(p->sym);
	/* a drain reads the recording's named frames (p->named_lf) in place
	 * and marks what it needs in a buffer kept from one drain to the
	 * next: two temporaries sized by the locations, 20 times a second,
	 * left holes of every size in the runner's heap (issue #31) */
	struct loc_frames *lf = drain ? NULL : calloc(nloc ? nloc : 1, sizeof(*lf));
	if (drain)
		scratch((void **)&p->walk_need, &p->walk_need_cap, nloc, 1, 1024);
	if (!p->walk_stack)
		p->walk_stack = malloc(sizeof(*p->walk_stack) *
				       (PROF_MAX_DEPTH * (RTD_SYM_MAX_INLINE + 1) + 1));
	if (!p->walk_buf)
		p->walk_buf = malloc(WALK_BUF * sizeof(*p->walk_buf));
	struct kept_sample *buf = p->walk_buf;
	uint8_t *need = drain && p->walk_need_cap >= nloc ? p->walk_need : NULL;
	struct rtd_frame *frames = NULL;
	const struct loc_frames *lfr = lf;
	int r = 0;
	if ((!drain && !lf) || !p->walk_stack || !buf || (drain && nloc && !need)) {
		r = -ENOMEM;
		goto done;
	}
	if (drain) {
		p->drained = true;
		if (nloc)
			memset(need, 0, nloc);
		if ((r = need_kept(p, need, nloc, buf)) || (r = name_new(p, need, nloc)))
			goto done;
		/* the walk reads the recording's named frames */
		lfr = p->named_lf;
	} else if ((r = name_all(p, NULL, need, lf, &frames, true, false))) {
		goto done;
	}
	const struct rtd_frame *fr = drain ? p->named_frames : frames;
	if (fflush(p->kept) || fseek(p->kept, 0, SEEK_SET)) {
		r = prof_err(p, -EIO, "reading the kept samples: %s", strerror(errno));
		goto done;
	}
	size_t got;
	while (!r && (got = fread(buf, sizeof(*buf), WALK_BUF, p->kept)) > 0) {
		for (size_t i = 0; i < got && !r; i++) {
			struct rtd_perf_profiler_sample smp = {.sz = sizeof(smp)};
			smp.time = buf[i].time;
			smp.duration = buf[i].dur;
			smp.open = buf[i].flags & KEPT_OPEN;
			smp.count = buf[i].count;
			r = give_node(p, buf[i].node, nloc, lfr, fr, &smp, fn, ctx);
		}
	}
	if (!r && ferror(p->kept))
		r = prof_err(p, -EIO, "reading the kept samples: %s", strerror(errno));
	if (drain) {
		/* given out: the file restarts empty, so it holds one window */
		if ((fflush(p->kept) || ftruncate(fileno(p->kept), 0) ||
		     fseek(p->kept, 0, SEEK_SET)) && !r)
			r = prof_err(p, -EIO, "dropping the kept samples: %s", strerror(errno));
		/* given out and copied by the caller: the tree and the
		 * locations need not hold them any more */
		if (!r && (p->flags & RTD_PERF_PROF_WINDOWS))
			r = tree_restart(p);
	} else if (fseek(p->kept, 0, SEEK_END) && !r) {
		/* later samples are kept after these */
		r = -EIO;
	}
done:
	free(lf);
	free(frames);
	return r;
}

int rtd_perf_profiler_each_sample(struct rtd_perf_profiler *p,
				  rtd_perf_profiler_sample_fn fn, void *ctx)
{
	return walk_kept(p, fn, ctx, false);
}

int rtd_perf_profiler_drain(struct rtd_perf_profiler *p,
			    rtd_perf_profiler_sample_fn fn, void *ctx)
{
	if (p && fn && (p->flags & RTD_PERF_PROF_TOTALS))
		return drain_totals(p, fn, ctx);
	return walk_kept(p, fn, ctx, true);
}
