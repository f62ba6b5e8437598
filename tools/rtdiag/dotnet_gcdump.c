/* SPDX-License-Identifier: MIT */
/*
 * dotnet_gcdump.c - 'rtdiag dotnet gcdump': the heap graph of librtdiag
 * (rtdiag/gcheap.h) as a table, JSON or pprof.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dotnet_cli.h"
#include "dotnet_session.h"
#include "out.h"
#include "rtdiag/format.h"

/* ---- gcdump ------------------------------------------------------------------- */

static const struct cli_opt gcdump_opts[] = {
	DN_TARGET_OPTS,
	{O_OUT, "output", 'o', CLI_ARG_STR, 0, "FILE",
	 "write the report to FILE (format from --format or the name: .json, "
	 ".pb.gz pprof; else the table)", 0, 0},
	{O_HFORMAT, "format", 'f', CLI_ARG_CHOICE, 0, "table|json|pprof",
	 "the report's format (default table)", 0, 0},
	{O_MAX_OBJECTS, "max-objects", 0, CLI_ARG_INT, 0, "N",
	 "refuse a heap of more objects (default 64 M: about 40 bytes each "
	 "and 12 per reference)", 1, 4e9},
	{O_BUFFER, "buffer-mb", 0, CLI_ARG_INT, 0, "N",
	 "the runtime's buffer for the walk's events (default 1024: a heap "
	 "of N million objects needs about 45*N MB)", 1, 16384},
	{O_DURATION, "timeout", 0, CLI_ARG_DURATION, CLI_OPT_POSITIVE, "TIME",
	 "wait at most TIME for the heap walk (default 60 s)", 0, 0},
	CLI_OLD(O_DURATION, NULL, 't', CLI_ARG_DURATION, CLI_OPT_POSITIVE,
		"TIME", "--timeout TIME (-t is --type)", 0, 0),
	{0},
};

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* pprof: inuse_objects/inuse_space by the types on the dominator path
 * from a root (at most 32 deep: deeper paths keep their last 32). */
static int heap_pprof(const rtd_gcheap *h, FILE *f)
{
	static const struct rtd_profile_type t[] = {
		{"inuse_objects", "count"}, {"inuse_space", "bytes"}};
	struct rtd_profile_opts po = {.sz = sizeof(po), .types = t, .ntypes = 2,
				      .default_type = 1};
	rtd_profile *p = rtd_profile_new2(&po);
	if (!p)
		return -ENOMEM;
	struct rtd_gcheap_stats hs;
	rtd_gcheap_stats(h, &hs);
	int err = 0;
	struct rtd_frame fr[32];
	for (uint64_t i = 0; i < hs.objects && !err; i++) {
		struct rtd_gcheap_object o;
		rtd_gcheap_object(h, i, &o);
		if (!o.retained)
			continue; /* unreachable */
		size_t n = 0;
		for (int64_t k = (int64_t)i; k >= 0 && n < 32;) {
			struct rtd_gcheap_object d;
			rtd_gcheap_object(h, (uint64_t)k, &d);
			fr[n++] = (struct rtd_frame){.name = d.type,
						     .kind = RTD_FRAME_MANAGED};
			k = d.idom;
		}
		int64_t v[2] = {1, (int64_t)o.size};
		struct rtd_sample smp = {.sz = sizeof(smp), .frames = fr,
					 .nframes = n, .leaf_first = true,
					 .values = v, .nvalues = 2};
		err = rtd_profile_add_sample(p, &smp);
	}
	if (!err)
		err = rtd_profile_write(p, RTD_PROFILE_FMT_PPROF, f, NULL);
	rtd_profile_free(p);
	return err;
}

