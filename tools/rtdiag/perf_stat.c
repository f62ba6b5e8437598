/* SPDX-License-Identifier: MIT */
/* perf_stat.c - 'rtdiag perf stat': counters in perf stat's layout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "common/log.h"
#include "perf_cli.h"

#define MAX_COUNTERS 64

/* Alive and not a zombie (a zombie's counters no longer move). */
static bool proc_alive(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

struct counter {
	char *name;
	struct rtd_perf_event *ev;
	int err; /* not supported, ... */
};

/* Where counts go: stderr by default, as perf does, so they never mix with
 * the command's own output; -o FILE writes them to a file instead. */
static FILE *stat_out;

static void print_count(const struct counter *c, const struct rtd_perf_count *v,
			double task_ms, double elapsed_s)
{
	if (c->err) {
		fprintf(stat_out, "   %-16s      %-32s\n",
		       c->err == -RTD_E_PERF_NOTSUPP ? "<not supported>"
						      : "<not counted>",
		       c->name);
		return;
	}
	double sec = task_ms > 0 ? task_ms / 1e3 : elapsed_s;
	if (!strcmp(c->name, "task-clock") || !strcmp(c->name, "cpu-clock")) {
		double ms = v->scaled / 1e6;
		fprintf(stat_out, "%18.2f msec %-32s #  %7.3f CPUs utilized          \n",
		       ms, c->name, elapsed_s > 0 ? ms / 1e3 / elapsed_s : 0);
	} else {
		double rate = sec > 0 ? v->scaled / sec : 0;
		const char *unit = "/sec";
		if (rate >= 1e9) {
			rate /= 1e9;
			unit = "G/sec";
		} else if (rate >= 1e6) {
			rate /= 1e6;
			unit = "M/sec";
		} else if (rate >= 1e3) {
			rate /= 1e3;
			unit = "K/sec";
		}
		fprintf(stat_out, "%18.0f      %-32s #  %7.3f %-5s                \n",
		       v->scaled, c->name, rate, unit);
	}
	if (v->multiplexed && v->time_enabled)
		fprintf(stat_out, "%18s      (%.2f%%)\n", "",
		       100.0 * (double)v->time_running / (double)v->time_enabled);
}

int perf_stat_main(int argc, char **argv)
{
	struct counter cs[MAX_COUNTERS];
	int group_of[MAX_COUNTERS];
	size_t nc = 0;
	char *events = NULL;
	pid_t pid = 0;
	unsigned long duration = 0;
	char **cmd = NULL;
	const char *out_path = NULL;
	int rc = CLI_USAGE;
	memset(cs, 0, sizeof(cs));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			cmd = argv + i + 1;
			break;
		} else if (cli_is_help(a)) {
			cli_group_perf.help(stdout, "stat");
			return CLI_OK;
		} else if (!strcmp(a, "-o") && i + 1 < argc) {
			out_path = argv[++i];
		} else if ((!strcmp(a, "-e") || !strcmp(a, "-p") ||
			    !strcmp(a, "--duration")) && i + 1 < argc) {
			const char *v = argv[++i];
			char *end;
			if (!strcmp(a, "-e")) {
				size_t ol = events ? strlen(events) : 0;
				char *n = realloc(events, ol + strlen(v) + 2);
				if (!n)
					return cli_fail("out of memory");
				if (ol)
					n[ol++] = ',';
				strcpy(n + ol, v);
				events = n;
			} else if (!strcmp(a, "-p")) {
				long p = strtol(v, &end, 10);
				if (*end || p <= 0) {
					free(events);
					return cli_usage("perf stat", "-p %s: not a process id", v);
				}
				pid = (pid_t)p;
			} else {
				duration = strtoul(v, &end, 10);
				if (*end || !duration) {
					free(events);
					return cli_usage("perf stat", "--duration %s: want whole seconds", v);
				}
			}
		} else {
			free(events);
			return cli_usage("perf stat", "unknown option or missing value '%s'", a);
		}
	}
	if ((!cmd || !*cmd) && !pid) {
		free(events);
		return cli_usage("perf stat", "give -p PID or -- COMMAND ARGS");
	}
	if (cmd && *cmd && pid) {
		free(events);
		return cli_usage("perf stat", "-p and -- COMMAND exclude each other");
	}
	if (!events)
		events = strdup("task-clock,context-switches,cpu-migrations,page-faults");
	/* split "a,{b,c},d": braces make groups */
	int group = -1, ngroups = 0;
	for (char *p = events; p && *p;) {
		bool open = *p == '{';
		if (open) {
			p++;
			group = ngroups++;
		}
		size_t l = strcspn(p, ",}");
		bool close = p[l] == '}';
		if (!l || nc == MAX_COUNTERS) {
			free(events);
			for (size_t i = 0; i < nc; i++)
				free(cs[i].name);
			return cli_usage("perf stat", "bad event list (want EVENT[,EVENT...], '{a,b}' for a group)");
		}
		cs[nc].name = strndup(p, l);
		group_of[nc] = group >= 0 ? group : ngroups++;
		nc++;
		p += l;
		if (close) {
			group = -1;
			p++;
		}
		if (*p == ',')
			p++;
	}
	free(events);

	stat_out = stderr;
	if (out_path && !(stat_out = fopen(out_path, "w"))) {
		for (size_t i = 0; i < nc; i++)
			free(cs[i].name);
		return cli_fail("%s: %s", out_path, strerror(errno));
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
	o.pids = &pid;
	o.npids = 1;
	o.flags = RTD_PERF_INHERIT | (cmd ? RTD_PERF_ENABLE_ON_EXEC : 0);
	struct rtd_perf_monitor *m = NULL;
	int r = rtd_perf_monitor_new(&o, &m);
	if (r) {
		if (!cmd && r == -RTD_E_NOTFOUND)
			cli_fail("pid %d: no such process", (int)pid);
		else
			cli_fail("cannot set up perf_event: %s", rtd_strerror(r));
		goto kill_child;
	}
	for (size_t i = 0; i < nc; i++) {
		struct rtd_perf_event *leader = NULL;
		for (size_t j = 0; j < i; j++)
			if (group_of[j] == group_of[i] && cs[j].ev) {
				leader = cs[j].ev;
				break;
			}
		r = rtd_perf_monitor_add_counter(m, cs[i].name, leader, &cs[i].ev);
		if (r == -RTD_E_PERF_NOTSUPP) {
			cs[i].err = r; /* printed as perf does */
		} else if (r) {
			perf_cli_fail(m, cs[i].name, r);
			goto free_m;
		}
	}
	struct timespec t0, t1;
	struct rusage ru = {0};
	int status = 0;
	perf_cli_signals(m, (unsigned)duration);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (have_child) {
		int e = perf_child_go(&child);
		have_child = false;
		if (e) {
			cli_fail("%s: cannot run: %s", cmd[0], strerror(e));
			waitpid(child.pid, NULL, 0);
			goto free_m;
		}
		while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
			;
	} else {
		/* until Ctrl-C, the duration, or the process's end */
		while (proc_alive(pid) && !perf_cli_child_exited()) {
			struct timespec ts = {0, 50000000};
			if (nanosleep(&ts, NULL) && errno == EINTR &&
			    !perf_cli_child_exited())
				break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	perf_cli_signals(NULL, 0);
	double elapsed = (double)(t1.tv_sec - t0.tv_sec) +
			 (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	struct rtd_perf_count vals[MAX_COUNTERS];
	double task_ms = 0;
	for (size_t i = 0; i < nc; i++) {
		memset(&vals[i], 0, sizeof(vals[i]));
		if (cs[i].err)
			continue;
		r = rtd_perf_event_count(cs[i].ev, &vals[i]);
		if (r) {
			cs[i].err = r;
			continue;
		}
		if (!strcmp(cs[i].name, "task-clock"))
			task_ms = vals[i].scaled / 1e6;
	}
	fprintf(stat_out, "\n Performance counter stats for ");
	if (cmd) {
		fprintf(stat_out, "'");
		for (char **a = cmd; *a; a++)
			fprintf(stat_out, "%s%s", a == cmd ? "" : " ", *a);
		fprintf(stat_out, "':\n\n");
	} else {
		fprintf(stat_out, "process id '%d':\n\n", (int)pid);
	}
	for (size_t i = 0; i < nc; i++)
		print_count(&cs[i], &vals[i], task_ms, elapsed);
	fprintf(stat_out, "\n%17.9f seconds time elapsed\n\n", elapsed);
	if (cmd) {
		fprintf(stat_out, "%17.9f seconds user\n",
		       (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6);
		fprintf(stat_out, "%17.9f seconds sys\n\n",
		       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	}
	fflush(stat_out);
	rc = CLI_OK;
	if (cmd && WIFEXITED(status) && WEXITSTATUS(status))
		rc = WEXITSTATUS(status); /* like perf: the command's status */
free_m:
	rtd_perf_monitor_free(m);
kill_child:
	if (have_child)
		perf_child_abort(&child);
done:
	if (stat_out && stat_out != stderr && fclose(stat_out) && rc == CLI_OK)
		rc = cli_fail("%s: %s", out_path, strerror(errno));
	stat_out = NULL;
	for (size_t i = 0; i < nc; i++)
		free(cs[i].name);
	return rc;
}
