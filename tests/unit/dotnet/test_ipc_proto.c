/* SPDX-License-Identifier: MIT */
/* Unit tests of the diagnostics IPC encoding and decoding. */
#include "test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/rd.h"
#include "dotnet/ipc_int.h"
#include "rtdiag/ipc.h"

/* The spec's CollectTracing example (ipc-protocol.md "Payloads"):
 * 250 MB, nettrace, one provider "MyEventSource" keywords 100 level 2. */
static void test_collect_v1_matches_spec(void **state)
{
	(void)state;
	struct rtd_ipc_provider p = {.name = "MyEventSource", .keywords = 100,
				     .level = 2};
	struct rtd_ipc_session_opts o = {.sz = sizeof(o), .providers = &p,
					 .n_providers = 1, .buffer_mb = 250};
	uint8_t *b;
	size_t n;
	assert_int_equal(rtd_ipc_collect_payload(1, &o, &b, &n), 0);
	/* 4+4+4 + 8+4 + 4+14*2 + 4 = 60: the spec's message is 80 bytes */
	assert_int_equal(n + IPC_HEADER_SIZE, 80);
	rtd_rd r;
	rd_init(&r, b, n);
	assert_int_equal(rd_u32le(&r), 250);
	assert_int_equal(rd_u32le(&r), 1);
	assert_int_equal(rd_u32le(&r), 1);
	assert_int_equal(rd_u64le(&r), 100);
	assert_int_equal(rd_u32le(&r), 2);
	assert_int_equal(rd_u32le(&r), 14);
	const uint8_t *s;
	assert_true(rd_bytes(&r, 28, &s));
	assert_int_equal(s[0], 'M');
	assert_int_equal(s[1], 0);
	assert_int_equal(s[26], 0);
	assert_int_equal(rd_u32le(&r), 0); /* no arguments */
	assert_int_equal(rd_left(&r), 0);
	free(b);
}

static void test_collect_versions(void **state)
{
	(void)state;
	uint32_t ids[2] = {1, 7};
	struct rtd_ipc_provider p = {.name = "P", .keywords = 1, .level = 5,
				     .args = "a=b"};
	struct rtd_ipc_session_opts o = {.sz = sizeof(o), .providers = &p,
					 .n_providers = 1};
	uint8_t *b;
	size_t n;
	assert_int_equal(rtd_ipc_collect_min_version(&o), 1);
	o.no_rundown = true;
	assert_int_equal(rtd_ipc_collect_min_version(&o), 2);
	assert_int_equal(rtd_ipc_collect_payload(1, &o, &b, &n), -RTD_E_UNSUPPORTED);
	assert_int_equal(rtd_ipc_collect_payload(2, &o, &b, &n), 0);
	/* buffer, format, rundown=0, then the provider count */
	assert_int_equal(b[8], 0);
	assert_int_equal(b[9], 1);
	free(b);
	o.no_stackwalk = true;
	assert_int_equal(rtd_ipc_collect_min_version(&o), 3);
	assert_int_equal(rtd_ipc_collect_payload(3, &o, &b, &n), 0);
	assert_int_equal(b[8], 0); /* rundown */
	assert_int_equal(b[9], 0); /* stackwalk */
	free(b);
	o.no_rundown = false;
	o.rundown_keyword = 0x8;
	assert_int_equal(rtd_ipc_collect_min_version(&o), 4);
	assert_int_equal(rtd_ipc_collect_payload(4, &o, &b, &n), 0);
	rtd_rd r;
	rd_init(&r, b, n);
	rd_skip(&r, 8);
	assert_int_equal(rd_u64le(&r), 0x8);
	assert_int_equal(rd_u8(&r), 0);
	free(b);
	p.filter_ids = ids;
	p.n_filter_ids = 2;
	p.filter_enable = true;
	assert_int_equal(rtd_ipc_collect_min_version(&o), 5);
	assert_int_equal(rtd_ipc_collect_payload(5, &o, &b, &n), 0);
	rd_init(&r, b, n);
	assert_int_equal(rd_u32le(&r), 0); /* streaming session */
	rd_skip(&r, 8 + 8 + 1);
	assert_int_equal(rd_u32le(&r), 1);
	rd_skip(&r, 8 + 4 + 4 + 4 + 4 + 8); /* kw lvl "P" "a=b" */
	assert_int_equal(rd_u8(&r), 1);
	assert_int_equal(rd_u32le(&r), 2);
	assert_int_equal(rd_u32le(&r), 1);
	assert_int_equal(rd_u32le(&r), 7);
	assert_int_equal(rd_left(&r), 0);
	free(b);
	o.block_mode = true;
	assert_int_equal(rtd_ipc_collect_min_version(&o), 6);
	assert_int_equal(rtd_ipc_collect_payload(6, &o, &b, &n), 0);
	assert_int_equal(b[n - 4], 1);
	free(b);
	/* no providers / bad level */
	o.n_providers = 0;
	assert_int_equal(rtd_ipc_collect_payload(6, &o, &b, &n), -RTD_E_INVAL);
	o.n_providers = 1;
	p.level = 9;
	assert_int_equal(rtd_ipc_collect_payload(6, &o, &b, &n), -RTD_E_INVAL);
}

