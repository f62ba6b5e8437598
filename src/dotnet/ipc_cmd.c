/* SPDX-License-Identifier: MIT */
/*
 * ipc_cmd.c - one function per diagnostics IPC command, the shared
 * send-one-message-read-one-reply transaction, and recording frames.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/file.h"
#include "common/guard.h"
#include "common/log.h"
#include "common/rd.h"
#include "dotnet/ipc_int.h"
#include "rtdiag/ipc_dump.h"
#include "rtdiag/ipc_process.h"
#include "rtdiag/ipc_profiler.h"
#include "rtdiag/ipc_session.h"

/*
 * Recording: every frame is
 *   u32 magic "RTDR", u32 connection number, u32 kind (0 sent, 1 received,
 *   2 closed), u32 length, length bytes.
 * Frames of one connection appear in order; replay picks them by number.
 */
void ipc_record(rtd_ipc_client *c, uint32_t conn, int kind, const void *buf,
		size_t len)
{
	if (!c || !c->record)
		return;
	uint8_t h[16];
	/* "RTDR" in file order */
	uint32_t v[4] = {0x52445452u, conn, (uint32_t)kind, (uint32_t)len};
	for (int i = 0; i < 4; i++) {
		h[i * 4] = (uint8_t)v[i];
		h[i * 4 + 1] = (uint8_t)(v[i] >> 8);
		h[i * 4 + 2] = (uint8_t)(v[i] >> 16);
		h[i * 4 + 3] = (uint8_t)(v[i] >> 24);
	}
	fwrite(h, 1, sizeof(h), c->record);
	if (len)
		fwrite(buf, 1, len, c->record);
}

RTD_API void rtd_ipc_reply_clear(struct rtd_ipc_reply *r)
{
	if (!r)
		return;
	free(r->payload);
	memset(r, 0, sizeof(*r));
}

const char *ipc_cmd_name(uint8_t set, uint8_t id)
{
	static const char *const ep[] = {NULL, "StopTracing", "CollectTracing",
		"CollectTracing2", "CollectTracing3", "CollectTracing4",
		"CollectTracing5", "CollectTracing6"};
	static const char *const dump[] = {NULL, "GenerateCoreDump",
		"GenerateCoreDump2", "GenerateCoreDump3"};
	static const char *const prof[] = {NULL, "AttachProfiler",
		"StartupProfiler"};
	static const char *const proc[] = {"ProcessInfo", "ResumeRuntime",
		"ProcessEnvironment", "SetEnvironmentVariable", "ProcessInfo2",
		"EnablePerfMap", "DisablePerfMap", "ApplyStartupHook",
		"ProcessInfo3"};
	const char *n = NULL;
	if (set == RTD_IPC_SET_EVENTPIPE && id < 8)
		n = ep[id];
	else if (set == RTD_IPC_SET_DUMP && id < 4)
		n = dump[id];
	else if (set == RTD_IPC_SET_PROFILER && id < 3)
		n = prof[id];
	else if (set == RTD_IPC_SET_PROCESS && id < 9)
		n = proc[id];
	return n ? n : "command";
}

int ipc_reply_error(rtd_ipc_client *c, const struct rtd_ipc_reply *r,
		    const char *what)
{
	rtd_rd rd;
	rd_init(&rd, r->payload, r->len);
	uint32_t hr = rd_u32le(&rd);
	if (!rd_ok(&rd)) {
		ipc_seterr(c, "%s: error reply without an HRESULT (%zu-byte "
			      "payload)",
			   what, r->len);
		return -RTD_E_IPC_PROTOCOL;
	}
	c->hresult = hr;
	int err = rtd_ipc_hresult_error(hr);
	if (!err)
		err = -RTD_E_IPC_RUNTIME;
	const char *name = rtd_ipc_hresult_name(hr);
	char extra[600] = "";
	/* GenerateCoreDump3 adds a message after the HRESULT. */
	char *text = NULL;
	if (rd_left(&rd) >= 4 && ipc_get_string(&rd, &text) == 0 && text &&
	    *text)
		snprintf(extra, sizeof(extra), ": %.500s", text);
	free(text);
	ipc_seterr(c, "%s failed: %s (HRESULT 0x%08x%s%s)%s", what,
		   rtd_strerror(err), hr, name ? " " : "", name ? name : "",
		   extra);
	return err;
}

