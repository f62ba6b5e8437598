/* SPDX-License-Identifier: MIT */
/*
 * FAKE SERVER - replies the .NET runtime never sends (truncated header,
 * wrong magic, short payload, silence, oversized announcements) and error
 * replies it sends only in states we cannot reach on demand. Every reply
 * here is scripted by this test; the real runtime is exercised in
 * test_live.c and test_cli.sh.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "test_util.h"

#include "common/buf.h"
#include "common/rd.h"
#include "dotnet/ipc_int.h"
#include "rtdiag/ipc.h"

struct step {
	uint8_t want_set, want_id; /* the request this step expects */
	const uint8_t *reply;
	size_t len;
	int silent_ms; /* wait this long before replying */
	bool recv_fd;  /* expect one byte with an SCM_RIGHTS fd after it */
};

/* the step (index) that replies only once the test writes a byte to the
 * fake's go[1]; -1 none. Set before fake_start(). */
static int held_step = -1;

struct fake {
	int lfd;
	char path[108];
	const struct step *steps;
	size_t n;
	int mismatches;
	pthread_t th;
	uint8_t last_payload[65536];
	size_t last_len;
	ino_t fd_ino; /* inode of the fd received, 0 when none */
	int go[2];    /* the test lets a held step reply */
};

static void *serve(void *arg)
{
	struct fake *f = arg;
	for (size_t i = 0; i < f->n; i++) {
		int fd = accept(f->lfd, NULL, NULL);
		if (fd < 0)
			break;
		uint8_t h[20];
		if (ipc_read_full(fd, h, 20, 5000) == 0) {
			uint16_t size = (uint16_t)(h[14] | h[15] << 8);
			f->last_len = size > 20 ? size - 20u : 0;
			if (f->last_len)
				ipc_read_full(fd, f->last_payload, f->last_len, 5000);
			if (h[16] != f->steps[i].want_set ||
			    h[17] != f->steps[i].want_id)
				f->mismatches++;
		}
		if (f->steps[i].recv_fd) {
			char byte;
			struct iovec iov = {.iov_base = &byte, .iov_len = 1};
			union {
				char b[CMSG_SPACE(sizeof(int))];
				struct cmsghdr a;
			} u;
			struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1,
					   .msg_control = u.b, .msg_controllen = sizeof(u.b)};
			if (recvmsg(fd, &m, 0) == 1) {
				struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
				if (cm && cm->cmsg_type == SCM_RIGHTS) {
					int got;
					struct stat st;
					memcpy(&got, CMSG_DATA(cm), sizeof(int));
					if (fstat(got, &st) == 0)
						f->fd_ino = st.st_ino;
					close(got);
				}
			}
		}
		if (f->steps[i].silent_ms)
			usleep((useconds_t)f->steps[i].silent_ms * 1000);
		char go;
		if ((int)i == held_step && read(f->go[0], &go, 1) != 1)
			f->mismatches++;
		if (f->steps[i].len)
			ipc_write_all(fd, f->steps[i].reply, f->steps[i].len, 1000);
		close(fd);
	}
	return NULL;
}

static void fake_start(struct fake *f, const struct step *s, size_t n)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "/tmp/rtd-fake-%d.sock", (int)getpid());
	unlink(f->path);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, f->path);
	f->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(f->lfd >= 0);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(f->lfd, 8), 0);
	f->steps = s;
	f->n = n;
	assert_int_equal(pipe(f->go), 0);
	assert_int_equal(pthread_create(&f->th, NULL, serve, f), 0);
}

static void fake_end(struct fake *f)
{
	pthread_join(f->th, NULL);
	close(f->go[0]);
	close(f->go[1]);
	close(f->lfd);
	unlink(f->path);
	assert_int_equal(f->mismatches, 0);
}

/* reply builder: header + payload into a static slot */
static size_t mk(uint8_t *out, uint8_t set, uint8_t id, const void *pl,
		 size_t len)
{
	memcpy(out, "DOTNET_IPC_V1\0", 14);
	size_t sz = 20 + len;
	out[14] = (uint8_t)sz;
	out[15] = (uint8_t)(sz >> 8);
	out[16] = set;
	out[17] = id;
	out[18] = out[19] = 0;
	if (len)
		memcpy(out + 20, pl, len);
	return sz;
}

