#!/usr/bin/env bash
# The agent exposed safely: HTTPS (GnuTLS through libmicrohttpd) with a
# client CA (mutual TLS) and a bearer token, checked against real peers:
# - Debian's Prometheus scrapes it over TLS with its client certificate and
#   `authorization: {credentials_file}`: up == 1;
# - Go's `go tool pprof` fetches a CPU profile over TLS (-tls_ca/-tls_cert/
#   -tls_key) with the token as Basic authentication's password;
# - a wrong or missing token answers 401 with nothing about the targets;
#   no client certificate, or one from another CA, fails the handshake;
#   plain HTTP on the TLS port is closed at once;
# - SIGHUP reads the token, certificate, key and client CA again: the old
#   token is refused, the new one accepted, new connections see the new
#   certificate, a client of the CA added is accepted, and the agent goes
#   on;
# - --allow-remote without TLS or a token is refused unless --insecure,
#   and then /targets shows no paths or cgroups.
# Certificates are made here with openssl; all traffic is on loopback.
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || skip "no openssl to make test certificates"
NAT="$BIN/tests/targets/cpu_shares_fp"
[ -x "$NAT" ] || { bad "build: $NAT missing"; exit 1; }

# ---- certificates: a CA, the server's (127.0.0.1), a client's, a rogue's
C="$WORK/certs"; mkdir -p "$C"
mk_ca() {  # NAME
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=$1" -keyout "$C/$1.key" -out "$C/$1.pem" 2>/dev/null
}
mk_cert() {  # NAME CA EXT SERIAL
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
    -keyout "$C/$1.key" -out "$C/$1.csr" 2>/dev/null &&
  printf '%s\n' "$3" > "$C/$1.ext" &&
  openssl x509 -req -in "$C/$1.csr" -CA "$C/$2.pem" -CAkey "$C/$2.key" -set_serial "$4" \
    -days 2 -extfile "$C/$1.ext" -out "$C/$1.pem" 2>/dev/null
}
mk_ca ca && mk_ca rogue-ca \
  && mk_cert server ca "subjectAltName=IP:127.0.0.1" 0x1001 \
  && mk_cert server2 ca "subjectAltName=IP:127.0.0.1" 0x2002 \
  && mk_cert client ca "extendedKeyUsage=clientAuth" 0x3003 \
  && mk_cert rogue rogue-ca "extendedKeyUsage=clientAuth" 0x4004 \
  || { bad "openssl could not make the test certificates"; exit 1; }
cp "$C/server.pem" "$C/live.pem"; cp "$C/server.key" "$C/live.key"; cp "$C/ca.pem" "$C/live-ca.pem"
umask 077; printf 'first-token-%s\n' "$$" > "$WORK/token"; umask 022
TOKEN1="first-token-$$"; TOKEN2="second-token-$$"

"$NAT" 600 > /dev/null &
NPID=$!
PIDS+=("$NPID")
SVC=tls-$$
start_agent --target "pid=$NPID,service=$SVC" --scan-interval 200ms \
  --tls-cert "$C/live.pem" --tls-key "$C/live.key" --tls-client-ca "$C/live-ca.pem" \
  --auth-token-file "$WORK/token" || { bad "agent did not start"; exit 1; }
URL=$(grep -o 'https://127.0.0.1:[0-9]*' "$AGENT_LOG" | head -1)
[ -n "$URL" ] && ok "serving $URL" || { bad "no https URL: $(cat "$AGENT_LOG")"; exit 1; }
HOSTPORT=${URL#https://}
TLS=(--cacert "$C/ca.pem" --cert "$C/client.pem" --key "$C/client.key")
get() {  # TOKEN PATH [curl args]: prints the status code, body in $WORK/body
  local tok=$1 path=$2; shift 2
  curl -s -o "$WORK/body" -w '%{http_code}' "${TLS[@]}" "$@" \
    ${tok:+-H "Authorization: Bearer $tok"} "$URL$path"
}
wait_for 30 sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --cacert '$C/ca.pem' --cert '$C/client.pem' --key '$C/client.key' -H 'Authorization: Bearer $TOKEN1' '$URL/targets')\" = 200 ] && curl -s --cacert '$C/ca.pem' --cert '$C/client.pem' --key '$C/client.key' -H 'Authorization: Bearer $TOKEN1' '$URL/targets' | grep -q '\"pid\":$NPID,.*\"profile\"'" \
  || { bad "the target never listed with a CPU profile over TLS"; cat "$AGENT_LOG"; exit 1; }

# ---- the token
st=$(get "$TOKEN1" /targets)
[ "$st" = 200 ] && grep -q "\"exe\":" "$WORK/body" && grep -q "\"service\":\"$SVC\"" "$WORK/body" \
  && ok "the token: /targets with paths (200)" || bad "good token: $st $(cat "$WORK/body")"
for tok in "" "wrong-$TOKEN1" "${TOKEN1%?}"; do
  st=$(get "$tok" /targets)
  [ "$st" = 401 ] && [ "$(cat "$WORK/body")" = unauthorized ] \
    && ok "token '${tok:-<none>}': 401 and nothing else" || bad "token '$tok': $st $(cat "$WORK/body")"
