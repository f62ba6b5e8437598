# perf record of a real .NET 10 program whose hot loop is managed code
# calling a small C library through P/Invoke: managed frames (named
# Namespace.Type.Method(args) from the perf map rtdiag switches on over the
# diagnostics IPC) above the native ones; the perf map is off again
# afterwards when it was off (and the file it caused removed), and left on
# when the environment had it on;
# precompiled (ReadyToRun) framework code is named from its image; the
# same program in a container-like mount and pid namespace with its own
# /tmp is named from its own root (perf-1.map, a library only there).
. "$(dirname "$0")/lib.sh"
perf_dotnet_app
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; rm -f /tmp/dotnet-diagnostic-"$p"-*-socket /tmp/perf-"$p".map /tmp/perfinfo-"$p".map; done
  [ -n "${NSDIR:-}" ] && rmdir "$NSDIR" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
start() { # ENV... -> TPID once it is hot
  rm -f "$TMP/ready"
  env "$@" "$APP/perf-dotnet" 30 "$TMP/ready" > "$TMP/out" 2>&1 &
  TPID=$!; PIDS+=($TPID)
  for i in $(seq 300); do [ -s "$TMP/ready" ] && return 0; sleep 0.1; done
  cat "$TMP/out"; fail "perf-dotnet did not start"
}
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
check_stacks() { # FOLDED LABEL [mixed-only]
  python3 - "$1" "$2" "${3:-}" <<'PY'
import sys
ok_mixed = ok_managed = False
for line in open(sys.argv[1]):
    s, v = line.rsplit(" ", 1); f = s.split(";")
    for i in range(len(f) - 2):
        if f[i] == "RtdiagPerf.Program.Main(string[])" and f[i+1] == "RtdiagPerf.Program.HotLoop(float64)":
            if f[i+2] == "native_work": ok_mixed = True
            if f[i+2] == "RtdiagPerf.Program.ManagedSpin(int32)": ok_managed = True
if sys.argv[3] == "mixed-only":
    ok_managed = True  # the point of that case is elsewhere: few samples suffice
if not (ok_mixed and ok_managed):
    print(open(sys.argv[1]).read()[:3000])
    sys.exit("%s: want Main(string[]);HotLoop(float64);native_work and ...;ManagedSpin(int32) (mixed %s, managed %s)" % (sys.argv[2], ok_mixed, ok_managed))
print("%s: managed frames above native ones" % sys.argv[2])
PY
}

# 1. perf map off: switched on for the recording, off again afterwards
start LD_LIBRARY_PATH="$APP"
P=$TPID
[ -e /tmp/perf-$P.map ] && fail "perf map on before rtdiag switched it on"
"$R" perf record -p $P -d 1.5 -F 999 --stats -o "$TMP/dn.folded" -o "$TMP/dn.svg" 2> "$TMP/err" || { cat "$TMP/err"; fail "record"; }
grep -q '1 .NET perf maps switched on' "$TMP/err" || { cat "$TMP/err"; fail "--stats: the perf map was not switched on"; }
check_stacks "$TMP/dn.folded" "perf map switched on" || fail "stacks"
# the runtime's own code (libcoreclr.so, under Main) is its own kind,
# not "unknown" (#32 item 5); the title says whose and what weight
grep -q 'libcoreclr.so' "$TMP/dn.folded" || fail "no libcoreclr.so frames in the stacks"
legend=$(sed -n '/<g id="legend">/,/<\/g>/p' "$TMP/dn.svg" | grep -o '>[a-z -]*</text>' | tr -d '<>/' | sed 's/text$//' | paste -sd, -)
grep -qw runtime <<<"$legend" || fail "legend without the runtime kind: $legend"
grep -q "<text id=\"title\"[^>]*>perf: [^<]*(pid $P), [0-9.]*s, weight: " "$TMP/dn.svg" || fail "title: $(grep -o '<text id="title"[^<]*' "$TMP/dn.svg")"
ok "legend: $legend; $(grep -o '<text id="title"[^<]*' "$TMP/dn.svg" | sed 's/.*>//')"
# off again: the runtime has closed its map (it holds it open while it
# writes it), and the file it wrote because rtdiag asked is gone
within 30 not map_open $P || fail "the runtime still writes its perf map after the recording: not switched off"
[ -e /tmp/perf-$P.map ] && fail "the perf map rtdiag caused is left in /tmp"
kill -9 $P
ok "JIT frames named; perf map off again afterwards, its file removed"