static rtd_ipc_client *client(struct fake *f, int timeout_ms)
{
	struct rtd_ipc_client_opts o = {.sz = sizeof(o), .timeout_ms = timeout_ms};
	rtd_ipc_client *c = rtd_ipc_client_new_path(f->path, &o, NULL);
	assert_non_null(c);
	return c;
}

static void test_malformed_replies(void **state)
{
	(void)state;
	static uint8_t bad_magic[20], short_pl[40], wrong_id[20];
	mk(bad_magic, 0xff, 0, NULL, 0);
	bad_magic[0] = 'X';
	size_t n = mk(short_pl, 0xff, 0, "12345678", 8);
	short_pl[14] = 40; /* header says 20 more bytes than follow */
	mk(wrong_id, 0x04, 0x01, NULL, 0);
	const struct step s[] = {
		{4, 1, (const uint8_t *)"DOTNET_IPC", 10, 0, false}, /* truncated header */
		{4, 1, bad_magic, 20, 0, false},
		{4, 1, short_pl, n, 0, false},
		{4, 1, NULL, 0, 0, false},  /* closed without a reply */
		{4, 1, wrong_id, 20, 0, false},
		{4, 1, NULL, 0, 600, false}, /* silence past the timeout */
	};
	struct fake f;
	fake_start(&f, s, sizeof(s) / sizeof(s[0]));
	rtd_ipc_client *c = client(&f, 300);
	assert_int_equal(rtd_ipc_resume_runtime(c), -RTD_E_IPC_PROTOCOL);
	assert_non_null(strstr(rtd_ipc_client_errmsg(c), "cut short"));
	assert_int_equal(rtd_ipc_resume_runtime(c), -RTD_E_IPC_MAGIC);
	assert_non_null(strstr(rtd_ipc_client_errmsg(c), "does not start with DOTNET_IPC_V1"));
	assert_int_equal(rtd_ipc_resume_runtime(c), -RTD_E_IPC_PROTOCOL);
	assert_non_null(strstr(rtd_ipc_client_errmsg(c), "payload cut short"));
	assert_int_equal(rtd_ipc_resume_runtime(c), -RTD_E_IPC_CLOSED);
	assert_non_null(strstr(rtd_ipc_client_errmsg(c), "without a reply"));
	assert_int_equal(rtd_ipc_resume_runtime(c), -RTD_E_IPC_PROTOCOL);
	assert_non_null(strstr(rtd_ipc_client_errmsg(c), "unexpected reply 0x0401"));
	assert_int_equal(rtd_ipc_resume_runtime(c), -RTD_E_IPC_TIMEOUT);
	rtd_ipc_client_free(c);
	fake_end(&f);
}

static void count_wait(void *ctx)
{
	(*(int *)ctx)++;
}

/* A client with on_wait: called while the runtime is slow to answer (300
 * ms here), the reply still read; a silence past the timeout still ends in
 * a timeout. */
static void test_on_wait(void **state)
{
	(void)state;
	static uint8_t ok[20];
	mk(ok, 0xff, 0x00, NULL, 0);
	const struct step s[] = {
		{4, 1, ok, 20, 300, false},
		{4, 1, NULL, 0, 600, false},
	};
	struct fake f;
	fake_start(&f, s, 2);
	int waits = 0;
	struct rtd_ipc_client_opts o = {.sz = sizeof(o), .timeout_ms = 3000,
					.on_wait = count_wait,
					.wait_ctx = &waits};
	rtd_ipc_client *c = rtd_ipc_client_new_path(f.path, &o, NULL);
	assert_non_null(c);
	assert_int_equal(rtd_ipc_resume_runtime(c), 0);
	/* one call per 10 ms slice without a reply: a loaded machine makes
	 * slices longer, never fewer than one in 300 ms */
	assert_true(waits >= 1);
	rtd_ipc_client_free(c);
	o.timeout_ms = 200;
	waits = 0;
	c = rtd_ipc_client_new_path(f.path, &o, NULL);
	assert_non_null(c);
	assert_int_equal(rtd_ipc_resume_runtime(c), -RTD_E_IPC_TIMEOUT);
	assert_non_null(strstr(rtd_ipc_client_errmsg(c), "no reply within 200 ms"));
	assert_true(waits >= 1);
	rtd_ipc_client_free(c);
	fake_end(&f);
}

