/* SPDX-License-Identifier: MIT */
/*
 * perfdata_write.c - writing perf.data as perf record does
 * (rtdiag/perf_data.h; tools/perf/Documentation/perf.data-file-format.txt).
 *
 * Layout, as perf's: the 104-byte header (rewritten at the end with the
 * sizes), each event's ids, the attrs section (attr, then the {offset,
 * size} of its ids), the data section (records as the kernel wrote them),
 * then one {offset, size} per feature bit set and the features' data.
 */
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/file.h"
#include "common/map.h"
#include "perf/internal.h"
#include "rtdiag/perf_data.h"

#define W_HEADER 104u
#define W_NAME_ALIGN 64u /* perf pads header strings so */

#define W_MAX_DSOS (1u << 16) /* files whose build ids are kept */
#define W_BUILD_ID_SIZE (1u << 15) /* PERF_RECORD_MISC_BUILD_ID_SIZE */

enum { W_TRACING_DATA = 1, W_BUILD_ID = 2, W_HOSTNAME = 3, W_OSRELEASE = 4, W_VERSION = 5, W_ARCH = 6, W_NRCPUS = 7,
       W_CMDLINE = 11, W_EVENT_DESC = 12 };

struct w_event {
	struct perf_event_attr attr;
	char *name;
	uint64_t *ids;
	size_t nids;
	char *format; /* a tracepoint's tracefs format text, or NULL */
	int flen;
};

struct rtd_perf_data_writer {
	FILE *f;
	int err;
	char *cmdline;
	struct w_event ev[RTD_PERF_DATA_WRITER_MAX_EVENTS];
	size_t nev;
	bool data_started, kernel_done;
	uint64_t attrs_off, data_off;
	/* HEADER_BUILD_ID: each executable file mapped (synthesized or
	 * recorded), with its build id, as perf record --buildid-all */
	rtd_strmap dso_seen; /* path -> 1 */
	struct w_dso {
		char *path;
		uint8_t id[20], len;
		bool kernel;
	} *dso;
	size_t ndso, cdso;
};

static void dso_of_record(rtd_perf_data_writer *w, const uint8_t *rec, size_t len);

static void put(rtd_perf_data_writer *w, const void *p, size_t n)
{
	if (!w->err && n && fwrite(p, 1, n, w->f) != n)
		w->err = errno ? -errno : -EIO;
}

static void put_u32(rtd_perf_data_writer *w, uint32_t v)
{
	put(w, &v, 4);
}

static void put_u64(rtd_perf_data_writer *w, uint64_t v)
{
	put(w, &v, 8);
}

static uint64_t pos(rtd_perf_data_writer *w)
{
	long p = ftell(w->f);
	return p < 0 ? 0 : (uint64_t)p;
}

int rtd_perf_data_writer_new(FILE *f, const struct rtd_perf_data_writer_opts *opts,
			     rtd_perf_data_writer **out)
{
	*out = NULL;
	struct rtd_perf_data_writer_opts o;
	int rc = f ? rtd_opts_copy(&o, sizeof(o), opts,
				   RTD_OPTS_END(rtd_perf_data_writer_opts, cmdline))
		   : -RTD_E_INVAL;
	if (rc)
		return rc;
	rtd_perf_data_writer *w = calloc(1, sizeof(*w));
	if (!w || (o.cmdline && !(w->cmdline = strdup(o.cmdline)))) {
		free(w);
		return -ENOMEM;
	}
	w->f = f;
	rtd_strmap_init(&w->dso_seen, W_MAX_DSOS);
	static const uint8_t zero[W_HEADER];
	put(w, zero, sizeof(zero)); /* the header, written last */
	*out = w;
	return w->err;
}

/* A file of tracefs's events/ folder ("sched:sched_switch" + "format",
 * or NULL + "header_page") into a new buffer; its length, or 0. */
static int tracefs_read(const char *event, const char *file, char **out)
{
	static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	const char *colon = event ? strchr(event, ':') : NULL;
	*out = NULL;
	if (event && (!colon || strchr(event, '/') || strstr(event, "..")))
		return 0;
	char *buf = malloc(PERF_MAX_FORMAT);
	for (size_t i = 0; buf && i < sizeof(roots) / sizeof(*roots); i++) {
		char path[PATH_MAX];
		if (event)
			snprintf(path, sizeof(path), "%s/events/%.*s/%s/%s", roots[i],
				 (int)(colon - event), event, colon + 1, file);
		else
			snprintf(path, sizeof(path), "%s/events/%s", roots[i], file);
		int n = rtd_read_small(path, buf, PERF_MAX_FORMAT);
		if (n > 0) {
			*out = buf;
			return n;
		}
	}
	free(buf);
	return 0;
}