/*
 * Wait for the first byte of a reply, up to the client's timeout. With an
 * on_wait callback the wait is cut in slices of WAIT_SLICE_MS and the
 * callback runs between them: the runtime may take seconds to answer (its
 * provider callbacks run managed code, JIT first), and a caller serving
 * other runtimes' streams on this thread must keep reading them.
 */
#define WAIT_SLICE_MS 10
int ipc_wait_reply(rtd_ipc_client *c, int fd)
{
	if (!c->on_wait)
		return 0; /* ipc_read_full waits */
	uint64_t deadline = rtd_now_ns() + (uint64_t)c->timeout_ms * 1000000u;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int n = poll(&p, 1, WAIT_SLICE_MS);
		if (n > 0)
			return 0; /* data, or the end: the read says which */
		if (n < 0 && errno != EINTR)
			return -errno;
		if (rtd_now_ns() >= deadline)
			return -RTD_E_IPC_TIMEOUT;
		c->on_wait(c->wait_ctx);
	}
}

int ipc_reply_status(rtd_ipc_client *c, const struct rtd_ipc_reply *r,
		     const char *what)
{
	if (r->cmdset == RTD_IPC_SET_SERVER && r->cmdid == SERVER_ERROR)
		return ipc_reply_error(c, r, what);
	if (r->cmdset == RTD_IPC_SET_SERVER && r->cmdid == SERVER_OK)
		return 0;
	ipc_seterr(c, "%s: unexpected reply 0x%02x%02x (want 0xFF00)", what,
		   r->cmdset, r->cmdid);
	return -RTD_E_IPC_PROTOCOL;
}

int ipc_conn_send(rtd_ipc_client *c, struct ipc_conn *conn, const rtd_buf *msg,
		  const char *what)
{
	int rc = ipc_conn_open(c, conn);
	if (rc)
		return rc;
	ipc_record(c, conn->id, REC_SEND, msg->data, msg->len);
	rc = ipc_write_all(conn->fd, msg->data, msg->len, c->timeout_ms);
	if (rc) {
		ipc_seterr(c, "%s: sending the request: %s", what, rtd_strerror(rc));
		ipc_conn_close(conn);
	}
	return rc;
}

int ipc_transact(rtd_ipc_client *c, const rtd_buf *msg,
		 struct rtd_ipc_reply *reply, struct ipc_conn *keep)
{
	struct ipc_conn conn;
	memset(reply, 0, sizeof(*reply));
	const char *what = ipc_cmd_name(msg->data[16], msg->data[17]);
	int rc = ipc_conn_send(c, &conn, msg, what);
	if (rc)
		return rc;
	uint8_t h[IPC_HEADER_SIZE];
	rc = ipc_wait_reply(c, conn.fd);
	if (!rc)
		rc = ipc_read_full(conn.fd, h, sizeof(h), c->timeout_ms);
	if (rc) {
		if (rc == -RTD_E_IPC_CLOSED)
			ipc_seterr(c, "%s: the runtime closed the connection "
				      "without a reply (did the process "
				      "exit?)",
				   what);
		else if (rc == -RTD_E_TRUNCATED)
			ipc_seterr(c, "%s: reply header cut short (fewer than "
				      "20 bytes)",
				   what);
		else if (rc == -RTD_E_IPC_TIMEOUT)
			ipc_seterr(c, "%s: no reply within %d ms", what,
				   c->timeout_ms);
		else
			ipc_seterr(c, "%s: reading the reply: %s", what,
				   rtd_strerror(rc));
		if (rc == -RTD_E_TRUNCATED)
			rc = -RTD_E_IPC_PROTOCOL;
		goto out;
	}
	ipc_record(c, conn.id, REC_RECV, h, sizeof(h));
	uint16_t size;
	rc = ipc_header_parse(h, &reply->cmdset, &reply->cmdid, &size);
	if (rc) {
		if (rc == -RTD_E_IPC_MAGIC)
			ipc_seterr(c, "%s: reply at byte 0 does not start with "
				      "DOTNET_IPC_V1",
				   what);
		else
			ipc_seterr(c, "%s: reply header at byte 14 gives size "
				      "%u, less than the 20-byte header",
				   what, (unsigned)size);
		goto out;
	}
	reply->len = size - IPC_HEADER_SIZE;
	if (reply->len) {
		reply->payload = malloc(reply->len);
		if (!reply->payload) {
			rc = -ENOMEM;
			goto out;
		}
		rc = ipc_read_full(conn.fd, reply->payload, reply->len,
				   c->timeout_ms);
		if (rc) {
			ipc_seterr(c, "%s: reply payload cut short (header "
				      "says %zu bytes)",
				   what, reply->len);
			rc = rc == -RTD_E_IPC_TIMEOUT ? rc : -RTD_E_IPC_PROTOCOL;
			goto out;
		}
		ipc_record(c, conn.id, REC_RECV, reply->payload, reply->len);
	}
	rc = ipc_reply_status(c, reply, what);
	if (rc)
		goto out;
	if (keep) {
		*keep = conn;
		return 0;
	}
out:
	ipc_conn_close(&conn);
	/* An error reply stays readable for the caller. */
	if (rc && !(reply->cmdset == RTD_IPC_SET_SERVER &&
		    reply->cmdid == SERVER_ERROR))
		rtd_ipc_reply_clear(reply);
	return rc;
}