static void test_error_replies(void **state)
{
	(void)state;
	static uint8_t e1[24], e2[24], dump3[100];
	uint8_t hr[4] = {0x84, 0x13, 0x13, 0x80}; /* BAD_ENCODING */
	mk(e1, 0xff, 0xff, hr, 4);
	uint8_t hr2[4] = {0xcb, 0x00, 0x00, 0x80}; /* ENVVAR_NOT_FOUND */
	mk(e2, 0xff, 0xff, hr2, 4);
	/* GenerateCoreDump3's error: HRESULT and a message string */
	rtd_buf pl;
	rtd_buf_init(&pl, 0);
	ipc_put_u32(&pl, 0x80004005u);
	ipc_put_string(&pl, "cannot write /nope/core");
	size_t dn = mk(dump3, 0xff, 0xff, pl.data, pl.len);
	rtd_buf_free(&pl);
	const struct step s[] = {
		{4, 3, e1, 24, 0, false},
		{4, 3, e2, 24, 0, false},
		{1, 3, dump3, dn, 0, false},
	};
	struct fake f;
	fake_start(&f, s, 3);
	rtd_ipc_client *c = client(&f, 2000);
	assert_int_equal(rtd_ipc_set_env(c, "A", "b"), -RTD_E_IPC_BAD_ENCODING);
	assert_int_equal(rtd_ipc_client_hresult(c), 0x80131384u);
	assert_non_null(strstr(rtd_ipc_client_errmsg(c), "DS_IPC_E_BAD_ENCODING"));
	assert_int_equal(rtd_ipc_set_env(c, "A", NULL), -RTD_E_IPC_ENVVAR_NOT_FOUND);
	char msg[256];
	assert_int_equal(rtd_ipc_dump(c, "/nope/core", RTD_IPC_DUMP_FULL, 0, msg, sizeof(msg)),
			 -RTD_E_IPC_RUNTIME);
	assert_non_null(strstr(msg, "cannot write /nope/core"));
	rtd_ipc_client_free(c);
	fake_end(&f);
}

static void test_unknown_command_fallback(void **state)
{
	(void)state;
	static uint8_t unk[24], info2[400], unk2[24], ok_sess[28];
	uint8_t hr[4] = {0x85, 0x13, 0x13, 0x80};
	mk(unk, 0xff, 0xff, hr, 4);
	memcpy(unk2, unk, 24);
	rtd_buf pl;
	rtd_buf_init(&pl, 0);
	ipc_put_u64(&pl, 77);
	for (int i = 0; i < 16; i++)
		ipc_put_u8(&pl, 0);
	ipc_put_string(&pl, "app");
	ipc_put_string(&pl, "Linux");
	ipc_put_string(&pl, "x64");
	ipc_put_string(&pl, "app");
	ipc_put_string(&pl, "8.0.1");
	size_t in = mk(info2, 0xff, 0, pl.data, pl.len);
	rtd_buf_free(&pl);
	uint8_t sid[8] = {5};
	mk(ok_sess, 0xff, 0, sid, 8);
	const struct step s[] = {
		{4, 8, unk, 24, 0, false},   /* ProcessInfo3: unknown */
		{4, 4, info2, in, 0, false}, /* ProcessInfo2 answers */
		{2, 6, unk2, 24, 0, false},  /* CollectTracing5: unknown */
		{2, 2, ok_sess, 28, 0, false}, /* CollectTracing (1) covers it */
	};
	struct fake f;
	fake_start(&f, s, 4);
	rtd_ipc_client *c = client(&f, 2000);
	struct rtd_ipc_process_info pi;
	assert_int_equal(rtd_ipc_process_info(c, 3, &pi), 0);
	assert_int_equal(pi.version, 2);
	assert_int_equal(pi.pid, 77);
	assert_string_equal(pi.clr_version, "8.0.1");
	assert_string_equal(pi.rid, "");
	rtd_ipc_process_info_clear(&pi);
	struct rtd_ipc_provider p = {.name = "X", .level = 4};
	struct rtd_ipc_session_opts o = {.sz = sizeof(o), .providers = &p, .n_providers = 1};
	int err = 0;
	rtd_ipc_session *sess = rtd_ipc_session_start(c, &o, &err);
	assert_non_null(sess);
	assert_int_equal(rtd_ipc_session_version(sess), 1);
	assert_int_equal(rtd_ipc_session_id(sess), 5);
	rtd_ipc_session_free(sess);
	rtd_ipc_client_free(c);
	fake_end(&f);
}

