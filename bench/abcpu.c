/*
 * bench/abcpu.c - run commands A/B interleaved and report their CPU time.
 *
 * Usage: abcpu [-n RUNS] [-o OUTFILE] [-i INFILE] -- CMD1 ... [-- CMD2 ...]...
 *
 * Each round runs every command once, in turn (A B C A B C ...), so a
 * change of the machine's load hits all of them alike. For each command it
 * prints the median, the minimum and the maximum of user+sys CPU time (from
 * wait4's rusage, microseconds, not the 10 ms of /usr/bin/time) and of wall
 * time, and the median of each command's ratio to the first. stdout of the
 * commands goes to OUTFILE (default /dev/null, truncated before each run),
 * stdin comes from INFILE (default /dev/null). A command that fails stops
 * the run (exit 1).
 *
 * Build: cc -O2 -o abcpu bench/abcpu.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CMDS 16

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run(char **argv, const char *in, const char *out, double *cpu, double *wall)
{
	double t0 = now();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fi = open(in, O_RDONLY), fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fi < 0 || fo < 0)
			_exit(126);
		dup2(fi, 0);
		dup2(fo, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) < 0)
		return -1;
	*wall = now() - t0;
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	int runs = 21, ncmd = 0;
	const char *out = "/dev/null", *in = "/dev/null";
	char **cmd[MAX_CMDS];
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "-i") && i + 1 < argc)
			in = argv[++i];
		else {
			fprintf(stderr, "usage: abcpu [-n RUNS] [-o OUT] [-i IN] -- CMD... [-- CMD...]\n");
			return 2;
		}
	}
	while (i < argc && ncmd < MAX_CMDS) {
		argv[i] = NULL; /* the "--" ends the previous command */
		cmd[ncmd++] = &argv[i + 1];
		for (i++; i < argc && strcmp(argv[i], "--"); i++)
			;
	}
	if (ncmd == 0 || runs < 1)
		return 2;
	double *cpu = calloc((size_t)(ncmd * runs), sizeof(double));
	double *wall = calloc((size_t)(ncmd * runs), sizeof(double));
	double *ratio = calloc((size_t)(ncmd * runs), sizeof(double));
	if (!cpu || !wall || !ratio)
		return 1;
	for (int r = 0; r < runs; r++)
		for (int c = 0; c < ncmd; c++)
			if (run(cmd[c], in, out, &cpu[c * runs + r], &wall[c * runs + r])) {
				fprintf(stderr, "abcpu: failed: %s\n", cmd[c][0]);
				return 1;
			}
	for (int c = 0; c < ncmd; c++)
		for (int r = 0; r < runs; r++)
			ratio[c * runs + r] = cpu[c * runs + r] / (cpu[r] > 0 ? cpu[r] : 1e-9);
	printf("%-6s %10s %10s %10s %10s %9s  command\n", "", "cpu med", "cpu min", "cpu max", "wall med", "cpu/1st");
	for (int c = 0; c < ncmd; c++) {
		double *v = &cpu[c * runs];
		double m = median(v, runs);
		printf("cmd%-3d %8.2fms %8.2fms %8.2fms %8.2fms %8.3fx ", c + 1, m * 1e3, v[0] * 1e3,
		       v[runs - 1] * 1e3, median(&wall[c * runs], runs) * 1e3, median(&ratio[c * runs], runs));
		for (char **a = cmd[c]; *a; a++)
			printf(" %s", *a);
		printf("\n");
	}
	return 0;
}