int ipc_reply_hr(rtd_ipc_client *c, const struct rtd_ipc_reply *r,
		 const char *what)
{
	if (r->len < 4)
		return 0;
	rtd_rd rd;
	rd_init(&rd, r->payload, r->len);
	uint32_t hr = rd_u32le(&rd);
	if (!(hr & 0x80000000u))
		return 0;
	c->hresult = hr;
	int rc = rtd_ipc_hresult_error(hr);
	const char *name = rtd_ipc_hresult_name(hr);
	ipc_seterr(c, "%s failed: %s (HRESULT 0x%08x%s%s)", what, rtd_strerror(rc),
		   hr, name ? " " : "", name ? name : "");
	return rc;
}

int ipc_transact_hr(rtd_ipc_client *c, const rtd_buf *msg, const char *what)
{
	struct rtd_ipc_reply r;
	int rc = ipc_transact(c, msg, &r, NULL);
	if (!rc)
		rc = ipc_reply_hr(c, &r, what);
	rtd_ipc_reply_clear(&r);
	return rc;
}

RTD_API int rtd_ipc_command(rtd_ipc_client *c, uint8_t cmdset, uint8_t cmdid,
			    const void *payload, size_t len,
			    struct rtd_ipc_reply *reply)
{
	rtd_buf b;
	rtd_buf_init(&b, IPC_MAX_MESSAGE);
	int rc = ipc_msg_begin(&b, cmdset, cmdid);
	if (!rc && len)
		rc = rtd_buf_append(&b, payload, len);
	if (!rc)
		rc = ipc_msg_finish(&b);
	if (!rc) {
		rc = ipc_transact(c, &b, reply, NULL);
		/* An error reply is a reply: the caller looks at it. */
		if (reply->cmdset == RTD_IPC_SET_SERVER &&
		    reply->cmdid == SERVER_ERROR && reply->len >= 4)
			rc = 0;
	}
	rtd_buf_free(&b);
	return rc;
}

/* A message with a few simple fields: build, send, expect OK. */
static int simple(rtd_ipc_client *c, uint8_t set, uint8_t id, rtd_buf *b)
{
	int rc = ipc_msg_finish(b);
	if (!rc)
		rc = ipc_transact_hr(c, b, ipc_cmd_name(set, id));
	rtd_buf_free(b);
	return rc;
}

