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
	 ".pb.gz pprof, .gcdump; else the table)", 0, 0},
	{O_HFORMAT, "format", 'f', CLI_ARG_CHOICE, 0, "table|json|pprof|gcdump",
	 "the report's format (default table; gcdump: the .gcdump file "
	 "dotnet-gcdump and PerfView read)", 0, 0},
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

static int heap_report(const rtd_gcheap *h, FILE *f, int fmt, pid_t pid)
{
	struct rtd_gcheap_stats hs;
	rtd_gcheap_stats(h, &hs);
	if (fmt == 2)
		return heap_pprof(h, f);
	if (fmt == 3) {
		char name[256];
		struct rtd_gcheap_gcdump_info in = {
			.sz = sizeof(in), .pid = (int)pid,
			.process_name = pid ? dn_proc_name(pid, name, sizeof(name)) : NULL};
		return rtd_gcheap_write_gcdump(h, f, &in);
	}
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
		for (size_t i = 0; i < n && !err; i++) {
			fprintf(f, "%s\n  {\"type\": ", i ? "," : "");
			err = rtd_format_json_str(f, t[i].name);
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
	return err ? err : ferror(f) ? -EIO : 0;
}

/* The output's form: --format, or the name's extension (rtdiag/format.h's
 * table: .txt the table, .json the tree (a heap has no timeline), pprof's;
 * no other picture). Returns -1, or the usage error's exit code. */
static int gcdump_format(const struct cli_cmd *cmd, const char *out, int *fmt)
{
	size_t ol = out ? strlen(out) : 0;
	if (*fmt < 0 && ol > 7 && !strcmp(out + ol - 7, ".gcdump"))
		*fmt = 3; /* dotnet-gcdump's file */
	const struct rtd_format_ext *x = out ? rtd_format_ext_of(out) : NULL;
	if (*fmt < 0 && x) {
		*fmt = x->profile == RTD_PROFILE_FMT_PPROF ? 2
		       : !strcmp(x->ext, ".json") ? 1
		       : x->profile == RTD_PROFILE_FMT_TOP ? 0 : -1;
		if (*fmt < 0)
			return cli_cmd_usage(cmd, "%s: gcdump writes a table "
					     "(.txt), a JSON tree (.json), pprof "
					     "(.pb.gz) or a .gcdump; or give --format", out);
	}
	if (*fmt < 0)
		*fmt = 0;
	return -1;
}

/* Write the snapshot to -o (kept only when whole) or stdout. */
static int gcdump_write(rtd_gcheap *h, const char *out, int fmt,
			const struct rtd_gcheap_stats *hs, pid_t pid)
{
	struct cli_out o = {0};
	FILE *f = stdout;
	if (out) {
		if (cli_out_open(&o, out))
			return CLI_FAIL;
		f = o.f;
	}
	int rc = heap_report(h, f, fmt, pid);
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

static void gcdump_started(uint64_t id, int version, void *ctx)
{
	/* the id lets 'rtdiag dotnet stop' end it from elsewhere */
	fprintf(stderr, "rtdiag: %s: session %llu started (CollectTracing%d)\n",
		(const char *)ctx, (unsigned long long)id, version);
}

static void gcdump_tick(uint64_t bytes, uint64_t events, uint64_t dropped, void *ctx)
{
	(void)ctx;
	char b[32];
	cli_progress("collecting: %s, %llu events, %llu dropped",
		     cli_bytes((double)bytes, b, sizeof(b)),
		     (unsigned long long)events, (unsigned long long)dropped);
}

/* The heap-dump session (the library's rtd_gcheap_collect()) into @h;
 * CLI_OK, or an exit code after saying why. */
static int gcdump_collect(struct collect_args *a, rtd_gcheap *h,
			  struct rtd_gcheap_collect_result *res, char *target,
			  size_t tlen)
{
	dn_catch_signals();
	rtd_ipc_client *c = dn_connect(&a->t, 0, NULL);
	if (!c)
		return CLI_FAIL;
	snprintf(target, tlen, "%s", rtd_ipc_client_target(c));
	struct rtd_gcheap_collect_opts co = {
		.sz = sizeof(co), .buffer_mb = a->buffer_mb,
		.timeout_ms = (uint64_t)(a->duration * 1000), .cancel = &dn_stop_flag,
		.started = gcdump_started, .ctx = target,
		.tick = cli_progress_enabled() ? gcdump_tick : NULL};
	int rc = rtd_gcheap_collect(h, c, &co, res);
	if (res->session)
		cli_progress_done();
	int r = CLI_OK;
	if (rc && !res->session)
		r = dn_fail(c, rc);
	else if (rc)
		r = cli_fail("%s: reading the session's stream: %s", target,
			     rtd_strerror(rc));
	rtd_ipc_client_free(c);
	return r;
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
	a.duration = 60;
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
	if (!h)
		return cli_fail("out of memory");
	char target[256] = "";
	struct rtd_gcheap_collect_result res;
	r = gcdump_collect(&a, h, &res, target, sizeof(target));
	struct rtd_gcheap_stats hs;
	rtd_gcheap_stats(h, &hs);
	if (r == CLI_OK && res.heap_err == -RTD_E_CAP)
		r = cli_fail("%s: the heap has more than %llu objects (or its "
			     "references more than the cap): raise --max-objects; "
			     "nothing written", target,
			     (unsigned long long)hs.objects);
	else if (r == CLI_OK && res.heap_err)
		r = cli_fail("reading the heap: %s", rtd_strerror(res.heap_err));
	else if (r == CLI_OK && !hs.objects)
		r = cli_fail("%s: no heap walk arrived within %g s", target,
			     a.duration);
	if (r == CLI_OK) {
		int rc = rtd_gcheap_finish(h);
		if (rc)
			r = cli_fail("building the object graph: %s", rtd_strerror(rc));
	}
	bool dropped = r == CLI_OK && res.dropped > 0;
	if (dropped)
		fprintf(stderr, "rtdiag: %s: the runtime dropped %llu events of "
			"the heap walk (its buffer of %u MB filled): the snapshot "
			"is partial; give --buffer-mb more\n", target,
			(unsigned long long)res.dropped, a.buffer_mb);
	if (r == CLI_OK && !res.walk_ended && !dn_stop_flag)
		fprintf(stderr, "rtdiag: %s: the heap walk's GC did not end "
			"within %g s: the snapshot may be partial\n", target,
			a.duration);
	if (r == CLI_OK)
		r = gcdump_write(h, a.out, fmt, &hs, a.t.pid);
	if (r == CLI_OK && dropped)
		r = CLI_PARTIAL; /* written, but incomplete */
	rtd_gcheap_free(h);
	return r;
}

const struct cli_cmd dn_cmd_gcdump = {
	"dotnet gcdump", NULL,
	"a GC heap snapshot: types by retained size (dominator tree), as "
	"table, json, pprof or .gcdump", gcdump_opts, 0, 0, 0, cmd_gcdump,
	"The runtime runs a full blocking GC that walks the heap and sends "
	"every object\n(address, size, type), reference and root; the "
	"object graph is built and its\ndominator tree computed. Retained "
	"size of a type: its objects' own sizes plus\nwhat they alone keep "
	"alive, counting an object only when its immediate\ndominator is "
	"of another type. pprof: inuse_objects/inuse_space by the types on\n"
	"the dominator path from a root. Memory: about 40 bytes per object "
	"and 12 per\nreference (--max-objects caps it).\n"};
