/* SPDX-License-Identifier: MIT */
/* perf_trace.c - 'rtdiag perf trace': decoded events live, one per line. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_format.h"
#include "common/buf.h"
#include "perf_cli.h"

#define MAX_SPECS 64

struct spec {
	enum { SPEC_TP, SPEC_UPROBE, SPEC_KPROBE } kind;
	char *name;   /* tracepoint name or probe spec */
	char *filter; /* tracepoint filter, or NULL */
};

struct trace_out {
	bool json;
	rtd_buf line;
	uint64_t lines;
	int err;
	struct cli_timeline tlo; /* --format perfetto|chrome-json, -o FILE */
	rtd_tl_perf *tla;
};

/* Numbers without printf: this runs once per field of every event. */
static void put_u64(rtd_buf *b, uint64_t v)
{
	char t[24];
	int i = 24;
	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	rtd_buf_append(b, t + i, (size_t)(24 - i));
}

static void put_i64(rtd_buf *b, int64_t v)
{
	if (v < 0) {
		rtd_buf_putc(b, '-');
		put_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(b, (uint64_t)v);
	}
}

static void put_hex(rtd_buf *b, uint64_t v)
{
	char t[18];
	int i = 18;
	do {
		t[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	t[--i] = 'x';
	t[--i] = '0';
	rtd_buf_append(b, t + i, (size_t)(18 - i));
}

/* v as exactly width digits, zero-padded (v < 10^width). */
static void put_fixed(rtd_buf *b, uint64_t v, int width)
{
	char t[20];
	for (int i = width - 1; i >= 0; i--) {
		t[i] = (char)('0' + v % 10);
		v /= 10;
	}
	rtd_buf_append(b, t, (size_t)width);
}

/* Text: quoted with C escapes. */
static void put_text_str(rtd_buf *b, const char *s, size_t n)
{
	rtd_buf_putc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			rtd_buf_printf(b, "\\%c", c);
		else if (c == '\n')
			rtd_buf_puts(b, "\\n");
		else if (c == '\t')
			rtd_buf_puts(b, "\\t");
		else if (c < 0x20 || c == 0x7f)
			rtd_buf_printf(b, "\\x%02x", c);
		else
			rtd_buf_putc(b, (char)c);
	}
	rtd_buf_putc(b, '"');
}

static void put_value(rtd_buf *b, const struct rtd_perf_value *v, bool json)
{
	switch (v->kind) {
	case RTD_PERF_FIELD_INT:
		put_i64(b, v->i);
		break;
	case RTD_PERF_FIELD_UINT:
		if (v->is_pointer) {
			if (json)
				rtd_buf_putc(b, '"');
			put_hex(b, v->u);
			if (json)
				rtd_buf_putc(b, '"');
		} else {
			put_u64(b, v->u);
		}
		break;
	case RTD_PERF_FIELD_STRING:
		if (json)
			rtd_buf_json_str(b, v->str, v->len);
		else
			put_text_str(b, v->str, v->len);
		break;
	case RTD_PERF_FIELD_ARRAY: {
		unsigned es = v->elem_size;
		if (es != 1 && es != 2 && es != 4 && es != 8)
			es = 1;
		size_t n = v->len / es;
		rtd_buf_putc(b, '[');
		for (size_t i = 0; i < n && i < 256; i++) {
			uint64_t x = 0;
			for (unsigned k = 0; k < es; k++)
				x |= (uint64_t)v->data[i * es + k] << (8 * k);
			rtd_buf_printf(b, i ? ",%llu" : "%llu",
				       (unsigned long long)x);
		}
		if (n > 256)
			rtd_buf_puts(b, json ? "" : ",...");
		rtd_buf_putc(b, ']');
		break;
	}
	}
}

/* Nothing more until new records arrive: show what we have. */
static void on_idle(void *ctx)
{
	(void)ctx;
	fflush(stdout);
}

static int on_record(const struct rtd_perf_sample *s, void *ctx)
{
	struct trace_out *o = ctx;
	if (o->tla)
		return rtd_tl_perf_record(o->tla, s);
	rtd_buf *b = &o->line;
	if (s->type == PERF_RECORD_LOST || s->type == PERF_RECORD_LOST_SAMPLES) {
		fflush(stdout);
		fprintf(stderr, "rtdiag: cpu %u: %llu events lost (the ring was "
				"full: raise -m or filter more)\n",
			s->cpu, (unsigned long long)s->rec.lost.lost);
		return 0;
	}
	if (s->type != PERF_RECORD_SAMPLE || !s->event)
		return 0;
	rtd_buf_reset(b);
	const char *name = rtd_perf_event_name(s->event);
	const char *sym = rtd_perf_event_symbol(s->event);
	unsigned nf = rtd_perf_event_nfields(s->event);
	if (o->json) {
		rtd_buf_printf(b, "{\"time_ns\":%llu,\"cpu\":%u,\"pid\":%u,"
				  "\"tid\":%u,\"event\":",
			       (unsigned long long)s->time, s->cpu, s->pid,
			       s->tid);
		rtd_buf_json_str(b, name, strlen(name));
		if (sym) {
			rtd_buf_puts(b, ",\"symbol\":");
			rtd_buf_json_str(b, sym, strlen(sym));
		}
		if (s->has & PERF_SAMPLE_IP)
			rtd_buf_printf(b, ",\"ip\":\"0x%llx\"",
				       (unsigned long long)s->ip);
		rtd_buf_puts(b, ",\"fields\":{");
	} else {
		put_u64(b, s->time / 1000000000ull);
		rtd_buf_putc(b, '.');
		put_fixed(b, s->time % 1000000000ull, 9);
		rtd_buf_puts(b, " [");
		if (s->cpu < 1000)
			put_fixed(b, s->cpu, 3);
		else
			put_u64(b, s->cpu);
		rtd_buf_puts(b, "] ");
		put_u64(b, s->pid);
		rtd_buf_putc(b, '/');
		put_u64(b, s->tid);
		rtd_buf_putc(b, ' ');
		rtd_buf_puts(b, name);
		rtd_buf_putc(b, ':');
		if (sym) {
			rtd_buf_putc(b, ' ');
			rtd_buf_puts(b, sym);
		}
	}
	for (unsigned i = 0; i < nf; i++) {
		const struct rtd_perf_field *f = rtd_perf_event_field(s->event, i);
		struct rtd_perf_value v;
		int r = rtd_perf_sample_field_at(s, i, &v);
		if (o->json) {
			if (i)
				rtd_buf_putc(b, ',');
			rtd_buf_json_str(b, f->name, strlen(f->name));
			rtd_buf_putc(b, ':');
		} else {
			rtd_buf_putc(b, ' ');
			rtd_buf_puts(b, f->name);
			rtd_buf_putc(b, '=');
		}
		if (r)
			rtd_buf_puts(b, o->json ? "null" : "<truncated>");
		else
			put_value(b, &v, o->json);
	}
	rtd_buf_puts(b, o->json ? "}}\n" : "\n");
	if (fwrite(b->data, 1, b->len, stdout) != b->len) {
		o->err = errno ? errno : EIO;
		return 1; /* stdout closed (a pipe to head): stop */
	}
	o->lines++;
	return 0;
}

/* "sys:event/filter/" -> name and filter */
static int split_filter(const char *arg, struct spec *sp)
{
	const char *colon = strchr(arg, ':');
	const char *slash = colon ? strchr(colon, '/') : NULL;
	if (!slash) {
		sp->name = strdup(arg);
		return sp->name ? 0 : -ENOMEM;
	}
	size_t al = strlen(arg);
	if (arg[al - 1] != '/' || arg + al - 1 == slash)
		return -RTD_E_INVAL;
	sp->name = strndup(arg, (size_t)(slash - arg));
	sp->filter = strndup(slash + 1, (size_t)(arg + al - 1 - slash - 1));
	return sp->name && sp->filter ? 0 : -ENOMEM;
}

static bool parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || end == s || v > max)
		return false;
	*out = v;
	return true;
}