/* Wait for a begun session's fd, then read what came of its reply. */
static int answer_when_readable(rtd_ipc_session *s)
{
	struct pollfd p = {.fd = rtd_ipc_session_fd(s), .events = POLLIN};
	assert_int_equal(poll(&p, 1, 10000), 1);
	return rtd_ipc_session_answer(s);
}

/* rtd_ipc_session_begin()/answer(): no wait for the reply; a runtime that
 * does not know CollectTracing5 is asked the lower version on a new
 * connection; the stream after the reply is left to the reader; a
 * connection closed without a reply is an error. */
static void test_begin_answer(void **state)
{
	(void)state;
	static uint8_t unk[24], ok_sess[28 + 8];
	uint8_t hr[4] = {0x85, 0x13, 0x13, 0x80};
	mk(unk, 0xff, 0xff, hr, 4);
	uint8_t sid[8] = {9};
	mk(ok_sess, 0xff, 0, sid, 8);
	memcpy(ok_sess + 28, "Nettrace", 8); /* the stream's first bytes */
	const struct step s[] = {
		{2, 6, unk, 24, 0, false},       /* CollectTracing5, held */
		{2, 2, ok_sess, 36, 0, false},   /* CollectTracing (1) */
		{2, 6, NULL, 0, 0, false},       /* closed, no reply */
	};
	struct fake f;
	held_step = 0;
	fake_start(&f, s, 3);
	rtd_ipc_client *c = client(&f, 2000);
	struct rtd_ipc_provider p = {.name = "X", .level = 4};
	struct rtd_ipc_session_opts o = {.sz = sizeof(o), .providers = &p,
					 .n_providers = 1};
	int err = 0;
	rtd_ipc_session *sess = rtd_ipc_session_begin(c, &o, &err);
	assert_non_null(sess);
	/* the server holds its reply: nothing to read, nothing waited for */
	assert_int_equal(rtd_ipc_session_answer(sess), 1);
	uint8_t buf[16];
	assert_int_equal(rtd_ipc_session_read(sess, buf, sizeof(buf), 0),
			 -RTD_E_STATE);
	/* nor taken by a spool's thread, which would read the reply as the
	 * stream's first bytes */
	rtd_ipc_spool *sp = rtd_ipc_spool_new(NULL, &err);
	assert_non_null(sp);
	assert_int_equal(rtd_ipc_spool_add(sp, sess), -RTD_E_INVAL);
	assert_int_equal(write(f.go[1], "g", 1), 1);
	int rc;
	while ((rc = answer_when_readable(sess)) == 1)
		;
	assert_int_equal(rc, 0);
	assert_int_equal(rtd_ipc_session_version(sess), 1);
	assert_int_equal(rtd_ipc_session_id(sess), 9);
	/* answered: the stream read through the spool */
	assert_int_equal(rtd_ipc_spool_add(sp, sess), 0);
	assert_int_equal(rtd_ipc_session_read(sess, buf, sizeof(buf), 2000), 8);
	assert_memory_equal(buf, "Nettrace", 8);
	rtd_ipc_session_free(sess);
	rtd_ipc_spool_free(sp);
	sess = rtd_ipc_session_begin(c, &o, &err);
	assert_non_null(sess);
	while ((rc = answer_when_readable(sess)) == 1)
		;
	assert_int_equal(rc, -RTD_E_IPC_CLOSED);
	assert_non_null(strstr(rtd_ipc_client_errmsg(c), "without a reply"));
	rtd_ipc_session_free(sess);
	rtd_ipc_client_free(c);
	fake_end(&f);
	held_step = -1;
}

/* Wait for a call's fd, then read what came of its reply. */
static int call_when_readable(rtd_ipc_call *k)
{
	struct pollfd p = {.fd = rtd_ipc_call_fd(k), .events = POLLIN};
	assert_int_equal(poll(&p, 1, 10000), 1);
	return rtd_ipc_call_answer(k);
}

/* A protocol string of ASCII s at out: u32 units with the NUL, UTF-16LE. */
static size_t put_str(uint8_t *out, const char *s)
{
	size_t n = strlen(s) + 1;
	out[0] = (uint8_t)n;
	out[1] = out[2] = out[3] = 0;
	for (size_t i = 0; i < n; i++) {
		out[4 + 2 * i] = (uint8_t)s[i];
		out[5 + 2 * i] = 0;
	}
	return 4 + 2 * n;
}

