/* SPDX-License-Identifier: MIT */
/*
 * test_ipc_spool - session streams read by a spool's thread
 * (rtdiag/ipc_spool.h): the writer at the socket's other end never waits
 * for a reader that reads nothing; the reader then gets every byte in
 * order and the end; past the cap the bytes are dropped and counted and
 * the reads end with -RTD_E_IPC_DROPPED after the bytes before it; the
 * descriptor polls readable exactly while something waits.
 *
 * The peer is a real unix socket whose far end this test scripts (the
 * CollectTracing reply, then stream bytes): the real runtime's stream is
 * the agent's tests' (agent test_spool, dotnet test_exit).
 */
#include "test_util.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dotnet/ipc_int.h"
#include "rtdiag/ipc.h"

struct peer {
	int lfd, fd;
	char path[108];
	size_t bytes;     /* stream bytes to write after the reply */
	int write_rc;     /* ipc_write_all()'s answer */
	int hold[2];      /* a pipe: close the stream once it is written to */
	pthread_t th;
	bool joined;
	rtd_ipc_client *c;
};

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 7 + (i >> 9));
}

static void *serve(void *arg)
{
	struct peer *p = arg;
	p->fd = accept(p->lfd, NULL, NULL);
	uint8_t h[20];
	if (p->fd < 0 || ipc_read_full(p->fd, h, 20, 5000))
		return NULL;
	size_t size = (size_t)(h[14] | h[15] << 8);
	uint8_t req[65536];
	if (size > 20)
		ipc_read_full(p->fd, req, size - 20, 5000);
	uint8_t rep[28] = "DOTNET_IPC_V1";
	rep[14] = 28;
	rep[16] = RTD_IPC_SET_SERVER;
	rep[20] = 0x42; /* session id */
	ipc_write_all(p->fd, rep, sizeof(rep), 5000);
	uint8_t *b = malloc(p->bytes ? p->bytes : 1);
	for (size_t i = 0; i < p->bytes; i++)
		b[i] = pattern(i);
	/* 10 s: the whole stream fits no socket; without a reader it waits */
	p->write_rc = ipc_write_all(p->fd, b, p->bytes, 10000);
	free(b);
	char c;
	if (p->hold[0] >= 0)
		(void)read(p->hold[0], &c, 1);
	close(p->fd);
	return NULL;
}

static rtd_ipc_session *start(struct peer *p, size_t bytes, bool hold)
{
	memset(p, 0, sizeof(*p));
	p->bytes = bytes;
	p->hold[0] = p->hold[1] = -1;
	if (hold)
		assert_int_equal(pipe(p->hold), 0);
	snprintf(p->path, sizeof(p->path), "/tmp/rtd-spool-%d.sock", (int)getpid());
	unlink(p->path);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, p->path);
	p->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(p->lfd >= 0);
	assert_int_equal(bind(p->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(p->lfd, 1), 0);
	assert_int_equal(pthread_create(&p->th, NULL, serve, p), 0);
	struct rtd_ipc_client_opts co = {.sz = sizeof(co), .timeout_ms = 5000};
	rtd_ipc_client *c = rtd_ipc_client_new_path(p->path, &co, NULL);
	assert_non_null(c);
	p->c = c;
	struct rtd_ipc_provider pv = {.name = "P"};
	struct rtd_ipc_session_opts so = {.sz = sizeof(so), .providers = &pv,
					  .n_providers = 1};
	int err = 0;
	rtd_ipc_session *s = rtd_ipc_session_start(c, &so, &err);
	assert_non_null(s);
	assert_int_equal(rtd_ipc_session_id(s), 0x42);
	return s;
}

/* the writer done: it wrote all, or gave up, and closed */
static void join(struct peer *p)
{
	if (!p->joined)
		pthread_join(p->th, NULL);
	p->joined = true;
}

static void end(struct peer *p, rtd_ipc_session *s)
{
	if (p->hold[1] >= 0)
		close(p->hold[1]);
	rtd_ipc_session_free(s);
	join(p);
	rtd_ipc_client_free(p->c);
	if (p->hold[0] >= 0)
		close(p->hold[0]);
	close(p->lfd);
	unlink(p->path);
}

/* Read until the end; check the bytes against the pattern. */
static ssize_t read_all(rtd_ipc_session *s, size_t *got)
{
	uint8_t buf[10000];
	*got = 0;
	for (;;) {
		ssize_t n = rtd_ipc_session_read(s, buf, sizeof(buf), 5000);
		if (n <= 0)
			return n;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != pattern(*got + (size_t)i))
				fail_msg("byte %zu differs", *got + (size_t)i);
		*got += (size_t)n;
	}
}

/* 4 MB written while the reader reads nothing: the writer is done before
 * the first read (without the spool its write waits 10 s and fails) */
static void test_writer_never_waits(void **state)
{
	(void)state;
	rtd_ipc_spool *sp = rtd_ipc_spool_new(NULL, NULL);
	assert_non_null(sp);
	struct peer p;
	rtd_ipc_session *s = start(&p, 4u << 20, false);
	assert_int_equal(rtd_ipc_spool_add(sp, s), 0);
	assert_int_equal(rtd_ipc_spool_add(sp, s), -RTD_E_INVAL);
	join(&p); /* the writer ended: written, closed */
	assert_int_equal(p.write_rc, 0);
	size_t got;
	assert_int_equal(read_all(s, &got), 0);
	assert_int_equal(got, 4u << 20);
	assert_int_equal(rtd_ipc_session_read(s, &got, 1, 0), 0); /* the end stays */
	assert_int_equal(rtd_ipc_session_dropped(s), 0);
	struct rtd_ipc_spool_stats st = {.sz = sizeof(st)};
	rtd_ipc_spool_get_stats(sp, &st);
	assert_int_equal(st.bytes, 4u << 20);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.damaged, 0);
	assert_true(st.held_peak > 212992); /* more than a socket holds */
	end(&p, s);
	rtd_ipc_spool_free(sp);
}

