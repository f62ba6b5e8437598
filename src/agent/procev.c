/* SPDX-License-Identifier: MIT */
/*
 * procev.c - process births, execs, renames and exits from the kernel's
 * process events connector (netlink, NETLINK_CONNECTOR, CN_IDX_PROC; the
 * kernel's Documentation/driver-api/connector.rst and
 * include/uapi/linux/cn_proc.h), so that discovery looks at the processes
 * that changed instead of walking /proc every scan.
 *
 * Listening needs CAP_NET_ADMIN (the agent runs as root to profile other
 * users' processes anyway); without it, or in a network namespace of its
 * own, procev_open() fails and discovery walks /proc as before. The socket
 * is read at each scan, not polled: events of a busy machine (every
 * fork and exit) would otherwise wake the agent thousands of times a
 * second; the receive buffer holds a scan interval's worth, and when it
 * overflowed (ENOBUFS) the caller is told to walk /proc once.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "agent/procev.h"

/* the receive buffer: ~64 bytes an event, ~60k events between two scans */
#define PROCEV_RCVBUF (4 << 20)

static int listen_op(int fd, enum proc_cn_mcast_op op)
{
	/* nlmsghdr, cn_msg, then the op: cn_msg ends in a flexible array,
	 * so the message is laid out in bytes */
	uint8_t m[NLMSG_HDRLEN + sizeof(struct cn_msg) + sizeof(op)];
	struct nlmsghdr nl = {.nlmsg_len = sizeof(m), .nlmsg_type = NLMSG_DONE};
	struct cn_msg cn;
	memset(&cn, 0, sizeof(cn));
	cn.id.idx = CN_IDX_PROC;
	cn.id.val = CN_VAL_PROC;
	cn.len = sizeof(op);
	memset(m, 0, sizeof(m));
	memcpy(m, &nl, sizeof(nl));
	memcpy(m + NLMSG_HDRLEN, &cn, sizeof(cn));
	memcpy(m + NLMSG_HDRLEN + sizeof(cn), &op, sizeof(op));
	return send(fd, m, sizeof(m), 0) == (ssize_t)sizeof(m) ? 0 : -errno;
}

int procev_open(void)
{
	int fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			NETLINK_CONNECTOR);
	if (fd < 0)
		return -errno;
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK,
				 .nl_groups = CN_IDX_PROC};
	int sz = PROCEV_RCVBUF;
	/* FORCE passes rmem_max for CAP_NET_ADMIN, which listening needs */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	int rc = 0;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		rc = -errno;
	if (!rc)
		rc = listen_op(fd, PROC_CN_MCAST_LISTEN);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

void procev_close(int fd)
{
	if (fd < 0)
		return;
	(void)listen_op(fd, PROC_CN_MCAST_IGNORE);
	close(fd);
}

/* One proc_event: copied out (the payload is not aligned for it). */
static void one_event(const uint8_t *p, size_t len, procev_fn fn, void *ctx)
{
	struct proc_event ev;
	if (len < offsetof(struct proc_event, event_data))
		return;
	memset(&ev, 0, sizeof(ev));
	memcpy(&ev, p, len < sizeof(ev) ? len : sizeof(ev));
	switch (ev.what) {
	case PROC_EVENT_FORK:
		/* a thread is a fork too: only new processes */
		if (ev.event_data.fork.child_pid == ev.event_data.fork.child_tgid)
			fn(ctx, PROCEV_FORK, ev.event_data.fork.child_tgid);
		break;
	case PROC_EVENT_EXEC:
		fn(ctx, PROCEV_EXEC, ev.event_data.exec.process_tgid);
		break;
	case PROC_EVENT_COMM:
		if (ev.event_data.comm.process_pid ==
		    ev.event_data.comm.process_tgid)
			fn(ctx, PROCEV_COMM, ev.event_data.comm.process_tgid);
		break;
	case PROC_EVENT_EXIT:
		if (ev.event_data.exit.process_pid ==
		    ev.event_data.exit.process_tgid)
			fn(ctx, PROCEV_EXIT, ev.event_data.exit.process_tgid);
		break;
	default:
		break;
	}
}

int procev_read(int fd, procev_fn fn, void *ctx)
{
	/* aligned for nlmsghdr, as NLMSG_NEXT walks it */
	union {
		struct nlmsghdr h;
		uint8_t b[16384];
	} buf;
	bool lost = false;
	for (;;) {
		ssize_t n = recv(fd, buf.b, sizeof(buf.b), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				lost = true; /* the buffer overflowed: go on */
				continue;
			}
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -errno;
		}
		if (n == 0)
			break;
		size_t left = (size_t)n;
		for (struct nlmsghdr *h = &buf.h; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_ERROR ||
			    h->nlmsg_type == NLMSG_NOOP)
				continue;
			size_t plen = h->nlmsg_len - NLMSG_HDRLEN;
			if (plen < sizeof(struct cn_msg))
				continue;
			const uint8_t *d = NLMSG_DATA(h);
			struct cn_msg cn;
			memcpy(&cn, d, sizeof(cn));
			if (cn.id.idx != CN_IDX_PROC || cn.id.val != CN_VAL_PROC)
				continue;
			size_t elen = plen - sizeof(cn);
			if (cn.len < elen)
				elen = cn.len;
			one_event(d + sizeof(cn), elen, fn, ctx);
		}
	}
	return lost ? 1 : 0;
}