/* rtd_ipc_process_info_begin() and rtd_ipc_perfmap_enable_begin(): no
 * wait for the reply (held by the server); a runtime that does not know
 * ProcessInfo3 is asked ProcessInfo2 on a new connection; EnablePerfMap's
 * HRESULT read; a connection closed without a reply is an error. */
static void test_call_answer(void **state)
{
	(void)state;
	static uint8_t unk[24], info2[256], on[24], refused[24];
	uint8_t hr[4] = {0x85, 0x13, 0x13, 0x80};
	mk(unk, 0xff, 0xff, hr, 4);
	uint8_t pl[200] = {42}; /* pid 42, a zero cookie */
	size_t n = 24;
	const char *str[5] = {"x", "Linux", "x64", "app", "10.0.1"};
	for (int i = 0; i < 5; i++)
		n += put_str(pl + n, str[i]);
	size_t info2_len = mk(info2, 0xff, 0, pl, n);
	uint8_t zero[4] = {0}, fail[4] = {0x05, 0x40, 0x00, 0x80};
	mk(on, 0xff, 0, zero, 4);
	mk(refused, 0xff, 0, fail, 4); /* OK, carrying a failed HRESULT */
	const struct step s[] = {
		{4, 8, unk, 24, 0, false},          /* ProcessInfo3, held */
		{4, 4, info2, info2_len, 0, false}, /* ProcessInfo2 */
		{4, 5, on, 24, 0, false},           /* EnablePerfMap */
		{4, 5, refused, 24, 0, false},
		{4, 5, NULL, 0, 0, false},          /* closed, no reply */
	};
	struct fake f;
	held_step = 0;
	fake_start(&f, s, 5);
	rtd_ipc_client *c = client(&f, 2000);
	int err = 0;
	rtd_ipc_call *k = rtd_ipc_process_info_begin(c, 0, &err);
	assert_non_null(k);
	/* the server holds its reply: nothing to read, nothing waited for */
	assert_int_equal(rtd_ipc_call_answer(k), 1);
	struct rtd_ipc_process_info pi;
	assert_int_equal(rtd_ipc_call_process_info(k, &pi), -RTD_E_STATE);
	assert_int_equal(write(f.go[1], "g", 1), 1);
	int rc;
	while ((rc = call_when_readable(k)) == 1)
		;
	assert_int_equal(rc, 0);
	assert_int_equal(rtd_ipc_call_fd(k), -1);
	assert_int_equal(rtd_ipc_call_process_info(k, &pi), 0);
	assert_int_equal(pi.version, 2);
	assert_int_equal(pi.pid, 42);
	assert_string_equal(pi.clr_version, "10.0.1");
	rtd_ipc_process_info_clear(&pi);
	rtd_ipc_call_free(k);
	k = rtd_ipc_perfmap_enable_begin(c, RTD_IPC_PERFMAP_PERFMAP, &err);
	assert_non_null(k);
	while ((rc = call_when_readable(k)) == 1)
		;
	assert_int_equal(rc, 0);
	assert_int_equal(f.last_len, 4); /* the type asked, a u32 */
	assert_int_equal(f.last_payload[0], RTD_IPC_PERFMAP_PERFMAP);
	/* not a ProcessInfo call */
	assert_int_equal(rtd_ipc_call_process_info(k, &pi), -RTD_E_STATE);
	rtd_ipc_call_free(k);
	k = rtd_ipc_perfmap_enable_begin(c, RTD_IPC_PERFMAP_PERFMAP, &err);
	while ((rc = call_when_readable(k)) == 1)
		;
	assert_true(rc < 0);
	assert_int_equal(rtd_ipc_client_hresult(c), 0x80004005u);
	rtd_ipc_call_free(k);
	k = rtd_ipc_perfmap_enable_begin(c, RTD_IPC_PERFMAP_PERFMAP, &err);
	while ((rc = call_when_readable(k)) == 1)
		;
	assert_int_equal(rc, -RTD_E_IPC_CLOSED);
	assert_non_null(strstr(rtd_ipc_client_errmsg(c), "EnablePerfMap: the runtime "
							 "closed the connection without a reply"));
	rtd_ipc_call_free(k);
	rtd_ipc_call_free(NULL);
	rtd_ipc_client_free(c);
	assert_int_equal(f.mismatches, 0);
	fake_end(&f);
	held_step = -1;
}