static int heap_report(const rtd_gcheap *h, FILE *f, int fmt)
{
	struct rtd_gcheap_stats hs;
	rtd_gcheap_stats(h, &hs);
	if (fmt == 2)
		return heap_pprof(h, f);
	struct rtd_gcheap_type *t;
	size_t n;
	int err = rtd_gcheap_types(h, &t, &n);
	if (err)
		return err;
	if (fmt == 1) {
		fprintf(f, "{\"objects\": %llu, \"bytes\": %llu, "
			"\"reachable_bytes\": %llu, \"references\": %llu, "
			"\"dangling_references\": %llu, \"roots\": %llu, "
			"\"types\": [", (unsigned long long)hs.objects,
			(unsigned long long)hs.bytes,
			(unsigned long long)hs.reachable_bytes,
			(unsigned long long)hs.refs,
			(unsigned long long)hs.dangling,
			(unsigned long long)hs.roots);
		for (size_t i = 0; i < n; i++) {
			fprintf(f, "%s\n  {\"type\": ", i ? "," : "");
			json_str(f, t[i].name);
			fprintf(f, ", \"count\": %llu, \"size\": %llu, "
				"\"retained\": %llu}",
				(unsigned long long)t[i].count,
				(unsigned long long)t[i].size,
				(unsigned long long)t[i].retained);
		}
		fprintf(f, "\n]}\n");
	} else {
		fprintf(f, "%llu objects, %llu bytes (%llu reachable from %llu "
			"roots), %llu references\n\n%14s %10s %14s  %s\n",
			(unsigned long long)hs.objects,
			(unsigned long long)hs.bytes,
			(unsigned long long)hs.reachable_bytes,
			(unsigned long long)hs.roots,
			(unsigned long long)hs.refs, "Retained", "Count", "Size",
			"Type");
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%14llu %10llu %14llu  %s\n",
				(unsigned long long)t[i].retained,
				(unsigned long long)t[i].count,
				(unsigned long long)t[i].size, t[i].name);
	}
	free(t);
	return ferror(f) ? -EIO : 0;
}

/* The output's form: --format, or the name's extension (rtdiag/format.h's
 * table: .txt the table, .json the tree (a heap has no timeline), pprof's;
 * no other picture). Returns -1, or the usage error's exit code. */
static int gcdump_format(const struct cli_cmd *cmd, const char *out, int *fmt)
{
	const struct rtd_format_ext *x = out ? rtd_format_ext_of(out) : NULL;
	if (*fmt < 0 && x) {
		*fmt = x->profile == RTD_PROFILE_FMT_PPROF ? 2
		       : !strcmp(x->ext, ".json") ? 1
		       : x->profile == RTD_PROFILE_FMT_TOP ? 0 : -1;
		if (*fmt < 0)
			return cli_cmd_usage(cmd, "%s: gcdump writes a table "
					     "(.txt), a JSON tree (.json) or pprof "
					     "(.pb.gz); or give --format", out);
	}
	if (*fmt < 0)
		*fmt = 0;
	return -1;
}

/* Write the snapshot to -o (kept only when whole) or stdout. */
static int gcdump_write(rtd_gcheap *h, const char *out, int fmt,
			const struct rtd_gcheap_stats *hs)
{
	struct cli_out o = {0};
	FILE *f = stdout;
	if (out) {
		if (cli_out_open(&o, out))
			return CLI_FAIL;
		f = o.f;
	}
	int rc = heap_report(h, f, fmt);
	if (rc) {
		rc = cli_fail("%s: %s", out ? out : "stdout", rtd_strerror(rc));
		if (out)
			cli_out_abort(&o);
		return rc;
	}
	if (!out)
		return CLI_OK;
	if (cli_out_commit(&o))
		return CLI_FAIL;
	fprintf(stderr, "rtdiag: wrote %s (%llu objects, graph %.1f MB)\n", out,
		(unsigned long long)hs->objects, hs->memory / 1e6);
	return CLI_OK;
}

