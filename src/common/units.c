/* SPDX-License-Identifier: MIT */
/* units.c - the one grammar of durations and sizes (docs/options.md,
 * "Durations and sizes"): the CLI's options and the agent's config read
 * their values here. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "rtdiag/common.h"

/* Long enough for any number a person types; a longer one is junk. */
#define NUM_MAX 40

static int fail(char *why, size_t len, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *why, size_t len, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf(why, len, code, fmt, ap);
	va_end(ap);
	return code;
}

/* A plain decimal number: digits with an optional fraction (no sign, no
 * exponent, no hex, no blanks); *end is where it stops. */
static int number(const char *s, const char **end, double *v, char *why,
		  size_t len)
{
	const char *q = s;
	size_t digits = 0;
	while (*q >= '0' && *q <= '9')
		q++, digits++;
	if (*q == '.')
		for (q++; *q >= '0' && *q <= '9'; q++)
			digits++;
	if (!digits) {
		if (!*s)
			return fail(why, len, -RTD_E_INVAL, "empty");
		return fail(why, len, -RTD_E_INVAL, "'%.16s' is not a number",
			    s);
	}
	if (q - s > NUM_MAX)
		return fail(why, len, -RTD_E_OVERFLOW,
			    "more than %d characters", NUM_MAX);
	char buf[NUM_MAX + 1];
	memcpy(buf, s, (size_t)(q - s));
	buf[q - s] = 0;
	*v = strtod(buf, NULL);
	*end = q;
	return 0;
}

/* [[d:]hh:]mm:ss[.f], as .NET's TimeSpan prints it */
static int clock_form(const char *s, double *total, char *why, size_t len)
{
	static const double mul[] = {86400, 3600, 60, 1};
	double part[4];
	int n = 0, rc;
	const char *q = s, *e;
	for (;;) {
		if (n == 4)
			return fail(why, len, -RTD_E_INVAL,
				    "more than 4 fields (d:hh:mm:ss)");
		if ((rc = number(q, &e, &part[n], why, len)) < 0)
			return rc;
		n++;
		if (*e == 0)
			break;
		if (*e != ':')
			return fail(why, len, -RTD_E_INVAL,
				    "'%.16s' after '%.*s'", e, (int)(e - s),
				    s);
		q = e + 1;
	}
	*total = 0;
	for (int k = 0; k < n; k++) {
		if (k < n - 1 && part[k] != floor(part[k]))
			return fail(why, len, -RTD_E_INVAL,
				    "only the seconds may have a fraction");
		*total += part[k] * mul[4 - n + k];
	}
	return 0;
}

int rtd_parse_number(const char *s, double *v, char *why, size_t why_len)
{
	const char *e;
	double x;
	int rc = number(s ? s : "", &e, &x, why, why_len);
	if (rc < 0)
		return rc;
	if (*e)
		return fail(why, why_len, -RTD_E_INVAL, "'%.16s' after the number",
			    e);
	*v = x;
	return 0;
}

int rtd_parse_duration(const char *s, int64_t *ns, double *seconds,
		       char *why, size_t why_len)
{
	static const struct {
		const char *suffix;
		double mul;
	} units[] = {
		{"", 1},      {"s", 1},      {"ms", 1e-3}, {"us", 1e-6},
		{"ns", 1e-9}, {"m", 60},     {"min", 60},  {"h", 3600},
	};
	double total;
	const char *e;
	if (!s)
		return fail(why, why_len, -RTD_E_INVAL, "empty");
	int rc = number(s, &e, &total, why, why_len);
	if (rc < 0)
		return rc;
	if (*e == ':') {
		if ((rc = clock_form(s, &total, why, why_len)) < 0)
			return rc;
	} else {
		size_t k, n = sizeof(units) / sizeof(units[0]);
		for (k = 0; k < n; k++)
			if (strcmp(e, units[k].suffix) == 0)
				break;
		if (k == n)
			return fail(why, why_len, -RTD_E_INVAL,
				    "unknown unit '%.16s' (ns, us, ms, s, m, "
				    "min, h, or [[d:]hh:]mm:ss)", e);
		total *= units[k].mul;
	}
	if (!isfinite(total) || total > RTD_DURATION_MAX_S)
		return fail(why, why_len, -RTD_E_OVERFLOW,
			    "more than %.0f seconds", RTD_DURATION_MAX_S);
	if (seconds)
		*seconds = total;
	if (ns)
		*ns = (int64_t)llround(total * 1e9);
	return 0;
}

int rtd_parse_size(const char *s, uint64_t *bytes, char *why, size_t why_len)
{
	double x, mul = 1;
	const char *e;
	if (!s)
		return fail(why, why_len, -RTD_E_INVAL, "empty");
	int rc = number(s, &e, &x, why, why_len);
	if (rc < 0)
		return rc;
	const char *unit = e;
	switch (*e) {
	case 'k': case 'K': mul = 1024.0; e++; break;
	case 'm': case 'M': mul = 1024.0 * 1024; e++; break;
	case 'g': case 'G': mul = 1024.0 * 1024 * 1024; e++; break;
	case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; e++; break;
	}
	if (mul > 1 && *e == 'i')
		e++;
	if (*e == 'B' || (*e == 'b' && mul == 1))
		e++;
	if (*e)
		return fail(why, why_len, -RTD_E_INVAL,
			    "unknown unit '%.16s' (B, k, M, G, T; KiB, MB...)",
			    unit);
	x *= mul;
	if (x != floor(x))
		return fail(why, why_len, -RTD_E_INVAL,
			    "not a whole number of bytes");
	if (!isfinite(x) || x >= 1.8e19)
		return fail(why, why_len, -RTD_E_OVERFLOW,
			    "1.8e19 bytes or more");
	*bytes = (uint64_t)x;
	return 0;
}
