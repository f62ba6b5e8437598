/* SPDX-License-Identifier: MIT */
/*
 * record.c - decode perf ring records.
 *
 * Field order follows include/uapi/linux/perf_event.h (enum
 * perf_event_type and the PERF_RECORD_SAMPLE comment). Every read goes
 * through the bounds-checked cursor; counts that size an array are checked
 * against the bytes left before anything points into them.
 */
#include "perf/record.h"

#include <string.h>

#include "common/rd.h"

enum {
	S_IP = 1u << 0, S_TID = 1u << 1, S_TIME = 1u << 2, S_ADDR = 1u << 3,
	S_READ = 1u << 4, S_CALLCHAIN = 1u << 5, S_ID = 1u << 6,
	S_CPU = 1u << 7, S_PERIOD = 1u << 8, S_STREAM_ID = 1u << 9,
	S_RAW = 1u << 10, S_BRANCH_STACK = 1u << 11, S_REGS_USER = 1u << 12,
	S_STACK_USER = 1u << 13, S_WEIGHT = 1u << 14, S_DATA_SRC = 1u << 15,
	S_IDENTIFIER = 1u << 16, S_TRANSACTION = 1u << 17,
	S_REGS_INTR = 1u << 18, S_PHYS_ADDR = 1u << 19, S_AUX = 1u << 20,
	S_CGROUP = 1u << 21, S_DATA_PAGE_SIZE = 1u << 22,
	S_CODE_PAGE_SIZE = 1u << 23, S_WEIGHT_STRUCT = 1u << 24,
};