# 2. perf map on by the environment: left on
start LD_LIBRARY_PATH="$APP" DOTNET_PerfMapEnabled=1
P=$TPID
"$R" perf record -p $P -d 1 -F 999 --stats -o "$TMP/dn2.folded" 2> "$TMP/err" || { cat "$TMP/err"; fail "record (map on)"; }
grep -q '0 .NET perf maps switched on' "$TMP/err" || fail "switched on a map that was on"
check_stacks "$TMP/dn2.folded" "perf map on by DOTNET_PerfMapEnabled" mixed-only || fail "stacks"
# still written after the recording: the program compiles a method every
# 50 ms, each a line of its map (polled: a program starved of the CPU for
# a second writes none in it)
s1=$(size /tmp/perf-$P.map)
grown() { [ "$(size /tmp/perf-$P.map)" -gt "$s1" ]; }
within 60 grown || fail "perf map stopped growing: rtdiag switched off a map it had not switched on"
kill -9 $P
ok "a perf map that was on stays on"

# 3. ReadyToRun framework code no perf map line covers: with tiered
# compilation off, string hashing runs System.Private.CoreLib's
# precompiled code, named from the image itself
start LD_LIBRARY_PATH="$APP" DOTNET_TieredCompilation=0
P=$TPID
"$R" perf record -p $P -d 1.5 -F 499 -o "$TMP/r2r.folded" 2> "$TMP/err" & K=$!
# the map is removed when the recording ends: the last copy taken while
# it runs is what the runtime wrote
while kill -0 $K 2>/dev/null; do cp /tmp/perf-$P.map "$TMP/r2r.map" 2>/dev/null; sleep 0.1; done
wait $K || { cat "$TMP/err"; fail "record (R2R)"; }
grep -q ';RtdiagPerf.Program.FrameworkSpin(int32);System.Marvin.ComputeHash32(...) [0-9]' "$TMP/r2r.folded" ||
  { grep -i marvin "$TMP/r2r.folded" | head -3; fail "no FrameworkSpin;System.Marvin.ComputeHash32 stack"; }
[ -s "$TMP/r2r.map" ] || fail "no copy of the perf map was taken while recording"
grep -q 'Marvin' "$TMP/r2r.map" && fail "the perf map names Marvin: the image was not what named it"
kill -9 $P
ok "ReadyToRun code named from the image (System.Marvin.ComputeHash32, not in the perf map)"

# 4. a container: own mount and pid namespaces, private /tmp; the app is
# bound at a path that exists only inside
NSDIR=/run/rtdiag-pns-$$
if unshare -m -p -f --mount-proc true 2>/dev/null && mkdir -p "$NSDIR"; then
  unshare -m -p -f --mount-proc sh -c "mount --bind '$APP' '$NSDIR' && mount -t tmpfs tmpfs /tmp && mkdir -p /tmp/w && LD_LIBRARY_PATH='$NSDIR' exec '$NSDIR/perf-dotnet' 30 /tmp/w/ready" \
    > "$TMP/ns.out" 2>&1 &
  PIDS+=($!)
  NP=
  for i in $(seq 300); do
    NP=$(pgrep -f "^$NSDIR/perf-dotnet 30 /tmp/w/ready\$" | head -1)
    [ -n "$NP" ] && [ -s "/proc/$NP/root/tmp/w/ready" ] && break; sleep 0.1
  done
  [ -n "$NP" ] || { cat "$TMP/ns.out"; fail "container target did not start"; }
  PIDS+=($NP)
  [ -e "$NSDIR/libperfnative.so" ] && fail "the library is visible outside the container"
  "$R" perf record -p $NP -d 1.5 -F 999 --stats -o "$TMP/ns.folded" 2> "$TMP/err" || { cat "$TMP/err"; fail "record (container)"; }
  check_stacks "$TMP/ns.folded" "container" || fail "container: stacks"
  [ -e "/proc/$NP/root/tmp/perf-1.map" ] && fail "container: the perf-1.map rtdiag caused is left in its own /tmp"
  kill -9 $NP
  ok "container: JIT names from its own /tmp/perf-1.map (removed afterwards), native names from its own root"
else
  echo "note: cannot create namespaces here (unshare failed): container case not run"
fi
echo PASS
