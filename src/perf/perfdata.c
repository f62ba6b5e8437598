/* SPDX-License-Identifier: MIT */
/*
 * perfdata.c - perf.data as Linux perf writes it, decoded as a stream
 * (rtdiag/perf_data.h).
 *
 * Layout (tools/perf/Documentation/perf.data-file-format.txt): a 104-byte
 * header (magic "PERFILE2", sizes, the attrs, data and event_types
 * sections, a 256-bit feature bitmap); the attrs section, one
 * perf_event_attr and a section of ids per event; the data section, the
 * kernel's records as perf copied them from its rings, with perf's own
 * records (FINISHED_ROUND, COMPRESSED, ...) among them; after it, one
 * {offset, size} per feature bit set, in bit order, each pointing at that
 * feature's data.
 *
 * Order: perf writes each ring's records in turn, so the data section is
 * in time order only per ring. Between two FINISHED_ROUND records every
 * ring was read once; a record of the next round cannot be older than
 * the newest of the round before last. So at each FINISHED_ROUND the
 * records queued up to the previous round's newest time are sorted and
 * given out (perf's ordered_events, OE_FLUSH__ROUND), the rest wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <zstd.h>

#include "common/errmsg.h"
#include "common/input.h"
#include "common/map.h"
#include "common/rd.h"
#include "perf/internal.h"
#include "rtdiag/perf_data.h"

#define PD_MAGIC 0x32454c4946524550ull    /* "PERFILE2" little-endian */
#define PD_MAGIC_SWAP 0x50455246494c4532ull /* written big-endian */
#define PD_HEADER_SIZE 104u
#define PD_PIPE_HEADER_SIZE 16u
#define PD_CHUNK (1u << 20)          /* data read at a time */
#define PD_MAX_STRING 4096u          /* one feature string */
#define PD_ATTR_VER0 64u             /* PERF_ATTR_SIZE_VER0 */
#define PD_MAX_ATTR_SIZE 4096u

/* Feature bits (tools/perf/util/header.h). */
enum {
	FEAT_TRACING_DATA = 1,
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_VERSION = 5,
	FEAT_ARCH = 6,
	FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
	FEAT_CLOCKID = 23,
	FEAT_COMPRESSED = 27,
	FEAT_CLOCK_DATA = 29,
	FEAT_BITS = 256,
};

#define PD_MISC_BUILD_ID_SIZE (1u << 15)
#define PD_USER_RECORD 64u /* perf's own record types start here */
/* perf's own records a pipe-mode file is made of (tools/perf/util/event.h) */
enum {
	PD_REC_ATTR = 64,
	PD_REC_TRACING_DATA = 66, /* its data follows the record */
	PD_REC_AUXTRACE = 71,     /* the same */
	PD_REC_EVENT_UPDATE = 78,
	PD_REC_FEATURE = 80,
	PD_REC_FINISHED_INIT = 82,
};
#define PD_EVENT_UPDATE_NAME 2u

struct pd_event {
	struct rtd_perf_data_event pub;
	struct perf_layout lay;
	char *name;
	uint64_t *ids;
	struct rtd_perf_field *fields;
};

/* One queued record: its time, arrival, and where its bytes are. */
struct qent {
	uint64_t time;
	uint64_t seq;
	uint64_t fileoff;
	size_t off;
	uint32_t len;
	int ev;
};

struct rtd_perf_data {
	rtd_input in;
	unsigned flags;
	struct rtd_perf_data_info info;
	char *strs[5]; /* hostname, os_release, version, arch, cmdline */
	struct pd_event *ev;
	size_t nev;
	rtd_map id2ev; /* id -> event index + 1 */
	uint64_t id_st; /* the sample_type that places the id */
	int id_all;
	struct rtd_perf_data_build_id *bids;
	size_t nbids, bids_cap;

	/* the data section */
	uint64_t data_end;
	uint64_t next_read;  /* file offset of the next chunk */
	uint8_t *chunk;
	size_t clen, cpos;
	uint64_t chunk_off;  /* file offset of chunk[0] */
	bool data_done;
	bool pipe;           /* perf record -o -: attrs and features are records */
	const uint8_t *extra; /* the bytes after the last TRACING_DATA record */
	size_t extra_len;

	/* inflated PERF_RECORD_COMPRESSED */
	ZSTD_DStream *zd;
	uint8_t *zbuf;
	size_t zlen, zpos, zcap;
	uint64_t zoff;

	/* the queue of one or two rounds */
	uint8_t *qbuf;
	size_t qlen, qcap;
	struct qent *q;
	size_t nq, qn_cap;
	size_t nready, iready;
	uint64_t seq, max_time, prev_round_max;
	bool ended;
	int pending_err; /* found while reading: given out after the queue */

	struct rtd_perf_sample s;
	struct rtd_perf_data_stats st;
	int err;
	uint64_t err_off;
	char msg[256];
};

static int fail(rtd_perf_data *d, int err, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(rtd_perf_data *d, int err, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf(d->msg, sizeof(d->msg), err, fmt, ap);
	va_end(ap);
	d->err_off = off;
	return err;
}

/* Read exactly @n bytes at @off: -RTD_E_TRUNCATED when the input ends. */
static int read_at(rtd_perf_data *d, void *buf, size_t n, uint64_t off, const char *what)
{
	int64_t r = rtd_input_pread(&d->in, buf, n, off);
	if (r < 0)
		return fail(d, (int)r, off, "reading %s: %s", what, strerror((int)-r));
	if ((size_t)r < n)
		return fail(d, -RTD_E_TRUNCATED, off + (uint64_t)r, "%s: the file ends after "
			    "%lld of its %zu bytes", what, (long long)r, n);
	return 0;
}

/* ---- events --------------------------------------------------------------- */

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses",
	"branch-instructions", "branch-misses", "bus-cycles",
	"stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles",
};
static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches",
	"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
	"emulation-faults", "dummy", "bpf-output", "cgroup-switches",
};

static void set_name(struct pd_event *e, char *name)
{
	free(e->name);
	e->name = name;
	e->pub.name = name ? name : "";
}

