/* SPDX-License-Identifier: MIT */
/*
 * ipc_call.c - commands sent without waiting for their reply
 * (rtdiag/ipc_call.h): ProcessInfo and EnablePerfMap for a loop that
 * serves other runtimes meanwhile. The synchronous functions of ipc_cmd.c
 * stay as they were (they also serve listeners and replays).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "dotnet/ipc_int.h"
#include "rtdiag/ipc_call.h"
#include "rtdiag/ipc_process.h"

/* The requests to try in turn: a runtime that does not know one is asked
 * the next (ProcessInfo3, 2, then 1), as the synchronous functions do. */
#define CALL_MAX_TRIES 3

struct rtd_ipc_call {
	rtd_ipc_client *c;
	struct ipc_conn conn;
	rtd_buf msg[CALL_MAX_TRIES];
	int n, at;
	int info[CALL_MAX_TRIES]; /* ProcessInfo's version of each; 0: none */
	uint8_t head[IPC_HEADER_SIZE];
	bool body;        /* the header is read: the payload is being read */
	uint8_t *payload; /* the reply's, once its header said its size */
	size_t got, want; /* of the header, then of the payload */
	int rc;           /* 1 to come, 0 answered, or the error */
};

RTD_API void rtd_ipc_call_free(rtd_ipc_call *k)
{
	if (!k)
		return;
	ipc_conn_close(&k->conn);
	for (int i = 0; i < k->n; i++)
		rtd_buf_free(&k->msg[i]);
	free(k->payload);
	free(k);
}

static const char *call_name(const rtd_ipc_call *k)
{
	return ipc_cmd_name(k->msg[k->at].data[16], k->msg[k->at].data[17]);
}

/* Send the current request on a new connection. */
static int call_send(rtd_ipc_call *k)
{
	const rtd_buf *b = &k->msg[k->at];
	free(k->payload);
	k->payload = NULL;
	k->body = false;
	k->got = 0;
	k->want = IPC_HEADER_SIZE;
	return ipc_conn_send(k->c, &k->conn, b, call_name(k));
}

/* The call of the requests built in k->msg (rc: how building went), its
 * first one sent; or NULL, the call freed and *err set. */
static rtd_ipc_call *call_begin(rtd_ipc_call *k, int rc, int *err)
{
	for (int i = 0; i < k->n && !rc; i++)
		rc = ipc_msg_finish(&k->msg[i]);
	if (!rc)
		rc = call_send(k);
	if (!rc) {
		k->rc = 1;
		return k;
	}
	rtd_ipc_call_free(k);
	if (err)
		*err = rc;
	return NULL;
}

/* An empty call for c, or NULL (*err set). */
static rtd_ipc_call *call_new(rtd_ipc_client *c, int *err)
{
	int rc = -RTD_E_INVAL;
	rtd_ipc_call *k = NULL;
	/* a listener's runtime connects when it likes, a replay has no
	 * descriptor to poll: both are served by the synchronous calls */
	if (c && c->mode == IPC_MODE_PATH) {
		rc = -ENOMEM;
		k = calloc(1, sizeof(*k));
	}
	if (!k) {
		if (err)
			*err = rc;
		return NULL;
	}
	k->c = c;
	k->conn.fd = -1;
	k->conn.c = c;
	return k;
}

RTD_API rtd_ipc_call *rtd_ipc_process_info_begin(rtd_ipc_client *c,
						 int max_version, int *err)
{
	static const uint8_t ids[4] = {0, PROC_INFO, PROC_INFO2, PROC_INFO3};
	rtd_ipc_call *k = call_new(c, err);
	if (!k)
		return NULL;
	if (max_version <= 0 || max_version > 3)
		max_version = 3;
	int rc = 0;
	for (int v = max_version; v >= 1 && !rc; v--) {
		rtd_buf *b = &k->msg[k->n];
		rtd_buf_init(b, IPC_MAX_MESSAGE);
		k->info[k->n++] = v;
		rc = ipc_msg_begin(b, RTD_IPC_SET_PROCESS, ids[v]);
	}
	return call_begin(k, rc, err);
}

