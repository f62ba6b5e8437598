/* SPDX-License-Identifier: MIT */
/* rtdiag/nettrace.h - placeholder until the nettrace module lands. */
#ifndef RTDIAG_NETTRACE_H
#define RTDIAG_NETTRACE_H

#include "rtdiag/common.h"

#endif /* RTDIAG_NETTRACE_H */