static void put_str16(rtd_buf *b, const char *s)
{
	assert_int_equal(ipc_put_string(b, s), 0);
}

static void test_process_info_parse(void **state)
{
	(void)state;
	rtd_buf b;
	rtd_buf_init(&b, 0);
	ipc_put_u32(&b, 0); /* ProcessInfo3 version */
	ipc_put_u64(&b, 4242);
	for (int i = 0; i < 16; i++)
		ipc_put_u8(&b, (uint8_t)i);
	put_str16(&b, "/usr/bin/app --x \xc3\xa9\xf0\x9f\x98\x80");
	put_str16(&b, "Linux");
	put_str16(&b, "x64");
	put_str16(&b, "app");
	put_str16(&b, "10.0.0");
	put_str16(&b, "linux-x64");
	struct rtd_ipc_process_info pi;
	assert_int_equal(rtd_ipc_process_info_parse(3, b.data, b.len, &pi), 0);
	assert_int_equal(pi.pid, 4242);
	assert_int_equal(pi.cookie[15], 15);
	assert_string_equal(pi.cmdline, "/usr/bin/app --x \xc3\xa9\xf0\x9f\x98\x80");
	assert_string_equal(pi.rid, "linux-x64");
	assert_string_equal(pi.clr_version, "10.0.0");
	rtd_ipc_process_info_clear(&pi);
	/* every truncation is an error, never a crash */
	for (size_t cut = 0; cut < b.len; cut++) {
		int rc = rtd_ipc_process_info_parse(3, b.data, cut, &pi);
		assert_int_equal(rc, -RTD_E_TRUNCATED);
		assert_null(pi.cmdline);
	}
	/* a string length far past the payload */
	uint8_t bad[8 + 16 + 4] = {0};
	bad[24] = 0xff;
	bad[25] = 0xff;
	bad[26] = 0xff;
	bad[27] = 0x7f;
	assert_int_not_equal(rtd_ipc_process_info_parse(1, bad, sizeof(bad), &pi), 0);
	rtd_buf_free(&b);
}

static void test_hresults(void **state)
{
	(void)state;
	assert_int_equal(rtd_ipc_hresult_error(0x80131385u), -RTD_E_IPC_UNKNOWN_COMMAND);
	assert_int_equal(rtd_ipc_hresult_error(0x80131384u), -RTD_E_IPC_BAD_ENCODING);
	assert_int_equal(rtd_ipc_hresult_error(0x800000CBu), -RTD_E_IPC_ENVVAR_NOT_FOUND);
	assert_int_equal(rtd_ipc_hresult_error(0x80070057u), -RTD_E_IPC_INVALIDARG);
	assert_int_equal(rtd_ipc_hresult_error(0x8dead000u), -RTD_E_IPC_RUNTIME);
	assert_int_equal(rtd_ipc_hresult_error(0), 0);
	assert_string_equal(rtd_ipc_hresult_name(0x80131515u), "DS_IPC_E_NOTSUPPORTED");
	assert_null(rtd_ipc_hresult_name(1));
}