RTD_API rtd_ipc_call *
rtd_ipc_perfmap_enable_begin(rtd_ipc_client *c, enum rtd_ipc_perfmap_type type,
			     int *err)
{
	rtd_ipc_call *k = call_new(c, err);
	if (!k)
		return NULL;
	rtd_buf *b = &k->msg[k->n++];
	rtd_buf_init(b, IPC_MAX_MESSAGE);
	int rc = ipc_msg_begin(b, RTD_IPC_SET_PROCESS, PROC_PERFMAP_ON);
	if (!rc)
		rc = ipc_put_u32(b, (uint32_t)type);
	return call_begin(k, rc, err);
}

RTD_API int rtd_ipc_call_fd(const rtd_ipc_call *k)
{
	return k && k->rc == 1 ? k->conn.fd : -1;
}

/* A whole reply came: answered, refused, or the next request asked. */
static int call_done(rtd_ipc_call *k)
{
	const char *what = call_name(k);
	struct rtd_ipc_reply r = {0};
	uint16_t size;
	(void)ipc_header_parse(k->head, &r.cmdset, &r.cmdid, &size);
	r.payload = k->payload;
	r.len = k->want;
	ipc_conn_close(&k->conn);
	int rc = ipc_reply_status(k->c, &r, what);
	/* ProcessInfo's payload is its fields, the others' an HRESULT */
	if (!rc && !k->info[k->at])
		rc = ipc_reply_hr(k->c, &r, what);
	if (rc == -RTD_E_IPC_UNKNOWN_COMMAND && k->at + 1 < k->n) {
		k->at++; /* an older runtime: ask the older command */
		rc = call_send(k);
		return k->rc = rc ? rc : 1;
	}
	return k->rc = rc;
}

/* The header read: the payload's size known (0 when the reply is done). */
static int call_header(rtd_ipc_call *k)
{
	uint8_t set, id;
	uint16_t size;
	int rc = ipc_header_parse(k->head, &set, &id, &size);
	if (rc) {
		ipc_seterr(k->c, "%s: reply header: %s (size %u)", call_name(k),
			   rtd_strerror(rc), (unsigned)size);
		ipc_conn_close(&k->conn);
		return k->rc = rc;
	}
	k->body = true;
	k->got = 0;
	k->want = size - IPC_HEADER_SIZE;
	if (k->want && !(k->payload = malloc(k->want))) {
		ipc_conn_close(&k->conn);
		return k->rc = -ENOMEM;
	}
	return 1;
}

RTD_API int rtd_ipc_call_answer(rtd_ipc_call *k)
{
	if (!k)
		return -RTD_E_INVAL;
	while (k->rc == 1) {
		if (k->got == k->want) {
			if (k->body)
				return call_done(k);
			if (call_header(k) != 1)
				break;
			continue;
		}
		uint8_t *to = k->body ? k->payload : k->head;
		ssize_t n = ipc_read_some(k->conn.fd, to + k->got, k->want - k->got, 0);
		if (n == -RTD_E_IPC_TIMEOUT || n == -EINTR)
			return 1;
		if (n <= 0) {
			bool none = n == 0 && !k->got && !k->body;
			if (none)
				ipc_seterr(k->c, "%s: the runtime closed the connection "
						 "without a reply (did the process exit?)",
					   call_name(k));
			else
				ipc_seterr(k->c, "%s: reading the reply: %s", call_name(k),
					   rtd_strerror(n ? (int)n : -RTD_E_TRUNCATED));
			ipc_conn_close(&k->conn);
			k->rc = none ? -RTD_E_IPC_CLOSED : n ? (int)n : -RTD_E_IPC_PROTOCOL;
			break;
		}
		ipc_record(k->c, k->conn.id, REC_RECV, to + k->got, (size_t)n);
		k->got += (size_t)n;
	}
	return k->rc;
}

RTD_API int rtd_ipc_call_process_info(const rtd_ipc_call *k,
				      struct rtd_ipc_process_info *out)
{
	memset(out, 0, sizeof(*out));
	if (!k || k->rc || !k->info[k->at])
		return -RTD_E_STATE;
	int rc = rtd_ipc_process_info_parse(k->info[k->at], k->payload, k->want, out);
	if (rc)
		ipc_seterr(k->c, "%s reply: %s", call_name(k), rtd_strerror(rc));
	return rc;
}
