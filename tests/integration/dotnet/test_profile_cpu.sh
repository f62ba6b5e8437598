#!/usr/bin/env bash
# dotnet profile --cpu (#28 item 6, #33 item 4) against tests/targets/
# dotnet-kinds sleeplock: six threads taking one lock and sleeping 5 ms
# holding it (the others wait in Monitor.Enter) and, to have threads in
# managed code that are runnable but not running, two spinning threads more
# than the CPUs.
# - by default through perf_event: the kernel's samples, JIT frames named
#   by the runtime's perf map (switched on for the profile, off and its
#   file removed after); its CPU never above wall time x CPUs nor (beyond
#   a sampling margin) above what the kernel counted for the process, the
#   spinners' method on top, and no EventPipe session;
# - --sampler eventpipe (the fallback, with its one-line reason): the
#   EventPipe sampler sees every spinner in managed code at every sample,
#   so its thread time is about (CPUs + 2) x the session; the CPU figure
#   printed must be the kernel's, as above;
# - a program rtdiag starts: EventPipe's sampler, and the reason said.
. "$(dirname "$0")/lib.sh"
KD=$(build_dotnet dotnet-kinds tests/targets) || { echo "FAIL: build"; exit 1; }
NCPU=$(nproc)
mkdir -p "$WORK/s"
"$KD/dotnet-kinds" "$WORK/s" sleeplock 6 $((NCPU + 2)) >"$WORK/s/stdout" 2>&1 &
P=$!; PIDS+=("$P")
wait_file "$WORK/s/ready" || { bad "dotnet-kinds sleeplock did not start"; exit 1; }
cpu() { awk '{ print $14 + $15 }' "/proc/$P/stat"; }
hz=$(getconf CLK_TCK)

# ---- perf_event (the default)
c0=$(cpu); t0=$(date +%s.%N)
"$R" dotnet profile -p "$P" --duration 4 --cpu -f top >"$WORK/perf.txt" 2>"$WORK/perf.err"; rc=$?
c1=$(cpu); t1=$(date +%s.%N)
head -3 "$WORK/perf.txt"
read -r n x < <(sed -nE '1s/^([0-9]+) samples, ([0-9.]+) s of CPU \(perf_event at 99 Hz.*/\1 \2/p' "$WORK/perf.txt")
read -r used wall < <(sed -nE '2s/^the process used ([0-9.]+) s of CPU in ([0-9.]+) s on [0-9]+ CPUs.*/\1 \2/p' "$WORK/perf.txt")
proc=$(awk -v a="$c0" -v b="$c1" -v hz="$hz" 'BEGIN { print (b - a) / hz }')
twall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
echo "perf: $n samples, $x s CPU (process $used s in $wall s); /proc: $proc s in $twall s on $NCPU CPUs"
if [ $rc = 0 ] && [ -n "$x" ] && [ -n "$used" ]; then
  ok "perf_event by default: $(head -1 "$WORK/perf.txt" | cut -c1-100)"
  # samples at 99 Hz of CPU time: each weighs the time since the thread's
  # previous one, so the sum may pass the kernel's count by the samples
  # in flight at the start and the end
  awk -v x="$x" -v w="$twall" -v n="$NCPU" -v u="$used" -v p="$proc" -v hz="$hz" \
      'BEGIN { e = 16 / hz; exit !(x > 0 && x <= w * n && x <= u * 1.05 + 0.1 && u <= p + e) }' \
    && ok "perf CPU $x s <= wall $twall s x $NCPU, ~<= the process's $used s <= /proc's $proc s" \
    || bad "perf CPU $x s, process $used s, /proc $proc s, wall $twall s"
  sed -n '5p' "$WORK/perf.txt" | grep -q 'SleepLock.Spin()' \
    && ok "perf: the JIT-compiled spinner named on top: $(sed -n 5p "$WORK/perf.txt" | cut -c1-90)" \
    || bad "perf top row: $(sed -n 4,6p "$WORK/perf.txt")"
  ! grep -q "session .* started\|EventPipe's sampler" "$WORK/perf.err" \
    && ok "perf: no EventPipe session" || bad "perf: $(cat "$WORK/perf.err")"
  [ ! -e "/tmp/perf-$P.map" ] && ok "perf: the perf map switched off again, its file removed" \
    || bad "perf: /tmp/perf-$P.map left behind"
else
  bad "perf: rc $rc, no CPU figure: $(head -3 "$WORK/perf.txt") $(cat "$WORK/perf.err")"
