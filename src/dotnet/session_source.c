/* SPDX-License-Identifier: MIT */
/*
 * session_source.c - a live EventPipe session as a record source
 * (rtdiag/ipc_source.h): the nettrace stream source reading the
 * session's socket.
 */
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
