/* SPDX-License-Identifier: MIT */
/*
 * ipc_transport.c - Unix-socket transport, discovery of a process's
 * diagnostic socket, reverse-connection listeners, clients.
 *
 * Discovery (ipc-protocol.md "Naming and Location Conventions"): the
 * runtime creates $TMPDIR/dotnet-diagnostic-{pid}-{key}-socket, where pid
 * is the pid in its own pid namespace and key its start time in jiffies
 * (field 22 of /proc/PID/stat). We look at that directory as the target
 * sees it, through /proc/PID/root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "common/file.h"
#include "common/log.h"
#include "common/rd.h"
#include "dotnet/ipc_int.h"
#include "rtdiag/ipc_discovery.h"
#include "rtdiag/source.h"

static __thread char last_err[1024];

void ipc_set_last_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf(last_err, sizeof(last_err), 0, fmt, ap);
	va_end(ap);
}

RTD_API const char *rtd_ipc_errmsg_last(void)
{
	return last_err;
}

void ipc_seterr(rtd_ipc_client *c, const char *fmt, ...)
{
	char m[800];
	va_list ap;
	va_start(ap, fmt);
	rtd_verrf(m, sizeof(m), 0, fmt, ap);
	va_end(ap);
	rtd_errf(c->errmsg, sizeof(c->errmsg), 0, "%s: %s", c->target, m);
}

/* ---- sockets ------------------------------------------------------------ */

int ipc_connect_path(const char *path, int *out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int dirfd = -1, rc = 0;
	*out = -1;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		/* Too long for sun_path: open the directory and connect
		 * through /proc/self/fd/N/NAME, which the kernel resolves. */
		const char *slash = strrchr(path, '/');
		if (!slash)
			return -ENAMETOOLONG;
		char dir[4096];
		size_t dl = (size_t)(slash - path);
		if (dl >= sizeof(dir))
			return -ENAMETOOLONG;
		memcpy(dir, path, dl);
		dir[dl] = 0;
		dirfd = open(dl ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			return -errno;
		int n = snprintf(sa.sun_path, sizeof(sa.sun_path),
				 "/proc/self/fd/%d/%s", dirfd, slash + 1);
		if (n < 0 || (size_t)n >= sizeof(sa.sun_path)) {
			close(dirfd);
			return -ENAMETOOLONG;
		}
	} else {
		memcpy(sa.sun_path, path, strlen(path) + 1);
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
	} else if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = -errno;
		close(fd);
	} else {
		*out = fd;
	}
	if (dirfd >= 0)
		close(dirfd);
	return rc;
}

static int wait_fd(int fd, short ev, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = ev};
	for (;;) {
		int n = poll(&p, 1, timeout_ms);
		if (n > 0)
			return 0;
		if (n == 0)
			return -RTD_E_IPC_TIMEOUT;
		if (errno != EINTR)
			return -errno;
		/* EINTR: a signal (maybe SIGINT for a stop); let the caller
		 * look at its flags. */
		return -EINTR;
	}
}

int ipc_write_all(int fd, const void *buf, size_t len, int timeout_ms)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int rc = wait_fd(fd, POLLOUT, timeout_ms);
			if (rc && rc != -EINTR)
				return rc;
			continue;
		}
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
			return -RTD_E_IPC_CLOSED;
		return n < 0 ? -errno : -RTD_E_IPC_CLOSED;
	}
	return 0;
}

ssize_t ipc_read_some(int fd, void *buf, size_t len, int timeout_ms)
{
	for (;;) {
		ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		if (errno == ECONNRESET)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		int rc = wait_fd(fd, POLLIN, timeout_ms);
		if (rc)
			return rc;
	}
}

int ipc_read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	uint8_t *p = buf;
	size_t got = 0;
	uint64_t deadline = rtd_now_ns() + (uint64_t)timeout_ms * 1000000u;
	while (got < len) {
		uint64_t now = rtd_now_ns();
		int left = now >= deadline ? 0
					   : (int)((deadline - now) / 1000000u);
		ssize_t n = ipc_read_some(fd, p + got, len - got,
					  timeout_ms < 0 ? -1 : left);
		if (n == -EINTR)
			continue;
		if (n < 0)
			return (int)n;
		if (n == 0)
			return got ? -RTD_E_TRUNCATED : -RTD_E_IPC_CLOSED;
		got += (size_t)n;
	}
	return 0;
}