fi

# ---- EventPipe's sampler (the fallback)
c0=$(cpu); t0=$(date +%s.%N)
"$R" dotnet profile -p "$P" --duration 4 --cpu --sampler eventpipe -f top >"$WORK/top.txt" 2>"$WORK/top.err"; rc=$?
grep -q "^rtdiag: --cpu with EventPipe's sampler (it stops every managed thread at each sample), not perf_event: asked for (--sampler eventpipe)$" "$WORK/top.err" \
  && ok "--sampler eventpipe: the reason in one line" || bad "no reason line: $(cat "$WORK/top.err")"
c1=$(cpu); t1=$(date +%s.%N)
head -3 "$WORK/top.txt"
read -r x < <(sed -nE '1s/^[0-9]+ samples, ([0-9.]+) s of CPU in managed code .*/\1/p' "$WORK/top.txt")
read -r used wall < <(sed -nE '2s/^the process used ([0-9.]+) s of CPU in ([0-9.]+) s on [0-9]+ CPUs.*/\1 \2/p' "$WORK/top.txt")
read -r tt < <(sed -nE '2s/.*the sampler alone saw ([0-9.]+) s of thread time.*/\1/p' "$WORK/top.txt")
proc=$(awk -v a="$c0" -v b="$c1" -v hz="$hz" 'BEGIN { print (b - a) / hz }')
twall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
echo "printed: $x s CPU (process $used s in $wall s), sampler $tt s; /proc: $proc s in $twall s on $NCPU CPUs"
[ $rc = 0 ] && [ -n "$x" ] || { bad "rc $rc, no CPU figure: $(head -3 "$WORK/top.txt") $(cat "$WORK/top.err")"; exit 1; }
awk -v x="$x" -v w="$twall" -v n="$NCPU" 'BEGIN { exit !(x > 0 && x <= w * n) }' \
  && ok "CPU $x s <= wall $twall s x $NCPU CPUs" || bad "CPU $x s above wall $twall s x $NCPU CPUs"
[ -n "$used" ] && [ -n "$tt" ] || { bad "no second line (the process's CPU, the sampler's thread time): $(sed -n 2p "$WORK/top.txt")"; exit 1; }
# /proc's utime+stime are in ticks: a tick per thread either way
awk -v x="$x" -v u="$used" -v p="$proc" -v hz="$hz" 'BEGIN { e = 16 / hz; exit !(x <= u + 1e-3 && u <= p + e) }' \
  && ok "CPU $x s <= the process's $used s (kernel, per thread) <= /proc's $proc s around the run" \
  || bad "CPU $x s, process $used s, /proc $proc s"
# the sampler alone: every spinner, running or not, in managed code
awk -v t="$tt" -v x="$x" 'BEGIN { exit !(t > x) }' \
  && ok "the sampler's thread time $tt s, said as such, is not the CPU figure" || bad "thread time $tt vs $x"
sed -n '5p' "$WORK/top.txt" | grep -q 'SleepLock.Spin()' \
  && ok "the CPU is the spinners': $(sed -n 5p "$WORK/top.txt" | cut -c1-90)" || bad "top row: $(sed -n 4,6p "$WORK/top.txt")"

# a program rtdiag starts: no kernel figures are read, and the line says
# thread time, not CPU
mkdir -p "$WORK/c"
"$R" dotnet profile --duration 3 --cpu -f top -- "$KD/dotnet-kinds" "$WORK/c" sleeplock 2 1 \
  >"$WORK/c.txt" 2>"$WORK/c.err" &
wait $!; rc=$?
touch "$WORK/c/stop"
head -1 "$WORK/c.txt" | grep -q 'thread time in managed code (threads found in managed code, running or runnable: not CPU time)' \
  && ! head -1 "$WORK/c.txt" | grep -q 'of CPU' && grep -q "could not be read (a program rtdiag started)" "$WORK/c.err" \
  && grep -q "EventPipe's sampler .*not perf_event: perf_event follows a running process here, not a program rtdiag starts" "$WORK/c.err" \
  && ok "-- COMMAND: EventPipe's sampler, the reason and thread time said so" || bad "-- COMMAND: rc $rc $(head -2 "$WORK/c.txt") $(cat "$WORK/c.err")"

touch "$WORK/s/stop"
[ $fail = 0 ] || { echo "$fail failed"; exit 1; }
echo "dotnet profile --cpu: all passed"
