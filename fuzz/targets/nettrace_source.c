/* SPDX-License-Identifier: MIT */
/*
 * nettrace_source - fuzz the EventPipe record source: the decoder's
 * callbacks turned into queued records (threads, samples with named
 * stacks, instants with fields), the read-ahead for method names, the
 * sort windows, and the error record. Invariants: source_check.h's
 * contract; the same records with and without the read-ahead, since the
 * read-ahead changes only frame names. Then in stream order with every
 * other field left out (as the profile builder reads: the straight reader
 * of flat payloads, the string cache), pulled and handed out by
 * rtd_source_each(): the same count both ways.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../source_check.h"
#include "rtdiag/nettrace_source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool even_fields(void *ctx, const struct rtd_nettrace_metadata *m, size_t i)
{
	(void)ctx;
	(void)m;
	return i % 2 == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t counts[2];
	for (int pre = 0; pre < 2; pre++) {
		RTD_OPTS(rtd_nettrace_source_opts, o, .no_prepass = !pre,
			 .max_queue_bytes = 4u << 20);
		rtd_source *s = rtd_nettrace_source_mem(data, size, &o, NULL);
		if (!s)
			return 0; /* out of memory */
		counts[pre] = rtd_fuzz_drain(s);
		rtd_source_free(s);
	}
	if (counts[0] != counts[1])
		abort();
	for (int each = 0; each < 2; each++) {
		RTD_OPTS(rtd_nettrace_source_opts, o, .stream_order = true,
			 .address_frames = true, .field_want = even_fields,
			 .max_queue_bytes = 4u << 20);
		rtd_source *s = rtd_nettrace_source_mem(data, size, &o, NULL);
		if (!s)
			return 0;
		counts[each] = each ? rtd_fuzz_drain_each(s) : rtd_fuzz_drain(s);
		rtd_source_free(s);
	}
	if (counts[0] != counts[1])
		abort();
	return 0;
}