/* ---- discovery ---------------------------------------------------------- */

/* Start time in jiffies (field 22 of /proc/PID/stat): the socket's key. */
static unsigned long long start_key(pid_t pid)
{
	unsigned long long start;
	return rtd_proc_stat(pid, NULL, &start) ? 0 : start;
}

/*
 * The dotnet-diagnostic-* names of one directory. rtd_ipc_list() keeps one
 * per distinct directory (by device and inode), so a /tmp with thousands
 * of files is read once, not once per process.
 */
#define IPC_CAP_DIR_SOCKETS 65536u

struct dir_list {
	dev_t dev;
	ino_t ino;
	char **names;
	size_t n;
	int err; /* reading it failed: -errno */
};

static void dir_list_free(struct dir_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	l->names = NULL;
	l->n = 0;
}

static int dir_list_read(const char *dir, struct dir_list *l)
{
	memset(l, 0, sizeof(*l));
	DIR *d = opendir(dir);
	if (!d)
		return l->err = -errno;
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "dotnet-diagnostic-", 18) != 0)
			continue;
		if (l->n == cap) {
			if (cap >= IPC_CAP_DIR_SOCKETS)
				break; /* bounded: a pathological /tmp */
			size_t nc = cap ? cap * 2 : 16;
			char **nn = realloc(l->names, nc * sizeof(*nn));
			if (!nn)
				break;
			l->names = nn;
			cap = nc;
		}
		if (!(l->names[l->n] = strdup(e->d_name)))
			break;
		l->n++;
	}
	closedir(d);
	return 0;
}

/*
 * Find "dotnet-diagnostic-{nspid}-{key}-socket". The runtime names its
 * socket with its start time (field 22 of /proc/PID/stat), which is @key:
 * that one is taken. A socket with an older key was left by an earlier
 * process that had this pid (a runtime killed by SIGKILL leaves its socket
 * behind, and pids are reused): it is never taken, only reported through
 * *stale (1 when one was seen). A newer key is taken when no exact one is
 * there (a start time seen through another time namespace), as is any
 * when @key is unknown (0).
 */
static int dir_list_find(const struct dir_list *l, pid_t nspid,
			 unsigned long long key, char *name, size_t len, int *stale)
{
	char prefix[64];
	int pl = snprintf(prefix, sizeof(prefix), "dotnet-diagnostic-%d-",
			  (int)nspid);
	int found = 0;
	*stale = 0;
	for (size_t i = 0; i < l->n; i++) {
		const char *nm = l->names[i];
		if (strncmp(nm, prefix, (size_t)pl) != 0)
			continue;
		size_t nl = strlen(nm);
		if (nl < 7 || strcmp(nm + nl - 7, "-socket") != 0)
			continue;
		unsigned long long k = strtoull(nm + pl, NULL, 10);
		if (key && k < key) {
			if (!found && !*stale)
				snprintf(name, len, "%s", nm);
			*stale = 1;
			continue;
		}
		if (found && k != key)
			continue; /* keep the first, unless this one matches */
		snprintf(name, len, "%s", nm);
		found = k == key ? 2 : 1;
		if (found == 2)
			break;
	}
	return found ? 0 : -ENOENT;
}

struct dir_cache {
	struct dir_list *v;
	size_t n;
};

/* The listing of dir, from the cache when one is given; @tmp holds it
 * when it is not cached, and is zeroed otherwise (the caller frees it
 * whatever was returned). */
static const struct dir_list *dir_get(struct dir_cache *dc, const char *dir,
				      struct dir_list *tmp)
{
	struct stat st;
	memset(tmp, 0, sizeof(*tmp));
	if (stat(dir, &st) != 0) {
		tmp->err = -errno;
		return tmp;
	}
	if (dc) {
		for (size_t i = 0; i < dc->n; i++)
			if (dc->v[i].dev == st.st_dev && dc->v[i].ino == st.st_ino)
				return &dc->v[i];
	}
	dir_list_read(dir, tmp);
	tmp->dev = st.st_dev;
	tmp->ino = st.st_ino;
	if (dc && !tmp->err) {
		struct dir_list *nv = realloc(dc->v, (dc->n + 1) * sizeof(*nv));
		if (nv) {
			dc->v = nv;
			dc->v[dc->n] = *tmp;
			memset(tmp, 0, sizeof(*tmp));
			return &dc->v[dc->n++];
		}
	}
	return tmp;
}

