# hold_start.py - gdb (non-stop mode) script for test_start_held.sh: the
# thread of the agent that reaches HOLD_AT (a function) for the
# (HOLD_SKIP+1)th time stays stopped there, as a thread the kernel does
# not schedule would; every other thread runs. Its LWP is written to
# HOLD_FILE (HOLD_FILE.ready once gdb is set). The test lets it go by feeding gdb "detach" on its stdin.
import os

import gdb

HELD = os.environ["HOLD_FILE"]


def resume(num):
    def go():
        for t in gdb.selected_inferior().threads():
            if t.num == num and t.is_valid() and t.is_stopped():
                gdb.execute("thread %d" % num, to_string=True)
                gdb.execute("continue &", to_string=True)
    return go


def on_stop(ev):
    th = getattr(ev, "inferior_thread", None) or gdb.selected_thread()
    if isinstance(ev, gdb.BreakpointEvent):
        with open(HELD + ".tmp", "w") as f:
            f.write("%d\n" % th.ptid[1])
        os.rename(HELD + ".tmp", HELD)
        return
    # a thread stopped by the attach (or a signal): on it goes
    gdb.post_event(resume(th.num))


gdb.execute("handle SIGTERM SIGINT SIGHUP SIGUSR1 SIGUSR2 SIGPIPE SIGCHLD "
            "nostop noprint pass", to_string=True)
gdb.events.stop.connect(on_stop)
gdb.execute("break %s" % os.environ["HOLD_AT"])
if int(os.environ.get("HOLD_SKIP", "0")):
    gdb.execute("ignore 1 %s" % os.environ["HOLD_SKIP"])
gdb.execute("continue -a &")
open(HELD + ".ready", "w").close()