done
st=$(get "" "/targets/$SVC/debug/pprof/allocs")
[ "$st" = 401 ] && ! grep -q "$SVC" "$WORK/body" && ok "a pprof path without the token: 401" || bad "pprof no token: $st"
st=$(curl -s -o "$WORK/body" -w '%{http_code}' "${TLS[@]}" -u "anyone:$TOKEN1" "$URL/metrics")
[ "$st" = 200 ] && grep -q "^rtdiag_agent_targets " "$WORK/body" \
  && ok "Basic authentication with the token as password (go tool pprof's way)" || bad "basic: $st"

# ---- mutual TLS and the TLS port
curl -s -o /dev/null --cacert "$C/ca.pem" -H "Authorization: Bearer $TOKEN1" "$URL/metrics"; rc=$?
[ $rc -ne 0 ] && ok "no client certificate: the handshake fails (curl $rc)" || bad "no client cert accepted"
curl -s -o /dev/null --cacert "$C/ca.pem" --cert "$C/rogue.pem" --key "$C/rogue.key" \
  -H "Authorization: Bearer $TOKEN1" "$URL/metrics"; rc=$?
[ $rc -ne 0 ] && ok "a client certificate of another CA: the handshake fails (curl $rc)" || bad "rogue cert accepted"
python3 - "$HOSTPORT" <<'PY' && ok "plain HTTP on the TLS port closed at once" || bad "plain HTTP on the TLS port held"
import socket, sys, time
h, p = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((h, int(p)))
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
s.settimeout(20)  # the old behaviour: 30 s
try:
    d = s.recv(100)
except ConnectionResetError:
    d = b""
sys.exit(0 if d == b"" else 1)
PY

# ---- Prometheus over TLS with the token and its client certificate
if ! command -v prometheus >/dev/null; then
  echo "SKIP part: no prometheus server"
else
  PPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  cat > "$WORK/prom.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: rtdiag-agent-tls
    scheme: https
    authorization:
      type: Bearer
      credentials_file: $WORK/token
    tls_config:
      ca_file: $C/ca.pem
      cert_file: $C/client.pem
      key_file: $C/client.key
    static_configs:
      - targets: ["$HOSTPORT"]
YML
  prometheus --config.file="$WORK/prom.yml" --storage.tsdb.path="$WORK/prom-data" \
    --web.listen-address="127.0.0.1:$PPORT" >"$WORK/prom.log" 2>&1 &
  PIDS+=("$!")
  q() { curl -sfG "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1"; }
  scraped() { q "count_over_time(rtdiag_agent_targets{job=\"rtdiag-agent-tls\"}[1m])" | grep -q '"value":\[[0-9.]*,"[2-9]'; }
  if wait_for 60 scraped; then
    q 'up{job="rtdiag-agent-tls"}' | grep -q '"value":\[[0-9.]*,"1"\]' \
      && ok "prometheus over TLS with the bearer token and a client certificate: up == 1" \
      || bad "prometheus up: $(q 'up')"
  else
    bad "prometheus never scraped over TLS: $(q 'up') $(tail -5 "$WORK/prom.log")"
  fi
fi

# ---- SIGHUP: a new token and a new certificate, the agent going on
serial() {
  openssl s_client -connect "$HOSTPORT" -CAfile "$C/ca.pem" -cert "$C/client.pem" -key "$C/client.key" \
    </dev/null 2>/dev/null | openssl x509 -noout -serial 2>/dev/null
}
[ "$(serial)" = "serial=1001" ] && ok "the certificate served: serial 1001" || bad "serial before: $(serial)"
umask 077; printf '%s\n' "$TOKEN2" > "$WORK/token.new"; umask 022
mv "$WORK/token.new" "$WORK/token"
cp "$C/server2.pem" "$C/live.pem.new"; cp "$C/server2.key" "$C/live.key.new"
mv "$C/live.key.new" "$C/live.key"; mv "$C/live.pem.new" "$C/live.pem"
cat "$C/ca.pem" "$C/rogue-ca.pem" > "$C/live-ca.pem.new"; mv "$C/live-ca.pem.new" "$C/live-ca.pem"
kill -HUP "$AGENT_PID"
reloaded() { [ "$(get "$TOKEN2" /metrics)" = 200 ]; }
if wait_for 30 reloaded; then
  st=$(get "$TOKEN1" /metrics)
  [ "$st" = 401 ] && ok "SIGHUP: the new token accepted, the old one refused" || bad "old token after reload: $st"
  [ "$(serial)" = "serial=2002" ] && ok "SIGHUP: new connections get the new certificate (serial 2002)" || bad "serial after: $(serial)"
  st=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$C/ca.pem" --cert "$C/rogue.pem" --key "$C/rogue.key" \
       -H "Authorization: Bearer $TOKEN2" "$URL/metrics")
  [ "$st" = 200 ] && ok "SIGHUP: the client CA read again (the second CA's client now accepted)" || bad "client CA reload: $st"
  kill -0 "$AGENT_PID" && grep -q "reload: TLS certificate and key, client CA, token read again" "$AGENT_LOG" \
    && ok "the agent goes on after SIGHUP and says what it read" || bad "after SIGHUP: $(tail -3 "$AGENT_LOG")"