/* A name from the type and config, for files without event descriptions. */
static int default_name(struct pd_event *e)
{
	char buf[64];
	uint64_t c = e->pub.config;
	if (e->pub.type == PERF_TYPE_HARDWARE && c < sizeof(hw_names) / sizeof(*hw_names))
		snprintf(buf, sizeof(buf), "%s", hw_names[c]);
	else if (e->pub.type == PERF_TYPE_SOFTWARE && c < sizeof(sw_names) / sizeof(*sw_names))
		snprintf(buf, sizeof(buf), "%s", sw_names[c]);
	else
		snprintf(buf, sizeof(buf), "type%u/config 0x%llx", e->pub.type,
			 (unsigned long long)c);
	char *n = strdup(buf);
	if (!n)
		return -ENOMEM;
	set_name(e, n);
	return 0;
}

static unsigned popcount64(uint64_t x)
{
	return (unsigned)__builtin_popcountll(x);
}

/* An event's layout and default name from its perf_event_attr (@an bytes,
 * of any version: what it lacks reads zero). */
static int event_from_attr(struct pd_event *e, const uint8_t *attr, size_t an)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	memcpy(&a, attr, an < sizeof(a) ? an : sizeof(a));
	e->pub.type = a.type;
	e->pub.config = a.config;
	e->pub.sample_type = a.sample_type;
	e->pub.sample_regs_user = a.sample_regs_user;
	e->pub.sample_period = a.sample_period;
	e->pub.freq = a.freq;
	e->lay.sample_type = a.sample_type;
	e->lay.read_format = a.read_format;
	e->lay.branch_sample_type = a.branch_sample_type;
	e->lay.regs_user_nr = popcount64(a.sample_regs_user);
	e->lay.regs_intr_nr = popcount64(a.sample_regs_intr);
	e->lay.sample_id_all = a.sample_id_all;
	return default_name(e);
}

static int read_attrs(rtd_perf_data *d, uint64_t attr_size, uint64_t off, uint64_t size)
{
	if (attr_size < PD_ATTR_VER0 + 16 || attr_size > PD_MAX_ATTR_SIZE)
		return fail(d, -RTD_E_FORMAT, 16, "header: attr_size %llu (want %u to %u)",
			    (unsigned long long)attr_size, PD_ATTR_VER0 + 16, PD_MAX_ATTR_SIZE);
	uint64_t n = size / attr_size;
	if (size % attr_size || n == 0)
		return fail(d, -RTD_E_FORMAT, 24, "header: the attrs section (%llu bytes) "
			    "is not a whole number of %llu-byte attributes",
			    (unsigned long long)size, (unsigned long long)attr_size);
	if (n > RTD_PERF_DATA_MAX_ATTRS)
		return fail(d, -RTD_E_CAP, 24, "header: %llu events (cap %u)",
			    (unsigned long long)n, RTD_PERF_DATA_MAX_ATTRS);
	d->ev = calloc((size_t)n, sizeof(*d->ev));
	uint8_t *buf = malloc((size_t)attr_size);
	if (!d->ev || !buf) {
		free(buf);
		return -ENOMEM;
	}
	d->nev = (size_t)n;
	uint64_t nids_all = 0;
	int rc = 0;
	for (size_t i = 0; i < d->nev && !rc; i++) {
		struct pd_event *e = &d->ev[i];
		uint64_t at = off + i * attr_size;
		if ((rc = read_at(d, buf, (size_t)attr_size, at, "an attribute")))
			break;
		size_t an = (size_t)attr_size - 16;
		uint64_t ids_off, ids_size;
		memcpy(&ids_off, buf + attr_size - 16, 8);
		memcpy(&ids_size, buf + attr_size - 8, 8);
		if ((rc = event_from_attr(e, buf, an)))
			break;
		if (ids_size % 8 || ids_size / 8 > RTD_PERF_DATA_MAX_IDS - nids_all) {
			rc = fail(d, ids_size % 8 ? -RTD_E_FORMAT : -RTD_E_CAP, at + an,
				  "event %zu: %llu bytes of ids (a multiple of 8, at most "
				  "%u ids in all)", i, (unsigned long long)ids_size,
				  RTD_PERF_DATA_MAX_IDS);
			break;
		}
		e->pub.nids = (uint32_t)(ids_size / 8);
		nids_all += e->pub.nids;
		if (e->pub.nids) {
			e->ids = malloc((size_t)ids_size);
			if (!e->ids) {
				rc = -ENOMEM;
				break;
			}
			if ((rc = read_at(d, e->ids, (size_t)ids_size, ids_off, "an event's ids")))
				break;
		}
		e->pub.ids = e->ids;
		for (uint32_t k = 0; k < e->pub.nids && !rc; k++)
			rc = rtd_map_put(&d->id2ev, e->ids[k], (void *)(uintptr_t)(i + 1), NULL);
	}
	free(buf);
	if (rc)
		return rc;
	d->id_st = d->ev[0].lay.sample_type;
	d->id_all = d->ev[0].lay.sample_id_all;
	return 0;
}

/* ---- feature sections ------------------------------------------------------- */

/* perf_header_string: u32 length (padding included), then the bytes. */
static char *rd_pstring(rtd_rd *r)
{
	uint32_t len = rd_u32le(r);
	const uint8_t *p;
	if (len > PD_MAX_STRING) {
		rd_fail(r, -RTD_E_CAP);
		return NULL;
	}
	if (!rd_bytes(r, len, &p))
		return NULL;
	char *s = strndup((const char *)p, len);
	if (!s)
		rd_fail(r, -ENOMEM);
	return s;
}

static int feat_cmdline(rtd_perf_data *d, rtd_rd *r)
{
	uint32_t n = rd_u32le(r);
	char *line = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&line, &len);
	if (!m)
		return -ENOMEM;
	for (uint32_t i = 0; i < n && rd_ok(r); i++) {
		char *w = rd_pstring(r);
		if (w)
			fprintf(m, "%s%s", i ? " " : "", w);
		free(w);
	}
	fclose(m);
	free(d->strs[4]); /* a pipe may say it twice */
	d->strs[4] = line;
	d->info.cmdline = line;
	return r->err;
}

static int feat_event_desc(rtd_perf_data *d, rtd_rd *r)
{
	uint32_t n = rd_u32le(r), asz = rd_u32le(r);
	if (asz > PD_MAX_ATTR_SIZE)
		return rd_fail(r, -RTD_E_CAP), r->err;
	for (uint32_t i = 0; i < n && rd_ok(r); i++) {
		rd_skip(r, asz);
		uint32_t nids = rd_u32le(r);
		char *name = rd_pstring(r);
		uint64_t id0 = 0;
		if (nids > rd_left(r) / 8)
			rd_fail(r, -RTD_E_TRUNCATED);
		else if (nids) {
			id0 = rd_u64le(r);
			rd_skip(r, (size_t)(nids - 1) * 8);
		}
		void *v;
		size_t at = i;
		/* by its ids; by place when it has none */
		if (nids && rtd_map_get(&d->id2ev, id0, &v))
			at = (uintptr_t)v - 1;
		if (name && rd_ok(r) && at < d->nev)
			set_name(&d->ev[at], name);
		else
			free(name);
	}
	return r->err;
}

