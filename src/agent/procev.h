/* SPDX-License-Identifier: MIT */
/* procev.h - process events from the kernel's proc connector (procev.c). */
#ifndef RTD_AGENT_PROCEV_H
#define RTD_AGENT_PROCEV_H

#include <stdbool.h>
#include <sys/types.h>

enum procev_kind { PROCEV_FORK, PROCEV_EXEC, PROCEV_COMM, PROCEV_EXIT };

/* Called per event of a process (not of a thread): its pid (tgid). */
typedef void (*procev_fn)(void *ctx, enum procev_kind k, pid_t pid);

/* Listen to the kernel's process events. Returns a non-blocking socket,
 * or a negative errno (-EPERM without CAP_NET_ADMIN, -EPROTONOSUPPORT
 * without CONFIG_PROC_EVENTS). */
int procev_open(void);
/* Stop listening and close (fd < 0: nothing). */
void procev_close(int fd);
/* Every event queued, through fn, without waiting. Returns 0, 1 when
 * events were lost (the buffer overflowed: look at everything once), or a
 * negative errno. */
int procev_read(int fd, procev_fn fn, void *ctx);

#endif