static const char *const record_names[RTD_PERF_RECORD_MAX_KNOWN] = {
	[0] = "UNKNOWN",
	[RTD_PERF_RECORD_MMAP] = "MMAP",
	[RTD_PERF_RECORD_LOST] = "LOST",
	[RTD_PERF_RECORD_COMM] = "COMM",
	[RTD_PERF_RECORD_EXIT] = "EXIT",
	[RTD_PERF_RECORD_THROTTLE] = "THROTTLE",
	[RTD_PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[RTD_PERF_RECORD_FORK] = "FORK",
	[RTD_PERF_RECORD_READ] = "READ",
	[RTD_PERF_RECORD_SAMPLE] = "SAMPLE",
	[RTD_PERF_RECORD_MMAP2] = "MMAP2",
	[RTD_PERF_RECORD_AUX] = "AUX",
	[RTD_PERF_RECORD_ITRACE_START] = "ITRACE_START",
	[RTD_PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[RTD_PERF_RECORD_SWITCH] = "SWITCH",
	[RTD_PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[RTD_PERF_RECORD_NAMESPACES] = "NAMESPACES",
	[RTD_PERF_RECORD_KSYMBOL] = "KSYMBOL",
	[RTD_PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
	[RTD_PERF_RECORD_CGROUP] = "CGROUP",
	[RTD_PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
	[RTD_PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[RTD_PERF_RECORD_CALLCHAIN_DEFERRED] = "CALLCHAIN_DEFERRED",
};

const char *rtd_perf_record_name(uint32_t type)
{
	if (type < RTD_PERF_RECORD_MAX_KNOWN && record_names[type])
		return record_names[type];
	return "UNKNOWN";
}

/* Borrow n u64s; n comes from input, so compare before multiplying. */
static const uint8_t *rd_u64s(rtd_rd *r, uint64_t n)
{
	const uint8_t *p;
	if (n > rd_left(r) / 8) {
		rd_fail(r, -RTD_E_TRUNCATED);
		return NULL;
	}
	rd_bytes(r, (size_t)n * 8, &p);
	return p;
}

/* A NUL-terminated string inside the rest of r (records pad them). */
static const char *rd_cstr(rtd_rd *r)
{
	if (!rd_ok(r))
		return NULL;
	const uint8_t *nul = memchr(r->p, 0, rd_left(r));
	if (!nul) {
		rd_fail(r, -RTD_E_TRUNCATED);
		return NULL;
	}
	const char *s = (const char *)r->p;
	r->p = r->end; /* the padding after it is not data */
	return s;
}

static void read_values(rtd_rd *r, uint64_t fmt, struct rtd_perf_sample *s)
{
	uint64_t nr = 1;
	if (fmt & RTD_PERF_FORMAT_GROUP) {
		nr = rd_u64le(r);
		if (nr > RTD_PERF_MAX_READ_VALUES) {
			rd_fail(r, -RTD_E_CAP);
			return;
		}
	} else {
		s->read.values[0].value = rd_u64le(r);
	}
	if (fmt & RTD_PERF_FORMAT_TOTAL_TIME_ENABLED)
		s->read.time_enabled = rd_u64le(r);
	if (fmt & RTD_PERF_FORMAT_TOTAL_TIME_RUNNING)
		s->read.time_running = rd_u64le(r);
	for (uint64_t i = 0; i < nr && rd_ok(r); i++) {
		struct rtd_perf_read_value *v = &s->read.values[i];
		if (fmt & RTD_PERF_FORMAT_GROUP)
			v->value = rd_u64le(r);
		if (fmt & RTD_PERF_FORMAT_ID)
			v->id = rd_u64le(r);
		if (fmt & RTD_PERF_FORMAT_LOST)
			v->lost = rd_u64le(r);
	}
	s->read.nr = (uint32_t)nr;
}

static unsigned id_trailer_size(uint64_t st)
{
	unsigned n = 0;
	n += !!(st & S_TID) + !!(st & S_TIME) + !!(st & S_ID);
	n += !!(st & S_STREAM_ID) + !!(st & S_CPU) + !!(st & S_IDENTIFIER);
	return n * 8;
}

/* The sample_id trailer of non-sample records (struct sample_id). */
static void sample_id(rtd_rd *r, uint64_t st, struct rtd_perf_sample *s)
{
	if (st & S_TID) {
		s->pid = rd_u32le(r);
		s->tid = rd_u32le(r);
	}
	if (st & S_TIME)
		s->time = rd_u64le(r);
	if (st & S_ID)
		s->id = rd_u64le(r);
	if (st & S_STREAM_ID)
		s->stream_id = rd_u64le(r);
	if (st & S_CPU) {
		s->cpu = rd_u32le(r);
		rd_u32le(r);
	}
	if (st & S_IDENTIFIER)
		s->identifier = rd_u64le(r);
	s->has = st & (S_TID | S_TIME | S_ID | S_STREAM_ID | S_CPU |
		       S_IDENTIFIER);
}

static void decode_sample(rtd_rd *r, const struct perf_layout *lay,
			  struct rtd_perf_sample *s)
{
	uint64_t st = lay->sample_type;
	s->has = st;
	if (st & S_IDENTIFIER)
		s->identifier = rd_u64le(r);
	if (st & S_IP)
		s->ip = rd_u64le(r);
	if (st & S_TID) {
		s->pid = rd_u32le(r);
		s->tid = rd_u32le(r);
	}
	if (st & S_TIME)
		s->time = rd_u64le(r);
	if (st & S_ADDR)
		s->addr = rd_u64le(r);
	if (st & S_ID)
		s->id = rd_u64le(r);
	if (st & S_STREAM_ID)
		s->stream_id = rd_u64le(r);
	if (st & S_CPU) {
		s->cpu = rd_u32le(r);
		rd_u32le(r);
	}
	if (st & S_PERIOD)
		s->period = rd_u64le(r);
	if (st & S_READ)
		read_values(r, lay->read_format, s);
	if (st & S_CALLCHAIN) {
		s->callchain_nr = rd_u64le(r);
		s->callchain = rd_u64s(r, s->callchain_nr);
	}
	if (st & S_RAW) {
		s->raw_size = rd_u32le(r);
		rd_bytes(r, s->raw_size, &s->raw);
	}
	if (st & S_BRANCH_STACK) {
		s->branch_nr = rd_u64le(r);
		if (lay->branch_sample_type & RTD_PERF_SAMPLE_BRANCH_HW_INDEX)
			s->branch_hw_idx = rd_u64le(r);
		if (s->branch_nr > rd_left(r) / 24)
			rd_fail(r, -RTD_E_TRUNCATED);
		else
			rd_bytes(r, (size_t)s->branch_nr * 24, &s->branches);
	}
	if (st & S_REGS_USER) {
		s->regs_user_abi = rd_u64le(r);
		if (s->regs_user_abi) {
			s->regs_user_nr = lay->regs_user_nr;
			s->regs_user = rd_u64s(r, lay->regs_user_nr);
		}
	}
	if (st & S_STACK_USER) {
		s->stack_user_size = rd_u64le(r);
		if (s->stack_user_size > rd_left(r))
			rd_fail(r, -RTD_E_TRUNCATED);
		else
			rd_bytes(r, (size_t)s->stack_user_size, &s->stack_user);
		if (s->stack_user_size)
			s->stack_user_dyn_size = rd_u64le(r);
	}
	if (st & (S_WEIGHT | S_WEIGHT_STRUCT)) {
		s->weight = rd_u64le(r);
		if (st & S_WEIGHT_STRUCT) {
			s->weight_var1 = (uint32_t)s->weight;
			s->weight_var2 = (uint16_t)(s->weight >> 32);
			s->weight_var3 = (uint16_t)(s->weight >> 48);
		}
	}
	if (st & S_DATA_SRC)
		s->data_src = rd_u64le(r);
	if (st & S_TRANSACTION)
		s->transaction = rd_u64le(r);
	if (st & S_REGS_INTR) {
		s->regs_intr_abi = rd_u64le(r);
		if (s->regs_intr_abi) {
			s->regs_intr_nr = lay->regs_intr_nr;
			s->regs_intr = rd_u64s(r, lay->regs_intr_nr);
		}
	}
	if (st & S_PHYS_ADDR)
		s->phys_addr = rd_u64le(r);
	if (st & S_CGROUP)
		s->cgroup = rd_u64le(r);
	if (st & S_DATA_PAGE_SIZE)
		s->data_page_size = rd_u64le(r);
	if (st & S_CODE_PAGE_SIZE)
		s->code_page_size = rd_u64le(r);
	if (st & S_AUX) {
		s->aux_size = rd_u64le(r);
		if (s->aux_size > rd_left(r))
			rd_fail(r, -RTD_E_TRUNCATED);
		else
			rd_bytes(r, (size_t)s->aux_size, &s->aux);
	}
}

static void decode_other(rtd_rd *r, struct rtd_perf_sample *s, uint64_t fmt)
{
	switch (s->type) {
	case RTD_PERF_RECORD_MMAP:
	case RTD_PERF_RECORD_MMAP2:
		s->rec.mmap.pid = rd_u32le(r);
		s->rec.mmap.tid = rd_u32le(r);
		s->rec.mmap.addr = rd_u64le(r);
		s->rec.mmap.len = rd_u64le(r);
		s->rec.mmap.pgoff = rd_u64le(r);
		if (s->type == RTD_PERF_RECORD_MMAP2) {
			if (s->misc & RTD_PERF_MISC_MMAP_BUILD_ID) {
				s->rec.mmap.build_id_size = rd_u8(r);
				rd_skip(r, 3);
				rd_copy(r, s->rec.mmap.build_id, 20);
				if (s->rec.mmap.build_id_size > 20)
					rd_fail(r, -RTD_E_FORMAT);
			} else {
				s->rec.mmap.maj = rd_u32le(r);
				s->rec.mmap.min = rd_u32le(r);
				s->rec.mmap.ino = rd_u64le(r);
				s->rec.mmap.ino_generation = rd_u64le(r);
			}
			s->rec.mmap.prot = rd_u32le(r);
			s->rec.mmap.flags = rd_u32le(r);
		}
		s->rec.mmap.filename = rd_cstr(r);
		break;
	case RTD_PERF_RECORD_LOST:
		s->rec.lost.id = rd_u64le(r);
		s->rec.lost.lost = rd_u64le(r);
		break;
	case RTD_PERF_RECORD_LOST_SAMPLES:
		s->rec.lost.lost = rd_u64le(r);
		break;
	case RTD_PERF_RECORD_COMM:
		s->rec.comm.pid = rd_u32le(r);
		s->rec.comm.tid = rd_u32le(r);
		s->rec.comm.comm = rd_cstr(r);
		break;
	case RTD_PERF_RECORD_EXIT:
	case RTD_PERF_RECORD_FORK:
		s->rec.task.pid = rd_u32le(r);
		s->rec.task.ppid = rd_u32le(r);
		s->rec.task.tid = rd_u32le(r);
		s->rec.task.ptid = rd_u32le(r);
		s->rec.task.time = rd_u64le(r);
		break;
	case RTD_PERF_RECORD_THROTTLE:
	case RTD_PERF_RECORD_UNTHROTTLE:
		s->rec.throttle.time = rd_u64le(r);
		s->rec.throttle.id = rd_u64le(r);
		s->rec.throttle.stream_id = rd_u64le(r);
		break;
	case RTD_PERF_RECORD_READ:
		s->rec.read.pid = rd_u32le(r);
		s->rec.read.tid = rd_u32le(r);
		read_values(r, fmt, s);
		break;
	case RTD_PERF_RECORD_AUX:
		s->rec.aux.offset = rd_u64le(r);
		s->rec.aux.size = rd_u64le(r);
		s->rec.aux.flags = rd_u64le(r);
		break;
	case RTD_PERF_RECORD_ITRACE_START:
		s->rec.itrace.pid = rd_u32le(r);
		s->rec.itrace.tid = rd_u32le(r);
		break;
	case RTD_PERF_RECORD_SWITCH:
		break;
	case RTD_PERF_RECORD_SWITCH_CPU_WIDE:
		s->rec.sw.next_prev_pid = rd_u32le(r);
		s->rec.sw.next_prev_tid = rd_u32le(r);
		break;
	case RTD_PERF_RECORD_NAMESPACES:
		s->rec.ns.pid = rd_u32le(r);
		s->rec.ns.tid = rd_u32le(r);
		s->rec.ns.nr = rd_u64le(r);
		if (s->rec.ns.nr > rd_left(r) / 16)
			rd_fail(r, -RTD_E_TRUNCATED);
		else
			rd_bytes(r, (size_t)s->rec.ns.nr * 16, &s->rec.ns.ns);
		break;
	case RTD_PERF_RECORD_KSYMBOL:
		s->rec.ksymbol.addr = rd_u64le(r);
		s->rec.ksymbol.len = rd_u32le(r);
		s->rec.ksymbol.ksym_type = rd_u16le(r);
		s->rec.ksymbol.flags = rd_u16le(r);
		s->rec.ksymbol.name = rd_cstr(r);
		break;
	case RTD_PERF_RECORD_BPF_EVENT:
		s->rec.bpf.type = rd_u16le(r);
		s->rec.bpf.flags = rd_u16le(r);
		s->rec.bpf.id = rd_u32le(r);
		rd_copy(r, s->rec.bpf.tag, 8);
		break;
	case RTD_PERF_RECORD_CGROUP:
		s->rec.cgroup.id = rd_u64le(r);
		s->rec.cgroup.path = rd_cstr(r);
		break;
	case RTD_PERF_RECORD_TEXT_POKE:
		s->rec.poke.addr = rd_u64le(r);
		s->rec.poke.old_len = rd_u16le(r);
		s->rec.poke.new_len = rd_u16le(r);
		rd_bytes(r, (size_t)s->rec.poke.old_len + s->rec.poke.new_len,
			 &s->rec.poke.bytes);
		break;
	case RTD_PERF_RECORD_AUX_OUTPUT_HW_ID:
		s->rec.hwid.hw_id = rd_u64le(r);
		break;
	case RTD_PERF_RECORD_CALLCHAIN_DEFERRED:
		s->rec.deferred.cookie = rd_u64le(r);
		s->rec.deferred.nr = rd_u64le(r);
		s->rec.deferred.ips = rd_u64s(r, s->rec.deferred.nr);
		break;
	default:
		break; /* unknown: header and sample_id only */
	}
}

int perf_record_decode(const uint8_t *rec, size_t len,
		       const struct perf_layout *lay, struct rtd_perf_sample *s,
		       size_t *err_off)
{
	rtd_rd r;
	/* read.values[] is valid up to read.nr only: not worth zeroing */
	memset(s, 0, offsetof(struct rtd_perf_sample, read.values));
	memset(&s->callchain_nr, 0,
	       sizeof(*s) - offsetof(struct rtd_perf_sample, callchain_nr));
	*err_off = 0;
	rd_init(&r, rec, len);
	s->type = rd_u32le(&r);
	s->misc = rd_u16le(&r);
	s->size = rd_u16le(&r);
	if (!rd_ok(&r) || s->size < 8 || s->size > len) {
		*err_off = rd_ok(&r) ? 6 : rd_off(&r);
		return -RTD_E_TRUNCATED;
	}
	r.end = rec + s->size;
	if (s->type == RTD_PERF_RECORD_SAMPLE) {
		decode_sample(&r, lay, s);
	} else {
		rtd_rd body = r;
		if (lay->sample_id_all) {
			unsigned tsz = id_trailer_size(lay->sample_type);
			if (tsz > rd_left(&r)) {
				*err_off = 8;
				return -RTD_E_TRUNCATED;
			}
			rtd_rd tr = r;
			tr.p = r.end - tsz;
			sample_id(&tr, lay->sample_type, s);
			body.end = r.end - tsz;
		}
		decode_other(&body, s, lay->read_format);
		r.err = body.err;
		r.p = body.p;
	}
	if (!rd_ok(&r)) {
		*err_off = rd_off(&r);
		return r.err;
	}
	return 0;
}

int perf_record_identifier(const uint8_t *rec, size_t len, int id_all,
			   uint64_t *id)
{
	uint32_t type;
	if (len < 16)
		return -RTD_E_NOTFOUND;
	memcpy(&type, rec, 4);
	if (type == RTD_PERF_RECORD_SAMPLE)
		memcpy(id, rec + 8, 8);
	else if (id_all)
		memcpy(id, rec + len - 8, 8);
	else
		return -RTD_E_NOTFOUND;
	return 0;
}