static int socket_find(pid_t pid, char *path, size_t len, char *where,
		       size_t wlen, struct dir_cache *dc)
{
	char proc[64], tmp[2048], dir[4096], name[256];
	struct stat st;
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (pid <= 0 || stat(proc, &st) != 0)
		return -RTD_E_IPC_NOPROCESS;
	rtd_proc_tmpdir(pid, tmp, sizeof(tmp));
	const char *t = tmp;
	pid_t nspid = rtd_proc_ns_pid(pid);
	unsigned long long key = start_key(pid);
	/* As the target sees its file system; when /proc/PID/root is not
	 * readable (another user), fall back to our own view. */
	rtd_proc_root_path(dir, sizeof(dir), pid, "%s", t); /* "" when too long: none */
	struct dir_list own;
	const struct dir_list *l = dir_get(dc, dir, &own);
	if (l->err == -EACCES || l->err == -EPERM) {
		dir_list_free(&own);
		snprintf(dir, sizeof(dir), "%s", t);
		l = dir_get(dc, dir, &own);
	}
	int stale = 0;
	name[0] = 0;
	int rc = l->err ? l->err : dir_list_find(l, nspid, key, name, sizeof(name), &stale);
	dir_list_free(&own);
	if (where)
		snprintf(where, wlen, "%s", dir);
	if (rc) { /* path: the stale socket seen, for the message */
		if (len)
			snprintf(path, len, "%s", stale ? name : "");
		return -RTD_E_IPC_NOSOCKET;
	}
	int n = snprintf(path, len, "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

RTD_API int rtd_ipc_socket_find(pid_t pid, char *path, size_t len,
				char *where, size_t wlen)
{
	return socket_find(pid, path, len, where, wlen, NULL);
}

static int cmp_proc(const void *a, const void *b)
{
	const struct rtd_ipc_proc *x = a, *y = b;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

RTD_API int rtd_ipc_socket_own_path(pid_t pid, char *path)
{
	char pre[48];
	struct stat a, b;
	if (!path)
		return -EINVAL;
	/* "/proc/PID/root/": X keeps its '/' */
	if (pid > 0 && !rtd_proc_root_path(pre, sizeof(pre), pid, "/")) {
		size_t n = strlen(pre) - 1;
		if (!strncmp(path, pre, n + 1) && !stat(path, &a) && !stat(path + n, &b) &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
			memmove(path, path + n, strlen(path + n) + 1);
			return 0;
		}
	}
	path[0] = 0;
	return -ENOENT;
}

RTD_API int rtd_ipc_list(struct rtd_ipc_proc **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	struct rtd_ipc_proc *v = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *e;
	pid_t self = getpid();
	struct dir_cache dc = {0};
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == self)
			continue;
		char path[sizeof(v->socket)];
		if (socket_find((pid_t)pid, path, sizeof(path), NULL, 0, &dc) != 0)
			continue;
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 16;
			void *nv = realloc(v, nc * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				for (size_t i = 0; i < dc.n; i++)
					dir_list_free(&dc.v[i]);
				free(dc.v);
				return -ENOMEM;
			}
			v = nv;
			cap = nc;
		}
		v[cnt].pid = (pid_t)pid;
		v[cnt].nspid = rtd_proc_ns_pid((pid_t)pid);
		snprintf(v[cnt].socket, sizeof(v[cnt].socket), "%s", path);
		cnt++;
	}
	closedir(d);
	for (size_t i = 0; i < dc.n; i++)
		dir_list_free(&dc.v[i]);
	free(dc.v);
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_proc);
	*out = v;
	*n = cnt;
	return 0;
}

/* ---- listener ----------------------------------------------------------- */

struct rtd_ipc_listener {
	int fd;
	char path[4096];
};