static int cmd_gcdump(int argc, char **argv)
{
	const struct cli_cmd *cmd = &dn_cmd_gcdump;
	struct collect_args a;
	struct cli_parser p;
	struct cli_val v;
	int id, r, fmt = -1;
	uint64_t max_objects = 0;
	memset(&a, 0, sizeof(a));
	a.rundown_wait = 30;
	a.duration = 60;
	a.no_rundown = true;
	a.no_stackwalk = true;
	/* the walk is written during one blocking GC: faster than any reader,
	 * so the runtime's buffer must hold most of it (256 MB dropped
	 * events of an 8 M object heap) */
	a.buffer_mb = 1024;
	cli_opt_init(&p, cmd, argc, argv);
	while ((id = cli_opt_next(&p, &v)) > 0) {
		if (dn_target_opt(id, &v, &a.t))
			continue;
		switch (id) {
		case O_OUT: a.out = v.str; break;
		case O_HFORMAT: fmt = (int)v.i; break;
		case O_MAX_OBJECTS: max_objects = (uint64_t)v.i; break;
		case O_DURATION: a.duration = v.d; break;
		case O_BUFFER: a.buffer_mb = (unsigned)v.i; break;
		}
	}
	if (id < 0)
		return cli_opt_exit(id);
	if ((r = dn_target_resolve(cmd, &a.t, true)) >= 0)
		return r;
	if ((r = gcdump_format(cmd, a.out, &fmt)) >= 0)
		return r;
	if (a.out && cli_out_check(a.out))
		return CLI_FAIL;
	struct rtd_gcheap_opts ho = {.sz = sizeof(ho), .max_objects = max_objects};
	rtd_gcheap *h = rtd_gcheap_new(&ho);
	if (!h || rtd_gcheap_request(&a.prov)) {
		rtd_gcheap_free(h);
		return cli_fail("out of memory");
	}
	struct sink_state st;
	if (sink_init(&st, &a, false)) {
		sink_free(&st);
		rtd_gcheap_free(h);
		rtd_ipc_providers_clear(&a.prov);
		return cli_fail("out of memory");
	}
	st.heap = h;
	struct session_end end;
	r = run_session(&a, &st, NULL, NULL, &end);
	struct rtd_gcheap_stats hs;
	rtd_gcheap_stats(h, &hs);
	if (r == CLI_OK && st.heap_rc == -RTD_E_CAP)
		r = cli_fail("%s: the heap has more than %llu objects (or its "
			     "references more than the cap): raise --max-objects; "
			     "nothing written", end.target,
			     (unsigned long long)hs.objects);
	else if (r == CLI_OK && st.heap_rc)
		r = cli_fail("reading the heap: %s", rtd_strerror(st.heap_rc));
	else if (r == CLI_OK && !hs.objects)
		r = cli_fail("%s: no heap walk arrived within %g s", end.target,
			     a.duration);
	if (r == CLI_OK) {
		int rc = rtd_gcheap_finish(h);
		if (rc)
			r = cli_fail("building the object graph: %s", rtd_strerror(rc));
	}
	struct rtd_nettrace_stats ns = {0};
	rtd_nettrace_stats(st.dec, &ns);
	bool dropped = r == CLI_OK && ns.dropped > 0;
	if (dropped)
		fprintf(stderr, "rtdiag: %s: the runtime dropped %llu events of "
			"the heap walk (its buffer of %u MB filled): the snapshot "
			"is partial; give --buffer-mb more\n", end.target,
			(unsigned long long)ns.dropped, a.buffer_mb);
	if (r == CLI_OK && !dn_stop_flag)
		fprintf(stderr, "rtdiag: %s: the heap walk's GC did not end "
			"within %g s: the snapshot may be partial\n", end.target,
			a.duration);
	if (r == CLI_OK)
		r = gcdump_write(h, a.out, fmt, &hs);
	if (r == CLI_OK && dropped)
		r = CLI_PARTIAL; /* written, but incomplete */
	sink_free(&st);
	rtd_gcheap_free(h);
	rtd_ipc_providers_clear(&a.prov);
	return r;
}

const struct cli_cmd dn_cmd_gcdump = {
	"dotnet gcdump", NULL,
	"a GC heap snapshot: types by retained size (dominator tree), as "
	"table, json or pprof", gcdump_opts, 0, 0, 0, cmd_gcdump,
	"The runtime runs a full blocking GC that walks the heap and sends "
	"every object\n(address, size, type), reference and root; the "
	"object graph is built and its\ndominator tree computed. Retained "
	"size of a type: its objects' own sizes plus\nwhat they alone keep "
	"alive, counting an object only when its immediate\ndominator is "
	"of another type. pprof: inuse_objects/inuse_space by the types on\n"
	"the dominator path from a root. Memory: about 40 bytes per object "
	"and 12 per\nreference (--max-objects caps it).\n"};
