/* SPDX-License-Identifier: MIT */
/*
 * guard.c - the guardian: undoes what this process changed outside itself
 * when it ends in any way (rtdiag/guard.h).
 *
 * This process and the guardian share a SOCK_SEQPACKET socket pair: one
 * message per registration or unregistration, a perf map's folder passed
 * along as a descriptor (SCM_RIGHTS). The guardian learns this process has
 * ended from a pidfd (readable once it has exited, zombie or not: never
 * kill(pid, 0), which succeeds on a zombie), or from the socket's end when
 * there is no pidfd. It then reads what is still queued, waits (bounded)
 * for the pidfd so the dead process's perf descriptors are released, undoes
 * what is registered and exits. It is forked twice: nobody's child, it
 * is never left a zombie of this process, and this process's waitpid()s
 * never see it.
 */
#include "rtdiag/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/file.h"
#include "common/guard.h"
#include "common/log.h"

/* after this process's end: how long the guardian waits for it to be
 * fully gone, and how long it retries a probe still busy */
#define GUARD_EXIT_WAIT_MS 10000
#define GUARD_BUSY_TRIES 500 /* of 20 ms */

enum { G_HELLO = 1, G_ADD, G_DROP };
enum { K_PERFMAP = 1, K_PROBE };

/* one message; also what is kept of a registration on both sides */
struct gmsg {
	uint32_t op, id, kind;
	int32_t pid;
	unsigned long long start; /* K_PERFMAP: the process's start time */
	uint32_t flags;           /* GUARD_*_FILE, or 1 for a kprobe */
	char a[256];              /* the map file's name, or the tracefs */
	char b[128];              /* the probe's group */
	char c[128];              /* the probe's event */
};

struct gitem {
	struct gmsg m;
	int fd; /* K_PERFMAP: the map's folder, O_PATH */
};

struct gtable {
	struct gitem *v;
	size_t n;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_sock = -1;
static pid_t g_pid, g_owner;
static unsigned g_next = 1;
static struct gtable g_items;

/* ---- both sides ----------------------------------------------------------- */

static int table_add(struct gtable *t, const struct gmsg *m, int fd)
{
	if (t->n >= RTD_GUARD_MAX)
		return -RTD_E_CAP;
	if (!t->v) {
		t->v = calloc(RTD_GUARD_MAX, sizeof(*t->v));
		if (!t->v)
			return -ENOMEM;
	}
	t->v[t->n].m = *m;
	t->v[t->n].fd = fd;
	t->n++;
	return 0;
}

static struct gitem *table_find(struct gtable *t, unsigned id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].m.id == id)
			return &t->v[i];
	return NULL;
}