static void test_env_caps(void **state)
{
	(void)state;
	static uint8_t big[26], trunc[26 + 10];
	uint8_t pl[6] = {0, 0, 0, 0x10, 0, 0}; /* 256 MB announced */
	mk(big, 0xff, 0, pl, 6);
	uint8_t pl2[6] = {10, 0, 0, 0, 0, 0};
	size_t n = mk(trunc, 0xff, 0, pl2, 6);
	/* continuation: 1 entry whose string claims 100 units */
	uint8_t cont[10] = {1, 0, 0, 0, 100, 0, 0, 0, 'A', 0};
	memcpy(trunc + n, cont, 10);
	const struct step s[] = {
		{4, 2, big, 26, 0, false},
		{4, 2, trunc, n + 10, 0, false},
	};
	struct fake f;
	fake_start(&f, s, 2);
	rtd_ipc_client *c = client(&f, 2000);
	assert_int_equal(rtd_ipc_process_env(c, NULL, NULL), -RTD_E_CAP);
	assert_non_null(strstr(rtd_ipc_client_errmsg(c), "over the"));
	assert_int_equal(rtd_ipc_process_env(c, NULL, NULL), -RTD_E_TRUNCATED);
	assert_non_null(strstr(rtd_ipc_client_errmsg(c), "entry 0 at byte 4"));
	rtd_ipc_client_free(c);
	fake_end(&f);
}

/* GenerateCoreDump: 3 unknown -> 2 answers; with flags only 2 and 3
 * carry, an older runtime is not asked GenerateCoreDump (1). */
static void test_dump_fallback(void **state)
{
	(void)state;
	static uint8_t unk[24], ok[24];
	uint8_t hr[4] = {0x85, 0x13, 0x13, 0x80};
	mk(unk, 0xff, 0xff, hr, 4);
	uint8_t zero[4] = {0};
	mk(ok, 0xff, 0, zero, 4);
	const struct step s[] = {
		{1, 3, unk, 24, 0, false},
		{1, 2, ok, 24, 0, false},
		{1, 3, unk, 24, 0, false},
		{1, 2, unk, 24, 0, false},
	};
	struct fake f;
	fake_start(&f, s, 4);
	rtd_ipc_client *c = client(&f, 2000);
	assert_int_equal(rtd_ipc_dump(c, "/tmp/x", RTD_IPC_DUMP_MINI, 0, NULL, 0), 0);
	assert_int_equal(rtd_ipc_dump(c, "/tmp/x", RTD_IPC_DUMP_MINI,
				      RTD_IPC_DUMP_CRASHREPORT, NULL, 0),
			 -RTD_E_IPC_UNKNOWN_COMMAND);
	rtd_ipc_client_free(c);
	fake_end(&f);
}

/* A socket path longer than sun_path is reached through /proc/self/fd. */
static void test_long_path(void **state)
{
	(void)state;
	static uint8_t ok[20];
	mk(ok, 0xff, 0, NULL, 0);
	const struct step s[] = {{4, 1, ok, 20, 0, false}};
	struct fake f;
	fake_start(&f, s, 1);
	char dir[400], longp[512];
	snprintf(dir, sizeof(dir), "/tmp/rtd-long-%d-", (int)getpid());
	while (strlen(dir) < 150)
		strcat(dir, "xxxxxxxxxx");
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(longp, sizeof(longp), "%s/dotnet-diagnostic-1-2-socket", dir);
	assert_int_equal(rename(f.path, longp), 0);
	rtd_ipc_client *c = rtd_ipc_client_new_path(longp, NULL, NULL);
	assert_non_null(c);
	assert_int_equal(rtd_ipc_resume_runtime(c), 0);
	rtd_ipc_client_free(c);
	rename(longp, f.path);
	rmdir(dir);
	fake_end(&f);
}

