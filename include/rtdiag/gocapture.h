/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/gocapture.h - live capture of a Go execution trace from a program
 * serving net/http/pprof (/debug/pprof/trace?seconds=S), streamed to the
 * caller as it arrives, and finding a local Go process's pprof port.
 *
 * HTTP is libcurl's. Requests go straight to the given host (no proxy
 * from the environment, no redirects followed, http and https only).
 */
#ifndef RTDIAG_GOCAPTURE_H
#define RTDIAG_GOCAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "rtdiag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct rtd_gocapture_opts - what to capture, and where the bytes go
 * @sz: sizeof(struct rtd_gocapture_opts)
 * @host: "HOST:PORT" ("127.0.0.1:6060", "[::1]:6060", "localhost:6060"),
 *        or a URL with "http://" or "https://" (a path in it replaces
 *        @path)
 * @path: the endpoint, NULL for "/debug/pprof/trace"
 * @seconds: how long the program traces (the request's ?seconds=, may be
 *           fractional); 0: 1 s
 * @connect_timeout: seconds to connect (0: 5)
 * @grace: seconds beyond @seconds the reply may take to end (0: 10)
 * @on_data: called with the trace's bytes as they arrive (after the
 *           reply is known to be a Go trace: status 200, "go 1." first);
 *           a negative return stops the capture with that error
 * @ctx: passed to @on_data
 * @stop: when not NULL, polled; nonzero stops the capture (-ECANCELED)
 */
struct rtd_gocapture_opts {
	size_t sz;
	const char *host;
	const char *path;
	double seconds;
	double connect_timeout;
	double grace;
	int (*on_data)(const void *buf, size_t len, void *ctx);
	void *ctx;
	const volatile int *stop;
};

/**
 * struct rtd_gocapture_result - what happened
 * @url: the URL requested
 * @status: the HTTP status (0 when there was no reply)
 * @bytes: trace bytes given to on_data
 * @seconds: how long the request took
 */
struct rtd_gocapture_result {
	char url[512];
	long status;
	uint64_t bytes;
	double seconds;
};

/**
 * rtd_gocapture_run - capture one trace
 * @o: the options
 * @res: filled in (may be NULL)
 * @err: gets a message for a person on failure (may be NULL)
 * @errlen: its size
 *
 * Returns: 0 when the whole trace arrived; -ECONNREFUSED (nothing
 * listens), -ETIMEDOUT (no connection, or no end in time), -EPROTO (not a
 * Go pprof trace endpoint: an HTTP error, or a reply that is not a Go
 * trace; the server's own message is in @err), -ECONNRESET (the
 * connection ended before the trace did: the bytes given so far are a
 * trace cut short), -ECANCELED (@stop), -EINVAL (a bad host),
 * -ENOMEM, or @on_data's error.
 */
RTD_API int rtd_gocapture_run(const struct rtd_gocapture_opts *o,
			      struct rtd_gocapture_result *res, char *err, size_t errlen);

/**
 * rtd_gocapture_find - the pprof endpoint of a local process
 * @pid: the process
 * @host: gets "ADDR:PORT" to give rtd_gocapture_run()
 * @hostlen: its size
 * @err: gets a message on failure (may be NULL)
 * @errlen: its size
 *
 * Looks at the TCP ports the process listens on (its sockets in
 * /proc/PID/fd and /proc/PID/net/tcp, tcp6), loopback first, and asks
 * each for /debug/pprof/ (1 s each) until one answers as net/http/pprof.
 * A process in another network namespace is refused: its ports are not
 * this namespace's.
 *
 * Returns: 0, -ESRCH (no such process), -EACCES (its sockets are not
 * readable), -ENOENT (no port answers as net/http/pprof), -EXDEV (another
 * network namespace).
 */
RTD_API int rtd_gocapture_find(int pid, char *host, size_t hostlen, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* RTDIAG_GOCAPTURE_H */