int rtd_perf_data_writer_event(rtd_perf_data_writer *w, const struct perf_event_attr *attr,
			       const char *name, const uint64_t *ids, size_t nids)
{
	if (w->data_started)
		return -RTD_E_STATE;
	if (w->nev == RTD_PERF_DATA_WRITER_MAX_EVENTS)
		return -RTD_E_CAP;
	struct w_event *e = &w->ev[w->nev];
	e->attr = *attr;
	e->attr.size = sizeof(e->attr);
	e->name = strdup(name ? name : "");
	e->ids = nids ? malloc(nids * sizeof(*ids)) : NULL;
	if (!e->name || (nids && !e->ids)) {
		free(e->name);
		free(e->ids);
		return -ENOMEM;
	}
	if (nids)
		memcpy(e->ids, ids, nids * sizeof(*ids));
	e->nids = nids;
	e->format = NULL;
	if (attr->type == PERF_TYPE_TRACEPOINT)
		e->flen = tracefs_read(e->name, "format", &e->format);
	w->nev++;
	return 0;
}

/* The ids, then the attrs section, before the first record. */
static void start_data(rtd_perf_data_writer *w)
{
	if (w->data_started)
		return;
	w->data_started = true;
	uint64_t id_off[RTD_PERF_DATA_WRITER_MAX_EVENTS];
	for (size_t i = 0; i < w->nev; i++) {
		id_off[i] = pos(w);
		put(w, w->ev[i].ids, w->ev[i].nids * 8);
	}
	w->attrs_off = pos(w);
	for (size_t i = 0; i < w->nev; i++) {
		put(w, &w->ev[i].attr, sizeof(w->ev[i].attr));
		put_u64(w, id_off[i]);
		put_u64(w, w->ev[i].nids * 8);
	}
	w->data_off = pos(w);
}

int rtd_perf_data_writer_record(rtd_perf_data_writer *w, const void *rec, size_t len)
{
	uint16_t sz = 0;
	if (len >= 8)
		memcpy(&sz, (const uint8_t *)rec + 6, 2);
	if (len < 8 || sz != len)
		return -RTD_E_INVAL;
	start_data(w);
	put(w, rec, len);
	dso_of_record(w, rec, len);
	return w->err;
}

/* ---- build ids ------------------------------------------------------------ */

/* The GNU build id among ELF notes (namesz, descsz, type, name, desc; each
 * padded to @align), or 0. */
static size_t note_build_id(const uint8_t *p, size_t n, size_t align, uint8_t id[20])
{
	size_t at = 0;
	while (n - at >= 12) {
		uint32_t nsz, dsz, type;
		memcpy(&nsz, p + at, 4);
		memcpy(&dsz, p + at + 4, 4);
		memcpy(&type, p + at + 8, 4);
		if (nsz > 256 || dsz > 1024)
			return 0;
		size_t name = at + 12, desc = name + (nsz + align - 1) / align * align,
		       next = desc + (dsz + align - 1) / align * align;
		if (next > n)
			return 0;
		if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(p + name, "GNU", 4) && dsz &&
		    dsz <= 20) {
			memcpy(id, p + desc, dsz);
			return dsz;
		}
		at = next;
	}
	return 0;
}

/* The build id of a 64-bit ELF file, from its PT_NOTE segments, or 0. */
static size_t file_build_id(int fd, uint8_t id[20])
{
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
		return 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		uint8_t notes[4096];
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph) || ph.p_type != PT_NOTE)
			continue;
		ssize_t got = pread(fd, notes, ph.p_filesz < sizeof(notes) ? ph.p_filesz :
					     sizeof(notes), (off_t)ph.p_offset);
		size_t len = got > 0 ? note_build_id(notes, (size_t)got, ph.p_align == 8 ? 8 : 4, id)
				     : 0;
		if (len)
			return len;
	}
	return 0;
}

/* A file mapped executable by @pid (or the kernel): its build id kept once
 * per path, read through the process's root (a container's files). Files
 * without one (JIT maps, anonymous code, a deleted file) are left out, as
 * perf leaves them. */