/* A peer on our listener that is not a runtime (no ADVR_V1). */
static void test_listener_rejects_non_runtime(void **state)
{
	(void)state;
	char path[108];
	snprintf(path, sizeof(path), "/tmp/rtd-lst-%d.sock", (int)getpid());
	rtd_ipc_listener *l = rtd_ipc_listen(path, NULL);
	assert_non_null(l);
	int fd;
	assert_int_equal(ipc_connect_path(path, &fd), 0);
	ipc_write_all(fd, "HELLO_V1_not_an_advertise_message_", 34, 1000);
	struct rtd_ipc_advertise a;
	int cfd;
	assert_int_equal(rtd_ipc_listener_accept(l, 2000, &a, &cfd), -RTD_E_IPC_PROTOCOL);
	close(fd);
	/* and a real-looking advertise is parsed */
	assert_int_equal(ipc_connect_path(path, &fd), 0);
	uint8_t m[34] = "ADVR_V1";
	m[24] = 42;
	ipc_write_all(fd, m, 34, 1000);
	assert_int_equal(rtd_ipc_listener_accept(l, 2000, &a, &cfd), 0);
	assert_int_equal(a.pid, 42);
	close(cfd);
	close(fd);
	assert_int_equal(rtd_ipc_listener_accept(l, 100, &a, &cfd), -RTD_E_IPC_TIMEOUT);
	rtd_ipc_listener_free(l);
}

/* user_events sessions: the payload layout and the fd passed with
 * SCM_RIGHTS (no user_events in this kernel is needed for this part). */
static void test_user_events_fd_passing(void **state)
{
	(void)state;
	static uint8_t ok[28];
	uint8_t sid[8] = {9};
	mk(ok, 0xff, 0, sid, 8);
	const struct step s[] = {{2, 6, ok, 28, 0, true}};
	struct fake f;
	fake_start(&f, s, 1);
	char tmp[] = "/tmp/rtd-ue-XXXXXX";
	int ufd = mkstemp(tmp);
	assert_true(ufd >= 0);
	struct stat st;
	fstat(ufd, &st);
	uint32_t low[2] = {1, 2};
	struct rtd_ipc_tracepoint_set set = {.name = "LowEvents", .event_ids = low,
					     .n_event_ids = 2};
	struct rtd_ipc_user_events_provider p = {
		.p = {.name = "Rtdiag-Test", .keywords = 3, .level = 4},
		.default_tracepoint = "MyTracepoint", .sets = &set, .n_sets = 1};
	rtd_ipc_client *c = client(&f, 2000);
	uint64_t id = 0;
	int rc = rtd_ipc_user_events_start(c, &p, 1, 0, ufd, &id);
	if (rc)
		fail_msg("%s", rtd_ipc_client_errmsg(c));
	assert_int_equal(id, 9);
	rtd_ipc_client_free(c);
	fake_end(&f);
	assert_int_equal(f.fd_ino, st.st_ino);
	/* session_type 1, rundown 0, 1 provider, ..., default tracepoint,
	 * one set "LowEvents" {1, 2} at the very end */
	rtd_rd r;
	rd_init(&r, f.last_payload, f.last_len);
	assert_int_equal(rd_u32le(&r), 1);
	assert_int_equal(rd_u64le(&r), 0);
	assert_int_equal(rd_u32le(&r), 1);
	assert_int_equal(rd_u64le(&r), 3);
	assert_int_equal(rd_u32le(&r), 4);
	const uint8_t *tail = f.last_payload + f.last_len - 12;
	assert_int_equal(tail[0], 2);  /* two ids */
	assert_int_equal(tail[4], 1);
	assert_int_equal(tail[8], 2);
	close(ufd);
	unlink(tmp);
	/* a provider without any tracepoint is refused before sending */
	p.default_tracepoint = NULL;
	p.n_sets = 0;
	uint8_t *b;
	size_t n;
	assert_int_equal(rtd_ipc_user_events_payload(&p, 1, 0, &b, &n), -RTD_E_INVAL);
}

int main(void)
{
	printf("FAKE SERVER: these replies are scripted by the test, not sent "
	       "by a runtime\n");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed_replies),
		cmocka_unit_test(test_error_replies),
		cmocka_unit_test(test_on_wait),
		cmocka_unit_test(test_unknown_command_fallback),
		cmocka_unit_test(test_begin_answer),
		cmocka_unit_test(test_call_answer),
		cmocka_unit_test(test_env_caps),
		cmocka_unit_test(test_long_path),
		cmocka_unit_test(test_dump_fallback),
		cmocka_unit_test(test_listener_rejects_non_runtime),
		cmocka_unit_test(test_user_events_fd_passing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