static int feat_build_id(rtd_perf_data *d, rtd_rd *r)
{
	while (rd_ok(r) && rd_left(r) >= 8) {
		rd_u32le(r);
		uint16_t misc = rd_u16le(r), size = rd_u16le(r);
		rtd_rd b;
		if (size < 8 + 4 + 24 || !rd_sub(r, size - 8u, &b))
			return rd_fail(r, -RTD_E_FORMAT), r->err;
		if (d->nbids >= RTD_PERF_DATA_MAX_BUILD_IDS)
			return rd_fail(r, -RTD_E_CAP), r->err;
		if (d->nbids == d->bids_cap) {
			size_t nc = d->bids_cap ? d->bids_cap * 2 : 64;
			void *nb = realloc(d->bids, nc * sizeof(*d->bids));
			if (!nb)
				return -ENOMEM;
			d->bids = nb;
			d->bids_cap = nc;
		}
		struct rtd_perf_data_build_id *e = &d->bids[d->nbids];
		memset(e, 0, sizeof(*e));
		e->pid = rd_i32le(&b);
		rd_copy(&b, e->id, 20);
		uint8_t len = rd_u8(&b);
		rd_skip(&b, 3);
		e->len = (misc & PD_MISC_BUILD_ID_SIZE) && len <= 20 ? len : 20;
		size_t left = rd_left(&b);
		const uint8_t *p;
		rd_bytes(&b, left, &p);
		e->path = strndup((const char *)p, left);
		if (!e->path)
			return -ENOMEM;
		d->nbids++;
	}
	return r->err;
}

/* Tracing data (tools/perf/util/trace-event-read.c): the formats of the
 * recorded tracepoints, named "sys:name", with their fields. */
static int tp_event(rtd_perf_data *d, struct tep_handle *tep, const char *sys,
		    const uint8_t *fmt, size_t len)
{
	int id;
	struct rtd_perf_field *f;
	unsigned nall, ncommon;
	if (perf_fields_from_format(tep, sys, (const char *)fmt, len, &id, &f, &nall, &ncommon))
		return 0; /* a format libtraceevent cannot parse: its fields stay unknown */
	const char *nm = memmem(fmt, len, "name: ", 6);
	for (size_t i = 0; i < d->nev; i++) {
		struct pd_event *e = &d->ev[i];
		if (e->pub.type != PERF_TYPE_TRACEPOINT || e->pub.config != (uint64_t)id ||
		    e->fields)
			continue;
		e->fields = f;
		e->pub.fields = f;
		e->pub.nfields = nall;
		f = NULL;
		if (nm && !strchr(e->pub.name, ':')) {
			const char *s = nm + 6, *end = (const char *)fmt + len;
			size_t n = 0;
			while (s + n < end && s[n] != '\n' && n < 128)
				n++;
			char *full = NULL;
			if (asprintf(&full, "%s:%.*s", sys, (int)n, s) < 0)
				return -ENOMEM;
			set_name(e, full);
		}
		break;
	}
	perf_fields_free(f, f ? nall : 0);
	return 0;
}

