/* SPDX-License-Identifier: MIT */
/*
 * test_ipc_handover - a session's socket passed between its reader and a
 * spool's thread (rtdiag/ipc_spool.h), many times: the reader reads the
 * socket itself while it keeps up; while it reads nothing, the thread
 * takes the socket over (the writer is not held) and hands it back once
 * the reader has taken all it held. Across every handover the reader
 * gets each byte once, in the writer's order.
 *
 * The writer is a real unix socket's far end, scripted by this test: the
 * CollectTracing reply, then bursts of stream bytes on command.
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

#define ROUNDS 12
#define BURST_OVER 400000u /* more than a socket holds: needs the thread */
#define BURST_FITS 20000u  /* fits the socket: the reader reads it */

struct writer {
	int lfd, fd;
	int cmd[2];  /* bytes to write next (size_t); 0: close */
	int done[2]; /* one byte per burst written (its ipc_write_all rc) */
	size_t at;   /* stream position */
	pthread_t th;
};

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 13 + (i >> 11) + (i >> 17));
}

static void *write_bursts(void *arg)
{
	struct writer *w = arg;
	w->fd = accept(w->lfd, NULL, NULL);
	uint8_t h[20];
	if (w->fd < 0 || ipc_read_full(w->fd, h, 20, 5000))
		return NULL;
	uint8_t req[65536];
	size_t size = (size_t)(h[14] | h[15] << 8);
	if (size > 20 && ipc_read_full(w->fd, req, size - 20, 5000))
		return NULL;
	uint8_t rep[28] = "DOTNET_IPC_V1";
	rep[14] = 28;
	rep[16] = RTD_IPC_SET_SERVER;
	rep[20] = 0x43; /* session id */
	ipc_write_all(w->fd, rep, sizeof(rep), 5000);
	static uint8_t b[BURST_OVER];
	size_t n;
	while (read(w->cmd[0], &n, sizeof(n)) == sizeof(n) && n) {
		/* odd pieces, so writes and reads never line up */
		int8_t rc = 0;
		for (size_t off = 0; off < n && !rc;) {
			size_t piece = n - off < 3001 ? n - off : 3001;
			for (size_t i = 0; i < piece; i++)
				b[i] = pattern(w->at + i);
			rc = (int8_t)(ipc_write_all(w->fd, b, piece, 10000) != 0);
			w->at += piece;
			off += piece;
		}
		if (write(w->done[1], &rc, 1) != 1)
			break;
	}
	close(w->fd);
	return NULL;
}

/* The writer writes @n bytes; returns once they are all in the socket
 * (or its write gave up: fails). */
static void burst(struct writer *w, size_t n)
{
	assert_int_equal(write(w->cmd[1], &n, sizeof(n)), sizeof(n));
	struct pollfd p = {.fd = w->done[0], .events = POLLIN};
	assert_int_equal(poll(&p, 1, 20000), 1);
	int8_t rc = 1;
	assert_int_equal(read(w->done[0], &rc, 1), 1);
	assert_int_equal(rc, 0); /* not held by a reader reading nothing */
}

/* Read @n bytes (waiting for them), checking each against the pattern. */
static void read_n(rtd_ipc_session *s, size_t *at, size_t n)
{
	uint8_t buf[4093];
	for (size_t end = *at + n; *at < end;) {
		size_t want = end - *at < sizeof(buf) ? end - *at : sizeof(buf);
		ssize_t got = rtd_ipc_session_read(s, buf, want, 5000);
		if (got <= 0)
			fail_msg("at byte %zu: read %zd", *at, got);
		for (ssize_t i = 0; i < got; i++)
			if (buf[i] != pattern(*at + (size_t)i))
				fail_msg("byte %zu differs", *at + (size_t)i);
		*at += (size_t)got;
	}
}

static struct rtd_ipc_spool_stats stats(rtd_ipc_spool *sp)
{
	struct rtd_ipc_spool_stats st = {.sz = sizeof(st)};
	rtd_ipc_spool_get_stats(sp, &st);
	return st;
}

static void test_handovers(void **state)
{
	(void)state;
	struct writer w = {0};
	char path[108];
	snprintf(path, sizeof(path), "/tmp/rtd-handover-%d.sock", (int)getpid());
	unlink(path);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, path);
	w.lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(w.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(w.lfd, 1), 0);
	assert_int_equal(pipe(w.cmd), 0);
	assert_int_equal(pipe(w.done), 0);
	assert_int_equal(pthread_create(&w.th, NULL, write_bursts, &w), 0);
	struct rtd_ipc_client_opts co = {.sz = sizeof(co), .timeout_ms = 5000};
	rtd_ipc_client *c = rtd_ipc_client_new_path(path, &co, NULL);
	assert_non_null(c);
	struct rtd_ipc_provider pv = {.name = "P"};
	struct rtd_ipc_session_opts so = {.sz = sizeof(so), .providers = &pv,
					  .n_providers = 1};
	rtd_ipc_session *s = rtd_ipc_session_start(c, &so, NULL);
	assert_non_null(s);
	rtd_ipc_spool *sp = rtd_ipc_spool_new(NULL, NULL);
	assert_non_null(sp);
	assert_int_equal(rtd_ipc_spool_add(sp, s), 0);
	size_t at = 0;
	for (int r = 0; r < ROUNDS; r++) {
		/* the reader reads nothing: the thread must take the socket
		 * for the writer to be done */
		struct rtd_ipc_spool_stats st0 = stats(sp);
		assert_int_equal(st0.taken, st0.given); /* the reader's */
		burst(&w, BURST_OVER);
		struct rtd_ipc_spool_stats st = stats(sp);
		assert_int_equal(st.taken, st0.taken + 1);
		assert_int_equal(st.given, st0.given);
		/* the reader takes what the thread held, then the socket's:
		 * the socket is the reader's again */
		read_n(s, &at, BURST_OVER);
		uint8_t b;
		assert_int_equal(rtd_ipc_session_read(s, &b, 1, 0), -RTD_E_IPC_TIMEOUT);
		st = stats(sp);
		assert_int_equal(st.given, st0.given + 1);
		/* a burst that fits, read as it comes (by the reader itself
		 * unless it is late: the thread may take it again) */
		burst(&w, BURST_FITS);
		read_n(s, &at, BURST_FITS);
		assert_int_equal(rtd_ipc_session_read(s, &b, 1, 0), -RTD_E_IPC_TIMEOUT);
		st = stats(sp);
		assert_int_equal(st.taken, st.given);
	}
	size_t zero = 0;
	assert_int_equal(write(w.cmd[1], &zero, sizeof(zero)), sizeof(zero));
	uint8_t b;
	assert_int_equal(rtd_ipc_session_read(s, &b, 1, 5000), 0); /* the end */
	assert_int_equal(at, ROUNDS * (size_t)(BURST_OVER + BURST_FITS));
	struct rtd_ipc_spool_stats st = stats(sp);
	assert_int_equal(st.bytes, at);
	assert_int_equal(st.dropped, 0);
	assert_true(st.direct > 0 && st.direct < at); /* both read */
	assert_true(st.taken >= ROUNDS);
	pthread_join(w.th, NULL);
	rtd_ipc_session_free(s);
	rtd_ipc_spool_free(sp);
	rtd_ipc_client_free(c);
	close(w.cmd[0]);
	close(w.cmd[1]);
	close(w.done[0]);
	close(w.done[1]);
	close(w.lfd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handovers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
