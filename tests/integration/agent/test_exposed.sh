#!/usr/bin/env bash
# The agent probed as an attacker on the same host would (loopback only,
# bounded counts and time), with a normal client answered throughout:
# - 70 slow connections from 127.0.0.2, each sending a header line every
#   2 s and never finishing its headers: the address gets its share (32),
#   the rest are closed at once, the 32 are closed at the header deadline
#   (10 s after their first byte was awaited, whatever they send), and a
#   client on 127.0.0.1 is answered every time meanwhile (the old agent:
#   64 accepted, every other request refused);
# - 32 `profile?seconds=N` requests from 127.0.0.2: 16 wait, 16 are
#   answered 503 at once, and a CPU profile for 127.0.0.1 is served (the
#   old agent answered it 503: all 32 slots were the attacker's);
# - binary garbage and a TLS ClientHello on the plain port are closed as
#   soon as they arrive (the old agent held them for its 30 s idle timer);
# - /metrics counts each refusal by reason.
. "$(dirname "$0")/lib.sh"
NAT="$BIN/tests/targets/cpu_shares_fp"
[ -x "$NAT" ] || { bad "build: $NAT missing"; exit 1; }
"$NAT" 600 > /dev/null &
NPID=$!
PIDS+=("$NPID")
start_agent --target "pid=$NPID,service=exposed-$$" --scan-interval 200ms || { bad "agent did not start"; exit 1; }
wait_for 30 has_profile "$NPID" profile || { bad "target $NPID has no CPU profile"; cat "$AGENT_LOG"; exit 1; }
PORT=${AGENT_URL##*:}

python3 - "$PORT" "exposed-$$" > "$WORK/attack.out" 2>&1 <<'PY'
import socket, sys, threading, time, urllib.request, urllib.error
port, svc = int(sys.argv[1]), sys.argv[2]
fails = 0
def ok(m): print("ok:", m, flush=True)
def bad(m):
    global fails
    fails += 1
    print("FAIL:", m, flush=True)

def normal(path, timeout=60):
    """One request from 127.0.0.1: (status, seconds, body)."""
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=timeout) as r:
            return r.status, time.monotonic() - t0, r.read()
    except urllib.error.HTTPError as e:
        return e.code, time.monotonic() - t0, e.read()
    except Exception as e:
        return str(e), time.monotonic() - t0, b""

def attacker_sock(addr="127.0.0.2"):
    s = socket.socket()
    s.bind((addr, 0))
    s.connect(("127.0.0.1", port))
    return s

def closed_by_peer(s, bound):
    """Whether the agent closes s within bound seconds (EOF or reset)."""
    s.settimeout(bound)
    try:
        while True:
            d = s.recv(4096)
            if not d:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False

# ---- 1: slow headers from one address
slow = []
for i in range(70):
    s = attacker_sock()
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    slow.append(s)
t_open = time.monotonic()
stop = False
def drip():
    # a header line every 2 s to each, for at most 40 s
    end = time.monotonic() + 40
    while not stop and time.monotonic() < end:
        for s in slow:
            try:
                s.sendall(b"X-Slow: 1\r\n")
            except OSError:
                pass
        time.sleep(2)
th = threading.Thread(target=drip, daemon=True)
th.start()
answered, worst = 0, 0.0
for i in range(20):          # ~10 s of normal requests while the attack holds
    st, dt, _ = normal("/metrics")
    if st == 200:
        answered += 1
        worst = max(worst, dt)
    else:
        bad("a normal /metrics during the slow-header attack: %s" % st)
    time.sleep(0.5)
if answered == 20:
    ok("20/20 normal requests answered during 70 slow connections (slowest %.3f s)" % worst)
# every slow one is closed: at once (over the share) or at the deadline
closed = 0
for s in slow:
    if closed_by_peer(s, max(1.0, 60 - (time.monotonic() - t_open))):
        closed += 1
took = time.monotonic() - t_open
stop = True
if closed == 70:
    ok("all 70 slow connections closed by the agent (%.1f s after they opened; deadline 10 s)" % took)
else:
    bad("%d of 70 slow connections still open after %.1f s" % (70 - closed, took))
for s in slow:
    s.close()

# ---- 2: one address holds at most half of the profile requests
held = []
def hold():
    s = attacker_sock()
    s.sendall(("GET /targets/%s/debug/pprof/profile?seconds=20 HTTP/1.1\r\nHost: x\r\n\r\n" % svc).encode())
    held.append(s)
for i in range(32):
    hold()
# the refused ones answer at once; the held ones wait 20 s
refused = 0
for s in held:
    s.settimeout(15)
    try:
        d = s.recv(200)
        if d.startswith(b"HTTP/1.1 503"):
            refused += 1
    except socket.timeout:
        pass
if refused == 16:
    ok("32 profile requests from one address: 16 refused with 503 at once")
else:
    bad("32 profile requests from one address: %d refused (want 16)" % refused)
st, dt, body = normal("/targets/%s/debug/pprof/profile?seconds=1" % svc)
if st == 200 and len(body) > 0:
    ok("a CPU profile for another address served meanwhile (%d bytes)" % len(body))
else:
    bad("the other address's profile: %s %r" % (st, body[:200]))
for s in held:
    s.close()

# ---- 3: not HTTP on the plain port: closed as soon as it arrives
hello = bytes.fromhex("160301020001" "0001fc0303") + bytes(32)
for name, data in (("a TLS ClientHello", hello), ("binary garbage", b"\x00\x01\x02\xffgarbage\r\n")):
    # from a third address: 127.0.0.2 may still hold its share
    s = attacker_sock("127.0.0.3")
    t0 = time.monotonic()
    s.sendall(data)
    # the old agent held these for its 30 s idle timer
    if closed_by_peer(s, 20):
        ok("%s closed by the agent after %.3f s" % (name, time.monotonic() - t0))
    else:
        bad("%s: still open after 20 s" % name)
    s.close()
st, dt, _ = normal("/targets")
if st == 200:
    ok("a normal client still answered after the attacks")
else:
    bad("after the attacks: %s" % st)
sys.exit(1 if fails else 0)
PY
rc=$?
cat "$WORK/attack.out"
[ $rc = 0 ] || bad "attacks (above)"

curl -sf "$AGENT_URL/metrics" > "$WORK/metrics"
val() { awk -v r="reason=\"$1\"" 'index($0, "rtdiag_agent_http_refused_total{") == 1 && index($0, r) { print $2 }' "$WORK/metrics"; }
[ "$(val client-connections)" -ge 38 ] && [ "$(val header-deadline)" -ge 1 ] \
  && [ "$(val client-pulls)" -ge 16 ] && [ "$(val not-http)" -ge 2 ] \
  && ok "/metrics counts the refusals: connections $(val client-connections), header deadline $(val header-deadline), evicted $(val evicted-waiting), pulls $(val client-pulls), not HTTP $(val not-http)" \
  || bad "refusal counts: $(grep http_refused "$WORK/metrics")"
stop_agent
exit $((fail > 0))