static void test_guid(void **state)
{
	(void)state;
	uint8_t g[16];
	char s[40];
	assert_int_equal(rtd_ipc_guid_parse("{12345678-9abc-def0-1122-334455667788}", g), 0);
	assert_int_equal(g[0], 0x78); /* Data1 little-endian on the wire */
	assert_int_equal(g[4], 0xbc);
	assert_int_equal(g[8], 0x11);
	assert_string_equal(rtd_ipc_guid_format(g, s, sizeof(s)),
			    "12345678-9abc-def0-1122-334455667788");
	assert_int_equal(rtd_ipc_guid_parse("12345678-9abc-def0-1122-33445566778", g), -RTD_E_INVAL);
	assert_int_equal(rtd_ipc_guid_parse("12345678x9abc-def0-1122-334455667788", g), -RTD_E_INVAL);
	assert_int_equal(rtd_ipc_guid_parse("1234567g-9abc-def0-1122-334455667788", g), -RTD_E_INVAL);
}

static void test_advertise(void **state)
{
	(void)state;
	uint8_t m[34] = "ADVR_V1";
	for (int i = 0; i < 16; i++)
		m[8 + i] = (uint8_t)(0xa0 + i);
	m[24] = 0x39;
	m[25] = 0x30; /* 12345 */
	struct rtd_ipc_advertise a;
	assert_int_equal(rtd_ipc_advertise_parse(m, sizeof(m), &a), 0);
	assert_int_equal(a.pid, 12345);
	assert_int_equal(a.cookie[0], 0xa0);
	assert_int_equal(rtd_ipc_advertise_parse(m, 33, &a), -RTD_E_TRUNCATED);
	m[0] = 'X';
	assert_int_equal(rtd_ipc_advertise_parse(m, sizeof(m), &a), -RTD_E_IPC_PROTOCOL);
}

