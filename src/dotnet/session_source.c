/* SPDX-License-Identifier: MIT */
/*
 * session_source.c - a live EventPipe session as a record source
 * (rtdiag/ipc_source.h): the nettrace stream source reading the
 * session's socket, as it comes (blocking, or never: idle with the
 * socket to poll) or under a pump's rules.
 */
#include <errno.h>
#include <stdint.h>

#include "dotnet/ipc_int.h"
#include "rtdiag/ipc_session.h"
#include "rtdiag/ipc_source.h"

static int64_t session_read(void *ctx, void *buf, size_t len)
{
	/* blocks until bytes come or the stream ends (0) */
	return rtd_ipc_session_read(ctx, buf, len, -1);
}

rtd_source *rtd_ipc_session_source(rtd_ipc_session *s,
				   const struct rtd_nettrace_source_opts *opts, int *err)
{
	if (!s) {
		if (err)
			*err = -RTD_E_INVAL;
		return NULL;
	}
	return rtd_nettrace_source_stream(session_read, s, opts, err);
}

static int64_t live_read(void *ctx, void *buf, size_t len)
{
	struct ipc_live *l = ipc_session_live(ctx);
	if (l->round_bytes && l->used >= l->round_bytes) {
		/* the round's budget is spent: idle with bytes still in the
		 * socket, which polls readable (level-triggered), so the
		 * caller comes back after its other work */
		l->used = 0;
		return -EAGAIN;
	}
	if (l->round_bytes && len > l->round_bytes - l->used)
		len = (size_t)(l->round_bytes - l->used);
	/* what has come, or "nothing now": the source is then idle */
	int64_t n = rtd_ipc_session_read(ctx, buf, len, 0);
	if (n == -RTD_E_IPC_TIMEOUT || n == -EINTR) {
		l->used = 0;
		return -EAGAIN;
	}
	if (n > 0)
		l->used += (uint64_t)n;
	return n;
}

rtd_source *rtd_ipc_session_source_live(rtd_ipc_session *s, const struct rtd_ipc_live_opts *lo,
					const struct rtd_nettrace_source_opts *opts, int *err)
{
	int fd = s ? rtd_ipc_session_fd(s) : -1;
	struct rtd_ipc_live_opts o;
	int rc = fd < 0 ? -RTD_E_INVAL
			: rtd_opts_copy(&o, sizeof(o), lo, RTD_OPTS_END(rtd_ipc_live_opts, round_bytes));
	if (rc) {
		if (err)
			*err = rc;
		return NULL;
	}
	*ipc_session_live(s) = (struct ipc_live){.round_bytes = o.round_bytes};
	return rtd_nettrace_source_live(live_read, s, fd, opts, err);
}

static int64_t pump_read(void *ctx, void *buf, size_t len)
{
	int64_t n = ipc_pump_read(ctx, buf, len);
	if (n > 0)
		return n;
	/* a sink's positive "stop" is no byte count: an error here */
	int rc = ipc_pump_rc(ctx);
	return rc < 0 ? rc : rc > 0 ? -ECANCELED : 0;
}

rtd_source *rtd_ipc_session_pump_source(rtd_ipc_session *s,
					const struct rtd_ipc_pump_opts *po,
					struct rtd_ipc_pump_result *res,
					const struct rtd_nettrace_source_opts *opts, int *err)
{
	int rc = s ? ipc_pump_begin(s, po, res) : -RTD_E_INVAL;
	if (rc) {
		if (err)
			*err = rc;
		return NULL;
	}
	return rtd_nettrace_source_stream(pump_read, s, opts, err);
}

int rtd_ipc_session_pump_drain(rtd_ipc_session *s)
{
	if (!s)
		return -RTD_E_INVAL;
	uint8_t buf[16384];
	while (ipc_pump_read(s, buf, sizeof(buf)) > 0)
		;
	return ipc_pump_rc(s);
}
