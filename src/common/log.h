/* SPDX-License-Identifier: MIT */
/* log.h - the library's internal logging; goes to the callback set with
 * rtd_set_log() and nowhere else. */
#ifndef RTD_COMMON_LOG_H
#define RTD_COMMON_LOG_H

#include "rtdiag/common.h"

/* True when a message of this level would be delivered (skip formatting). */
int rtd_log_enabled(enum rtd_log_level level);
void rtd_log(enum rtd_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define rtd_err(...) rtd_log(RTD_LOG_ERROR, __VA_ARGS__)
#define rtd_warn(...) rtd_log(RTD_LOG_WARN, __VA_ARGS__)
#define rtd_info(...) rtd_log(RTD_LOG_INFO, __VA_ARGS__)
#define rtd_debug(...)                                                         \
	do {                                                                   \
		if (rtd_log_enabled(RTD_LOG_DEBUG))                            \
			rtd_log(RTD_LOG_DEBUG, __VA_ARGS__);                   \
	} while (0)

/* Monotonic clock in nanoseconds. */
uint64_t rtd_now_ns(void);

#endif /* RTD_COMMON_LOG_H */