RTD_API rtd_ipc_listener *rtd_ipc_listen(const char *path, int *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int rc = 0;
	rtd_ipc_listener *l = NULL;
	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		rc = path ? -ENAMETOOLONG : -RTD_E_INVAL;
		ipc_set_last_err("%s: socket path too long for a listener "
				 "(at most %zu bytes)",
				 path ? path : "(null)", sizeof(sa.sun_path) - 1);
		goto out;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	l = calloc(1, sizeof(*l));
	if (!l) {
		rc = -ENOMEM;
		goto out;
	}
	snprintf(l->path, sizeof(l->path), "%s", path);
	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l->fd < 0) {
		rc = -errno;
		goto out;
	}
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	if (bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(l->fd, 16) != 0) {
		rc = -errno;
		ipc_set_last_err("%s: cannot listen: %s", path, strerror(-rc));
		close(l->fd);
		goto out;
	}
	return l;
out:
	free(l);
	if (err)
		*err = rc;
	return NULL;
}

RTD_API void rtd_ipc_listener_free(rtd_ipc_listener *l)
{
	if (!l)
		return;
	close(l->fd);
	unlink(l->path);
	free(l);
}

RTD_API int rtd_ipc_listener_fd(const rtd_ipc_listener *l)
{
	return l->fd;
}

RTD_API int rtd_ipc_listener_accept(rtd_ipc_listener *l, int timeout_ms,
				    struct rtd_ipc_advertise *adv, int *out)
{
	if (out)
		*out = -1;
	int rc = wait_fd(l->fd, POLLIN, timeout_ms);
	if (rc)
		return rc;
	int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return -errno;
	uint8_t buf[IPC_ADVR_SIZE];
	/* The advertise comes right after connect; don't wait long on a
	 * peer that is not a runtime. */
	rc = ipc_read_full(fd, buf, sizeof(buf), 5000);
	if (rc == -RTD_E_IPC_CLOSED || rc == -RTD_E_TRUNCATED)
		rc = -RTD_E_IPC_PROTOCOL;
	if (!rc)
		rc = rtd_ipc_advertise_parse(buf, sizeof(buf), adv);
	if (rc || !out)
		close(fd);
	else
		*out = fd;
	return rc;
}

/* ---- clients ------------------------------------------------------------ */

/* NULL with *rc: -RTD_E_INVAL for options this version does not know,
 * or -ENOMEM. */
static rtd_ipc_client *client_alloc(const struct rtd_ipc_client_opts *opts,
				    int *rc)
{
	struct rtd_ipc_client_opts o;
	*rc = rtd_opts_copy(&o, sizeof(o), opts,
			    RTD_OPTS_END(rtd_ipc_client_opts, wait_ctx));
	rtd_ipc_client *c = *rc ? NULL : calloc(1, sizeof(*c));
	if (!c) {
		*rc = *rc ? *rc : -ENOMEM;
		return NULL;
	}
	c->pending_fd = -1;
	c->timeout_ms = o.timeout_ms > 0 ? o.timeout_ms : IPC_DEFAULT_TIMEOUT_MS;
	c->record = o.record;
	c->on_wait = o.on_wait;
	c->wait_ctx = o.wait_ctx;
	return c;
}

RTD_API rtd_ipc_client *rtd_ipc_client_new(pid_t pid,
					   const struct rtd_ipc_client_opts *o,
					   int *err)
{
	char path[4096], where[4096];
	int rc = rtd_ipc_socket_find(pid, path, sizeof(path), where,
				     sizeof(where));
	if (rc == -RTD_E_IPC_NOPROCESS) {
		ipc_set_last_err("pid %d: no such process", (int)pid);
	} else if (rc == -RTD_E_IPC_NOSOCKET && path[0]) {
		ipc_set_last_err("pid %d: no diagnostic socket in %s (%s there "
				 "was left by an earlier process with this pid; "
				 "not a .NET process, or is "
				 "DOTNET_EnableDiagnostics=0 set?)",
				 (int)pid, where, path);
	} else if (rc == -RTD_E_IPC_NOSOCKET) {
		ipc_set_last_err("pid %d: no diagnostic socket in %s (not a "
				 ".NET process, or is "
				 "DOTNET_EnableDiagnostics=0 set?)",
				 (int)pid, where);
	} else if (rc) {
		ipc_set_last_err("pid %d: %s", (int)pid, rtd_strerror(rc));
	}
	if (rc) {
		if (err)
			*err = rc;
		return NULL;
	}
	rtd_ipc_client *c = client_alloc(o, &rc);
	if (!c) {
		if (err)
			*err = rc;
		return NULL;
	}
	c->mode = IPC_MODE_PATH;
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(c->target, sizeof(c->target), "pid %d", (int)pid);
	return c;
}