static int feat_tracing(rtd_perf_data *d, rtd_rd *r)
{
	static const uint8_t magic[10] = {0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
	const uint8_t *p;
	if (!rd_bytes(r, 10, &p) || memcmp(p, magic, 10))
		return rd_fail(r, -RTD_E_FORMAT), r->err;
	while (rd_ok(r) && rd_u8(r))
		; /* the version, "0.6" */
	uint8_t big = rd_u8(r);
	rd_u8(r);       /* long size */
	rd_u32le(r);    /* page size */
	if (big)
		return rd_fail(r, -RTD_E_UNSUPPORTED), r->err;
	static const char *const heads[2] = {"header_page", "header_event"};
	for (int i = 0; i < 2 && rd_ok(r); i++) {
		size_t hl = strlen(heads[i]) + 1;
		if (!rd_bytes(r, hl, &p) || memcmp(p, heads[i], hl))
			return rd_fail(r, -RTD_E_FORMAT), r->err;
		uint64_t n = rd_u64le(r);
		if (n > rd_left(r))
			return rd_fail(r, -RTD_E_TRUNCATED), r->err;
		rd_skip(r, (size_t)n);
	}
	uint32_t nftrace = rd_u32le(r);
	for (uint32_t i = 0; i < nftrace && rd_ok(r); i++) {
		uint64_t n = rd_u64le(r);
		if (n > rd_left(r))
			return rd_fail(r, -RTD_E_TRUNCATED), r->err;
		rd_skip(r, (size_t)n);
	}
	struct tep_handle *tep = tep_alloc();
	if (!tep)
		return -ENOMEM;
	int rc = 0;
	uint32_t nsys = rd_u32le(r);
	for (uint32_t i = 0; i < nsys && rd_ok(r) && !rc; i++) {
		const uint8_t *sys = r->p;
		while (rd_ok(r) && rd_u8(r))
			;
		if (!rd_ok(r))
			break;
		char sysname[128];
		snprintf(sysname, sizeof(sysname), "%.*s", (int)(r->p - sys - 1), (const char *)sys);
		uint32_t nev = rd_u32le(r);
		for (uint32_t k = 0; k < nev && rd_ok(r) && !rc; k++) {
			uint64_t n = rd_u64le(r);
			if (n > rd_left(r) || n > PERF_MAX_FORMAT) {
				rd_fail(r, -RTD_E_TRUNCATED);
				break;
			}
			rd_bytes(r, (size_t)n, &p);
			rc = tp_event(d, tep, sysname, p, (size_t)n);
		}
	}
	tep_free(tep);
	/* kallsyms, printk formats and saved cmdlines follow: not needed */
	return rc ? rc : r->err;
}

static int feature_parse(rtd_perf_data *d, unsigned bit, const char *what, const uint8_t *buf,
			 size_t size, uint64_t off);

static const char *const fname[] = {
	[FEAT_TRACING_DATA] = "tracing data", [FEAT_BUILD_ID] = "build ids",
	[FEAT_HOSTNAME] = "hostname", [FEAT_OSRELEASE] = "os release",
	[FEAT_VERSION] = "perf version", [FEAT_ARCH] = "arch",
	[FEAT_CMDLINE] = "cmdline", [FEAT_EVENT_DESC] = "event descriptions",
	[FEAT_CLOCKID] = "clockid", [FEAT_COMPRESSED] = "compression",
	[FEAT_CLOCK_DATA] = "clock data",
};

static int feature(rtd_perf_data *d, unsigned bit, uint64_t off, uint64_t size)
{
	if (bit >= sizeof(fname) / sizeof(*fname) || !fname[bit])
		return 0; /* topology, caches, ...: not needed */
	if (size > RTD_PERF_DATA_MAX_FEATURE)
		return fail(d, -RTD_E_CAP, off, "feature section '%s': %llu bytes (cap %u)",
			    fname[bit], (unsigned long long)size, RTD_PERF_DATA_MAX_FEATURE);
	uint8_t *buf = malloc(size ? (size_t)size : 1);
	if (!buf)
		return -ENOMEM;
	int rc = read_at(d, buf, (size_t)size, off, fname[bit]);
	if (!rc)
		rc = feature_parse(d, bit, fname[bit], buf, (size_t)size, off);
	free(buf);
	return rc;
}

/* A feature's data (@size bytes at @buf, from file offset @off). */
static int feature_parse(rtd_perf_data *d, unsigned bit, const char *what, const uint8_t *buf,
			 size_t size, uint64_t off)
{
	rtd_rd r;
	rd_init(&r, buf, size);
	int rc = 0;
	{
		switch (bit) {
		case FEAT_HOSTNAME:
		case FEAT_OSRELEASE:
		case FEAT_VERSION:
		case FEAT_ARCH: {
			char *s = rd_pstring(&r);
			unsigned k = bit - FEAT_HOSTNAME;
			free(d->strs[k]);
			d->strs[k] = s;
			const char **dst[4] = {&d->info.hostname, &d->info.os_release,
					       &d->info.version, &d->info.arch};
			*dst[k] = s;
			break;
		}
		case FEAT_CMDLINE: feat_cmdline(d, &r); break;
		case FEAT_EVENT_DESC: feat_event_desc(d, &r); break;
		case FEAT_BUILD_ID: feat_build_id(d, &r); break;
		case FEAT_TRACING_DATA:
			if (!(d->flags & RTD_PERF_DATA_NO_FORMATS))
				rc = feat_tracing(d, &r);
			break;
		case FEAT_CLOCKID: d->info.clockid = (int64_t)rd_u64le(&r); break;
		case FEAT_CLOCK_DATA:
			if (rd_u32le(&r) >= 1) {
				uint32_t cid = rd_u32le(&r);
				d->info.clock_wall_ns = rd_u64le(&r);
				d->info.clock_ref_ns = rd_u64le(&r);
				if (d->info.clockid < 0)
					d->info.clockid = cid;
			}
			break;
		case FEAT_COMPRESSED:
			rd_u32le(&r);
			d->info.compressed = rd_u32le(&r) == 1; /* zstd */
			break;
		}
		if (!rc && r.err)
			rc = fail(d, r.err, off + rd_off(&r), "feature section '%s' is damaged "
				  "at byte %zu of %llu", what, rd_off(&r),
				  (unsigned long long)size);
		else if (rc && !d->msg[0])
			fail(d, rc, off + rd_off(&r), "feature section '%s': %s", what,
			     rtd_strerror(rc));
	}
	return rc;
}

static int read_features(rtd_perf_data *d, const uint64_t bits[4])
{
	unsigned nset = 0;
	for (unsigned b = 0; b < FEAT_BITS; b++)
		nset += !!(bits[b / 64] & (1ull << (b % 64)));
	if (!nset)
		return 0;
	uint64_t at = d->info.data_offset + d->info.data_size;
	uint64_t *secs = malloc(nset * 16u);
	if (!secs)
		return -ENOMEM;
	int rc = read_at(d, secs, nset * 16u, at, "the feature sections' table");
	unsigned k = 0;
	for (unsigned b = 0; b < FEAT_BITS && !rc; b++) {
		if (!(bits[b / 64] & (1ull << (b % 64))))
			continue;
		rc = feature(d, b, secs[2 * k], secs[2 * k + 1]);
		k++;
	}
	free(secs);
	return rc;
}

/* ---- open ----------------------------------------------------------------- */

static int raw_next(rtd_perf_data *d, const uint8_t **rec, size_t *len, uint64_t *off);

/* A pipe-mode event: PERF_RECORD_HEADER_ATTR (the attr, then its ids). */
static int pipe_attr(rtd_perf_data *d, const uint8_t *rec, size_t len, uint64_t off)
{
	uint32_t asz = 0;
	if (len >= 16)
		memcpy(&asz, rec + 8 + 4, 4);
	if (asz < PD_ATTR_VER0 || asz > len - 8 || (len - 8 - asz) % 8)
		return fail(d, -RTD_E_FORMAT, off, "attribute record at offset %llu: attr "
			    "size %u in %zu bytes", (unsigned long long)off, asz, len);
	if (d->nev == RTD_PERF_DATA_MAX_ATTRS)
		return fail(d, -RTD_E_CAP, off, "more than %u events", RTD_PERF_DATA_MAX_ATTRS);
	size_t nids = (len - 8 - asz) / 8;
	if (nids > RTD_PERF_DATA_MAX_IDS - d->id2ev.count)
		return fail(d, -RTD_E_CAP, off, "more than %u ids", RTD_PERF_DATA_MAX_IDS);
	void *nev = realloc(d->ev, (d->nev + 1) * sizeof(*d->ev));
	if (!nev)
		return -ENOMEM;
	d->ev = nev;
	struct pd_event *e = &d->ev[d->nev];
	memset(e, 0, sizeof(*e));
	d->nev++;
	int rc = event_from_attr(e, rec + 8, asz);
	if (rc)
		return rc;
	if (nids && !(e->ids = malloc(nids * 8)))
		return -ENOMEM;
	if (nids)
		memcpy(e->ids, rec + 8 + asz, nids * 8);
	e->pub.ids = e->ids;
	e->pub.nids = (uint32_t)nids;
	for (size_t k = 0; k < nids && !rc; k++)
		rc = rtd_map_put(&d->id2ev, e->ids[k], (void *)(uintptr_t)d->nev, NULL);
	return rc;
}

/* A pipe-mode event's name: PERF_RECORD_EVENT_UPDATE of type NAME. */
static int pipe_event_name(rtd_perf_data *d, const uint8_t *rec, size_t len)
{
	uint64_t type, id;
	void *v;
	if (len < 25)
		return 0;
	memcpy(&type, rec + 8, 8);
	memcpy(&id, rec + 16, 8);
	if (type != PD_EVENT_UPDATE_NAME || !rtd_map_get(&d->id2ev, id, &v))
		return 0;
	char *name = strndup((const char *)rec + 24, len - 24);
	if (!name)
		return -ENOMEM;
	set_name(&d->ev[(uintptr_t)v - 1], name);
	return 0;
}

/* A pipe-mode file (perf record -o -): the 16-byte header, then records
 * only. Its attributes, event names, features and tracepoint formats are
 * records before the first of the kernel's (perf's synthesize_*() order;
 * FINISHED_INIT ends them in perf 6.x); they are read here, the data
 * after them as a file's data section. */
static int open_pipe(rtd_perf_data *d)
{
	d->pipe = true;
	d->info.clockid = -1;
	d->info.data_offset = PD_PIPE_HEADER_SIZE;
	d->next_read = PD_PIPE_HEADER_SIZE;
	d->data_end = UINT64_MAX;
	if (!(d->chunk = malloc(PD_CHUNK + RTD_PERF_MAX_RECORD)))
		return -ENOMEM;
	for (;;) {
		const uint8_t *rec;
		size_t len;
		uint64_t off;
		int rc = raw_next(d, &rec, &len, &off);
		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
		uint32_t type;
		memcpy(&type, rec, 4);
		rc = 0;
		if (type == PD_REC_FINISHED_INIT)
			break;
		if (type < PD_USER_RECORD) {
			/* the first of the data: read again from there */
			if (rec >= d->chunk && rec < d->chunk + d->clen)
				d->cpos -= len + d->extra_len;
			else
				d->zpos -= len;
			break;
		}
		if (type == PD_REC_ATTR)
			rc = pipe_attr(d, rec, len, off);
		else if (type == PD_REC_EVENT_UPDATE)
			rc = pipe_event_name(d, rec, len);
		else if (type == PD_REC_FEATURE && len >= 16) {
			uint64_t bit;
			memcpy(&bit, rec + 8, 8);
			if (bit < sizeof(fname) / sizeof(*fname) && fname[bit] &&
			    bit != FEAT_TRACING_DATA && bit != FEAT_BUILD_ID)
				rc = feature_parse(d, (unsigned)bit, fname[bit], rec + 16, len - 16,
						   off + 16);
		} else if (type == PD_REC_TRACING_DATA && !(d->flags & RTD_PERF_DATA_NO_FORMATS)) {
			rc = feature_parse(d, FEAT_TRACING_DATA, fname[FEAT_TRACING_DATA],
					   d->extra, d->extra_len, off + len);
		}
		if (rc)
			return rc;
	}
	if (!d->nev)
		return fail(d, -RTD_E_FORMAT, PD_PIPE_HEADER_SIZE, "a pipe-mode perf.data with "
			    "no event attribute before its first record");
	d->id_st = d->ev[0].lay.sample_type;
	d->id_all = d->ev[0].lay.sample_id_all;
	bool timed = true;
	for (size_t i = 0; i < d->nev; i++)
		timed &= !!(d->ev[i].lay.sample_type & PERF_SAMPLE_TIME);
	if (!timed)
		d->flags |= RTD_PERF_DATA_FILE_ORDER;
	return 0;
}

static int open_common(rtd_perf_data *d)
{
	uint8_t h[PD_HEADER_SIZE];
	/* the first 16 bytes, then the rest: a pipe-mode stream has no more */
	int64_t got = rtd_input_pread(&d->in, h, PD_PIPE_HEADER_SIZE, 0);
	if (got < 0)
		return fail(d, (int)got, 0, "reading the header: %s", strerror((int)-got));
	uint64_t magic = 0, hsize = 0;
	if (got >= 16) {
		memcpy(&magic, h, 8);
		memcpy(&hsize, h + 8, 8);
	}
	if (magic == PD_MAGIC_SWAP)
		return fail(d, -RTD_E_UNSUPPORTED, 0, "a big-endian perf.data (not read yet)");
	if (magic != PD_MAGIC)
		return fail(d, -RTD_E_FORMAT, 0, "not perf.data: no PERFILE2 magic");
	if (hsize == PD_PIPE_HEADER_SIZE)
		return open_pipe(d);
	if (got == 16) {
		int64_t more = rtd_input_pread(&d->in, h + 16, sizeof(h) - 16, 16);
		if (more < 0)
			return fail(d, (int)more, 16, "reading the header: %s", strerror((int)-more));
		got += more;
	}
	if (hsize != PD_HEADER_SIZE || got < (int64_t)PD_HEADER_SIZE)
		return fail(d, got < (int64_t)PD_HEADER_SIZE ? -RTD_E_TRUNCATED : -RTD_E_FORMAT,
			    8, "header: size %llu, want %u", (unsigned long long)hsize,
			    PD_HEADER_SIZE);
	uint64_t v[7], bits[4]; /* attr_size, attrs, data, event_types; features */
	memcpy(v, h + 16, sizeof(v));
	memcpy(bits, h + 16 + sizeof(v), sizeof(bits));
	d->info.clockid = -1;
	d->info.data_offset = v[3];
	d->info.data_size = v[4];
	d->info.features = bits[0];
	if (d->in.read || (d->in.fd >= 0 && lseek(d->in.fd, 0, SEEK_CUR) < 0))
		return fail(d, -RTD_E_UNSUPPORTED, 16, "a perf.data file on a pipe: its "
				    "attributes and features are read by seeking; give its file "
				    "name, or record it with perf record -o - (pipe mode)");
	int rc = read_attrs(d, v[0], v[1], v[2]);
	if (!rc && d->info.data_size) {
		rc = read_features(d, bits);
		/* a cut file has lost its feature sections (they follow the
		 * data) but not the records before the cut: read those, with
		 * the names the attributes give, and fail at the cut */
		if (rc == -RTD_E_TRUNCATED) {
			d->msg[0] = 0;
			rc = 0;
		}
	}
	if (rc)
		return rc;
	d->next_read = d->info.data_offset;
	d->data_end = d->info.data_size ? d->info.data_offset + d->info.data_size : UINT64_MAX;
	bool timed = true;
	for (size_t i = 0; i < d->nev; i++)
		timed &= !!(d->ev[i].lay.sample_type & PERF_SAMPLE_TIME);
	if (!timed)
		d->flags |= RTD_PERF_DATA_FILE_ORDER;
	d->chunk = malloc(PD_CHUNK + RTD_PERF_MAX_RECORD);
	return d->chunk ? 0 : -ENOMEM;
}

/* Both openings' end: the decoder's flags, its id table, the header and
 * attributes read (open_common()); *@out is the decoder even when that
 * failed (its error is kept for rtd_perf_data_errmsg()). */
static int open_finish(rtd_perf_data *d, unsigned flags, rtd_perf_data **out)
{
	d->flags = flags;
	rtd_map_init(&d->id2ev, RTD_PERF_DATA_MAX_IDS);
	int rc = open_common(d);
	if (rc)
		d->err = rc;
	*out = d;
	return rc;
}

static int open_from(const char *path, const void *mem, size_t len,
		     const struct rtd_perf_data_opts *opts, rtd_perf_data **out)
{
	*out = NULL;
	if (!path && !mem && len)
		return -RTD_E_INVAL;
	rtd_perf_data *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	struct rtd_perf_data_opts o;
	int rc = rtd_input_setup(&d->in, path, mem ? mem : "", len, &o, sizeof(o), opts,
				 RTD_OPTS_END(rtd_perf_data_opts, flags));
	if (rc) {
		free(d);
		return rc;
	}
	return open_finish(d, o.flags, out);
}

int rtd_perf_data_open_reader(int64_t (*read)(void *ctx, void *buf, size_t len), void *ctx,
			      const struct rtd_perf_data_opts *opts, rtd_perf_data **out)
{
	*out = NULL;
	if (!read)
		return -RTD_E_INVAL;
	rtd_perf_data *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	struct rtd_perf_data_opts o;
	int rc = rtd_opts_copy(&o, sizeof(o), opts, RTD_OPTS_END(rtd_perf_data_opts, flags));
	if (!rc)
		rc = rtd_input_reader(&d->in, read, ctx);
	if (rc) {
		free(d);
		return rc;
	}
	return open_finish(d, o.flags, out);
}

int rtd_perf_data_open(const char *path, const struct rtd_perf_data_opts *opts,
		       rtd_perf_data **out)
{
	return path ? open_from(path, NULL, 0, opts, out) : (*out = NULL, -RTD_E_INVAL);
}

int rtd_perf_data_open_mem(const void *buf, size_t len, const struct rtd_perf_data_opts *opts,
			   rtd_perf_data **out)
{
	return open_from(NULL, buf, len, opts, out);
}

void rtd_perf_data_free(rtd_perf_data *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nev; i++) {
		free(d->ev[i].name);
		free(d->ev[i].ids);
		perf_fields_free(d->ev[i].fields, d->ev[i].pub.nfields);
	}
	free(d->ev);
	for (size_t i = 0; i < d->nbids; i++)
		free((char *)d->bids[i].path);
	free(d->bids);
	for (size_t i = 0; i < sizeof(d->strs) / sizeof(*d->strs); i++)
		free(d->strs[i]);
	rtd_map_free(&d->id2ev);
	free(d->chunk);
	ZSTD_freeDStream(d->zd);
	free(d->zbuf);
	free(d->qbuf);
	free(d->q);
	rtd_input_close(&d->in);
	free(d);
}

