/* SPDX-License-Identifier: MIT */
/*
 * perf_record - fuzz the perf ring record decoder.
 *
 * Input: a 20-byte layout (u64 sample_type, u64 read_format, u8
 * regs_user_nr, u8 regs_intr_nr, u8 branch HW_INDEX flag, u8
 * sample_id_all), then records back to back as in a ring. Each record is
 * copied to a buffer of exactly its size, so any read past it is caught.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perf/internal.h"

static volatile uint64_t sink;

static void touch(const uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; p && i < n; i++)
		sink += p[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 20)
		return 0;
	struct perf_layout lay;
	memcpy(&lay.sample_type, data, 8);
	memcpy(&lay.read_format, data + 8, 8);
	lay.sample_type &= (1u << 25) - 1;
	lay.read_format &= 0x1f;
	lay.regs_user_nr = data[16] % 65;
	lay.regs_intr_nr = data[17] % 65;
	lay.branch_sample_type = data[18] & 1 ? RTD_PERF_SAMPLE_BRANCH_HW_INDEX : 0;
	lay.sample_id_all = data[19] & 1;
	data += 20;
	size -= 20;
	while (size >= 8) {
		uint16_t rs;
		memcpy(&rs, data + 6, 2);
		size_t n = rs < 8 ? 8 : rs;
		if (n > size)
			n = size;
		uint8_t *rec = malloc(n);
		if (!rec)
			return 0;
		memcpy(rec, data, n);
		struct rtd_perf_sample s;
		size_t off;
		if (perf_record_decode(rec, n, &lay, &s, &off) == 0) {
			touch(s.callchain, s.callchain_nr * 8);
			touch(s.raw, s.raw_size);
			touch(s.branches, s.branch_nr * 24);
			touch(s.regs_user, (uint64_t)s.regs_user_nr * 8);
			touch(s.regs_intr, (uint64_t)s.regs_intr_nr * 8);
			touch(s.stack_user, s.stack_user_size);
			touch(s.aux, s.aux_size);
			if (s.type == RTD_PERF_RECORD_MMAP ||
			    s.type == RTD_PERF_RECORD_MMAP2)
				sink += strlen(s.rec.mmap.filename);
			if (s.type == RTD_PERF_RECORD_COMM)
				sink += strlen(s.rec.comm.comm);
			if (s.type == RTD_PERF_RECORD_NAMESPACES)
				touch(s.rec.ns.ns, s.rec.ns.nr * 16);
			if (s.type == RTD_PERF_RECORD_TEXT_POKE)
				touch(s.rec.poke.bytes, (uint64_t)s.rec.poke.old_len +
								s.rec.poke.new_len);
			if (s.type == RTD_PERF_RECORD_CALLCHAIN_DEFERRED)
				touch(s.rec.deferred.ips, s.rec.deferred.nr * 8);
		} else if (off > n) {
			abort(); /* an error offset outside the record */
		}
		uint64_t id;
		perf_record_identifier(rec, n, lay.sample_id_all, &id);
		free(rec);
		data += n;
		size -= n;
	}
	return 0;
}