RTD_API rtd_ipc_client *
rtd_ipc_client_new_path(const char *path, const struct rtd_ipc_client_opts *o,
			int *err)
{
	if (!path || strlen(path) >= sizeof(((rtd_ipc_client *)0)->path)) {
		if (err)
			*err = -ENAMETOOLONG;
		ipc_set_last_err("socket path too long");
		return NULL;
	}
	int rc;
	rtd_ipc_client *c = client_alloc(o, &rc);
	if (!c) {
		if (err)
			*err = rc;
		return NULL;
	}
	c->mode = IPC_MODE_PATH;
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(c->target, sizeof(c->target), "%.120s", path);
	return c;
}

RTD_API rtd_ipc_client *
rtd_ipc_client_new_listener(rtd_ipc_listener *l,
			    const struct rtd_ipc_advertise *adv, int fd,
			    const struct rtd_ipc_client_opts *o, int *err)
{
	int rc = -RTD_E_INVAL;
	rtd_ipc_client *c = l && adv ? client_alloc(o, &rc) : NULL;
	if (!c) {
		if (err)
			*err = rc;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	c->mode = IPC_MODE_LISTENER;
	c->listener = l;
	c->adv = *adv;
	c->pending_fd = fd;
	snprintf(c->target, sizeof(c->target), "pid %llu (reverse connection)",
		 (unsigned long long)adv->pid);
	return c;
}

RTD_API void rtd_ipc_client_free(rtd_ipc_client *c)
{
	if (!c)
		return;
	if (c->pending_fd >= 0)
		close(c->pending_fd);
	free(c);
}

RTD_API const char *rtd_ipc_client_errmsg(const rtd_ipc_client *c)
{
	return c->errmsg;
}

RTD_API uint32_t rtd_ipc_client_hresult(const rtd_ipc_client *c)
{
	return c->hresult;
}

RTD_API const char *rtd_ipc_client_target(const rtd_ipc_client *c)
{
	return c->target;
}

int ipc_conn_open(rtd_ipc_client *c, struct ipc_conn *conn)
{
	conn->fd = -1;
	conn->c = c;
	conn->id = ++c->conn_seq;
	c->hresult = 0;
	c->errmsg[0] = 0;
	if (c->mode == IPC_MODE_LISTENER) {
		if (c->pending_fd >= 0) {
			conn->fd = c->pending_fd;
			c->pending_fd = -1;
			return 0;
		}
		/* The runtime reconnects after every command; other runtimes
		 * may share the listener, so match the cookie. */
		uint64_t deadline =
			rtd_now_ns() + (uint64_t)c->timeout_ms * 1000000u;
		for (;;) {
			uint64_t now = rtd_now_ns();
			if (now >= deadline) {
				ipc_seterr(c, "the runtime did not connect "
					      "back within %d ms",
					   c->timeout_ms);
				return -RTD_E_IPC_TIMEOUT;
			}
			struct rtd_ipc_advertise a;
			int fd;
			int rc = rtd_ipc_listener_accept(
				c->listener, (int)((deadline - now) / 1000000u),
				&a, &fd);
			if (rc == -EINTR || rc == -RTD_E_IPC_PROTOCOL)
				continue;
			if (rc) {
				ipc_seterr(c, "waiting for the runtime to "
					      "connect back: %s",
					   rtd_strerror(rc));
				return rc;
			}
			if (memcmp(a.cookie, c->adv.cookie, 16) == 0) {
				conn->fd = fd;
				return 0;
			}
			close(fd); /* another runtime; it will reconnect */
		}
	}
	int rc = ipc_connect_path(c->path, &conn->fd);
	if (rc == -EACCES || rc == -EPERM) {
		ipc_seterr(c, "permission denied connecting to %s (run as the "
			      "target's user or as root)",
			   c->path);
	} else if (rc == -ECONNREFUSED || rc == -ENOENT) {
		ipc_seterr(c, "nobody listens on %s (the process exited?)",
			   c->path);
		rc = -RTD_E_IPC_EXITED;
	} else if (rc) {
		ipc_seterr(c, "cannot connect to %s: %s", c->path,
			   rtd_strerror(rc));
	}
	return rc;
}

void ipc_conn_close(struct ipc_conn *conn)
{
	if (conn->fd >= 0) {
		close(conn->fd);
		ipc_record(conn->c, conn->id, REC_CLOSE, NULL, 0);
	}
	conn->fd = -1;
}

/* What a process goes by: comm, the executable's file name, and the
 * assembly the muxer runs ("dotnet [exec] [options] X.dll"). */
struct proc_names {
	char comm[64];
	char exe[256];
	char assembly[256];
};

static void base_of(const char *path, char *out, size_t len)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(b);
	if (n >= len)
		n = len - 1;
	memcpy(out, b, n);
	out[n] = 0;
}

