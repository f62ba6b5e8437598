/* SPDX-License-Identifier: MIT */
/*
 * write.c - one entry point for every profile format, the format names
 * and file extensions, and the value formatting the text views share.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "profile/profile_impl.h"
#include "rtdiag/format.h"
#include "rtdiag/source.h"

static const char *const fmt_names[RTD_PROFILE_FMT_COUNT] = {
	[RTD_PROFILE_FMT_NONE] = "none",
	[RTD_PROFILE_FMT_FOLDED] = "folded",
	[RTD_PROFILE_FMT_PPROF] = "pprof",
	[RTD_PROFILE_FMT_TOP] = "top",
	[RTD_PROFILE_FMT_SVG] = "svg",
	[RTD_PROFILE_FMT_SPEEDSCOPE] = "speedscope",
};

const char *rtd_profile_format_name(enum rtd_profile_format fmt)
{
	return (unsigned)fmt < RTD_PROFILE_FMT_COUNT ? fmt_names[fmt] : "none";
}

enum rtd_profile_format rtd_profile_format_from_name(const char *name)
{
	if (!name)
		return RTD_PROFILE_FMT_NONE;
	for (unsigned i = 1; i < RTD_PROFILE_FMT_COUNT; i++)
		if (!strcasecmp(name, fmt_names[i]))
			return (enum rtd_profile_format)i;
	if (!strcasecmp(name, "collapsed"))
		return RTD_PROFILE_FMT_FOLDED;
	if (!strcasecmp(name, "flamegraph"))
		return RTD_PROFILE_FMT_SVG;
	return RTD_PROFILE_FMT_NONE;
}

enum rtd_profile_format rtd_profile_format_from_path(const char *path)
{
	/* the one table of extensions (rtdiag/format.h) */
	const struct rtd_format_ext *x = rtd_format_ext_of(path);
	return x && (x->kind & (RTD_FORMAT_PROFILE | RTD_FORMAT_TEXT))
		       ? x->profile : RTD_PROFILE_FMT_NONE;
}

const char *prof_fmt_value(int64_t v, const char *unit, char *buf, size_t n)
{
	double a = (double)(v < 0 ? -v : v);
	const char *sign = v < 0 ? "-" : "";
	if (!strcmp(unit, "nanoseconds")) {
		if (a >= 1e9)
			snprintf(buf, n, "%s%.2fs", sign, a / 1e9);
		else if (a >= 1e6)
			snprintf(buf, n, "%s%.2fms", sign, a / 1e6);
		else if (a >= 1e3)
			snprintf(buf, n, "%s%.2fus", sign, a / 1e3);
		else
			snprintf(buf, n, "%s%.0fns", sign, a);
	} else if (!strcmp(unit, "bytes")) {
		static const char *const u[] = {"B", "kB", "MB", "GB", "TB"};
		unsigned k = 0;
		while (a >= 1000 && k < 4)
			a /= 1000, k++;
		snprintf(buf, n, k ? "%s%.2f%s" : "%s%.0f%s", sign, a, u[k]);
	} else {
		snprintf(buf, n, "%" PRId64, v);
	}
	return buf;
}

void prof_title(const rtd_profile *p, size_t type,
		const struct rtd_profile_write_opts *o, char *buf, size_t n)
{
	if (o && o->title) {
		snprintf(buf, n, "%s", o->title);
		return;
	}
	char dur[32];
	int k = snprintf(buf, n, "%s", p->source ? p->source : "profile");
	if (p->process && p->pid)
		k += snprintf(buf + k, n - (size_t)k, ": %.200s (pid %lld)",
			      p->process, (long long)p->pid);
	else if (p->process)
		k += snprintf(buf + k, n - (size_t)k, ": %.200s", p->process);
	else if (p->pid)
		k += snprintf(buf + k, n - (size_t)k, ": pid %lld",
			      (long long)p->pid);
	if (k > 0 && (size_t)k < n && p->duration_nanos)
		k += snprintf(buf + k, n - (size_t)k, ", %s",
			      prof_fmt_value(p->duration_nanos, "nanoseconds",
					     dur, sizeof(dur)));
	/* what a frame's width is: the sample type and its unit */
	const struct rtd_profile_type *t = &p->types[type];
	if (k > 0 && (size_t)k < n && t->unit && *t->unit &&
	    strcmp(t->unit, t->type) != 0)
		snprintf(buf + k, n - (size_t)k, ", weight: %s (%s)", t->type,
			 t->unit);
	else if (k > 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, ", weight: %s", t->type);
}

bool prof_ctx_no_thread(const rtd_profile *p, const struct prof_ctx *c,
			void *arg)
{
	(void)p, (void)arg;
	return !c->pid && !c->tid && !c->thread;
}

int rtd_profile_write(const rtd_profile *p, enum rtd_profile_format fmt,
		      FILE *f, const struct rtd_profile_write_opts *o)
{
	struct rtd_profile_write_opts d;
	if (rtd_opts_copy(&d, sizeof(d), o, RTD_OPTS_END(rtd_profile_write_opts, thread_roots)))
		return -RTD_E_INVAL;
	int type = prof_type_index(p, d.type);
	if (type < 0)
		return type;
	switch (fmt) {
	case RTD_PROFILE_FMT_FOLDED:
		return prof_write_folded(p, f, (size_t)type, d.thread_roots);
	case RTD_PROFILE_FMT_PPROF:
		return prof_write_pprof(p, f);
	case RTD_PROFILE_FMT_TOP:
		return prof_write_top(p, f, (size_t)type, d.top ? d.top : 30);
	case RTD_PROFILE_FMT_SVG:
		return prof_write_svg(p, f, (size_t)type, &d);
	case RTD_PROFILE_FMT_SPEEDSCOPE:
		return prof_write_speedscope(p, f, (size_t)type, &d);
	default:
		return -RTD_E_INVAL;
	}
}