static void test_providers(void **state)
{
	(void)state;
	struct rtd_ipc_providers p = {0};
	char err[256];
	assert_int_equal(rtd_ipc_providers_parse(
		"Microsoft-Windows-DotNETRuntime:0x1:Informational,"
		"My-Source::5:\"a=b:c;d=e,f\", Third:ff:2", &p, err, sizeof(err)), 0);
	assert_int_equal(p.n, 3);
	assert_string_equal(p.v[0].name, "Microsoft-Windows-DotNETRuntime");
	assert_int_equal(p.v[0].keywords, 1);
	assert_int_equal(p.v[0].level, 4);
	assert_string_equal(p.v[1].name, "My-Source");
	assert_int_equal(p.v[1].keywords, ~0ull); /* empty: all */
	assert_int_equal(p.v[1].level, 5);
	assert_string_equal(p.v[1].args, "a=b:c;d=e,f");
	assert_string_equal(p.v[2].name, "Third");
	assert_int_equal(p.v[2].keywords, 0xff);
	assert_int_equal(p.v[2].level, 2);
	/* name only: all keywords, verbose */
	assert_int_equal(rtd_ipc_providers_parse("Only", &p, err, sizeof(err)), 0);
	assert_int_equal(p.n, 4);
	assert_int_equal(p.v[3].keywords, ~0ull);
	/* the same name again replaces */
	assert_int_equal(rtd_ipc_providers_parse("Only:2:1", &p, err, sizeof(err)), 0);
	assert_int_equal(p.n, 4);
	assert_int_equal(p.v[3].level, 1);
	assert_int_equal(rtd_ipc_providers_parse("X:zz", &p, err, sizeof(err)), -RTD_E_IPC_PROVIDER);
	assert_non_null(strstr(err, "keywords 'zz'"));
	assert_int_equal(rtd_ipc_providers_parse("X:1:loud", &p, err, sizeof(err)), -RTD_E_IPC_PROVIDER);
	/* keywords: hex, "0x" or "0X", 16 digits at most, some after "0x" */
	assert_int_equal(rtd_ipc_providers_parse("K:0X1fA0", &p, err, sizeof(err)), 0);
	assert_int_equal(p.v[p.n - 1].keywords, 0x1fa0);
	assert_int_equal(rtd_ipc_providers_parse("K:fedcba9876543210", &p, err, sizeof(err)), 0);
	assert_int_equal(p.v[p.n - 1].keywords, 0xfedcba9876543210ull);
	assert_int_equal(rtd_ipc_providers_parse("K:10000000000000000", &p, err, sizeof(err)),
			 -RTD_E_IPC_PROVIDER);
	assert_int_equal(rtd_ipc_providers_parse("K:0x", &p, err, sizeof(err)), -RTD_E_IPC_PROVIDER);
	assert_int_equal(rtd_ipc_providers_parse("K:1g", &p, err, sizeof(err)), -RTD_E_IPC_PROVIDER);
	/* dotnet-trace takes 9 as 5; rtdiag refuses it with the reason */
	assert_int_equal(rtd_ipc_providers_parse("Y:1:9", &p, err, sizeof(err)), -RTD_E_IPC_PROVIDER);
	assert_non_null(strstr(err, "level '9' is above Verbose (5)"));
	assert_int_equal(rtd_ipc_providers_parse("Y:1:0005", &p, err, sizeof(err)), 0);
	assert_int_equal(p.v[p.n - 1].level, 5);
	/* arguments must be key=value pairs (#19 item 9) */
	assert_int_equal(rtd_ipc_providers_parse("Foo:0x1:5:noequals", &p, err, sizeof(err)), -RTD_E_IPC_PROVIDER);
	assert_non_null(strstr(err, "argument 'noequals' is not KEY=VALUE"));
	assert_int_equal(rtd_ipc_providers_parse("Foo:0x1:5:a=1;b", &p, err, sizeof(err)), -RTD_E_IPC_PROVIDER);
	assert_non_null(strstr(err, "argument 'b' is not"));
	assert_int_equal(rtd_ipc_providers_parse("Foo:0x1:5:a=1;b=\"x;y\";", &p, err, sizeof(err)), 0);
	assert_string_equal(p.v[p.n - 1].args, "a=1;b=\"x;y\";");
	assert_int_equal(rtd_ipc_providers_parse("Foo:0x1:5:\"k=v:w\"", &p, err, sizeof(err)), 0);
	assert_string_equal(p.v[p.n - 1].args, "k=v:w");
	assert_int_equal(rtd_ipc_providers_parse(",X", &p, err, sizeof(err)), -RTD_E_IPC_PROVIDER);
	assert_int_equal(rtd_ipc_providers_parse("X:1:2:\"open", &p, err, sizeof(err)), -RTD_E_IPC_PROVIDER);
	assert_int_equal(rtd_ipc_providers_parse("X:11112222333344445", &p, err, sizeof(err)), -RTD_E_IPC_PROVIDER);
	rtd_ipc_providers_clear(&p);
	assert_int_equal(rtd_ipc_providers_add_profile("cpu-sampling", &p), 0);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.v[0].name, "Microsoft-DotNETCore-SampleProfiler");
	assert_int_equal(p.v[1].keywords, 0x14C14FCCBDull);
	assert_int_equal(rtd_ipc_providers_add_profile("gc-collect", &p), 0);
	assert_int_equal(rtd_ipc_providers_add_profile("database", &p), 0);
	assert_int_equal(rtd_ipc_providers_add_profile("nope", &p), -RTD_E_NOTFOUND);
	rtd_ipc_providers_clear(&p);
}

static void test_message_header(void **state)
{
	(void)state;
	rtd_buf b;
	rtd_buf_init(&b, 0);
	assert_int_equal(ipc_msg_begin(&b, 4, 8), 0);
	assert_int_equal(ipc_msg_finish(&b), 0);
	assert_int_equal(b.len, 20);
	uint8_t set, id;
	uint16_t size;
	assert_int_equal(ipc_header_parse(b.data, &set, &id, &size), 0);
	assert_int_equal(set, 4);
	assert_int_equal(id, 8);
	assert_int_equal(size, 20);
	assert_memory_equal(b.data, "DOTNET_IPC_V1\0", 14);
	b.data[14] = 19;
	b.data[15] = 0;
	assert_int_equal(ipc_header_parse(b.data, &set, &id, &size), -RTD_E_IPC_PROTOCOL);
	b.data[0] = 'd';
	assert_int_equal(ipc_header_parse(b.data, &set, &id, &size), -RTD_E_IPC_MAGIC);
	rtd_buf_free(&b);
}