size_t rtd_perf_data_nevents(const rtd_perf_data *d)
{
	return d->nev;
}

const struct rtd_perf_data_event *rtd_perf_data_event(const rtd_perf_data *d, size_t i)
{
	return i < d->nev ? &d->ev[i].pub : NULL;
}

const struct rtd_perf_data_info *rtd_perf_data_info(const rtd_perf_data *d)
{
	return &d->info;
}

const struct rtd_perf_data_build_id *rtd_perf_data_build_ids(const rtd_perf_data *d, size_t *n)
{
	*n = d->nbids;
	return d->bids;
}

const char *rtd_perf_data_error(const rtd_perf_data *d, uint64_t *offset)
{
	if (offset)
		*offset = d->err_off;
	return d->msg;
}

void rtd_perf_data_stats(const rtd_perf_data *d, struct rtd_perf_data_stats *out)
{
	*out = d->st;
}

int rtd_perf_data_field(const struct rtd_perf_data_event *ev, const struct rtd_perf_sample *s,
			unsigned i, struct rtd_perf_value *v)
{
	if (!ev || !s || i >= ev->nfields)
		return -RTD_E_INVAL;
	return perf_field_decode(&ev->fields[i], s->raw, s->raw_size, v);
}

/* ---- records ---------------------------------------------------------------- */