RTD_API int rtd_ipc_process_info(rtd_ipc_client *c, int max_version,
				 struct rtd_ipc_process_info *out)
{
	static const uint8_t ids[4] = {0, PROC_INFO, PROC_INFO2, PROC_INFO3};
	memset(out, 0, sizeof(*out));
	if (max_version <= 0 || max_version > 3)
		max_version = 3;
	int rc = -RTD_E_IPC_UNKNOWN_COMMAND;
	for (int v = max_version; v >= 1; v--) {
		rtd_buf b;
		struct rtd_ipc_reply r;
		rtd_buf_init(&b, IPC_MAX_MESSAGE);
		rc = ipc_msg_begin(&b, RTD_IPC_SET_PROCESS, ids[v]);
		if (!rc)
			rc = ipc_msg_finish(&b);
		if (!rc)
			rc = ipc_transact(c, &b, &r, NULL);
		rtd_buf_free(&b);
		if (rc == -RTD_E_IPC_UNKNOWN_COMMAND) {
			rtd_ipc_reply_clear(&r);
			continue; /* an older runtime: ask the older command */
		}
		if (!rc) {
			rc = rtd_ipc_process_info_parse(v, r.payload, r.len,
							out);
			if (rc)
				ipc_seterr(c, "ProcessInfo%s reply: %s",
					   v > 1 ? (v == 2 ? "2" : "3") : "",
					   rtd_strerror(rc));
		}
		rtd_ipc_reply_clear(&r);
		return rc;
	}
	return rc;
}

RTD_API int rtd_ipc_resume_runtime(rtd_ipc_client *c)
{
	rtd_buf b;
	rtd_buf_init(&b, IPC_MAX_MESSAGE);
	int rc = ipc_msg_begin(&b, RTD_IPC_SET_PROCESS, PROC_RESUME);
	if (rc) {
		rtd_buf_free(&b);
		return rc;
	}
	return simple(c, RTD_IPC_SET_PROCESS, PROC_RESUME, &b);
}

RTD_API int rtd_ipc_process_env(rtd_ipc_client *c, rtd_ipc_env_fn fn,
				void *ctx)
{
	rtd_buf b;
	struct rtd_ipc_reply r;
	struct ipc_conn conn;
	rtd_buf_init(&b, IPC_MAX_MESSAGE);
	int rc = ipc_msg_begin(&b, RTD_IPC_SET_PROCESS, PROC_ENV);
	if (!rc)
		rc = ipc_msg_finish(&b);
	if (!rc)
		rc = ipc_transact(c, &b, &r, &conn);
	rtd_buf_free(&b);
	if (rc) {
		rtd_ipc_reply_clear(&r);
		return rc;
	}
	rtd_rd rd;
	rd_init(&rd, r.payload, r.len);
	uint32_t incoming = rd_u32le(&rd);
	rtd_ipc_reply_clear(&r);
	if (!rd_ok(&rd)) {
		ipc_seterr(c, "ProcessEnvironment: reply payload shorter than "
			      "its 4-byte size");
		ipc_conn_close(&conn);
		return -RTD_E_IPC_PROTOCOL;
	}
	if (incoming > RTD_IPC_CAP_ENV) {
		ipc_seterr(c, "ProcessEnvironment: %u bytes announced, over "
			      "the %u-byte cap",
			   incoming, RTD_IPC_CAP_ENV);
		ipc_conn_close(&conn);
		return -RTD_E_CAP;
	}
	uint8_t *blk = malloc(incoming ? incoming : 1);
	if (!blk) {
		ipc_conn_close(&conn);
		return -ENOMEM;
	}
	rc = ipc_read_full(conn.fd, blk, incoming, c->timeout_ms);
	if (rc) {
		ipc_seterr(c, "ProcessEnvironment: continuation cut short "
			      "(%u bytes announced)",
			   incoming);
		rc = rc == -RTD_E_IPC_TIMEOUT ? rc : -RTD_E_IPC_PROTOCOL;
	} else {
		ipc_record(c, conn.id, REC_RECV, blk, incoming);
	}
	ipc_conn_close(&conn);
	if (!rc) {
		rd_init(&rd, blk, incoming);
		uint32_t n = rd_u32le(&rd);
		if (rd_ok(&rd) && n > RTD_IPC_CAP_ENV_VARS) {
			ipc_seterr(c, "ProcessEnvironment: %u entries, over "
				      "the cap of %u",
				   n, RTD_IPC_CAP_ENV_VARS);
			rc = -RTD_E_CAP;
		}
		for (uint32_t i = 0; !rc && rd_ok(&rd) && i < n; i++) {
			char *s;
			size_t at = rd_off(&rd);
			rc = ipc_get_string(&rd, &s);
			if (rc) {
				ipc_seterr(c, "ProcessEnvironment: entry %u "
					      "at byte %zu: %s",
					   i, at, rtd_strerror(rc));
				break;
			}
			rc = fn(s ? s : "", ctx);
			free(s);
		}
		if (!rc && !rd_ok(&rd)) {
			ipc_seterr(c, "ProcessEnvironment: block truncated at "
				      "byte %zu",
				   rd_off(&rd));
			rc = -RTD_E_IPC_PROTOCOL;
		}
	}
	free(blk);
	return rc;
}