/* What a profile asks the runtime for: only what it reads. */
static void test_profile_request(void **state)
{
	(void)state;
	struct rtd_ipc_providers pv = {0};
	struct rtd_ipc_session_opts so = {.sz = sizeof(so)};
	assert_int_equal(rtd_ipc_profile_request(0, &pv, &so), -RTD_E_INVAL);
	assert_int_equal(rtd_ipc_profile_request(1u << 7, &pv, &so), -RTD_E_INVAL);
	assert_int_equal(rtd_ipc_profile_request(RTD_IPC_PROFILE_CPU, &pv, &so), 0);
	assert_int_equal(pv.n, 2);
	assert_string_equal(pv.v[0].name, "Microsoft-DotNETCore-SampleProfiler");
	assert_string_equal(pv.v[1].name, "Microsoft-Windows-DotNETRuntime");
	/* Jit|Loader at Verbose: MethodLoadVerbose is a Verbose event */
	assert_int_equal(pv.v[1].keywords, 0x2000000018);
	assert_int_equal(pv.v[1].level, 5);
	assert_true(pv.v[1].filter_enable);
	assert_int_equal(pv.v[1].n_filter_ids, 4);
	assert_int_equal(pv.v[1].filter_ids[0], 143);
	assert_true(so.no_stackwalk);
	assert_true(so.filters_optional);
	assert_int_equal(so.rundown_keyword, RTD_IPC_RUNDOWN_NAMES);
	so.providers = pv.v;
	so.n_providers = pv.n;
	assert_int_equal(rtd_ipc_collect_min_version(&so), 5);
	rtd_ipc_providers_clear(&pv);
	/* several kinds: their keywords and events, and stacks for them */
	struct rtd_ipc_session_opts so2 = {.sz = sizeof(so2)};
	assert_int_equal(rtd_ipc_profile_request(RTD_IPC_PROFILE_CPU |
						 RTD_IPC_PROFILE_ALLOC |
						 RTD_IPC_PROFILE_LOCK |
						 RTD_IPC_PROFILE_EXCEPTION,
						 &pv, &so2), 0);
	assert_int_equal(pv.v[1].keywords, 0x2000000018 | 0x1 | 0x4000 | 0x8000);
	/* alloc: AllocationTick, and GCStart + GCJoin_V2, without which
	 * the Linux GC turns AllocationTick off at its next collection */
	assert_int_equal(pv.v[1].n_filter_ids, 4 + 3 + 3 + 1);
	bool start = false, join = false;
	for (uint32_t i = 0; i < pv.v[1].n_filter_ids; i++) {
		start |= pv.v[1].filter_ids[i] == 1;
		join |= pv.v[1].filter_ids[i] == 203;
	}
	assert_true(start && join);
	assert_false(so2.no_stackwalk);
	/* a provider named again replaces the earlier one and its filter */
	char err[128];
	assert_int_equal(rtd_ipc_providers_parse("Microsoft-Windows-DotNETRuntime:1:4",
						 &pv, err, sizeof(err)), 0);
	assert_int_equal(pv.v[1].n_filter_ids, 0);
	assert_null(pv.v[1].filter_ids);
	rtd_ipc_providers_clear(&pv);
}

/* A thread's kernel name, as dotnet stack shows it: this test's own
 * thread, named as the runtime names its threads. */
static void *named_thread(void *arg)
{
	struct {
		pthread_mutex_t mu;
		pthread_cond_t cv;
		pid_t tid;
		bool stop;
	} *t = arg;
	pthread_setname_np(pthread_self(), ".NET TP Worker");
	pthread_mutex_lock(&t->mu);
	t->tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&t->cv);
	while (!t->stop)
		pthread_cond_wait(&t->cv, &t->mu);
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