static void table_del(struct gtable *t, struct gitem *it)
{
	if (it->fd >= 0)
		close(it->fd);
	*it = t->v[--t->n];
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* @patient: the guardian retries a probe the dead process's descriptors
 * still hold; this process's own undo does not wait */
static int item_undo(const struct gitem *it, bool patient)
{
	const struct gmsg *m = &it->m;
	if (m->kind == K_PERFMAP)
		return dotnet_perfmap_undo(m->pid, m->start, it->fd, m->a,
					   m->flags);
	int r = perf_probe_undo(m->a, m->flags & 1, m->b, m->c);
	for (int i = 0; r == -EBUSY && patient && i < GUARD_BUSY_TRIES; i++) {
		sleep_ms(20);
		r = perf_probe_undo(m->a, m->flags & 1, m->b, m->c);
	}
	return r;
}

static int send_msg(int sock, const struct gmsg *m, int fd)
{
	struct iovec iov = {(void *)m, sizeof(*m)};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	ssize_t n;
	while ((n = sendmsg(sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return n == (ssize_t)sizeof(*m) ? 0 : n < 0 ? -errno : -EIO;
}

/* 1 with a message (and *fd, or -1), 0 at the end, or a negative errno */
static int recv_msg(int sock, struct gmsg *m, int *fd, int flags)
{
	struct iovec iov = {m, sizeof(*m)};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	*fd = -1;
	ssize_t n;
	while ((n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC)) < 0 &&
	       errno == EINTR)
		;
	if (n <= 0)
		return n == 0 ? 0 : -errno;
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	if (n != (ssize_t)sizeof(*m)) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EIO;
	}
	return 1;
}

/* ---- the guardian --------------------------------------------------------- */

static volatile sig_atomic_t g_term;

static void on_term(int sig)
{
	(void)sig;
	g_term = 1;
}

static void close_span(int lo, int hi)
{
	if (hi < lo || close_range((unsigned)lo, (unsigned)hi, 0) == 0)
		return;
	long max = sysconf(_SC_OPEN_MAX);
	for (long fd = lo; fd <= hi && fd < max && fd < 65536; fd++)
		close((int)fd);
}

/* every descriptor but 0-2, @a and @b */
static void close_others(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;
	close_span(3, lo - 1);
	close_span(lo + 1, hi - 1);
	close_span(hi + 1, INT_MAX);
}

static void guardian_handle(struct gtable *t, const struct gmsg *m, int fd)
{
	if (m->op == G_ADD) {
		if (table_add(t, m, fd) && fd >= 0)
			close(fd);
		return;
	}
	if (fd >= 0)
		close(fd);
	struct gitem *it = m->op == G_DROP ? table_find(t, m->id) : NULL;
	if (it)
		table_del(t, it);
}

__attribute__((noreturn)) static void guardian(int sock, int pidfd)
{
	/* nothing of this process's may stay open here: a perf event would
	 * stay busy, a pipe a shell reads would never end */
	setsid();
	prctl(PR_SET_NAME, "rtdiag-guard", 0, 0, 0);
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul >= 0)
		for (int i = 0; i <= 2; i++)
			dup2(nul, i);
	close_others(sock, pidfd >= 0 ? pidfd : sock);
	rtd_set_log(NULL, NULL, RTD_LOG_ERROR);
	struct sigaction sa = {.sa_handler = on_term};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigset_t all;
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);

	struct gtable t = {0};
	struct gmsg m = {.op = G_HELLO, .pid = (int32_t)getpid()};
	if (send_msg(sock, &m, -1))
		_exit(1);
	for (;;) {
		struct pollfd pf[2] = {{sock, POLLIN, 0}, {pidfd, POLLIN, 0}};
		int n = poll(pf, pidfd >= 0 ? 2 : 1, -1);
		if (g_term)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[0].revents) {
			int fd, r = recv_msg(sock, &m, &fd, 0);
			if (r == 0 || (r < 0 && r != -EIO))
				break; /* its end: this process has closed it */
			if (r > 0)
				guardian_handle(&t, &m, fd);
			continue; /* what is queued first */
		}
		if (pf[1].revents)
			break;
	}
	/* what it sent just before its end is still queued */
	int fd, r;
	while ((r = recv_msg(sock, &m, &fd, MSG_DONTWAIT)) > 0 || r == -EIO)
		if (r > 0)
			guardian_handle(&t, &m, fd);
	if (pidfd >= 0 && !g_term) {
		struct pollfd pf = {pidfd, POLLIN, 0};
		poll(&pf, 1, GUARD_EXIT_WAIT_MS);
	}
	for (size_t i = 0; i < t.n; i++)
		item_undo(&t.v[i], true);
	_exit(0);
}

/* ---- this process's side ---------------------------------------------------- */

/* Forget the guardian of the process this one was forked from: it is
 * not ours, nor are its registrations (their undo is that process's). */
static void forget_inherited(void)
{
	if (g_sock >= 0 && g_owner != getpid()) {
		close(g_sock);
		g_sock = -1;
		g_pid = 0;
		while (g_items.n)
			table_del(&g_items, &g_items.v[g_items.n - 1]);
	}
}

static int spawn_locked(void)
{
	forget_inherited();
	if (g_sock >= 0)
		return 0;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	pid_t c = fork();
	if (c == 0) {
		pid_t g = fork();
		if (g == 0) {
			close(sv[0]);
			guardian(sv[1], pfd);
		}
		_exit(g < 0);
	}
	int e = errno;
	close(sv[1]);
	if (pfd >= 0)
		close(pfd);
	if (c < 0) {
		close(sv[0]);
		return -e;
	}
	while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
		;
	struct gmsg h;
	int fd, r = recv_msg(sv[0], &h, &fd, 0);
	if (fd >= 0)
		close(fd);
	if (r <= 0 || h.op != G_HELLO) {
		close(sv[0]);
		return r < 0 ? r : -ECHILD;
	}
	g_sock = sv[0];
	g_pid = h.pid;
	g_owner = getpid();
	return 0;
}

int rtd_guard_start(void)
{
	pthread_mutex_lock(&g_mu);
	int r = spawn_locked();
	pthread_mutex_unlock(&g_mu);
	return r;
}

