/* SPDX-License-Identifier: MIT */
/* rtdiag/gotrace.h - placeholder until the gotrace module lands. */
#ifndef RTDIAG_GOTRACE_H
#define RTDIAG_GOTRACE_H

#include "rtdiag/common.h"

#endif /* RTDIAG_GOTRACE_H */
