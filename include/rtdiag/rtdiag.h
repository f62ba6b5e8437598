/* SPDX-License-Identifier: MIT */
/* rtdiag/rtdiag.h - everything librtdiag offers. */
#ifndef RTDIAG_RTDIAG_H
#define RTDIAG_RTDIAG_H

#include "rtdiag/agent.h"
#include "rtdiag/common.h"
#include "rtdiag/flight.h"
#include "rtdiag/format.h"
#include "rtdiag/goanalysis.h"
#include "rtdiag/gocapture.h"
#include "rtdiag/gotrace.h"
#include "rtdiag/gotrace_profile.h"
#include "rtdiag/gotrace_source.h"
#include "rtdiag/gotrace_text.h"
#include "rtdiag/gotrace_timeline.h"
#include "rtdiag/guard.h"
#include "rtdiag/ipc.h"
#include "rtdiag/ipc_source.h"
#include "rtdiag/nettrace.h"
#include "rtdiag/nettrace_source.h"
#include "rtdiag/nettrace_timeline.h"
#include "rtdiag/perf.h"
#include "rtdiag/perf_line.h"
#include "rtdiag/perf_data.h"
#include "rtdiag/perf_source.h"
#include "rtdiag/perf_timeline.h"
#include "rtdiag/profile.h"
#include "rtdiag/profile_records.h"
#include "rtdiag/recorder.h"
#include "rtdiag/source.h"
#include "rtdiag/symbols.h"
#include "rtdiag/timeline.h"
#include "rtdiag/timeline_records.h"
#include "rtdiag/trigger.h"

#endif /* RTDIAG_RTDIAG_H */