static void dso_add(rtd_perf_data_writer *w, pid_t pid, const char *path, bool kernel)
{
	size_t plen = strlen(path);
	if (!plen || (path[0] != '/' && !kernel) || strstr(path, " (deleted)") ||
	    rtd_strmap_get(&w->dso_seen, path, plen, NULL) ||
	    rtd_strmap_put(&w->dso_seen, path, plen, (void *)1))
		return;
	struct w_dso d = {.kernel = kernel};
	if (kernel) {
		uint8_t notes[4096];
		int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
		ssize_t got = fd < 0 ? -1 : read(fd, notes, sizeof(notes));
		if (fd >= 0)
			close(fd);
		d.len = got > 0 ? (uint8_t)note_build_id(notes, (size_t)got, 4, d.id) : 0;
	} else {
		int fd = rtd_proc_open_in_root(pid, path);
		if (fd >= 0) {
			d.len = (uint8_t)file_build_id(fd, d.id);
			close(fd);
		}
	}
	if (!d.len || (w->ndso == w->cdso && w->ndso == W_MAX_DSOS))
		return;
	if (w->ndso == w->cdso) {
		size_t nc = w->cdso ? w->cdso * 2 : 64;
		void *nd = realloc(w->dso, nc * sizeof(*w->dso));
		if (!nd)
			return;
		w->dso = nd;
		w->cdso = nc;
	}
	if (!(d.path = strdup(path)))
		return;
	w->dso[w->ndso++] = d;
}

/* An MMAP or MMAP2 record of executable code: its file's build id. */
static void dso_of_record(rtd_perf_data_writer *w, const uint8_t *rec, size_t len)
{
	uint32_t type, pid, prot = PROT_EXEC;
	memcpy(&type, rec, 4);
	size_t at;
	if (type == PERF_RECORD_MMAP2) {
		at = 72;
		if (len >= at)
			memcpy(&prot, rec + 64, 4);
	} else if (type == PERF_RECORD_MMAP) {
		at = 40;
	} else {
		return;
	}
	if (len <= at || !(prot & PROT_EXEC))
		return;
	memcpy(&pid, rec + 8, 4);
	char path[PATH_MAX];
	size_t n = strnlen((const char *)rec + at, len - at);
	if (n == len - at || n >= sizeof(path))
		return;
	memcpy(path, rec + at, n + 1);
	dso_add(w, (pid_t)pid, path, false);
}

/* ---- synthesized records ------------------------------------------------ */

/* The sample_id trailer of the first event's layout (pid, tid, time 0). */
static size_t trailer(const rtd_perf_data_writer *w, uint32_t pid, uint32_t tid, uint8_t *out)
{
	const struct perf_event_attr *a = &w->ev[0].attr;
	if (!a->sample_id_all)
		return 0;
	uint64_t st = a->sample_type, id = w->ev[0].nids ? w->ev[0].ids[0] : 0, zero = 0;
	size_t n = 0;
	if (st & PERF_SAMPLE_TID) {
		memcpy(out + n, &pid, 4);
		memcpy(out + n + 4, &tid, 4);
		n += 8;
	}
	if (st & PERF_SAMPLE_TIME)
		memcpy(out + n, &zero, 8), n += 8;
	if (st & PERF_SAMPLE_ID)
		memcpy(out + n, &id, 8), n += 8;
	if (st & PERF_SAMPLE_STREAM_ID)
		memcpy(out + n, &id, 8), n += 8;
	if (st & PERF_SAMPLE_CPU)
		memcpy(out + n, &zero, 8), n += 8;
	if (st & PERF_SAMPLE_IDENTIFIER)
		memcpy(out + n, &id, 8), n += 8;
	return n;
}

/* A record: header, body (padded to 8 with its string), trailer. */
static void synth(rtd_perf_data_writer *w, uint32_t type, uint16_t misc, const void *body,
		  size_t blen, const char *str, uint32_t pid, uint32_t tid)
{
	uint8_t rec[RTD_PERF_MAX_RECORD];
	size_t slen = str ? strlen(str) + 1 : 0, n = 8;
	if (8 + blen + slen + 8 + 48 > sizeof(rec))
		return;
	memcpy(rec + n, body, blen);
	n += blen;
	if (str) {
		memcpy(rec + n, str, slen);
		n += slen;
		while (n % 8)
			rec[n++] = 0;
	}
	n += trailer(w, pid, tid, rec + n);
	uint16_t size = (uint16_t)n;
	memcpy(rec, &type, 4);
	memcpy(rec + 4, &misc, 2);
	memcpy(rec + 6, &size, 2);
	start_data(w);
	put(w, rec, n);
}