int perf_trace_main(int argc, char **argv)
{
	struct spec specs[MAX_SPECS];
	size_t nspec = 0;
	pid_t pid = 0;
	const char *cgroup = NULL;
	bool all = false, show_stats = false;
	unsigned long pages = 0, duration = 0;
	struct trace_out out = {0};
	const char *tl_fmt = NULL, *tl_out = NULL; /* a timeline instead of lines */
	char **cmd = NULL;
	int rc = CLI_USAGE;
	memset(specs, 0, sizeof(specs));

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--")) {
			cmd = argv + i + 1;
			if (!*cmd) {
				cli_usage("perf trace", "-- needs a COMMAND");
				goto done;
			}
			break;
		} else if (cli_is_help(a)) {
			rc = CLI_OK;
			cli_group_perf.help(stdout, "trace");
			goto done;
		} else if (!strcmp(a, "--json")) {
			out.json = true;
		} else if (!strcmp(a, "-a")) {
			all = true;
		} else if (!strcmp(a, "--stats")) {
			show_stats = true;
		} else if ((!strcmp(a, "-e") || !strcmp(a, "--uprobe") ||
			    !strcmp(a, "--kprobe") || !strcmp(a, "--filter") ||
			    !strcmp(a, "-p") || !strcmp(a, "--cgroup") ||
			    !strcmp(a, "-m") || !strcmp(a, "--duration") ||
			    !strcmp(a, "--format") || !strcmp(a, "-o"))) {
			if (!v) {
				cli_usage("perf trace", "%s needs a value", a);
				goto done;
			}
			i++;
			if (!strcmp(a, "--filter")) {
				if (!nspec || specs[nspec - 1].kind != SPEC_TP) {
					cli_usage("perf trace", "--filter must follow -e");
					goto done;
				}
				free(specs[nspec - 1].filter);
				specs[nspec - 1].filter = strdup(v);
				continue;
			}
			if (!strcmp(a, "-p")) {
				unsigned long p;
				if (!parse_uint(v, 0x7fffffff, &p) || !p) {
					cli_usage("perf trace", "-p %s: not a process id", v);
					goto done;
				}
				pid = (pid_t)p;
				continue;
			}
			if (!strcmp(a, "--cgroup")) {
				cgroup = v;
				continue;
			}
			if (!strcmp(a, "--format") || !strcmp(a, "-o")) {
				*(a[1] == 'o' ? &tl_out : &tl_fmt) = v;
				continue;
			}
			if (!strcmp(a, "-m")) {
				if (!parse_uint(v, 65536, &pages) || !pages ||
				    (pages & (pages - 1))) {
					cli_usage("perf trace", "-m %s: want a power of two (pages per CPU)", v);
					goto done;
				}
				continue;
			}
			if (!strcmp(a, "--duration")) {
				if (!parse_uint(v, 86400 * 365, &duration) || !duration) {
					cli_usage("perf trace", "--duration %s: want whole seconds", v);
					goto done;
				}
				continue;
			}
			if (nspec == MAX_SPECS) {
				cli_usage("perf trace", "at most %d events", MAX_SPECS);
				goto done;
			}
			struct spec *sp = &specs[nspec++];
			if (!strcmp(a, "-e")) {
				sp->kind = SPEC_TP;
				if (split_filter(v, sp)) {
					cli_usage("perf trace", "-e %s: want SUBSYS:EVENT or SUBSYS:EVENT/FILTER/", v);
					goto done;
				}
			} else {
				sp->kind = !strcmp(a, "--uprobe") ? SPEC_UPROBE : SPEC_KPROBE;
				sp->name = strdup(v);
			}
		} else {
			cli_usage("perf trace", "unknown option '%s'", a);
			goto done;
		}
	}
	if (!nspec) {
		cli_usage("perf trace", "no event: give -e SUBSYS:EVENT or --uprobe SPEC");
		goto done;
	}
	if ((pid != 0) + (cgroup != NULL) + all + (cmd != NULL) > 1) {
		cli_usage("perf trace", "-p, --cgroup, -a and -- COMMAND exclude each other");
		goto done;
	}

	rc = CLI_FAIL;
	struct perf_child child = {0};
	bool have_child = false;
	if (cmd) {
		int r = perf_child_start(&child, cmd);
		if (r) {
			cli_fail("%s: cannot start: %s", cmd[0], strerror(-r));
			goto done;
		}
		have_child = true;
		pid = child.pid;
	}
	struct rtd_perf_opts o = {.sz = sizeof(o)};
	o.ring_pages = (unsigned)pages;
	if (pid) {
		o.pids = &pid;
		o.npids = 1;
		o.flags = RTD_PERF_INHERIT;
		if (cmd)
			o.flags |= RTD_PERF_ENABLE_ON_EXEC;
	}
	if (cgroup) {
		o.cgroups = &cgroup;
		o.ncgroups = 1;
	}
	struct rtd_perf_monitor *m = NULL;
	int r = rtd_perf_monitor_new(&o, &m);
	if (r) {
		if (pid && !cmd && r == -RTD_E_NOTFOUND)
			cli_fail("pid %d: no such process", (int)pid);
		else if (cgroup && r == -RTD_E_NOTFOUND)
			cli_fail("cgroup %s: not found (give a path relative to the cgroup v2 mount, or an absolute one)", cgroup);
		else
			cli_fail("cannot set up perf_event: %s", rtd_strerror(r));
		goto kill_child;
	}
	for (size_t i = 0; i < nspec; i++) {
		struct spec *sp = &specs[i];
		if (sp->kind == SPEC_TP) {
			r = rtd_perf_monitor_add_tracepoint(m, sp->name, sp->filter, NULL);
		} else {
			struct rtd_perf_probe p;
			enum rtd_perf_event_kind k = sp->kind == SPEC_UPROBE ? RTD_PERF_UPROBE : RTD_PERF_KPROBE;
			r = rtd_perf_probe_parse(k, sp->name, &p);
			if (r) {
				cli_fail("%s '%s': want %s", k == RTD_PERF_UPROBE ? "--uprobe" : "--kprobe", sp->name,
					 k == RTD_PERF_UPROBE ? "BINARY:SYMBOL[+OFF][%return] [NAME=FETCHARG...]"
							      : "SYMBOL[+OFF][%return] [NAME=FETCHARG...]");
				goto free_m;
			}
			r = rtd_perf_monitor_add_probe(m, &p, NULL);
			rtd_perf_probe_clear(&p);
		}
		if (r) {
			perf_cli_fail(m, sp->name, r);
			goto free_m;
		}
	}
	rtd_buf_init(&out.line, RTD_CAP_LINE);
	/* few large writes; flushed whenever the monitor goes idle, so the
	 * output stays live on a terminal and in a pipe */
	static char obuf[1 << 20];
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	rtd_perf_monitor_set_idle(m, on_idle);
	perf_cli_signals(m, (unsigned)duration);
	if (have_child) {
		int e = perf_child_go(&child);
		have_child = false;
		if (e) {
			cli_fail("%s: cannot run: %s", cmd[0], strerror(e));
			waitpid(child.pid, NULL, 0);
			goto free_m;
		}
	}
	if (tl_fmt || tl_out) {
		struct cli_format f;
		if (cli_format_pick("perf trace", tl_fmt, tl_out, CLI_FMT_TIMELINE,
				    "perfetto", &f) ||
		    cli_timeline_open(&out.tlo, &f, tl_out) ||
		    !(out.tla = rtd_tl_perf_new(out.tlo.tl, NULL))) {
			if (out.tlo.tl)
				cli_timeline_close(&out.tlo, false);
			goto free_m;
		}
	}
	r = rtd_perf_monitor_run(m, on_record, &out);
	if (out.tla) {
		rtd_tl_perf_free(out.tla);
		out.tla = NULL;
		if (cli_timeline_close(&out.tlo, true))
			r = r < 0 ? r : -EIO;
	}
	perf_cli_signals(NULL, 0);
	fflush(stdout);
	struct rtd_perf_stats st = {.sz = sizeof(st)};
	rtd_perf_monitor_stats(m, &st);
	if (r < 0) {
		perf_cli_fail(m, "reading events", r);
	} else if (out.err && out.err != EPIPE) {
		cli_fail("writing output: %s", strerror(out.err));
	} else {
		rc = CLI_OK;
	}
	if (show_stats)
		fprintf(stderr,
			"rtdiag: %llu records (%llu samples) from %u rings in %llu rounds, "
			"%llu wakeups; lost %llu (%llu in LOST records), %llu bad; "
			"%llu out of order; max delay from event to delivery %.3f ms\n",
			(unsigned long long)st.records, (unsigned long long)st.samples,
			st.nrings, (unsigned long long)st.rounds,
			(unsigned long long)st.wakeups, (unsigned long long)st.lost,
			(unsigned long long)st.lost_in_records,
			(unsigned long long)st.bad_records, (unsigned long long)st.late,
			(double)st.max_latency_ns / 1e6);
	if (st.lost || st.lost_samples) {
		fprintf(stderr, "rtdiag: %llu events lost in total:",
			(unsigned long long)(st.lost + st.lost_samples));
		for (unsigned i = 0; i < st.nrings && i < 256; i++)
			if (st.ring_lost[i])
				fprintf(stderr, " ring %u: %llu", i,
					(unsigned long long)st.ring_lost[i]);
		fprintf(stderr, "\n");
	}
	if (cmd)
		waitpid(pid, NULL, 0);
free_m:
	rtd_buf_free(&out.line);
	rtd_perf_monitor_free(m);
kill_child:
	if (have_child)
		perf_child_abort(&child);
done:
	for (size_t i = 0; i < nspec; i++) {
		free(specs[i].name);
		free(specs[i].filter);
	}
	return rc;
}
