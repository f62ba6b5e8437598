/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "rtdiag/common.h"

struct err_entry {
	int code;
	const char *name;
	const char *msg;
};

static const struct err_entry err_table[] = {
#define RTD_ERR_ROW(name, value, msg) {value, #name, msg},
	RTD_ERRORS(RTD_ERR_ROW)
#undef RTD_ERR_ROW
};

static const struct err_entry *err_lookup(int err)
{
	if (err < 0)
		err = -err;
	for (size_t i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++)
		if (err_table[i].code == err)
			return &err_table[i];
	return NULL;
}

const char *rtd_strerror(int err)
{
	if (err == 0)
		return "success";
	const struct err_entry *e = err_lookup(err);
	if (e)
		return e->msg;
	int n = err < 0 ? -err : err;
	if (n < 1000)
		return strerror(n);
	return "unknown error";
}

const char *rtd_errname(int err)
{
	if (err == 0)
		return "OK";
	const struct err_entry *e = err_lookup(err);
	if (e)
		return e->name;
	int n = err < 0 ? -err : err;
	return n < 1000 ? "errno" : "unknown";
}

const char *rtd_version(void)
{
	return RTD_VERSION_STRING;
}
