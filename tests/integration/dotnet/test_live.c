/* SPDX-License-Identifier: MIT */
/*
 * The library against a real .NET 10 process (tests/targets/dotnet-target):
 * every CollectTracing version, fallback from a command the runtime does
 * not know, the runtime's own error replies (unknown command, bad
 * encoding), stop from a second connection, a target killed mid-session,
 * recording and replay, a reverse connection, environment round trip and
 * a core dump checked as an ELF core of that very process.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <sys/procfs.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test_util.h"

#include "common/buf.h"
#include "dotnet/ipc_int.h"
#include "rtdiag/ipc.h"
#include "rtdiag/nettrace.h"

static char target_bin[4096];
static char workdir[256];
static pid_t live_pid;
/* every target started, killed at exit even when a test fails */
static pid_t started[16];
static int nstarted;

/* A runtime killed by SIGKILL leaves its diagnostic socket in /tmp: remove
 * it, or they pile up (pids are reused). */
static void remove_socket(pid_t pid)
{
	char pat[64];
	glob_t g;
	snprintf(pat, sizeof(pat), "/tmp/dotnet-diagnostic-%d-*-socket", (int)pid);
	if (glob(pat, 0, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
	globfree(&g);
}

static void kill_all(void)
{
	for (int i = 0; i < nstarted; i++)
		if (started[i] > 0 && kill(started[i], SIGKILL) == 0) {
			waitpid(started[i], NULL, 0);
			remove_socket(started[i]);
		}
}

static int build_target(void)
{
	char cmd[8192];
	/* ctest runs tests in the source folder: without RTD_SOURCE_DIR,
	 * the path from there (not a NULL to %s) */
	const char *script = rtd_test_path("RTD_SOURCE_DIR", "tests/integration/dotnet/build.sh");
	snprintf(cmd, sizeof(cmd), "bash %s dotnet-target tests/targets",
		 script ? script : "tests/integration/dotnet/build.sh");
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	char dir[4000] = "";
	if (!fgets(dir, sizeof(dir), p)) {
		pclose(p);
		return -1;
	}
	if (pclose(p) != 0)
		return -1;
	dir[strcspn(dir, "\n")] = 0;
	snprintf(target_bin, sizeof(target_bin), "%s/dotnet-target", dir);
	return 0;
}

/* Start the target with an extra environment entry; wait for its Main. */
static pid_t start_target(const char *sub, const char *env, bool wait_ready)
{
	char dir[512], ready[600];
	snprintf(dir, sizeof(dir), "%s/%s", workdir, sub);
	mkdir(dir, 0700);
	snprintf(ready, sizeof(ready), "%s/ready", dir);
	pid_t pid = fork();
	if (pid == 0) {
		if (env)
			putenv((char *)env);
		/* not ctest's pipes: a stray target must not hold them */
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(target_bin, target_bin, dir, (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && nstarted < 16)
		started[nstarted++] = pid;
	for (unsigned i = 0; wait_ready && i < rtd_test_wait_ms() / 100; i++) {
		if (access(ready, F_OK) == 0)
			return pid;
		usleep(100000);
	}
	return wait_ready ? -1 : pid;
}

static void stop_target(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	remove_socket(pid);
}

/* Decodes a session stream as it arrives and counts our own events; with
 * @until_own set, asks the pump to stop (@stop) once some of them arrived
 * (and the file @until_file exists, when set): a session runs until what
 * it must show is there, not for a time a loaded machine may not honour. */
struct decode {
	rtd_nettrace *dec;
	int rc;
	uint64_t own; /* Rtdiag-Test events */
	bool until_own;
	const char *until_file;
	volatile int stop;
	FILE *copy; /* every byte also written here, when set */
};

static int own_event(void *ctx, const struct rtd_nettrace_event *ev)
{
	struct decode *d = ctx;
	if (strcmp(ev->meta->provider, "Rtdiag-Test") == 0)
		d->own++;
	return 0;
}

static void decode_init(struct decode *d)
{
	memset(d, 0, sizeof(*d));
	struct rtd_nettrace_opts o = {.sz = sizeof(o), .ctx = d, .on_event = own_event};
	d->dec = rtd_nettrace_new(&o);
	assert_non_null(d->dec);
}

static int decode_sink(const void *data, size_t n, void *ctx)
{
	struct decode *d = ctx;
	if (d->copy && fwrite(data, 1, n, d->copy) != n)
		return -EIO;
	if (d->rc >= 0 && d->rc != 1)
		d->rc = rtd_nettrace_feed(d->dec, data, n);
	if (d->until_own && d->own > 0 &&
	    (!d->until_file || access(d->until_file, F_OK) == 0))
		d->stop = 1;
	return 0;
}

/* pump options for a session that runs until @d says stop (bounded by
 * rtd_test_wait_ms() against a hang) */
static struct rtd_ipc_pump_opts pump_until(struct decode *d)
{
	d->until_own = true;
	return (struct rtd_ipc_pump_opts){.sz = sizeof(struct rtd_ipc_pump_opts),
		.sink = decode_sink, .ctx = d, .stop = &d->stop,
		.duration_ms = rtd_test_wait_ms()};
}

/* Returns rtd_nettrace_finish(); frees the decoder. */
static int decode_end(struct decode *d)
{
	int rc = d->rc < 0 ? d->rc : rtd_nettrace_finish(d->dec);
	if (rc)
		printf("decode: %s\n", rtd_nettrace_error(d->dec, NULL));
	rtd_nettrace_free(d->dec);
	return rc;
}

static struct rtd_ipc_provider test_prov = {.name = "Rtdiag-Test", .level = 5};

static void run_session(rtd_ipc_client *c, struct rtd_ipc_session_opts *o,
			int want_version)
{
	int err = 0;
	rtd_ipc_session *s = rtd_ipc_session_start(c, o, &err);
	if (!s)
		fail_msg("version %d: %s", want_version, rtd_ipc_client_errmsg(c));
	assert_int_equal(rtd_ipc_session_version(s), want_version);
	assert_true(rtd_ipc_session_id(s) != 0);
	struct decode d;
	decode_init(&d);
	struct rtd_ipc_pump_opts po = pump_until(&d);
	struct rtd_ipc_pump_result r;
	assert_int_equal(rtd_ipc_session_pump(s, &po, &r), 0);
	assert_true(r.stopped);
	assert_true(r.ended);
	assert_false(r.rundown_timeout);
	assert_false(r.target_gone);
	/* the whole stream decodes, with the program's own events in it */
	assert_int_equal(decode_end(&d), 0);
	assert_true(d.own > 0);
	rtd_ipc_session_free(s);
}

static void test_every_collect_version(void **state)
{
	(void)state;
	rtd_ipc_client *c = rtd_ipc_client_new(live_pid, NULL, NULL);
	assert_non_null(c);
	struct rtd_ipc_session_opts o = {.sz = sizeof(o), .providers = &test_prov,
					 .n_providers = 1, .buffer_mb = 16,
					 .no_rundown = true};
	for (int v = 2; v <= 5; v++) {
		o.version = v;
		run_session(c, &o, v);
	}
	o.no_rundown = false;
	o.version = 1;
	run_session(c, &o, 1);
	/* .NET 10 lacks CollectTracing6: UNKNOWN_COMMAND from the real
	 * runtime, then the lowest version that covers the request */
	o.version = 6;
	run_session(c, &o, 1);
	/* a request only CollectTracing6 can express: a clear error */
	o.block_mode = true;
	int err = 0;
	assert_null(rtd_ipc_session_start(c, &o, &err));
	assert_int_equal(err, -RTD_E_IPC_UNKNOWN_COMMAND);
	assert_non_null(strstr(rtd_ipc_client_errmsg(c), "CollectTracing6"));
	rtd_ipc_client_free(c);
}

static void test_runtime_error_replies(void **state)
{
	(void)state;
	rtd_ipc_client *c = rtd_ipc_client_new(live_pid, NULL, NULL);
	assert_non_null(c);
	struct rtd_ipc_reply r;
	/* an unknown command id */
	assert_int_equal(rtd_ipc_command(c, RTD_IPC_SET_PROCESS, 0x7f, NULL, 0, &r), 0);
	assert_int_equal(r.cmdid, 0xff);
	assert_int_equal(rtd_ipc_client_hresult(c), RTD_IPC_HR_UNKNOWN_COMMAND);
	rtd_ipc_reply_clear(&r);
	/* a provider with level 9: the runtime refuses to parse it */
	struct rtd_ipc_provider p = {.name = "Rtdiag-Test", .level = 5};
	struct rtd_ipc_session_opts o = {.sz = sizeof(o), .providers = &p, .n_providers = 1};
	uint8_t *pl;
	size_t n;
	assert_int_equal(rtd_ipc_collect_payload(1, &o, &pl, &n), 0);
	pl[8 + 4 + 8] = 9; /* level */
	assert_int_equal(rtd_ipc_command(c, RTD_IPC_SET_EVENTPIPE, 0x02, pl, n, &r), 0);
	free(pl);
	assert_int_equal(r.cmdid, 0xff);
	assert_int_equal(rtd_ipc_client_hresult(c), RTD_IPC_HR_BAD_ENCODING);
	rtd_ipc_reply_clear(&r);
	/* StopTracing of a session that does not exist still answers */
	assert_int_equal(rtd_ipc_stop_tracing(c, 12345), 0);
	rtd_ipc_client_free(c);
}

static int env_find(const char *e, void *ctx)
{
	return strcmp(e, (const char *)ctx) == 0 ? 1 : 0;
}

static void test_env_round_trip(void **state)
{
	(void)state;
	rtd_ipc_client *c = rtd_ipc_client_new(live_pid, NULL, NULL);
	assert_non_null(c);
	assert_int_equal(rtd_ipc_set_env(c, "RTDIAG_LIVE", "v\xc3\xa9"), 0);
	assert_int_equal(rtd_ipc_process_env(c, env_find, "RTDIAG_LIVE=v\xc3\xa9"), 1);
	assert_int_equal(rtd_ipc_set_env(c, "RTDIAG_LIVE", NULL), 0);
	assert_int_equal(rtd_ipc_process_env(c, env_find, "RTDIAG_LIVE=v\xc3\xa9"), 0);
	rtd_ipc_client_free(c);
}

/* The dump is an ELF core whose NT_PRPSINFO names the target's pid. */
static void test_dump_is_core_of_target(void **state)
{
	(void)state;
	char path[600];
	snprintf(path, sizeof(path), "%s/core", workdir);
	rtd_ipc_client *c = rtd_ipc_client_new(live_pid, NULL, NULL);
	assert_non_null(c);
	char msg[256];
	int rc = rtd_ipc_dump(c, path, RTD_IPC_DUMP_MINI, 0, msg, sizeof(msg));
	if (rc)
		fail_msg("dump: %s", msg);
	rtd_ipc_client_free(c);
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	GElf_Ehdr eh;
	assert_non_null(gelf_getehdr(e, &eh));
	assert_int_equal(eh.e_type, ET_CORE);
	size_t nph;
	assert_int_equal(elf_getphdrnum(e, &nph), 0);
	long found_pid = -1;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		gelf_getphdr(e, (int)i, &ph);
		if (ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_PRPSINFO && nh.n_descsz >= sizeof(prpsinfo_t)) {
				prpsinfo_t ps;
				memcpy(&ps, (char *)d->d_buf + doff, sizeof(ps));
				found_pid = ps.pr_pid;
			}
		}
	}
	elf_end(e);
	close(fd);
	unlink(path);
	assert_int_equal(found_pid, live_pid);
}

/* The target dies mid-session: everything received is kept and the pump
 * says the target went away. */
static void test_target_killed_mid_session(void **state)
{
	(void)state;
	pid_t pid = start_target("killed", NULL, true);
	assert_true(pid > 0);
	rtd_ipc_client *c = rtd_ipc_client_new(pid, NULL, NULL);
	assert_non_null(c);
	struct rtd_ipc_session_opts o = {.sz = sizeof(o), .providers = &test_prov,
					 .n_providers = 1};
	rtd_ipc_session *s = rtd_ipc_session_start(c, &o, NULL);
	assert_non_null(s);
	uint8_t buf[4096];
	size_t got = 0;
	for (int i = 0; i < 50 && got < 8; i++) {
		ssize_t n = rtd_ipc_session_read(s, buf + got, sizeof(buf) - got, 100);
		if (n > 0)
			got += (size_t)n;
	}
	assert_true(got >= 8);
	assert_memory_equal(buf, "Nettrace", 8);
	struct decode d;
	decode_init(&d);
	assert_int_equal(decode_sink(buf, got, &d), 0);
	/* read until some of the program's own events have arrived (the
	 * runtime flushes every 100 ms; a loaded machine takes longer), so
	 * that what is kept after the kill is known to hold some */
	for (unsigned i = 0; i < rtd_test_wait_ms() / 100 && d.own == 0; i++) {
		ssize_t n = rtd_ipc_session_read(s, buf, sizeof(buf), 100);
		if (n > 0)
			assert_int_equal(decode_sink(buf, (size_t)n, &d), 0);
	}
	assert_true(d.own > 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	remove_socket(pid);
	struct rtd_ipc_pump_opts po = {.sz = sizeof(po), .sink = decode_sink, .ctx = &d};
	struct rtd_ipc_pump_result r;
	assert_int_equal(rtd_ipc_session_pump(s, &po, &r), 0);
	assert_true(r.ended);
	assert_true(r.target_gone);
	assert_false(r.stopped);
	/* every complete block decodes; the end marker is missing */
	int drc = decode_end(&d);
	assert_true(drc == 0 || drc == -RTD_E_TRUNCATED);
	rtd_ipc_session_free(s);
	/* the next command says the process is gone */
	assert_int_not_equal(rtd_ipc_resume_runtime(c), 0);
	rtd_ipc_client_free(c);
}

static int file_sink(const void *d, size_t n, void *ctx)
{
	return fwrite(d, 1, n, ctx) == n ? 0 : -EIO;
}

/* A recorded session replays byte for byte what was delivered live. */
static void test_record_replay(void **state)
{
	(void)state;
	char rec[600], live[600];
	snprintf(rec, sizeof(rec), "%s/session.rec", workdir);
	snprintf(live, sizeof(live), "%s/live.nettrace", workdir);
	FILE *rf = fopen(rec, "wb"), *lf = fopen(live, "wb");
	assert_non_null(rf);
	struct rtd_ipc_client_opts co = {.sz = sizeof(co), .record = rf};
	rtd_ipc_client *c = rtd_ipc_client_new(live_pid, &co, NULL);
	assert_non_null(c);
	struct rtd_ipc_session_opts o = {.sz = sizeof(o), .providers = &test_prov,
					 .n_providers = 1};
	rtd_ipc_session *s = rtd_ipc_session_start(c, &o, NULL);
	assert_non_null(s);
	uint64_t id = rtd_ipc_session_id(s);
	/* live: to the file, until some of the program's own events came */
	struct decode ld;
	decode_init(&ld);
	ld.copy = lf;
	struct rtd_ipc_pump_opts lpo = pump_until(&ld);
	assert_int_equal(rtd_ipc_session_pump(s, &lpo, NULL), 0);
	rtd_ipc_session_free(s);
	assert_int_equal(decode_end(&ld), 0);
	assert_true(ld.own > 0);
	rtd_ipc_client_free(c);
	fclose(rf);
	fclose(lf);
	int err = 0;
	char rec_path[600];
	snprintf(rec_path, sizeof(rec_path), "%s", rec);
	s = rtd_ipc_replay_open(rec, &err);
	assert_non_null(s);
	assert_int_equal(rtd_ipc_session_id(s), id);
	snprintf(rec, sizeof(rec), "%s/replayed.nettrace", workdir);
	lf = fopen(rec, "wb");
	struct rtd_ipc_pump_opts po = {.sz = sizeof(po), .sink = file_sink, .ctx = lf};
	struct rtd_ipc_pump_result r;
	assert_int_equal(rtd_ipc_session_pump(s, &po, &r), 0);
	assert_true(r.ended);
	fclose(lf);
	rtd_ipc_session_free(s);
	/* and the replay feeds the decoder straight, to the end */
	s = rtd_ipc_replay_open(rec_path, &err);
	assert_non_null(s);
	struct decode d;
	decode_init(&d);
	po.sink = decode_sink;
	po.ctx = &d;
	assert_int_equal(rtd_ipc_session_pump(s, &po, &r), 0);
	rtd_ipc_session_free(s);
	assert_int_equal(decode_end(&d), 0);
	assert_true(d.own > 0);
	size_t a, b;
	uint8_t *x = rtd_test_slurp(live, &a), *y = rtd_test_slurp(rec, &b);
	assert_true(a > 100);
	assert_int_equal(a, b);
	assert_memory_equal(x, y, a);
	free(x);
	free(y);
}

/* A runtime started suspended with DOTNET_DiagnosticPorts: ProcessInfo and
 * a session over its reverse connections, then resume; Main runs. */
static void test_reverse_connection(void **state)
{
	(void)state;
	char path[108], env[200], ready[600];
	snprintf(path, sizeof(path), "/tmp/rtd-live-%d.sock", (int)getpid());
	rtd_ipc_listener *l = rtd_ipc_listen(path, NULL);
	assert_non_null(l);
	snprintf(env, sizeof(env), "DOTNET_DiagnosticPorts=%s", path);
	pid_t pid = start_target("reverse", env, false);
	struct rtd_ipc_advertise adv;
	int fd;
	assert_int_equal(rtd_ipc_listener_accept(l, (int)rtd_test_wait_ms(), &adv, &fd), 0);
	assert_int_equal(adv.pid, (uint64_t)pid);
	snprintf(ready, sizeof(ready), "%s/reverse/ready", workdir);
	usleep(300000);
	assert_int_not_equal(access(ready, F_OK), 0); /* still suspended */
	rtd_ipc_client *c = rtd_ipc_client_new_listener(l, &adv, fd, NULL, NULL);
	assert_non_null(c);
	struct rtd_ipc_process_info pi;
	assert_int_equal(rtd_ipc_process_info(c, 3, &pi), 0);
	assert_int_equal(pi.pid, (uint64_t)pid);
	assert_memory_equal(pi.cookie, adv.cookie, 16);
	rtd_ipc_process_info_clear(&pi);
	struct rtd_ipc_session_opts o = {.sz = sizeof(o), .providers = &test_prov,
					 .n_providers = 1};
	rtd_ipc_session *s = rtd_ipc_session_start(c, &o, NULL);
	assert_non_null(s);
	assert_int_equal(rtd_ipc_resume_runtime(c), 0);
	struct decode d;
	decode_init(&d);
	d.until_file = ready; /* Main ran */
	struct rtd_ipc_pump_opts po = pump_until(&d);
	struct rtd_ipc_pump_result r;
	assert_int_equal(rtd_ipc_session_pump(s, &po, &r), 0);
	assert_true(r.ended);
	assert_false(r.rundown_timeout);
	assert_int_equal(decode_end(&d), 0);
	assert_true(d.own > 0); /* traced from before Main */
	rtd_ipc_session_free(s);
	assert_int_equal(access(ready, F_OK), 0); /* Main ran */
	rtd_ipc_client_free(c);
	rtd_ipc_listener_free(l);
	stop_target(pid);
}

/* user_events session against the real runtime, where the kernel has
 * user_events (CONFIG_USER_EVENTS); the tracepoint must then exist. */
static void test_user_events_session(void **state)
{
	(void)state;
	const char *ued = "/sys/kernel/tracing/user_events_data";
	int ufd = open(ued, O_RDWR | O_CLOEXEC);
	if (ufd < 0) {
		printf("SKIP user_events: %s: %s (kernel without "
		       "CONFIG_USER_EVENTS or tracefs not mounted)\n", ued,
		       strerror(errno));
		skip();
	}
	struct rtd_ipc_user_events_provider p = {
		.p = {.name = "Rtdiag-Test", .keywords = ~0ull, .level = 5},
		.default_tracepoint = "rtdiag_test"};
	rtd_ipc_client *c = rtd_ipc_client_new(live_pid, NULL, NULL);
	assert_non_null(c);
	uint64_t id = 0;
	int rc = rtd_ipc_user_events_start(c, &p, 1, 0, ufd, &id);
	if (rc)
		fail_msg("%s", rtd_ipc_client_errmsg(c));
	const char *tp = "/sys/kernel/tracing/events/user_events/rtdiag_test";
	for (unsigned i = 0; access(tp, F_OK) != 0 && i < rtd_test_wait_ms() / 50; i++)
		usleep(50000);
	assert_int_equal(access(tp, F_OK), 0);
	assert_int_equal(rtd_ipc_stop_tracing(c, id), 0);
	rtd_ipc_client_free(c);
	close(ufd);
}

int main(void)
{
	if (system("command -v dotnet >/dev/null 2>&1") != 0) {
		printf("SKIP: no dotnet SDK on PATH\n");
		return RTD_TEST_SKIP;
	}
	if (build_target() != 0) {
		printf("building dotnet-target failed\n");
		return 1;
	}
	snprintf(workdir, sizeof(workdir), "/tmp/rtd-live-%d", (int)getpid());
	mkdir(workdir, 0700);
	atexit(kill_all);
	live_pid = start_target("live", NULL, true);
	if (live_pid <= 0) {
		printf("dotnet-target did not start\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_collect_version),
		cmocka_unit_test(test_runtime_error_replies),
		cmocka_unit_test(test_env_round_trip),
		cmocka_unit_test(test_dump_is_core_of_target),
		cmocka_unit_test(test_target_killed_mid_session),
		cmocka_unit_test(test_record_replay),
		cmocka_unit_test(test_reverse_connection),
		cmocka_unit_test(test_user_events_session),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	stop_target(live_pid);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", workdir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