RTD_API int rtd_ipc_set_env(rtd_ipc_client *c, const char *name,
			    const char *value)
{
	if (!name || !*name)
		return -RTD_E_INVAL;
	rtd_buf b;
	rtd_buf_init(&b, IPC_MAX_MESSAGE);
	int rc = ipc_msg_begin(&b, RTD_IPC_SET_PROCESS, PROC_SETENV);
	if (!rc)
		rc = ipc_put_string(&b, name);
	if (!rc)
		rc = ipc_put_string(&b, value && *value ? value : NULL);
	if (rc) {
		rtd_buf_free(&b);
		return rc;
	}
	return simple(c, RTD_IPC_SET_PROCESS, PROC_SETENV, &b);
}

RTD_API int rtd_ipc_perfmap_enable(rtd_ipc_client *c,
				   enum rtd_ipc_perfmap_type type)
{
	rtd_buf b;
	rtd_buf_init(&b, IPC_MAX_MESSAGE);
	int rc = ipc_msg_begin(&b, RTD_IPC_SET_PROCESS, PROC_PERFMAP_ON);
	if (!rc)
		rc = ipc_put_u32(&b, (uint32_t)type);
	if (rc) {
		rtd_buf_free(&b);
		return rc;
	}
	return simple(c, RTD_IPC_SET_PROCESS, PROC_PERFMAP_ON, &b);
}

RTD_API int rtd_ipc_perfmap_disable(rtd_ipc_client *c)
{
	rtd_buf b;
	rtd_buf_init(&b, IPC_MAX_MESSAGE);
	int rc = ipc_msg_begin(&b, RTD_IPC_SET_PROCESS, PROC_PERFMAP_OFF);
	if (rc) {
		rtd_buf_free(&b);
		return rc;
	}
	return simple(c, RTD_IPC_SET_PROCESS, PROC_PERFMAP_OFF, &b);
}

/* how long a perf map's undo waits for a target whose runtime no longer
 * answers to be gone before it leaves the file to the process still using it */
#define PERFMAP_EXIT_WAIT_MS 10000

/* The guardian's undo of rtd_guard_perfmap() (common/guard.h). A file is
 * only removed once nothing writes it: the map is off, or its process is
 * gone. */
int dotnet_perfmap_undo(pid_t pid, unsigned long long start, int dirfd,
			const char *name, unsigned files)
{
	int r = 0;
	if (rtd_proc_alive(pid, start)) {
		rtd_ipc_client *c = rtd_ipc_client_new(pid, NULL, &r);
		if (c) {
			r = rtd_ipc_perfmap_disable(c);
			rtd_ipc_client_free(c);
		}
		/* it may have ended meanwhile, or be ending: a killed runtime's
		 * diagnostics server is gone before the process (its threads
		 * and memory are torn down first; seen in CI: the recording
		 * ended on its target's exit, the target was not yet a zombie,
		 * and the map file was left) */
		if (r && rtd_proc_wait_gone(pid, start, PERFMAP_EXIT_WAIT_MS))
			r = 0;
	}
	if (r || dirfd < 0)
		return r;
	char info[300];
	guard_info_name(name, info, sizeof(info));
	if ((files & GUARD_MAP_FILE) && unlinkat(dirfd, name, 0) &&
	    errno != ENOENT)
		r = -errno;
	if ((files & GUARD_INFO_FILE) && unlinkat(dirfd, info, 0) &&
	    errno != ENOENT && !r)
		r = -errno;
	return r;
}

RTD_API int rtd_ipc_apply_startup_hook(rtd_ipc_client *c, const char *path)
{
	if (!path || !*path)
		return -RTD_E_INVAL;
	rtd_buf b;
	rtd_buf_init(&b, IPC_MAX_MESSAGE);
	int rc = ipc_msg_begin(&b, RTD_IPC_SET_PROCESS, PROC_STARTUP_HOOK);
	if (!rc)
		rc = ipc_put_string(&b, path);
	if (rc) {
		rtd_buf_free(&b);
		return rc;
	}
	return simple(c, RTD_IPC_SET_PROCESS, PROC_STARTUP_HOOK, &b);
}