pid_t rtd_guard_pid(void)
{
	pthread_mutex_lock(&g_mu);
	pid_t p = g_owner == getpid() ? g_pid : 0;
	pthread_mutex_unlock(&g_mu);
	return p;
}

/* Keeps @fd (closed on failure). Registered here even when the guardian
 * cannot be had: this process's own undo still works. */
static int guard_add(struct gmsg *m, int fd, unsigned *id)
{
	pthread_mutex_lock(&g_mu);
	forget_inherited();
	m->op = G_ADD;
	m->id = g_next++;
	if (!m->id)
		m->id = g_next++;
	int r = table_add(&g_items, m, fd);
	if (r) {
		pthread_mutex_unlock(&g_mu);
		if (fd >= 0)
			close(fd);
		return r;
	}
	int g = spawn_locked();
	if (!g)
		g = send_msg(g_sock, m, fd);
	pthread_mutex_unlock(&g_mu);
	if (g)
		rtd_warn("no guardian (%s): what rtdiag switched on is switched "
			 "off at its normal end, but not if it is killed",
			 rtd_strerror(g));
	*id = m->id;
	return 0;
}

int rtd_guard_perfmap(pid_t pid, const char *map_path, unsigned *id)
{
	struct gmsg m = {.kind = K_PERFMAP, .pid = (int32_t)pid};
	*id = 0;
	const char *base = map_path ? strrchr(map_path, '/') : NULL;
	if (!base || base == map_path || strncmp(base + 1, "perf-", 5) ||
	    strlen(base + 1) >= sizeof(m.a) - 4)
		return -RTD_E_INVAL;
	char dir[4096];
	if ((size_t)(base - map_path) >= sizeof(dir))
		return -RTD_E_INVAL;
	memcpy(dir, map_path, (size_t)(base - map_path));
	dir[base - map_path] = 0;
	memcpy(m.a, base + 1, strlen(base + 1));
	if (rtd_proc_stat(pid, NULL, &m.start))
		return -ENOENT;
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	/* the files that are not there now are the ones rtdiag causes */
	char info[sizeof(m.a) + 8];
	guard_info_name(m.a, info, sizeof(info));
	if (faccessat(dfd, m.a, F_OK, 0) && errno == ENOENT)
		m.flags |= GUARD_MAP_FILE;
	if (faccessat(dfd, info, F_OK, 0) && errno == ENOENT)
		m.flags |= GUARD_INFO_FILE;
	return guard_add(&m, dfd, id);
}

int rtd_guard_probe(const char *tracefs, bool kprobe, const char *group,
		    const char *event, unsigned *id)
{
	struct gmsg m = {.kind = K_PROBE, .flags = kprobe ? 1u : 0u};
	*id = 0;
	if (!tracefs || !group || !event || !*tracefs || !*group || !*event ||
	    strlen(tracefs) >= sizeof(m.a) || strlen(group) >= sizeof(m.b) ||
	    strlen(event) >= sizeof(m.c))
		return -RTD_E_INVAL;
	memcpy(m.a, tracefs, strlen(tracefs));
	memcpy(m.b, group, strlen(group));
	memcpy(m.c, event, strlen(event));
	return guard_add(&m, -1, id);
}

/* Take registration @id out of the table: *out gets it (its descriptor
 * with it) and the guardian is told. */
static bool guard_take(unsigned id, struct gitem *out)
{
	pthread_mutex_lock(&g_mu);
	forget_inherited();
	struct gitem *it = id ? table_find(&g_items, id) : NULL;
	if (it) {
		*out = *it;
		it->fd = -1;
		table_del(&g_items, it);
		struct gmsg m = {.op = G_DROP, .id = id};
		if (g_sock >= 0)
			send_msg(g_sock, &m, -1);
	}
	pthread_mutex_unlock(&g_mu);
	return it != NULL;
}

int rtd_guard_undo(unsigned id)
{
	struct gitem it;
	pthread_mutex_lock(&g_mu);
	forget_inherited();
	struct gitem *p = id ? table_find(&g_items, id) : NULL;
	if (p)
		it = *p;
	pthread_mutex_unlock(&g_mu);
	if (!p)
		return -RTD_E_NOTFOUND;
	/* undone before it is unregistered: killed in between, the guardian
	 * undoes it again, which is harmless */
	int r = item_undo(&it, false);
	if (guard_take(id, &it) && it.fd >= 0)
		close(it.fd);
	return r;
}

void rtd_guard_forget(unsigned id)
{
	struct gitem it;
	if (guard_take(id, &it) && it.fd >= 0)
		close(it.fd);
}