else
  bad "SIGHUP: the new token never accepted; $(tail -3 "$AGENT_LOG")"
fi
curl -sf "${TLS[@]}" -H "Authorization: Bearer $TOKEN2" "$URL/metrics" > "$WORK/metrics"
grep -q '^rtdiag_agent_http_refused_total{reason="unauthorized"} [1-9]' "$WORK/metrics" \
  && ok "/metrics counts the unauthorized requests" || bad "unauthorized count: $(grep refused "$WORK/metrics")"
stop_agent

# ---- go tool pprof over TLS with the token (Go's cmd/pprof takes neither
# -tls_ca nor a client certificate: the CA through SSL_CERT_FILE, which Go
# reads, and an agent without a client CA)
if [ -z "$GO" ]; then
  echo "SKIP part: no Go toolchain (go tool pprof)"
else
  start_agent --target "pid=$NPID,service=$SVC" --scan-interval 200ms \
    --tls-cert "$C/server.pem" --tls-key "$C/server.key" --auth-token-file "$WORK/token" \
    || { bad "the TLS agent without a client CA did not start"; exit 1; }
  HP=${AGENT_URL#https://}
  export PPROF_TMPDIR="$WORK/pprof"
  has_cpu() { curl -sf --cacert "$C/ca.pem" -H "Authorization: Bearer $TOKEN2" "$AGENT_URL/targets" | grep -q '"profile"'; }
  wait_for 30 has_cpu || bad "the second agent never listed the target's CPU profile"
  SSL_CERT_FILE="$C/ca.pem" "$GO" tool pprof -raw \
    "https://pprof:$TOKEN2@$HP/targets/$SVC/debug/pprof/profile?seconds=2" > "$WORK/pprof.txt" 2>"$WORK/pprof.err"; rc=$?
  [ $rc = 0 ] && grep -q "^Samples:" "$WORK/pprof.txt" && grep -Eq "alpha|beta|gamma" "$WORK/pprof.txt" \
    && ok "go tool pprof over TLS with the token: a CPU profile naming the target's functions" \
    || bad "go tool pprof: $rc $(cat "$WORK/pprof.err") $(head -5 "$WORK/pprof.txt")"
  SSL_CERT_FILE="$C/ca.pem" "$GO" tool pprof -raw \
    "https://pprof:wrong@$HP/targets/$SVC/debug/pprof/allocs" > /dev/null 2>"$WORK/pprof.err"; rc=$?
  [ $rc != 0 ] && grep -q "401" "$WORK/pprof.err" && ok "go tool pprof with a wrong token: 401" \
    || bad "go tool pprof wrong token: $rc $(cat "$WORK/pprof.err")"
  stop_agent
fi

# ---- --allow-remote needs TLS or a token, or --insecure in so many words
out=$("$R" agent --target dotnet --listen 0.0.0.0:0 --allow-remote --check-config 2>&1); rc=$?
[ $rc = 1 ] && grep -q "allow-remote without TLS or a token.*--insecure" <<<"$out" \
  && ok "--allow-remote alone refused" || bad "allow-remote alone: $rc $out"
"$R" agent --target dotnet --listen 0.0.0.0:0 --allow-remote --auth-token-file "$WORK/token" --check-config >/dev/null 2>&1 \
  && ok "--allow-remote with a token accepted" || bad "allow-remote + token refused"
out=$("$R" agent --target dotnet --listen 127.0.0.1:0 --tls-cert "$C/live.pem" --check-config 2>&1); rc=$?
[ $rc = 1 ] && grep -q "tls-cert and tls-key go together" <<<"$out" && ok "a certificate without its key refused" || bad "cert alone: $rc $out"
# on every address (0.0.0.0, a free port), asked on 127.0.0.1
AGENT_LOG="$WORK/insecure.log"
"$R" agent --target "pid=$NPID,service=$SVC" --scan-interval 200ms --listen 0.0.0.0:0 \
  --allow-remote --insecure >/dev/null 2>"$AGENT_LOG" &
AGENT_PID=$!; PIDS+=("$AGENT_PID")
wait_for 10 grep -q "serving http://0.0.0.0:" "$AGENT_LOG" || { bad "insecure agent: $(cat "$AGENT_LOG")"; exit 1; }
IURL="http://127.0.0.1:$(grep -o 'http://0.0.0.0:[0-9]*' "$AGENT_LOG" | head -1 | sed 's/.*://')"
listed() { curl -sf "$IURL/targets" | grep -q "\"pid\":$NPID,"; }
wait_for 30 listed && curl -sf "$IURL/targets" > "$WORK/t.json"
grep -q "\"pid\":$NPID," "$WORK/t.json" && ! grep -q '"exe"\|"cgroup"' "$WORK/t.json" \
  && ok "--insecure: /targets lists the target without its path or cgroup" || bad "insecure /targets: $(cat "$WORK/t.json")"
kill -TERM "$AGENT_PID"; wait "$AGENT_PID"
exit $((fail > 0))
