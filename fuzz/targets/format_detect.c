/* SPDX-License-Identifier: MIT */
/*
 * format_detect - fuzz input format detection (rtd_format_detect()).
 *
 * Invariants: the format is one of the enum; an unknown input says why;
 * what is named as a whole input, other than folded text (whose last line
 * is judged only when the input is whole), is named the same as a prefix
 * of something longer; what is named folded stacks is read by the folded
 * reader without a format error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtdiag/format.h"
#include "rtdiag/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rtd_input_info whole, prefix;
	enum rtd_input_format f = rtd_format_detect(data, size, true, &whole);
	enum rtd_input_format g = rtd_format_detect(data, size, false, &prefix);
	if ((unsigned)f >= RTD_INPUT_COUNT || (unsigned)g >= RTD_INPUT_COUNT)
		abort();
	if (f != whole.format || g != prefix.format)
		abort();
	if ((f == RTD_INPUT_UNKNOWN && !whole.why[0]) ||
	    (g == RTD_INPUT_UNKNOWN && !prefix.why[0]))
		abort();
	if (f != RTD_INPUT_UNKNOWN && f != RTD_INPUT_FOLDED && g != f)
		abort();
	if (f == RTD_INPUT_FOLDED && size <= RTD_FORMAT_SNIFF_BYTES) {
		FILE *in = fmemopen((void *)data, size, "r");
		rtd_profile *p = NULL;
		struct rtd_profile_read_err e;
		int err = in ? rtd_profile_read(&p, in, &e) : 0;
		/* a count out of range is the reader's to refuse */
		if (err == -RTD_E_FORMAT && !strstr(e.msg, "sample count"))
			abort();
		rtd_profile_free(p);
		if (in)
			fclose(in);
	}
	return 0;
}