/* kallsyms' _text, the kernel's own (no module's), into *ctx. */
static int ksym_text(const struct rtd_ksym *k, void *ctx)
{
	if (k->mod || k->name_len != 5 || memcmp(k->name, "_text", 5))
		return 0;
	*(uint64_t *)ctx = k->addr;
	return 1;
}

/* The kernel's text as perf record names it: "[kernel.kallsyms]_text"
 * from _text (perf_event__synthesize_kernel_mmap()). */
static void synth_kernel(rtd_perf_data_writer *w)
{
	uint64_t text = 0;
	size_t bad;
	(void)rtd_kallsyms_read(NULL, ksym_text, &text, &bad);
	if (!text)
		return; /* kptr_restrict: perf report shows kernel frames as addresses */
	struct {
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
	} b = {UINT32_MAX, 0, text, ~0ull - text, text};
	synth(w, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, &b, sizeof(b),
	      "[kernel.kallsyms]_text", UINT32_MAX, 0);
	dso_add(w, -1, "[kernel.kallsyms]", true);
}

struct synth_maps {
	rtd_perf_data_writer *w;
	pid_t pid;
};

/* An executable mapping as the MMAP2 record perf's own synthesis gives */
static int on_synth_line(const struct rtd_maps_entry *e, void *ctx)
{
	struct synth_maps *c = ctx;
	if (!e->exec)
		return 0;
	char file[PATH_MAX + 64];
	if (e->path_len >= sizeof(file))
		return 0;
	memcpy(file, e->path, e->path_len);
	file[e->path_len] = 0;
	if (!*file)
		snprintf(file, sizeof(file), "//anon");
	uint32_t pid = (uint32_t)c->pid;
	const char *p = e->perms;
	struct {
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, ino_gen;
		uint32_t prot, flags;
	} b = {pid, pid, e->start, e->end - e->start, e->pgoff, e->dev_major, e->dev_minor, e->ino, 0,
	       (p[0] == 'r' ? 1u : 0) | (p[1] == 'w' ? 2u : 0) | 4u, p[3] == 's' ? 1u : 2u};
	synth(c->w, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, &b, sizeof(b), file, pid, pid);
	dso_add(c->w, c->pid, file, false);
	return 0;
}

struct synth_task {
	rtd_perf_data_writer *w;
	pid_t pid;
	char comm[64]; /* the process's */
};

/* A thread's COMM record, named as the thread is now (perf record's
 * synthesized threads are; a thread gone meanwhile keeps the process's). */
static int synth_thread(int tid, void *ctx)
{
	struct synth_task *t = ctx;
	char comm[64];
	if (rtd_proc_comm((int)t->pid, tid, comm, sizeof(comm)) < 0)
		snprintf(comm, sizeof(comm), "%s", t->comm);
	struct {
		uint32_t pid, tid;
	} b = {(uint32_t)t->pid, (uint32_t)tid};
	synth(t->w, PERF_RECORD_COMM, 0, &b, sizeof(b), comm, (uint32_t)t->pid,
	      (uint32_t)tid);
	return 0;
}

static void synth_process(rtd_perf_data_writer *w, pid_t pid)
{
	struct synth_task t = {w, pid, ""};
	if (rtd_proc_comm((int)pid, 0, t.comm, sizeof(t.comm)) < 0)
		return; /* gone */
	(void)rtd_proc_tasks((int)pid, synth_thread, &t);
	struct synth_maps c = {w, pid};
	size_t bad;
	rtd_proc_maps(pid, on_synth_line, &c, &bad); /* gone meanwhile: what was read */
}

int rtd_perf_data_writer_synthesize(rtd_perf_data_writer *w, pid_t pid)
{
	if (!w->nev)
		return -RTD_E_STATE;
	if (!w->kernel_done) {
		w->kernel_done = true;
		synth_kernel(w);
	}
	if (pid > 0)
		synth_process(w, pid);
	if (pid >= 0)
		return w->err;
	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	struct dirent *de;
	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			synth_process(w, (pid_t)atoi(de->d_name));
	closedir(d);
	return w->err;
}

/* ---- features and the header ------------------------------------------------ */