static int proc_names(pid_t pid, struct proc_names *n)
{
	char buf[4096];
	memset(n, 0, sizeof(*n));
	int got = rtd_proc_comm((int)pid, 0, n->comm, sizeof(n->comm));
	if (got < 0)
		return got;
	if (rtd_proc_exe(NULL, pid, buf, sizeof(buf)) > 0)
		base_of(buf, n->exe, sizeof(n->exe));
	got = rtd_proc_cmdline(NULL, pid, buf, sizeof(buf));
	if (got <= 0 || strcmp(n->exe, "dotnet") != 0)
		return 0;
	/* the muxer: the first argument that names a .dll */
	for (int off = (int)strlen(buf) + 1; off < got;
	     off += (int)strlen(buf + off) + 1) {
		const char *a = buf + off;
		size_t al = strlen(a);
		if (al > 4 && !strcmp(a + al - 4, ".dll")) {
			base_of(a, n->assembly, sizeof(n->assembly));
			n->assembly[strlen(n->assembly) - 4] = 0;
			break;
		}
	}
	return 0;
}

RTD_API int rtd_ipc_proc_name(pid_t pid, char *buf, size_t len)
{
	struct proc_names n;
	int rc = proc_names(pid, &n);
	if (rc)
		return rc;
	snprintf(buf, len, "%s", n.assembly[0] ? n.assembly
			       : n.exe[0]     ? n.exe
					      : n.comm);
	return 0;
}

RTD_API int rtd_ipc_thread_name(pid_t pid, uint64_t tid, char *buf,
				size_t len)
{
	if (pid <= 0 || !tid || tid > INT32_MAX || !buf || !len)
		return -EINVAL;
	int got = rtd_proc_comm((int)pid, (int)tid, buf, len);
	return got < 0 ? got : 0;
}

static int on_dotnet_line(const struct rtd_maps_entry *e, void *ctx)
{
	static const char *const libs[] = {"libcoreclr.so", "libhostfxr.so",
					   "libhostpolicy.so", "libclrjit.so"};
	(void)ctx;
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (memmem(e->path, e->path_len, libs[i], strlen(libs[i])))
			return 1;
	return 0;
}

RTD_API int rtd_ipc_proc_loads_dotnet(pid_t pid)
{
	size_t bad;
	if (pid <= 0)
		return -ENOENT;
	return rtd_proc_maps(pid, on_dotnet_line, NULL, &bad);
}

RTD_API bool rtd_ipc_proc_matches(pid_t pid, const char *name)
{
	struct proc_names n;
	if (!name || !*name || proc_names(pid, &n))
		return false;
	size_t l = strlen(name);
	if (!strcmp(name, n.comm) || !strcmp(name, n.exe))
		return true;
	if (!n.assembly[0])
		return false;
	return !strcmp(name, n.assembly) ||
	       (l > 4 && !strcmp(name + l - 4, ".dll") &&
		strlen(n.assembly) == l - 4 && !strncmp(name, n.assembly, l - 4));
}