RTD_API int rtd_ipc_dump(rtd_ipc_client *c, const char *path,
			 enum rtd_ipc_dump_type type, uint32_t flags, char *msg,
			 size_t msglen)
{
	if (msg && msglen)
		msg[0] = 0;
	if (!path || !*path || type < RTD_IPC_DUMP_MINI ||
	    type > RTD_IPC_DUMP_FULL)
		return -RTD_E_INVAL;
	/* GenerateCoreDump (1) only knows "diagnostics logging on/off". */
	int lowest = (flags & ~RTD_IPC_DUMP_LOG) ? 2 : 1;
	int rc = -RTD_E_IPC_UNKNOWN_COMMAND;
	for (int v = 3; v >= lowest; v--) {
		rtd_buf b;
		rtd_buf_init(&b, IPC_MAX_MESSAGE);
		rc = ipc_msg_begin(&b, RTD_IPC_SET_DUMP, (uint8_t)v);
		if (!rc)
			rc = ipc_put_string(&b, path);
		if (!rc)
			rc = ipc_put_u32(&b, (uint32_t)type);
		if (!rc)
			rc = ipc_put_u32(&b, v == 1 ? (flags & 1) : flags);
		if (!rc)
			rc = ipc_msg_finish(&b);
		if (!rc)
			rc = ipc_transact_hr(c, &b, ipc_cmd_name(RTD_IPC_SET_DUMP,
							     (uint8_t)v));
		rtd_buf_free(&b);
		if (rc != -RTD_E_IPC_UNKNOWN_COMMAND)
			break;
	}
	if (rc && msg && msglen)
		snprintf(msg, msglen, "%s", c->errmsg);
	return rc;
}

static int profiler_cmd(rtd_ipc_client *c, uint8_t id, uint32_t timeout_ms,
			const uint8_t clsid[16], const char *path,
			const void *data, size_t len)
{
	if (!clsid || !path || !*path || len > 60000)
		return -RTD_E_INVAL;
	rtd_buf b;
	rtd_buf_init(&b, IPC_MAX_MESSAGE);
	int rc = ipc_msg_begin(&b, RTD_IPC_SET_PROFILER, id);
	if (!rc && id == PROF_ATTACH)
		rc = ipc_put_u32(&b, timeout_ms);
	if (!rc)
		rc = rtd_buf_append(&b, clsid, 16);
	if (!rc)
		rc = ipc_put_string(&b, path);
	if (!rc && id == PROF_ATTACH) {
		rc = ipc_put_u32(&b, (uint32_t)len);
		if (!rc && len)
			rc = rtd_buf_append(&b, data, len);
	}
	if (rc) {
		rtd_buf_free(&b);
		return rc;
	}
	return simple(c, RTD_IPC_SET_PROFILER, id, &b);
}

RTD_API int rtd_ipc_attach_profiler(rtd_ipc_client *c, uint32_t timeout_ms,
				    const uint8_t clsid[16], const char *path,
				    const void *data, size_t len)
{
	return profiler_cmd(c, PROF_ATTACH, timeout_ms, clsid, path, data, len);
}

RTD_API int rtd_ipc_startup_profiler(rtd_ipc_client *c,
				     const uint8_t clsid[16], const char *path)
{
	return profiler_cmd(c, PROF_STARTUP, 0, clsid, path, NULL, 0);
}

RTD_API int rtd_ipc_stop_tracing(rtd_ipc_client *c, uint64_t session_id)
{
	rtd_buf b;
	rtd_buf_init(&b, IPC_MAX_MESSAGE);
	int rc = ipc_msg_begin(&b, RTD_IPC_SET_EVENTPIPE, EP_STOP);
	if (!rc)
		rc = ipc_put_u64(&b, session_id);
	if (!rc)
		rc = ipc_msg_finish(&b);
	if (!rc) {
		struct rtd_ipc_reply r;
		rc = ipc_transact(c, &b, &r, NULL);
		rtd_ipc_reply_clear(&r);
	}
	rtd_buf_free(&b);
	return rc;
}
