/* SPDX-License-Identifier: MIT */
/*
 * json.c - a string as JSON (rtd_format_json_str()), for the writers
 * outside the library that print JSON lines of their own.
 */
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "rtdiag/format.h"

int rtd_format_json_str(FILE *f, const char *s)
{
	rtd_buf b;
	rtd_buf_init(&b, 0);
	int err = rtd_buf_json_str(&b, s, strlen(s));
	if (!err)
		fputs(rtd_buf_cstr(&b), f);
	rtd_buf_free(&b);
	return err;
}