/* The event a record belongs to: by its id, where perf puts it for the
 * first event's sample_type (perf's evlist id_pos / is_pos). */
static int event_of(rtd_perf_data *d, const uint8_t *rec, size_t len, uint32_t type)
{
	if (d->nev == 1)
		return 0;
	uint64_t st = d->id_st, id;
	size_t at;
	if (type == PERF_RECORD_SAMPLE) {
		if (st & PERF_SAMPLE_IDENTIFIER)
			at = 8;
		else if (st & PERF_SAMPLE_ID)
			at = 8 + 8 * (!!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
				      !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR));
		else
			return -1;
	} else {
		if (!d->id_all)
			return -1;
		size_t back;
		if (st & PERF_SAMPLE_IDENTIFIER)
			back = 8;
		else if (st & PERF_SAMPLE_ID)
			back = 8 * (1 + !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU));
		else
			return -1;
		if (back > len - 8)
			return -1;
		at = len - back;
	}
	if (at + 8 > len)
		return -1;
	memcpy(&id, rec + at, 8);
	void *v;
	return rtd_map_get(&d->id2ev, id, &v) ? (int)((uintptr_t)v - 1) : -1;
}

static int decode(rtd_perf_data *d, const uint8_t *rec, size_t len, int ev, uint64_t fileoff)
{
	const struct perf_layout *lay = &d->ev[ev < 0 ? 0 : ev].lay;
	size_t eo;
	int rc = perf_record_decode(rec, len, lay, &d->s, &eo);
	if (rc)
		return fail(d, rc, fileoff + eo, "record %s (%zu bytes) at offset %llu: %s at "
			    "its byte %zu", rtd_perf_record_name((uint32_t)d->s.type), len,
			    (unsigned long long)fileoff, rtd_strerror(rc), eo);
	d->s.bytes = rec;
	return 0;
}