/* A 64 KiB cap and 1 MiB written: the writer is not held, the reader gets
 * the first 64 KiB, then the damage, again and again; all counted */
static void test_cap_drops(void **state)
{
	(void)state;
	struct rtd_ipc_spool_opts o = {.sz = sizeof(o), .cap = 1000};
	int err = 0;
	assert_null(rtd_ipc_spool_new(&o, &err));
	assert_int_equal(err, -RTD_E_INVAL);
	o.cap = RTD_IPC_SPOOL_CAP_MIN;
	rtd_ipc_spool *sp = rtd_ipc_spool_new(&o, NULL);
	assert_non_null(sp);
	struct peer p;
	rtd_ipc_session *s = start(&p, 1u << 20, false);
	assert_int_equal(rtd_ipc_spool_add(sp, s), 0);
	join(&p);
	assert_int_equal(p.write_rc, 0);
	size_t got;
	assert_int_equal(read_all(s, &got), -RTD_E_IPC_DROPPED);
	assert_int_equal(got, RTD_IPC_SPOOL_CAP_MIN);
	uint8_t b;
	assert_int_equal(rtd_ipc_session_read(s, &b, 1, 0), -RTD_E_IPC_DROPPED);
	/* the writer is done once its last bytes are in the socket: the
	 * thread may still be reading (and dropping) them */
	struct rtd_ipc_spool_stats st = {.sz = sizeof(st)};
	for (int i = 0; i < 10000; i++) {
		rtd_ipc_spool_get_stats(sp, &st);
		if (st.bytes == 1u << 20)
			break;
		usleep(1000);
	}
	assert_int_equal(rtd_ipc_session_dropped(s), (1u << 20) - RTD_IPC_SPOOL_CAP_MIN);
	assert_int_equal(st.bytes, 1u << 20);
	assert_int_equal(st.dropped, (1u << 20) - RTD_IPC_SPOOL_CAP_MIN);
	assert_int_equal(st.damaged, 1);
	assert_int_equal(st.held_peak, RTD_IPC_SPOOL_CAP_MIN);
	end(&p, s);
	rtd_ipc_spool_free(sp);
}

static int readable(int fd, int timeout_ms)
{
	struct pollfd q = {.fd = fd, .events = POLLIN};
	return poll(&q, 1, timeout_ms);
}

/* The descriptor: readable while bytes wait, not once they are read,
 * readable again at the end */
static void test_fd_polls(void **state)
{
	(void)state;
	rtd_ipc_spool *sp = rtd_ipc_spool_new(NULL, NULL);
	struct peer p;
	rtd_ipc_session *s = start(&p, 1000, true);
	int sock = rtd_ipc_session_fd(s);
	assert_int_equal(rtd_ipc_spool_add(sp, s), 0);
	int fd = rtd_ipc_session_fd(s);
	assert_true(fd >= 0 && fd != sock);
	assert_int_equal(readable(fd, 10000), 1);
	size_t got = 0;
	uint8_t buf[2000];
	while (got < 1000) {
		ssize_t n = rtd_ipc_session_read(s, buf, sizeof(buf), 5000);
		assert_true(n > 0);
		got += (size_t)n;
	}
	assert_int_equal(rtd_ipc_session_read(s, buf, sizeof(buf), 0),
			 -RTD_E_IPC_TIMEOUT);
	assert_int_equal(readable(fd, 0), 0);
	close(p.hold[1]); /* the peer closes the stream */
	p.hold[1] = -1;
	assert_int_equal(readable(fd, 10000), 1);
	assert_int_equal(rtd_ipc_session_read(s, buf, sizeof(buf), 0), 0);
	assert_int_equal(readable(fd, 0), 1); /* the end stays readable */
	end(&p, s);
	rtd_ipc_spool_free(sp);
}

/* The spool freed before its session: the held bytes, then the socket */
static void test_spool_freed_first(void **state)
{
	(void)state;
	rtd_ipc_spool *sp = rtd_ipc_spool_new(NULL, NULL);
	struct peer p;
	rtd_ipc_session *s = start(&p, 300000, false);
	assert_int_equal(rtd_ipc_spool_add(sp, s), 0);
	join(&p);
	rtd_ipc_spool_free(sp);
	size_t got;
	assert_int_equal(read_all(s, &got), 0);
	assert_int_equal(got, 300000);
	end(&p, s);
}

/* Sessions freed while the thread may be reading them, many times */
static void test_leave_while_reading(void **state)
{
	(void)state;
	rtd_ipc_spool *sp = rtd_ipc_spool_new(NULL, NULL);
	for (int i = 0; i < 20; i++) {
		struct peer p;
		rtd_ipc_session *s = start(&p, 100000, false);
		assert_int_equal(rtd_ipc_spool_add(sp, s), 0);
		end(&p, s); /* while the thread may read it */
	}
	rtd_ipc_spool_free(sp);
	rtd_ipc_spool_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writer_never_waits),
		cmocka_unit_test(test_cap_drops),
		cmocka_unit_test(test_fd_polls),
		cmocka_unit_test(test_spool_freed_first),
		cmocka_unit_test(test_leave_while_reading),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
