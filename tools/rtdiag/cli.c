/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "rtdiag %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'rtdiag help %s'.\n", cmd);
	return CLI_USAGE;
}

int cli_callgraph(const char *s, int *mode, unsigned *stack)
{
	static const char *const modes[] = {"fp", "dwarf", "none"}; /* rtd_perf_callgraph */
	const char *comma = strchr(s, ',');
	size_t n = comma ? (size_t)(comma - s) : strlen(s);
	for (int k = 0; k < 3; k++) {
		if (strlen(modes[k]) != n || strncmp(s, modes[k], n))
			continue;
		if (comma) {
			char *end;
			unsigned long v = k == 1 ? strtoul(comma + 1, &end, 10) : 0;
			if (k != 1 || end == comma + 1 || *end || v < 8 || v > 65528)
				return -1;
			*stack = (unsigned)v;
		}
		*mode = k;
		return 0;
	}
	return -1;
}

char *cli_cmdline(const char *prefix, int argc, char **argv)
{
	size_t n = strlen(prefix) + 1;
	for (int i = 1; i < argc; i++)
		n += strlen(argv[i]) + 1;
	char *s = malloc(n);
	if (!s)
		return NULL;
	strcpy(s, prefix);
	for (int i = 1; i < argc; i++)
		strcat(strcat(s, " "), argv[i]);
	return s;
}

int cli_fail(const char *fmt, ...)
{
	va_list ap;
	cli_progress_done();
	fprintf(stderr, "rtdiag: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_FAIL;
}

static int progress_state = -1;
static bool progress_shown;

bool cli_progress_enabled(void)
{
	if (progress_state < 0)
		progress_state = isatty(STDERR_FILENO) ? 1 : 0;
	return progress_state == 1;
}

bool cli_threads_allowed(void)
{
	(void)cli_progress_enabled();
	const char *thr = getenv("RTDIAG_THREADS");
	return !(thr && strcmp(thr, "1") == 0);
}

bool cli_second_thread_pays(void)
{
	if (!cli_threads_allowed())
		return false;
	const char *thr = getenv("RTDIAG_THREADS");
	if (thr && !strcmp(thr, "2"))
		return true;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	double load;
	if (cpus < 2 || getloadavg(&load, 1) != 1)
		return cpus >= 2;
	return load + 1.0 <= (double)cpus;
}

void cli_progress(const char *fmt, ...)
{
	if (!cli_progress_enabled())
		return;
	va_list ap;
	fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	progress_shown = true;
}

void cli_progress_done(void)
{
	if (progress_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		progress_shown = false;
	}
}

FILE *cli_open_in(const char *path)
{
	if (strcmp(path, "-") == 0)
		return stdin;
	FILE *f = fopen(path, "rb");
	if (!f)
		cli_fail("%s: %s", path, strerror(errno));
	return f;
}

void cli_close_in(FILE *f)
{
	if (f && f != stdin)
		fclose(f);
}

bool cli_is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

const char *cli_bytes(double n, char *buf, size_t len)
{
	static const char *units[] = {"B", "kB", "MB", "GB", "TB"};
	unsigned u = 0;
	while (n >= 1000 && u < 4) {
		n /= 1000;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", n, units[u]);
	return buf;
}

static bool sub_known(const char *const *subs, const char *sub)
{
	for (; *subs; subs++)
		if (strcmp(*subs, sub) == 0)
			return true;
	return false;
}

int cli_unbuilt_run(const char *group, const char *const *subs, int argc,
		    char **argv)
{
	if (argc < 2)
		return cli_usage(group, "missing subcommand");
	if (!sub_known(subs, argv[1]))
		return cli_usage(group, "no subcommand '%s'", argv[1]);
	return cli_fail("%s %s: not built yet in this version", group,
			argv[1]);
}

bool cli_unbuilt_help(FILE *f, const char *group, const char *const *subs,
		      const char *sub)
{
	if (sub && !sub_known(subs, sub))
		return false;
	fprintf(f, "usage: rtdiag %s SUBCOMMAND ...\n\nsubcommands (not built "
		   "yet in this version):\n", group);
	for (; *subs; subs++)
		fprintf(f, "  %s\n", *subs);
	return true;
}