static int queue_grow(rtd_perf_data *d, size_t len)
{
	if (d->nq == d->qn_cap) {
		size_t nc = d->qn_cap ? d->qn_cap * 2 : 1024;
		struct qent *q = realloc(d->q, nc * sizeof(*q));
		if (!q)
			return -ENOMEM;
		d->q = q;
		d->qn_cap = nc;
	}
	if (d->qlen + len > d->qcap) {
		if (d->qlen + len > RTD_PERF_DATA_MAX_QUEUE)
			return -RTD_E_CAP;
		size_t nc = d->qcap ? d->qcap : 1 << 20;
		while (nc < d->qlen + len)
			nc *= 2;
		if (nc > RTD_PERF_DATA_MAX_QUEUE)
			nc = RTD_PERF_DATA_MAX_QUEUE;
		uint8_t *b = realloc(d->qbuf, nc);
		if (!b)
			return -ENOMEM;
		d->qbuf = b;
		d->qcap = nc;
	}
	return 0;
}

/* Queue a kernel record for its turn. */
static int enqueue(rtd_perf_data *d, const uint8_t *rec, size_t len, uint64_t fileoff)
{
	uint32_t type;
	memcpy(&type, rec, 4);
	int ev = event_of(d, rec, len, type);
	if (ev < 0 && d->nev > 1 && (type == PERF_RECORD_SAMPLE || d->id_all)) {
		d->st.unknown_ids++;
		if (type == PERF_RECORD_SAMPLE)
			return 0; /* its layout is not known: cannot be read */
	}
	int rc = decode(d, rec, len, ev, fileoff);
	if (rc)
		return rc;
	uint64_t t = d->s.time;
	if (!(d->s.has & PERF_SAMPLE_TIME))
		t = d->max_time; /* no time of its own: where it was written */
	if ((rc = queue_grow(d, len)))
		return fail(d, rc, fileoff, rc == -RTD_E_CAP ?
			    "more than %u bytes of records between two FINISHED_ROUND "
			    "records (the queue's cap)" : "out of memory queueing records",
			    RTD_PERF_DATA_MAX_QUEUE);
	memcpy(d->qbuf + d->qlen, rec, len);
	d->q[d->nq++] = (struct qent){t, d->seq++, fileoff, d->qlen, (uint32_t)len, ev};
	d->qlen += len;
	if (d->qlen > d->st.max_queued)
		d->st.max_queued = d->qlen;
	if (t > d->max_time)
		d->max_time = t;
	return 0;
}

