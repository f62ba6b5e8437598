/* SPDX-License-Identifier: MIT */
/*
 * offcpu_waits: three threads that wait in known functions and time their
 * own waits, for the off-CPU profiler's tests and benchmark.
 *
 *   wait_sleep   nanosleep                     (sleeper thread)
 *   wait_pipe    a blocking read of a pipe     (reader thread; a feeder
 *                                               thread writes a byte
 *                                               every PIPE_MS)
 *   wait_mutex   a contended pthread mutex     (locker thread; a holder
 *                                               thread keeps it HOLD_MS)
 *
 * Each wait is timed by its caller around the call (CLOCK_MONOTONIC), so
 * any off-CPU time whose stack holds wait_X lies inside the measured time.
 * At the end it prints, per function, "wait NAME CALLS SECONDS", and per
 * waiting thread "thread NAME TID WALL CPU" for its NAME_body function
 * (wall and CLOCK_THREAD_CPUTIME_ID read just before and after it):
 * wall = CPU + the off-CPU time of stacks holding NAME_body.
 *
 * usage: offcpu_waits [ROUNDS] [SPIN]   (default 15 rounds; SPIN: busy
 * loop iterations between waits, for the benchmark's CPU side; ROUNDS 0:
 * until SIGUSR1, for a test that measures while it runs however slowly
 * the machine lets it; it then ends its rounds and prints as usual)
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SLEEP_MS 20
#define PIPE_MS 30
#define HOLD_MS 25

static int rounds = 15;
static atomic_int stop; /* rounds 0: set once SIGUSR1 came */
static long spin_n;
static int pipe_fd[2], go_fd[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;

struct waits {
	const char *name;
	int calls;
	double secs;
	double max; /* the longest one: a loaded machine stretches a wait */
};

struct thr {
	const char *name;
	pid_t tid;
	double wall, cpu, cpu0;
	struct waits w;
};

static double now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* another round? Round i of ROUNDS, or, with ROUNDS 0, until stopped. */
static int more(int i)
{
	return rounds ? i < rounds : !atomic_load(&stop);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {0, (long)ms * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static __attribute__((noinline)) void spin(void)
{
	for (long i = 0; i < spin_n; i++)
		sink += (unsigned long)i * 7;
}

/* The waits: each calls a helper, so that with frame pointers (libc has
 * none: its leaf hides its caller, as in perf) wait_X itself is seen. */
static __attribute__((noinline)) void do_sleep(void) { sleep_ms(SLEEP_MS); }
static __attribute__((noinline)) void wait_sleep(void) { do_sleep(); __asm__ volatile(""); }

static int pipe_open = 1; /* the reader's: 0 once the feeder closed */

static __attribute__((noinline)) void do_read(void)
{
	char c;
	ssize_t n = read(pipe_fd[0], &c, 1);
	if (n < 0)
		abort();
	pipe_open = n == 1;
}
static __attribute__((noinline)) void wait_pipe(void) { do_read(); __asm__ volatile(""); }

static __attribute__((noinline)) void do_lock(void) { pthread_mutex_lock(&mu); }
static __attribute__((noinline)) void wait_mutex(void) { do_lock(); __asm__ volatile(""); }

static void timed(void (*fn)(void), struct waits *w)
{
	double t0 = now(CLOCK_MONOTONIC);
	fn();
	double d = now(CLOCK_MONOTONIC) - t0;
	w->secs += d;
	if (d > w->max)
		w->max = d;
	w->calls++;
}

static void begin(struct thr *t)
{
	t->tid = (pid_t)syscall(SYS_gettid);
	t->cpu0 = now(CLOCK_THREAD_CPUTIME_ID);
	t->wall = now(CLOCK_MONOTONIC);
}

static void end(struct thr *t)
{
	t->wall = now(CLOCK_MONOTONIC) - t->wall;
	t->cpu = now(CLOCK_THREAD_CPUTIME_ID) - t->cpu0;
}

static __attribute__((noinline)) void sleeper_body(struct thr *t)
{
	for (int i = 0; more(i); i++) {
		spin();
		timed(wait_sleep, &t->w);
	}
}

static void *sleeper(void *arg)
{
	struct thr *t = arg;
	begin(t);
	sleeper_body(t);
	end(t);
	return NULL;
}

static void *feeder(void *arg)
{
	(void)arg;
	for (int i = 0; more(i); i++) {
		sleep_ms(PIPE_MS);
		if (write(pipe_fd[1], "x", 1) != 1)
			abort();
	}
	close(pipe_fd[1]); /* the reader's last read: end of file */
	return NULL;
}

static __attribute__((noinline)) void reader_body(struct thr *t)
{
	/* with ROUNDS 0 until the feeder is done (that last wait counts) */
	for (int i = 0; rounds ? i < rounds : pipe_open; i++) {
		spin();
		timed(wait_pipe, &t->w);
	}
}

static void *reader(void *arg)
{
	struct thr *t = arg;
	begin(t);
	reader_body(t);
	end(t);
	return NULL;
}

static void *holder(void *arg)
{
	(void)arg;
	for (int i = 0; more(i); i++) {
		pthread_mutex_lock(&mu);
		if (write(go_fd[1], "g", 1) != 1)
			abort();
		sleep_ms(HOLD_MS);
		pthread_mutex_unlock(&mu);
		sleep_ms(5); /* the locker takes it meanwhile */
	}
	close(go_fd[1]); /* the locker's last wait_go: end of file */
	return NULL;
}

static __attribute__((noinline)) int wait_go(void)
{
	char c;
	ssize_t n = read(go_fd[0], &c, 1);
	if (n < 0)
		abort();
	return n == 1;
}

static __attribute__((noinline)) void locker_body(struct thr *t)
{
	for (int i = 0; !rounds || i < rounds; i++) {
		if (!wait_go()) /* the holder has the mutex now, or is done */
			break;
		spin();
		timed(wait_mutex, &t->w);
		pthread_mutex_unlock(&mu);
	}
}

static void *locker(void *arg)
{
	struct thr *t = arg;
	begin(t);
	locker_body(t);
	end(t);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		spin_n = atol(argv[2]);
	if (rounds < 0 || pipe(pipe_fd) || pipe(go_fd))
		return 2;
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (!rounds) /* the threads inherit it: only sigwait below takes it */
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	struct thr ts[3] = {{.name = "sleeper", .w = {"wait_sleep", 0, 0, 0}},
			    {.name = "reader", .w = {"wait_pipe", 0, 0, 0}},
			    {.name = "locker", .w = {"wait_mutex", 0, 0, 0}}};
	pthread_t th[5];
	double t0 = now(CLOCK_MONOTONIC);
	pthread_create(&th[0], NULL, sleeper, &ts[0]);
	pthread_create(&th[1], NULL, reader, &ts[1]);
	pthread_create(&th[2], NULL, feeder, NULL);
	pthread_create(&th[3], NULL, locker, &ts[2]);
	pthread_create(&th[4], NULL, holder, NULL);
	if (!rounds) {
		int sig;
		sigwait(&usr1, &sig);
		atomic_store(&stop, 1);
	}
	for (int i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 3; i++)
		printf("wait %s %d %.6f %.6f\n", ts[i].w.name, ts[i].w.calls,
		       ts[i].w.secs, ts[i].w.max);
	for (int i = 0; i < 3; i++)
		printf("thread %s %d %.6f %.6f\n", ts[i].name, (int)ts[i].tid,
		       ts[i].wall, ts[i].cpu);
	printf("elapsed %.6f\n", now(CLOCK_MONOTONIC) - t0);
	return 0;
}
