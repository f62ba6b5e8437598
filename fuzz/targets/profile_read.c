/* SPDX-License-Identifier: MIT */
/*
 * profile_read - fuzz the profile readers (folded text; pprof, gzip or
 * plain) and then every profile writer on what was read.
 *
 * Invariants: an error comes with a message and an offset inside the
 * (uncompressed) input; whatever was read before the damage is a valid
 * profile that every writer writes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtdiag/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	FILE *in = fmemopen((void *)data, size, "r");
	if (!in)
		return 0;
	rtd_profile *p = NULL;
	struct rtd_profile_read_err e;
	memset(&e, 0, sizeof(e));
	int err = rtd_profile_read(&p, in, &e);
	fclose(in);
	if (err && !e.msg[0])
		abort();
	if (p) {
		FILE *out = fopen("/dev/null", "w");
		for (int f = 1; out && f < RTD_PROFILE_FMT_COUNT; f++) {
			struct rtd_profile_write_opts o = {.sz = sizeof(o),
							   .thread_roots = f & 1};
			/* writing what was read never fails */
			if (rtd_profile_write(p, (enum rtd_profile_format)f, out,
					      &o))
				abort();
		}
		if (out)
			fclose(out);
		rtd_profile_free(p);
	}
	return 0;
}