/* perf_header_string: u32 length (padded to NAME_ALIGN), the bytes. */
static void put_pstring(rtd_perf_data_writer *w, const char *s)
{
	static const uint8_t zero[W_NAME_ALIGN];
	size_t n = strlen(s) + 1, padded = (n + W_NAME_ALIGN - 1) / W_NAME_ALIGN * W_NAME_ALIGN;
	put_u32(w, (uint32_t)padded);
	put(w, s, n);
	put(w, zero, padded - n);
}

/* Whether two "sys:name" events are of one system. */
static bool same_system(const char *a, const char *b)
{
	size_t n = (size_t)(strchr(a, ':') - a);
	return !strncmp(a, b, n) && b[n] == ':';
}

/* HEADER_TRACING_DATA as perf's tracing_data_get() writes it
 * (tools/perf/util/trace-event-info.c): magic, version "0.6", endianness,
 * long and page size, tracefs's header_page and header_event, no ftrace
 * formats, the tracepoints' formats by system, and empty kallsyms, printk
 * formats and saved cmdlines (perf names kernel frames from the kernel
 * mapping, and threads from COMM records). perf script decodes a
 * tracepoint's fields with these; without them perf refuses the file
 * ("broken or missing trace data"). */
static void tracing_data(rtd_perf_data_writer *w)
{
	static const uint8_t magic[10] = {0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
	put(w, magic, sizeof(magic));
	put(w, "0.6", 4);
	uint8_t endian_long[2] = {0, (uint8_t)sizeof(long)};
	put(w, endian_long, 2);
	put_u32(w, (uint32_t)sysconf(_SC_PAGESIZE));
	static const char *const heads[2] = {"header_page", "header_event"};
	for (int i = 0; i < 2; i++) {
		char *text = NULL;
		int n = tracefs_read(NULL, heads[i], &text);
		put(w, heads[i], strlen(heads[i]) + 1);
		put_u64(w, (uint64_t)n);
		put(w, text, (size_t)n);
		free(text);
	}
	put_u32(w, 0); /* ftrace formats */
	/* the systems, each with its events' formats, in first-seen order */
	uint32_t nsys = 0;
	for (size_t i = 0; i < w->nev; i++) {
		bool first = w->ev[i].format != NULL;
		for (size_t k = 0; k < i && first; k++)
			first = !w->ev[k].format || !same_system(w->ev[k].name, w->ev[i].name);
		nsys += first;
	}
	put_u32(w, nsys);
	for (size_t i = 0; i < w->nev; i++) {
		bool first = w->ev[i].format != NULL;
		for (size_t k = 0; k < i && first; k++)
			first = !w->ev[k].format || !same_system(w->ev[k].name, w->ev[i].name);
		if (!first)
			continue;
		const char *name = w->ev[i].name;
		put(w, name, (size_t)(strchr(name, ':') - name));
		put(w, "", 1);
		uint32_t n = 0;
		for (size_t k = i; k < w->nev; k++)
			n += w->ev[k].format && same_system(name, w->ev[k].name);
		put_u32(w, n);
		for (size_t k = i; k < w->nev; k++) {
			if (!w->ev[k].format || !same_system(name, w->ev[k].name))
				continue;
			put_u64(w, (uint64_t)w->ev[k].flen);
			put(w, w->ev[k].format, (size_t)w->ev[k].flen);
		}
	}
	put_u32(w, 0); /* kallsyms */
	put_u32(w, 0); /* ftrace_printk */
	put_u64(w, 0); /* saved cmdlines */
}

static void feature(rtd_perf_data_writer *w, unsigned bit)
{
	struct utsname u;
	uname(&u);
	switch (bit) {
	case W_TRACING_DATA:
		tracing_data(w);
		break;
	case W_BUILD_ID:
		/* perf's write_buildid(): header, pid (-1: the host), the id
		 * in 20 bytes with its size, the path padded to NAME_ALIGN */
		for (size_t i = 0; i < w->ndso; i++) {
			const struct w_dso *d = &w->dso[i];
			size_t n = strlen(d->path) + 1,
			       padded = (n + W_NAME_ALIGN - 1) / W_NAME_ALIGN * W_NAME_ALIGN;
			if (36 + padded > UINT16_MAX)
				continue;
			uint8_t b[36] = {0};
			uint32_t type = 0;
			uint16_t misc = (uint16_t)(W_BUILD_ID_SIZE | (d->kernel ? PERF_RECORD_MISC_KERNEL
										 : PERF_RECORD_MISC_USER)),
				 size = (uint16_t)(36 + padded);
			int32_t pid = -1;
			memcpy(b, &type, 4);
			memcpy(b + 4, &misc, 2);
			memcpy(b + 6, &size, 2);
			memcpy(b + 8, &pid, 4);
			memcpy(b + 12, d->id, d->len);
			b[32] = d->len;
			put(w, b, sizeof(b));
			static const uint8_t zero[W_NAME_ALIGN];
			put(w, d->path, n);
			put(w, zero, padded - n);
		}
		break;
	case W_HOSTNAME: put_pstring(w, u.nodename); break;
	case W_OSRELEASE: put_pstring(w, u.release); break;
	case W_VERSION: put_pstring(w, "rtdiag"); break;
	case W_ARCH: put_pstring(w, u.machine); break;
	case W_NRCPUS: {
		long n = sysconf(_SC_NPROCESSORS_CONF), on = sysconf(_SC_NPROCESSORS_ONLN);
		put_u32(w, (uint32_t)(on > 0 ? on : 1)); /* online */
		put_u32(w, (uint32_t)(n > 0 ? n : 1));   /* available */
		break;
	}
	case W_CMDLINE:
		put_u32(w, 1);
		put_pstring(w, w->cmdline ? w->cmdline : "rtdiag");
		break;
	case W_EVENT_DESC:
		put_u32(w, (uint32_t)w->nev);
		put_u32(w, (uint32_t)sizeof(struct perf_event_attr));
		for (size_t i = 0; i < w->nev; i++) {
			put(w, &w->ev[i].attr, sizeof(w->ev[i].attr));
			put_u32(w, (uint32_t)w->ev[i].nids);
			put_pstring(w, w->ev[i].name);
			put(w, w->ev[i].ids, w->ev[i].nids * 8);
		}
		break;
	}
}

int rtd_perf_data_writer_finish(rtd_perf_data_writer *w)
{
	if (!w)
		return 0;
	start_data(w);
	uint64_t data_end = pos(w);
	/* in bit order; tracing data only for tracepoints (perf's rule) */
	static const unsigned feats[] = {W_TRACING_DATA, W_BUILD_ID, W_HOSTNAME, W_OSRELEASE,
					 W_VERSION, W_ARCH, W_NRCPUS, W_CMDLINE, W_EVENT_DESC};
	enum { NFMAX = sizeof(feats) / sizeof(*feats) };
	unsigned skip = 1;
	for (size_t i = 0; i < w->nev && skip; i++)
		skip = !w->ev[i].format;
	const unsigned *fl = feats + skip, nf = NFMAX - skip;
	/* the table first (its size is known), then each feature's data */
	uint64_t table = data_end, secs[NFMAX][2] = {{0}};
	static const uint8_t zero[NFMAX * 16];
	put(w, zero, nf * 16);
	for (unsigned i = 0; i < nf; i++) {
		secs[i][0] = pos(w);
		feature(w, fl[i]);
		secs[i][1] = pos(w) - secs[i][0];
	}
	uint64_t bits[4] = {0};
	for (unsigned i = 0; i < nf; i++)
		bits[fl[i] / 64] |= 1ull << (fl[i] % 64);
	if (!w->err && fseek(w->f, (long)table, SEEK_SET))
		w->err = -errno;
	put(w, secs, nf * 16);
	if (!w->err && fseek(w->f, 0, SEEK_SET))
		w->err = -errno;
	const uint64_t attr_size = sizeof(struct perf_event_attr) + 16;
	uint64_t h[13] = {0x32454c4946524550ull /* "PERFILE2" */, W_HEADER, attr_size,
			  w->attrs_off, w->nev * attr_size, w->data_off, data_end - w->data_off,
			  0, 0, bits[0], bits[1], bits[2], bits[3]};
	put(w, h, sizeof(h));
	if (!w->err && (fseek(w->f, 0, SEEK_END) || fflush(w->f)))
		w->err = -errno;
	int err = w->err;
	for (size_t i = 0; i < w->nev; i++) {
		free(w->ev[i].name);
		free(w->ev[i].ids);
		free(w->ev[i].format);
	}
	for (size_t i = 0; i < w->ndso; i++)
		free(w->dso[i].path);
	free(w->dso);
	rtd_strmap_free(&w->dso_seen);
	free(w->cmdline);
	free(w);
	return err;
}
