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
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "perf/internal.h"
#include "rtdiag/perf_data.h"

#define W_HEADER 104u
#define W_NAME_ALIGN 64u /* perf pads header strings so */

enum { W_HOSTNAME = 3, W_OSRELEASE = 4, W_VERSION = 5, W_ARCH = 6, W_NRCPUS = 7,
       W_CMDLINE = 11, W_EVENT_DESC = 12 };

struct w_event {
	struct perf_event_attr attr;
	char *name;
	uint64_t *ids;
	size_t nids;
};

struct rtd_perf_data_writer {
	FILE *f;
	int err;
	char *cmdline;
	struct w_event ev[RTD_PERF_DATA_WRITER_MAX_EVENTS];
	size_t nev;
	bool data_started, kernel_done;
	uint64_t attrs_off, data_off;
};

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
	static const uint8_t zero[W_HEADER];
	put(w, zero, sizeof(zero)); /* the header, written last */
	*out = w;
	return w->err;
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
	return w->err;
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

/* The kernel's text as perf record names it: "[kernel.kallsyms]_text"
 * from _text (perf_event__synthesize_kernel_mmap()). */
static void synth_kernel(rtd_perf_data_writer *w)
{
	FILE *k = fopen("/proc/kallsyms", "r");
	char line[512];
	uint64_t text = 0;
	while (k && fgets(line, sizeof(line), k)) {
		char name[256], type;
		unsigned long long a;
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && !strcmp(name, "_text")) {
			text = a;
			break;
		}
	}
	if (k)
		fclose(k);
	if (!text)
		return; /* kptr_restrict: perf report shows kernel frames as addresses */
	struct {
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
	} b = {UINT32_MAX, 0, text, ~0ull - text, text};
	synth(w, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, &b, sizeof(b),
	      "[kernel.kallsyms]_text", UINT32_MAX, 0);
}

static void synth_process(rtd_perf_data_writer *w, pid_t pid)
{
	char path[64], comm[64] = "";
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return; /* gone */
	if (fgets(comm, sizeof(comm), f))
		comm[strcspn(comm, "\n")] = 0;
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		uint32_t tid = (uint32_t)atoi(de->d_name);
		struct {
			uint32_t pid, tid;
		} b = {(uint32_t)pid, tid};
		synth(w, PERF_RECORD_COMM, 0, &b, sizeof(b), comm, (uint32_t)pid, tid);
	}
	if (d)
		closedir(d);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	char line[4096 + 128];
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj,
			   &min, &ino, &at) < 7 || perms[2] != 'x')
			continue;
		char *file = line + at;
		file[strcspn(file, "\n")] = 0;
		if (!*file)
			file = "//anon";
		struct {
			uint32_t pid, tid;
			uint64_t start, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_gen;
			uint32_t prot, flags;
		} b = {(uint32_t)pid, (uint32_t)pid, start, end - start, off, maj, min, ino, 0,
		       (perms[0] == 'r' ? 1u : 0) | (perms[1] == 'w' ? 2u : 0) | 4u,
		       perms[3] == 's' ? 1u : 2u};
		synth(w, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, &b, sizeof(b), file,
		      (uint32_t)pid, (uint32_t)pid);
	}
	if (f)
		fclose(f);
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

static void feature(rtd_perf_data_writer *w, unsigned bit)
{
	struct utsname u;
	uname(&u);
	switch (bit) {
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
	static const unsigned feats[] = {W_HOSTNAME, W_OSRELEASE, W_VERSION, W_ARCH,
					 W_NRCPUS, W_CMDLINE, W_EVENT_DESC};
	enum { NF = sizeof(feats) / sizeof(*feats) };
	/* the table first (its size is known), then each feature's data */
	uint64_t table = data_end, secs[NF][2] = {{0}};
	static const uint8_t zero[NF * 16];
	put(w, zero, sizeof(zero));
	for (unsigned i = 0; i < NF; i++) {
		secs[i][0] = pos(w);
		feature(w, feats[i]);
		secs[i][1] = pos(w) - secs[i][0];
	}
	uint64_t bits[4] = {0};
	for (unsigned i = 0; i < NF; i++)
		bits[feats[i] / 64] |= 1ull << (feats[i] % 64);
	if (!w->err && fseek(w->f, (long)table, SEEK_SET))
		w->err = -errno;
	put(w, secs, sizeof(secs));
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
	}
	free(w->cmdline);
	free(w);
	return err;
}
