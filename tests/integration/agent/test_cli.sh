#!/usr/bin/env bash
# 'rtdiag agent' as a person runs it: --help from the option table, a YAML
# config with flags over it, --check-config printing a config that reads
# back to itself, and the errors: a bad file names its line and column, a
# bad flag is a usage error (2), a non-loopback address without
# --allow-remote and a port in use are refused with what to do.
. "$(dirname "$0")/lib.sh"

out=$("$R" agent --help 2>&1); rc=$?
[ $rc = 0 ] && grep -q "^usage: rtdiag agent \[OPTIONS\]" <<<"$out" \
  && grep -q -- "--target SPEC" <<<"$out" && grep -q -- "--push URL" <<<"$out" \
  && grep -q "(default 15s)" <<<"$out" && ok "--help lists the options with their defaults" \
  || bad "help: $rc $out"
"$R" help agent | grep -q -- "--max-memory SIZE" && ok "rtdiag help agent" || bad "rtdiag help agent"
"$R" --help | grep -q "^  agent " && ok "rtdiag --help lists agent" || bad "agent not in rtdiag --help"

cat > "$WORK/agent.yaml" <<'YML'
# a config file
listen: 127.0.0.1:4999
window: 10s
target:
  - {name: "^api$", service: checkout}
label: {env: prod}
push: http://127.0.0.1:4040
YML
out=$("$R" agent --config "$WORK/agent.yaml" --window 30s --target dotnet --label region=eu --check-config 2>"$WORK/err"); rc=$?
if [ $rc = 0 ] && grep -q "the config is valid" "$WORK/err" \
   && grep -q '^window: 30s$' <<<"$out" && grep -q 'listen: "127.0.0.1:4999"' <<<"$out" \
   && grep -q '{name: "^api$", service: "checkout"}' <<<"$out" && grep -q '{dotnet: true}' <<<"$out" \
   && grep -q 'env: "prod"' <<<"$out" && grep -q 'region: "eu"' <<<"$out"; then
  ok "--check-config: the file, flags over it (window), lists added to (target, label)"
else
  bad "check-config: $rc $(cat "$WORK/err") $out"
fi
echo "$out" > "$WORK/effective.yaml"
out2=$("$R" agent --config "$WORK/effective.yaml" --check-config 2>/dev/null)
[ "$out2" = "$out" ] && ok "the printed config reads back to the same config" || bad "round trip: $out2"

printf 'window: 10s\ntarget:\n  - {pid: 1, name: x}\n' > "$WORK/bad.yaml"
out=$("$R" agent --config "$WORK/bad.yaml" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "bad.yaml:3:14: a target has one of pid, name, cgroup or dotnet" <<<"$out" \
  && ok "a bad file: line and column named, exit 1" || bad "bad file: $rc $out"
out=$("$R" agent --config "$WORK/missing.yaml" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "missing.yaml: No such file" <<<"$out" && ok "a missing file named" || bad "missing: $rc $out"
out=$("$R" agent --target dotnet --window soon 2>&1); rc=$?
[ $rc = 2 ] && grep -q "rtdiag agent: --window: 'soon' is not a duration" <<<"$out" \
  && ok "a bad flag value: usage error 2 naming it" || bad "bad flag: $rc $out"
out=$("$R" agent --target dotnet --windw 3 2>&1); rc=$?
[ $rc = 2 ] && ok "an unknown flag: usage error 2" || bad "unknown flag: $rc $out"
out=$("$R" agent --check-config 2>&1); rc=$?
[ $rc = 1 ] && grep -q "no target" <<<"$out" && ok "no target: said" || bad "no target: $rc $out"
out=$("$R" agent --target dotnet --listen 0.0.0.0:4040 --check-config 2>&1); rc=$?
[ $rc = 1 ] && grep -q "not a loopback address.*--allow-remote" <<<"$out" \
  && ok "0.0.0.0 refused without --allow-remote" || bad "remote: $rc $out"
"$R" agent --target dotnet --listen 0.0.0.0:4040 --allow-remote --insecure --check-config >/dev/null 2>&1 \
  && ok "0.0.0.0 with --allow-remote --insecure" || bad "allow-remote --insecure refused"

# The address bound decides, not its text: in a mount namespace whose
# /etc/hosts maps a 127.* name and "localhost" to 0.0.0.0, the agent
# refuses to serve without --allow-remote (it used to listen on 0.0.0.0;
# the timeout only ends such an old agent, which never exits by itself).
if unshare -m true 2>/dev/null; then
  printf '0.0.0.0 127.internal localhost\n' > "$WORK/hosts"
  for name in 127.internal localhost; do
    out=$(timeout 120 unshare -m sh -c 'mount --bind "$1" /etc/hosts && exec "$2" agent --target dotnet --listen "$3":0' \
          sh "$WORK/hosts" "$R" "$name" 2>&1 </dev/null); rc=$?
    [ $rc = 1 ] && grep -q "listen $name:0: bound to 0.0.0.0, which is not a loopback address.*--allow-remote" <<<"$out" \
      && ! grep -q "serving" <<<"$out" \
      && ok "$name resolving to 0.0.0.0: refused after the bind, exit 1" || bad "$name -> 0.0.0.0: $rc $out"
  done
else
  echo "SKIP (part): unshare -m not permitted here; the bound-address check is not tested"
fi

# a port in use
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(1); print(s.getsockname()[1], flush=True); time.sleep(30)' > "$WORK/busy" &
BUSY=$!; PIDS+=("$BUSY")
wait_for 10 test -s "$WORK/busy"
out=$("$R" agent --target dotnet --listen "127.0.0.1:$(cat "$WORK/busy")" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "Address already in use (another agent? pick another port with --listen)" <<<"$out" \
  && ok "a port in use: said, exit 1" || bad "port in use: $rc $out"
exit $((fail > 0))
