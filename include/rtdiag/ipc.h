/* SPDX-License-Identifier: MIT */
/*
 * rtdiag/ipc.h - a client of the .NET Diagnostics IPC protocol.
 *
 * An umbrella: one header per object, each usable alone.
 *   rtdiag/ipc_client.h       the client, its transport, any command, HRESULTs
 *   rtdiag/ipc_discovery.h    processes, their sockets and names
 *   rtdiag/ipc_listener.h     reverse connections (DOTNET_DiagnosticPorts)
 *   rtdiag/ipc_process.h      Process commands: info, environment, perf maps
 *   rtdiag/ipc_dump.h         Dump commands
 *   rtdiag/ipc_profiler.h     Profiler commands: attach, startup profiler
 *   rtdiag/ipc_providers.h    EventPipe providers and profiles
 *   rtdiag/ipc_session.h      EventPipe sessions, pumps, rundown, replay
 *   rtdiag/ipc_spool.h        session streams read on a thread into capped buffers
 *   rtdiag/ipc_user_events.h  sessions writing to user_events tracepoints
 * docs/api.md lists which header holds what.
 */
#ifndef RTDIAG_IPC_H
#define RTDIAG_IPC_H

#include "rtdiag/ipc_call.h"
#include "rtdiag/ipc_client.h"
#include "rtdiag/ipc_discovery.h"
#include "rtdiag/ipc_dump.h"
#include "rtdiag/ipc_listener.h"
#include "rtdiag/ipc_process.h"
#include "rtdiag/ipc_profiler.h"
#include "rtdiag/ipc_providers.h"
#include "rtdiag/ipc_session.h"
#include "rtdiag/ipc_spool.h"
#include "rtdiag/ipc_user_events.h"

#endif /* RTDIAG_IPC_H */
