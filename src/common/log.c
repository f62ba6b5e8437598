/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static rtd_log_fn log_fn;
static void *log_ctx;
static enum rtd_log_level log_max = RTD_LOG_WARN;

void rtd_set_log(rtd_log_fn fn, void *ctx, enum rtd_log_level max_level)
{
	log_fn = fn;
	log_ctx = ctx;
	log_max = max_level;
}

int rtd_log_enabled(enum rtd_log_level level)
{
	return log_fn && level <= log_max;
}

void rtd_log(enum rtd_log_level level, const char *fmt, ...)
{
	if (!rtd_log_enabled(level))
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(level, msg, log_ctx);
}

uint64_t rtd_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
