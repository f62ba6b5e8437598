#!/usr/bin/env python3
"""exit_times.py OUT - when each thread of every process ends, as the kernel
stamps it (the proc connector's PROC_EVENT_EXIT, CLOCK_MONOTONIC at the
exit), written to OUT as lines "TGID TID UNIX_NS" (converted to the wall
clock) until SIGTERM. A process has ended when its last thread has: the
largest time of its TGID. Used by exits.sh: on a loaded machine the shell
that waits for a program can run seconds after the program ended, so its
own clock measures the machine, not the exit. Needs root (CAP_NET_ADMIN);
exits 77 at once when the connector is not there or not allowed. Prints
"listening" on stdout once subscribed."""
import os, signal, socket, struct, sys, time

NETLINK_CONNECTOR, CN_IDX_PROC, CN_VAL_PROC = 11, 1, 1
PROC_CN_MCAST_LISTEN, PROC_EVENT_EXIT, NLMSG_DONE = 1, 0x80000000, 3
SO_RCVBUFFORCE = 33

out = open(sys.argv[1], "w", buffering=1)
try:
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_CONNECTOR)
    try:
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 32 << 20)
    except OSError:
        pass
    s.bind((os.getpid(), CN_IDX_PROC))
    cn = struct.pack("=IIIIHH", CN_IDX_PROC, CN_VAL_PROC, 0, 0, 4, 0) + struct.pack("=I", PROC_CN_MCAST_LISTEN)
    s.send(struct.pack("=IHHII", 16 + len(cn), NLMSG_DONE, 0, 0, os.getpid()) + cn)
except OSError as e:
    print("no proc connector: %s" % e, flush=True)
    sys.exit(77)
# the wall clock's offset from CLOCK_MONOTONIC, read once (both move together)
off = time.time_ns() - time.monotonic_ns()
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
print("listening", flush=True)
while True:
    try:
        b = s.recv(65536)
    except OSError:  # ENOBUFS: events lost; said in the output
        out.write("lost\n")
        continue
    p = 0
    while p + 16 <= len(b):
        ln = struct.unpack_from("=I", b, p)[0]
        if ln < 16:
            break
        ev = p + 16 + 20  # nlmsghdr, cn_msg
        if ev + 16 + 8 <= p + ln:
            what, cpu, ts = struct.unpack_from("=IIQ", b, ev)
            if what == PROC_EVENT_EXIT:
                tid, tgid = struct.unpack_from("=II", b, ev + 16)
                out.write("%d %d %d\n" % (tgid, tid, ts + off))
        p += (ln + 3) & ~3
