/* SPDX-License-Identifier: MIT */
/* ipc_int.h - internals of the diagnostics IPC client shared by its files. */
#ifndef RTD_DOTNET_IPC_INT_H
#define RTD_DOTNET_IPC_INT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "common/buf.h"
#include "rtdiag/ipc_client.h"
#include "rtdiag/ipc_listener.h"
#include "rtdiag/ipc_session.h"

#define IPC_HEADER_SIZE 20
#define IPC_MAX_MESSAGE 65535u
#define IPC_MAGIC "DOTNET_IPC_V1" /* 13 chars + NUL = 14 bytes */
#define IPC_ADVR_MAGIC "ADVR_V1"  /* 7 chars + NUL = 8 bytes */
#define IPC_ADVR_SIZE 34
#define IPC_DEFAULT_TIMEOUT_MS 30000

/* Command ids (ipc-protocol.md "Commands"). */
enum {
	EP_STOP = 0x01,
	EP_COLLECT = 0x02, /* CollectTracing N is 0x01 + N */
	DUMP_GENERATE = 0x01, /* GenerateCoreDump N is N */
	PROF_ATTACH = 0x01,
	PROF_STARTUP = 0x02,
	PROC_INFO = 0x00,
	PROC_RESUME = 0x01,
	PROC_ENV = 0x02,
	PROC_SETENV = 0x03,
	PROC_INFO2 = 0x04,
	PROC_PERFMAP_ON = 0x05,
	PROC_PERFMAP_OFF = 0x06,
	PROC_STARTUP_HOOK = 0x07,
	PROC_INFO3 = 0x08,
	SERVER_OK = 0x00,
	SERVER_ERROR = 0xFF,
};

enum ipc_mode { IPC_MODE_PATH, IPC_MODE_LISTENER, IPC_MODE_REPLAY };

struct rtd_ipc_client {
	enum ipc_mode mode;
	char path[4096];
	char target[128];
	rtd_ipc_listener *listener;
	struct rtd_ipc_advertise adv;
	int pending_fd; /* a connection accepted but not used yet */
	int timeout_ms;
	FILE *record;
	void (*on_wait)(void *ctx);
	void *wait_ctx;
	uint32_t conn_seq; /* numbers connections in a recording */
	uint32_t hresult;
	char errmsg[1024];
};

/* One connection carrying one command. */
struct ipc_conn {
	int fd;
	uint32_t id; /* connection number in a recording */
	rtd_ipc_client *c;
};

/* Wait for a reply's first byte, calling the client's on_wait meanwhile. */
int ipc_wait_reply(rtd_ipc_client *c, int fd);

