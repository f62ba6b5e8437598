#!/usr/bin/env bash
# A runtime's session that ends while the agent's rundown session waits
# for its reply: the agent must not leave that stream unread, or the
# runtime, writing its rundown at exit to a full socket, never exits
# (agent test_exit at load 20, ASan: 2 of 24 programs hung, their main
# thread in sock_alloc_send_pskb to the rundown's socket; the agent had
# marked the source ended at the session's end and polled none of its
# streams again, and the rundown, its reply unread, was not on the spool).
#
# A FAKE RUNTIME (python3, labelled as such: a real one cannot be made to
# end its session at this moment on demand) listens on a diagnostic
# socket named for a `sleep` process: ProcessInfo refused; the agent's
# session (CollectTracing) answered with a small real nettrace file
# (../shared/testdata), held before its last byte; its rundown session's
# request held unanswered. The agent is stopped (SIGSTOP); the session's
# last byte is sent and its stream closed, the rundown's reply and 4 KB
# written; the agent let go (SIGCONT) finds both at once, as a loaded one
# does. The fake then writes 4 MB of rundown: the agent must read them or
# close the stream (EPIPE). The old agent left it unread: the write never
# ended (bounded here by RTD_TEST_WAIT).
. "$(dirname "$0")/lib.sh"
NT="${RTD_SHARED_DIR:-$SRC/../shared}/testdata/nettrace/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace"
[ -f "$NT" ] || skip "no $NT (../shared/testdata)"

mkdir -p "$WORK/tmp"
ln -s /bin/sleep "$WORK/rdend"
TMPDIR="$WORK/tmp" "$WORK/rdend" 600 &
F=$!; PIDS+=("$F")
key=$(awk '{ sub(/.*\) /, ""); split($0, f, " "); print f[20] }' /proc/$F/stat)
mkfifo "$WORK/go"
python3 - "$WORK/tmp/dotnet-diagnostic-$F-$key-socket" "$NT" "$WORK/go" "$WORK/state" \
  >"$WORK/fake.log" 2>&1 <<'PY' &
# A FAKE .NET diagnostic server, scripted for this test only.
import os, socket, struct, sys
path, nt, go, state = sys.argv[1:5]
data = open(nt, "rb").read()
def say(s):
    open(state, "a").write(s + "\n")
    print(s, flush=True)
def reply(c, cid, payload=b""):
    c.sendall(b"DOTNET_IPC_V1\0" + struct.pack("<HBBH", 20 + len(payload), 0xFF, cid, 0) + payload)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path); s.listen(8)
main = None
while True:
    c, _ = s.accept()
    h = c.recv(20, socket.MSG_WAITALL)
    n = struct.unpack_from("<H", h, 14)[0]
    body = c.recv(n - 20, socket.MSG_WAITALL) if n > 20 else b""
    cs, cid = h[16], h[17]
    say("command %02x%02x" % (cs, cid))
    if cs == 0x02 and cid >= 0x02 and main is None:  # the session
        reply(c, 0x00, struct.pack("<Q", 1))
        main = c
        main.sendall(data[:-1])  # all but its last byte
    elif cs == 0x02 and cid >= 0x02:  # the rundown session: held
        rd = c
        break
    else:  # anything else refused (as a runtime without it)
        reply(c, 0xFF, struct.pack("<I", 0x80131385))
        c.close()
say("rundown asked")
open(go).read()  # the test has stopped the agent
main.sendall(data[-1:])
main.close()
reply(rd, 0x00, struct.pack("<Q", 2))
rd.sendall(b"\0" * 4096)
say("session ended, the rundown answered")
open(go).read()  # the agent runs again
rd.settimeout(float(os.environ.get("RTD_TEST_WAIT", "300")))
try:
    rd.sendall(b"\0" * (4 << 20))
    say("rundown: 4 MB read")
except (BrokenPipeError, ConnectionResetError) as e:
    say("rundown: closed by the agent (%s)" % e.__class__.__name__)
except socket.timeout:
    say("rundown: blocked, unread")
PY
FS=$!; PIDS+=("$FS")
wait_for 10 test -S "$WORK/tmp/dotnet-diagnostic-$F-$key-socket" || { bad "the fake did not listen: $(cat "$WORK/fake.log")"; exit 1; }
start_agent --target "pid=$F,service=rdend$$" --scan-interval 200ms --dotnet-cpu eventpipe \
  --dotnet-counters none || { bad "agent did not start"; exit 1; }
wait_for 30 grep -q "rundown asked" "$WORK/state" \
  || { bad "the agent never asked a rundown: $(cat "$WORK/fake.log"; cat "$AGENT_LOG")"; exit 1; }
kill -STOP "$AGENT_PID"
echo > "$WORK/go"
wait_for 10 grep -q "session ended" "$WORK/state" || bad "the fake did not end the session"
kill -CONT "$AGENT_PID"
echo > "$WORK/go"
wait_for 300 grep -q "^rundown: " "$WORK/state"
grep -Eq "^rundown: (4 MB read|closed by the agent)" "$WORK/state" \
  && ok "a rundown answered as the session ended is read or closed: $(grep '^rundown: ' "$WORK/state")" \
  || bad "the rundown's stream was left unread: $(grep '^rundown: ' "$WORK/state" || echo 'no end'); $(cat "$WORK/fake.log")"
stop_agent || bad "agent exit status $?"
[ $fail = 0 ] || { echo "agent log:"; cat "$AGENT_LOG"; }
exit $((fail > 0))