static int qent_cmp(const void *a, const void *b)
{
	const struct qent *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int qent_off_cmp(const void *a, const void *b)
{
	const struct qent *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Sort the queue and make the records up to @limit ready. */
static void flush_upto(rtd_perf_data *d, uint64_t limit)
{
	if (d->nq > 1)
		qsort(d->q, d->nq, sizeof(*d->q), qent_cmp);
	size_t n = 0;
	while (n < d->nq && d->q[n].time <= limit)
		n++;
	d->nready = n;
	d->iready = 0;
}

/* Drop the records given out; keep the rest, compacted. */
static void drop_ready(rtd_perf_data *d)
{
	size_t keep = d->nq - d->nready;
	if (!keep) {
		d->nq = d->qlen = 0;
	} else if (d->nready) {
		/* the kept records' bytes move down in the order they lie in
		 * the buffer, so none lands on one not moved yet (the next
		 * flush sorts them by time again) */
		memmove(d->q, d->q + d->nready, keep * sizeof(*d->q));
		qsort(d->q, keep, sizeof(*d->q), qent_off_cmp);
		size_t at = 0;
		for (size_t i = 0; i < keep; i++) {
			struct qent e = d->q[i];
			memmove(d->qbuf + at, d->qbuf + e.off, e.len);
			e.off = at;
			at += e.len;
			d->q[i] = e;
		}
		d->nq = keep;
		d->qlen = at;
	}
	d->nready = d->iready = 0;
}

/* Fill the chunk so that @need bytes are there at cpos, if the data has them. */
static int chunk_need(rtd_perf_data *d, size_t need)
{
	if (d->clen - d->cpos >= need)
		return 1;
	size_t keep = d->clen - d->cpos;
	memmove(d->chunk, d->chunk + d->cpos, keep);
	d->chunk_off += d->cpos;
	d->cpos = 0;
	d->clen = keep;
	if (!keep)
		d->chunk_off = d->next_read;
	while (d->clen < need && d->next_read < d->data_end) {
		uint64_t want = PD_CHUNK + RTD_PERF_MAX_RECORD - d->clen;
		if (want > d->data_end - d->next_read)
			want = d->data_end - d->next_read;
		int64_t r = rtd_input_pread(&d->in, d->chunk + d->clen, (size_t)want, d->next_read);
		if (r < 0)
			return fail(d, (int)r, d->next_read, "reading the data section: %s",
				    strerror((int)-r));
		if (r == 0) {
			if (d->data_end != UINT64_MAX)
				return fail(d, -RTD_E_TRUNCATED, d->next_read, "the file ends "
					    "inside its data section (which ends at offset "
					    "%llu): it was cut", (unsigned long long)d->data_end);
			d->data_end = d->next_read;
			break;
		}
		d->clen += (size_t)r;
		d->next_read += (uint64_t)r;
	}
	return d->clen >= need;
}

static int inflate(rtd_perf_data *d, const uint8_t *rec, size_t len, uint64_t fileoff)
{
	if (!d->zd && !(d->zd = ZSTD_createDStream()))
		return -ENOMEM;
	/* the rest of the last inflated bytes (a record cut across two
	 * compressed records) goes first */
	size_t keep = d->zlen - d->zpos;
	if (keep)
		memmove(d->zbuf, d->zbuf + d->zpos, keep);
	d->zlen = keep;
	d->zpos = 0;
	d->zoff = fileoff;
	ZSTD_inBuffer in = {rec + 8, len - 8, 0};
	while (in.pos < in.size) {
		if (d->zcap - d->zlen < (1u << 16)) {
			size_t nc = d->zcap ? d->zcap * 2 : 1u << 20;
			if (nc > RTD_PERF_DATA_MAX_QUEUE)
				return fail(d, -RTD_E_CAP, fileoff, "compressed record at offset "
					    "%llu inflates to more than %u bytes",
					    (unsigned long long)fileoff, RTD_PERF_DATA_MAX_QUEUE);
			uint8_t *b = realloc(d->zbuf, nc);
			if (!b)
				return -ENOMEM;
			d->zbuf = b;
			d->zcap = nc;
		}
		ZSTD_outBuffer out = {d->zbuf, d->zcap, d->zlen};
		size_t r = ZSTD_decompressStream(d->zd, &out, &in);
		if (ZSTD_isError(r))
			return fail(d, -RTD_E_FORMAT, fileoff, "compressed record at offset "
				    "%llu: zstd: %s", (unsigned long long)fileoff,
				    ZSTD_getErrorName(r));
		d->zlen = out.pos;
		if (r == 0 && in.pos < in.size && out.pos < out.size)
			continue; /* a frame ended, another follows */
	}
	d->st.compressed++;
	return 0;
}

/* The next raw record: from inflated bytes first, then the file.
 * Returns 1 with @rec/@len/@off, 0 at the data's end, or an error. */
static int raw_next(rtd_perf_data *d, const uint8_t **rec, size_t *len, uint64_t *off)
{
	for (;;) {
		if (d->zlen - d->zpos >= 8) {
			uint16_t sz;
			memcpy(&sz, d->zbuf + d->zpos + 6, 2);
			if (sz < 8)
				return fail(d, -RTD_E_FORMAT, d->zoff, "compressed record at "
					    "offset %llu: an inner record of %u bytes",
					    (unsigned long long)d->zoff, sz);
			if (d->zlen - d->zpos >= sz) {
				*rec = d->zbuf + d->zpos;
				*len = sz;
				*off = d->zoff;
				d->zpos += sz;
				return 1;
			}
		}
		int rc = chunk_need(d, 8);
		if (rc <= 0) {
			if (!rc && d->clen - d->cpos)
				return fail(d, -RTD_E_TRUNCATED, d->chunk_off + d->cpos,
					    "the data section ends inside a record header");
			if (!rc && d->zlen - d->zpos)
				return fail(d, -RTD_E_TRUNCATED, d->zoff, "the data ends inside "
					    "a record compressed at offset %llu",
					    (unsigned long long)d->zoff);
			return rc;
		}
		uint16_t sz;
		memcpy(&sz, d->chunk + d->cpos + 6, 2);
		uint64_t at = d->chunk_off + d->cpos;
		if (sz < 8)
			return fail(d, -RTD_E_FORMAT, at, "record at offset %llu has size %u "
				    "(at least 8)", (unsigned long long)at, sz);
		if ((rc = chunk_need(d, sz)) <= 0)
			return rc ? rc : fail(d, -RTD_E_TRUNCATED, at, "record at offset "
					      "%llu (%u bytes) runs past the data section",
					      (unsigned long long)at, sz);
		uint32_t type;
		memcpy(&type, d->chunk + d->cpos, 4);
		/* TRACING_DATA and AUXTRACE are followed by their data, which the
		 * record's size does not count (8-byte aligned) */
		uint64_t extra = 0;
		if ((type == PD_REC_TRACING_DATA || type == PD_REC_AUXTRACE) && sz >= 16) {
			if (type == PD_REC_TRACING_DATA) {
				uint32_t n;
				memcpy(&n, d->chunk + d->cpos + 8, 4);
				extra = n;
			} else {
				memcpy(&extra, d->chunk + d->cpos + 8, 8);
			}
			extra = (extra + 7) & ~7ull;
			if (extra > PD_CHUNK)
				return fail(d, -RTD_E_CAP, at, "record at offset %llu: %llu bytes "
					    "of data follow it (cap %u)", (unsigned long long)at,
					    (unsigned long long)extra, PD_CHUNK);
			if ((rc = chunk_need(d, sz + (size_t)extra)) <= 0)
				return rc ? rc : fail(d, -RTD_E_TRUNCATED, at, "the data after "
						      "the record at offset %llu is cut",
						      (unsigned long long)at);
		}
		*rec = d->chunk + d->cpos;
		*len = sz;
		*off = at;
		d->extra = *rec + sz;
		d->extra_len = (size_t)extra;
		d->cpos += sz + (size_t)extra;
		if (type != RTD_PERF_RECORD_COMPRESSED)
			return 1;
		if ((rc = inflate(d, *rec, *len, at)))
			return rc;
	}
}

/* Read records until some are ready (or the data ends). */
static int fill(rtd_perf_data *d)
{
	bool file_order = d->flags & RTD_PERF_DATA_FILE_ORDER;
	while (!d->nready && !d->ended) {
		const uint8_t *rec = NULL;
		size_t len = 0;
		uint64_t off = 0;
		int rc = raw_next(d, &rec, &len, &off);
		if (rc <= 0) {
			/* the end, or damage: what came before goes out first */
			d->pending_err = rc;
			d->ended = true;
			flush_upto(d, UINT64_MAX);
			break;
		}
		uint32_t type;
		memcpy(&type, rec, 4);
		if (type == RTD_PERF_RECORD_FINISHED_ROUND) {
			d->st.rounds++;
			if (!file_order) {
				flush_upto(d, d->prev_round_max);
				d->prev_round_max = d->max_time;
			}
			continue;
		}
		if (type >= PD_USER_RECORD)
			continue; /* perf's own (attrs, ids, time conversion...) */
		if ((rc = enqueue(d, rec, len, off))) {
			d->pending_err = rc;
			d->ended = true;
			flush_upto(d, UINT64_MAX);
			break;
		}
		if (file_order)
			flush_upto(d, UINT64_MAX);
	}
	return 0;
}

int rtd_perf_data_next(rtd_perf_data *d, struct rtd_perf_data_rec *out)
{
	if (d->err)
		return d->err;
	for (;;) {
		if (d->iready < d->nready) {
			struct qent *e = &d->q[d->iready++];
			int rc = decode(d, d->qbuf + e->off, e->len, e->ev, e->fileoff);
			if (rc)
				return d->err = rc;
			d->st.records++;
			if (d->s.type == PERF_RECORD_SAMPLE)
				d->st.samples++;
			else if (d->s.type == PERF_RECORD_LOST)
				d->st.lost += d->s.rec.lost.lost;
			out->s = &d->s;
			out->event = e->ev;
			out->offset = e->fileoff;
			return 1;
		}
		drop_ready(d);
		if (d->ended) {
			if (d->pending_err)
				d->err = d->pending_err;
			return d->pending_err;
		}
		fill(d);
	}
}