/* Set the client's message: "TARGET: ..." */
void ipc_seterr(rtd_ipc_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ipc_set_last_err(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Transport (ipc_transport.c). */
int ipc_connect_path(const char *path, int *fd);
int ipc_conn_open(rtd_ipc_client *c, struct ipc_conn *conn);
void ipc_conn_close(struct ipc_conn *conn);
int ipc_write_all(int fd, const void *buf, size_t len, int timeout_ms);
/* Read exactly len bytes; -RTD_E_IPC_CLOSED at EOF before any, -RTD_E_TRUNCATED in between. */
int ipc_read_full(int fd, void *buf, size_t len, int timeout_ms);
ssize_t ipc_read_some(int fd, void *buf, size_t len, int timeout_ms);

/* Recording frames (ipc_record.c). */
enum { REC_SEND = 0, REC_RECV = 1, REC_CLOSE = 2 };
void ipc_record(rtd_ipc_client *c, uint32_t conn, int kind, const void *buf,
		size_t len);

/* Messages (ipc_proto.c). */
int ipc_msg_begin(rtd_buf *b, uint8_t set, uint8_t id);
int ipc_msg_finish(rtd_buf *b);
int ipc_put_u8(rtd_buf *b, uint8_t v);
int ipc_put_u32(rtd_buf *b, uint32_t v);
int ipc_put_u64(rtd_buf *b, uint64_t v);
/* A protocol string: u32 count of UTF-16 units incl. NUL, units, NUL;
 * NULL is written as length 0. */
int ipc_put_string(rtd_buf *b, const char *utf8);
/* Read a protocol string into a malloc'd UTF-8 string. */
struct rtd_rd;
int ipc_get_string(struct rtd_rd *r, char **out);
/* Parse a 20-byte header. */
int ipc_header_parse(const uint8_t *h, uint8_t *set, uint8_t *id,
		     uint16_t *size);

/* A reply's status: 0 for OK (0xFF00), the runtime's error for an error
 * reply, else -RTD_E_IPC_PROTOCOL; c's message set for either. */
int ipc_reply_status(rtd_ipc_client *c, const struct rtd_ipc_reply *r,
		     const char *what);
/* Open a new connection and send msg on it (recorded): 0, or the error
 * with the connection closed and c's message saying what failed. */
int ipc_conn_send(rtd_ipc_client *c, struct ipc_conn *conn, const rtd_buf *msg,
		  const char *what);
/* Send one message on a new connection and read the reply header and
 * payload. On an error reply sets c->hresult and returns the mapped
 * error (the reply is still filled). The connection stays open in conn
 * when keep is set (for continuations), else it is closed. */
int ipc_transact(rtd_ipc_client *c, const rtd_buf *msg,
		 struct rtd_ipc_reply *reply, struct ipc_conn *keep);
/* A transaction whose success reply carries an int32 HRESULT (or none). */
int ipc_transact_hr(rtd_ipc_client *c, const rtd_buf *msg, const char *what);
/* A success reply's int32 HRESULT (when it carries one): 0, or its error
 * with c->errmsg and c->hresult set. */
int ipc_reply_hr(rtd_ipc_client *c, const struct rtd_ipc_reply *r,
		 const char *what);
/* "ProcessInfo2", "CollectTracing5"...: a command's name for messages. */
const char *ipc_cmd_name(uint8_t set, uint8_t id);
/* Describe an error reply in c->errmsg. */
int ipc_reply_error(rtd_ipc_client *c, const struct rtd_ipc_reply *r,
		    const char *what);

/* A session's pump (ipc_session.c): rtd_ipc_session_pump()'s loop, one
 * delivery a call, so that a record source can read under its rules. */
struct ipc_pump {
	struct rtd_ipc_pump_opts o;
	struct rtd_ipc_pump_result *res, own;
	uint64_t start, last_tick, rundown_ns;
	uint64_t stop_at; /* when StopTracing was sent */
	bool begun, reading; /* ipc_pump_begin() called; read once since */
	bool done;
	int rc; /* why it ended: 0, what the sink returned, or an error */
};
/* Begin a pump of @s: 0, or -RTD_E_INVAL for bad @o. */
int ipc_pump_begin(rtd_ipc_session *s, const struct rtd_ipc_pump_opts *o,
		   struct rtd_ipc_pump_result *res);
/* Up to @len bytes of the stream (the sink has had them): their count, or
 * 0 once the pump is over (ipc_pump_rc() says why). The duration counts
 * from the first call. */
int64_t ipc_pump_read(rtd_ipc_session *s, void *buf, size_t len);
int ipc_pump_rc(const rtd_ipc_session *s);

/* A live source's reads (session_source.c): its round's byte budget */
struct ipc_live {
	uint64_t round_bytes; /* rtd_ipc_live_opts.round_bytes; 0: none */
	uint64_t used;        /* read since the round began */
};
struct ipc_live *ipc_session_live(rtd_ipc_session *s);

/* A session's place on a spool (ipc_spool.c): its reads, its descriptor
 * to poll, its dropped bytes, and its leaving (at the session's free,
 * before its socket closes). */
struct spool_ent;
struct spool_ent **ipc_session_spool(rtd_ipc_session *s);
ssize_t ipc_spool_read(struct spool_ent *e, void *buf, size_t len,
		       int timeout_ms);
int ipc_spool_fd(const struct spool_ent *e);
uint64_t ipc_spool_dropped(const struct spool_ent *e);
void ipc_spool_leave(struct spool_ent *e);

#endif /* RTD_DOTNET_IPC_INT_H */