static void test_thread_name(void **state)
{
	(void)state;
	struct {
		pthread_mutex_t mu;
		pthread_cond_t cv;
		pid_t tid;
		bool stop;
	} t = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, named_thread, &t), 0);
	pthread_mutex_lock(&t.mu);
	while (!t.tid)
		pthread_cond_wait(&t.cv, &t.mu);
	pthread_mutex_unlock(&t.mu);
	char name[64];
	assert_int_equal(rtd_ipc_thread_name(getpid(), (uint64_t)t.tid, name, sizeof(name)), 0);
	assert_string_equal(name, ".NET TP Worker");
	pthread_mutex_lock(&t.mu);
	t.stop = true;
	pthread_cond_broadcast(&t.cv);
	pthread_mutex_unlock(&t.mu);
	pthread_join(th, NULL);
	/* gone, or never there */
	assert_int_equal(rtd_ipc_thread_name(getpid(), (uint64_t)t.tid, name, sizeof(name)), -ENOENT);
	assert_int_equal(rtd_ipc_thread_name(getpid(), 0, name, sizeof(name)), -EINVAL);
}

/* The two questions asked of a process's maps: is an address a writable
 * one of it (a session id), has it mapped a .NET host or runtime */
static void test_maps_questions(void **state)
{
	(void)state;
	static int data = 1;
	assert_int_equal(rtd_ipc_session_id_mapped(getpid(), (uintptr_t)&data), 1);
	assert_int_equal(rtd_ipc_session_id_mapped(getpid(), (uintptr_t)&test_maps_questions), 0);
	assert_int_equal(rtd_ipc_session_id_mapped(-1, 4096), -ENOENT);
	assert_int_equal(rtd_ipc_proc_loads_dotnet(getpid()), 0);
	assert_int_equal(rtd_ipc_proc_loads_dotnet(-1), -ENOENT);
	/* a file of the host's name mapped here: a .NET process to maps */
	char dir[] = "/tmp/rtdiag-maps-XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/libhostfxr.so", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(m != MAP_FAILED);
	close(fd);
	assert_int_equal(rtd_ipc_proc_loads_dotnet(getpid()), 1);
	munmap(m, 4096);
	unlink(path);
	rmdir(dir);
	assert_int_equal(rtd_ipc_proc_loads_dotnet(getpid()), 0);
}

/* A socket path through /proc/PID/root back to our own root's name of
 * the same file, and "" for anything else */
static void test_socket_own_path(void **state)
{
	(void)state;
	char dir[] = "/tmp/rtdiag-own-XXXXXX", f[64], p[128];
	assert_non_null(mkdtemp(dir));
	snprintf(f, sizeof(f), "%s/dotnet-diagnostic-1-2-socket", dir);
	int fd = open(f, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(p, sizeof(p), "/proc/%d/root%s", (int)getpid(), f);
	assert_int_equal(rtd_ipc_socket_own_path(getpid(), p), 0);
	assert_string_equal(p, f);
	snprintf(p, sizeof(p), "/proc/%d/rootx%s", (int)getpid(), f);
	assert_int_equal(rtd_ipc_socket_own_path(getpid(), p), -ENOENT);
	assert_string_equal(p, "");
	snprintf(p, sizeof(p), "/proc/%d/root%s", (int)getppid(), f);
	assert_int_equal(rtd_ipc_socket_own_path(getpid(), p), -ENOENT);
	snprintf(p, sizeof(p), "%s", f);
	assert_int_equal(rtd_ipc_socket_own_path(getpid(), p), -ENOENT);
	unlink(f);
	snprintf(p, sizeof(p), "/proc/%d/root%s", (int)getpid(), f);
	assert_int_equal(rtd_ipc_socket_own_path(getpid(), p), -ENOENT);
	assert_string_equal(p, "");
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collect_v1_matches_spec),
		cmocka_unit_test(test_collect_versions),
		cmocka_unit_test(test_process_info_parse),
		cmocka_unit_test(test_hresults),
		cmocka_unit_test(test_guid),
		cmocka_unit_test(test_advertise),
		cmocka_unit_test(test_providers),
		cmocka_unit_test(test_profile_request),
		cmocka_unit_test(test_message_header),
		cmocka_unit_test(test_thread_name),
		cmocka_unit_test(test_maps_questions),
		cmocka_unit_test(test_socket_own_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
