/* SPDX-License-Identifier: MIT */
/*
 * perf_tpfield - fuzz tracepoint field decoding.
 *
 * Input byte 0 picks a format: 0..N-1 are real formats of this project's
 * kernel (sched_switch, sched_process_exec, sys_enter_openat, a tracefs
 * uprobe with a string) plus one with __rel_loc and arrays, parsed once by
 * libtraceevent; the rest of the input is the raw tracepoint data whose
 * every field is decoded. With bit 7 set, the next 8 bytes describe one
 * field of any shape (u16 offset, u16 size, u8 kind, u8 flags: dynamic,
 * relative, signed, pointer; u8 element size, u8 unused) and the rest is
 * raw data: the decoder must hold for any field description.
 *
 * Format text itself is not fuzzed: it comes from the kernel, and parsing
 * it is libtraceevent's job (1.7.1 crashes and leaks on malformed formats:
 * see docs/perf.md).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "perf/internal.h"

#define COMMON                                                                 \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"  \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"  \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static const char *const formats[] = {
	"name: sched_switch\nID: 1\nformat:\n" COMMON
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\nprint fmt: \"prev_pid=%d\", REC->prev_pid\n",
	"name: sched_process_exec\nID: 2\nformat:\n" COMMON
	"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\nprint fmt: \"filename=%s\", __get_str(filename)\n",
	"name: sys_enter_openat\nID: 3\nformat:\n" COMMON
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\nprint fmt: \"dfd: 0x%08lx\", ((unsigned long)(REC->dfd))\n",
	"name: open\nID: 4\nformat:\n" COMMON
	"\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:__data_loc char[] path;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\tfield:s32 fl;\toffset:20;\tsize:4;\tsigned:1;\n"
	"\nprint fmt: \"(%lx) path=\\\"%s\\\"\", REC->__probe_ip, __get_str(path)\n",
	"name: rel\nID: 5\nformat:\n" COMMON
	"\tfield:__rel_loc char[] rel;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc u32[] ids;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\tfield:__rel_loc u64[] big;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\tfield:int arr[3];\toffset:20;\tsize:12;\tsigned:1;\n"
	"\tfield:s16 s;\toffset:32;\tsize:2;\tsigned:1;\n"
	"\nprint fmt: \"rel=%s\", __get_rel_str(rel)\n",
};
#define NFMT (sizeof(formats) / sizeof(formats[0]))

static volatile uint64_t sink;

static void decode_all(const struct rtd_perf_field *f, unsigned n,
		       const uint8_t *raw, size_t len)
{
	for (unsigned i = 0; i < n; i++) {
		struct rtd_perf_value v;
		if (perf_field_decode(&f[i], raw, len, &v))
			continue;
		const uint8_t *p = v.kind == RTD_PERF_FIELD_STRING
					   ? (const uint8_t *)v.str
					   : v.data;
		for (size_t k = 0; p && k < v.len; k++)
			sink += p[k];
		sink += v.u;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tep_handle *tep;
	static struct rtd_perf_field *fields[NFMT];
	static unsigned nfields[NFMT];
	if (!tep) {
		tep = tep_alloc();
		for (size_t i = 0; i < NFMT; i++) {
			int id;
			unsigned nc;
			if (perf_fields_from_format(tep, "fuzz", formats[i],
						    strlen(formats[i]), &id,
						    &fields[i], &nfields[i], &nc))
				abort(); /* the built-in formats must parse */
		}
	}
	if (size < 1)
		return 0;
	if (!(data[0] & 0x80)) {
		size_t k = data[0] % NFMT;
		/* exact-size copy: a read past the raw data is caught */
		uint8_t *raw = malloc(size - 1 ? size - 1 : 1);
		if (!raw)
			return 0;
		memcpy(raw, data + 1, size - 1);
		decode_all(fields[k], nfields[k], raw, size - 1);
		free(raw);
		return 0;
	}
	if (size < 9)
		return 0;
	struct rtd_perf_field f = {.name = "f", .type = "fuzz"};
	uint16_t off, sz;
	memcpy(&off, data + 1, 2);
	memcpy(&sz, data + 3, 2);
	f.offset = off;
	f.size = sz;
	f.kind = (enum rtd_perf_field_kind)(1 + data[5] % 4);
	f.is_dynamic = data[6] & 1;
	f.is_relative = data[6] & 2;
	f.is_signed = data[6] & 4;
	f.is_pointer = data[6] & 8;
	f.elem_size = data[7];
	if (f.kind == RTD_PERF_FIELD_INT || f.kind == RTD_PERF_FIELD_UINT)
		f.size = 1u << (sz % 4); /* integers are 1, 2, 4 or 8 bytes */
	size_t rl = size - 9;
	uint8_t *raw = malloc(rl ? rl : 1);
	if (!raw)
		return 0;
	memcpy(raw, data + 9, rl);
	decode_all(&f, 1, raw, rl);
	free(raw);
	return 0;
}
