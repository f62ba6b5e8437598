/* SPDX-License-Identifier: MIT */
/* rtdiag/ipc.h - placeholder until the dotnet module lands. */
#ifndef RTDIAG_IPC_H
#define RTDIAG_IPC_H

#include "rtdiag/common.h"

#endif /* RTDIAG_IPC_H */
