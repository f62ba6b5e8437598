#!/usr/bin/env bash
# Where off-CPU through BPF spends its time at each context switch, one
# piece at a time (#33): the ping-pong (offcpu_floor_pp.c) pinned to one
# CPU, so that every switch is the target's and the process's CPU time
# holds the whole switch path, under: nothing; an empty tp_btf program
# (the floor); a tgid filter; the filter and bpf_get_stack() of the user
# stack, of the kernel stack, a frame-pointer walk in the program, ten
# clock reads (offcpu_floor.bpf.c); the project's own program (BUILD_DIR's
# bpf/offcpu.bpf.o, with and without kernel stacks); the per-task dummy
# perf events rtdiag's monitor opened before (dummy) and the CPU-wide ones
# it opens now (dummy-cpu); rtdiag perf record --off-cpu itself, with
# and without kernel stacks (rtdiag, rtdiag-k; RTDIAG_BEFORE=BINARY adds
# another build's as before, before-k); and the anchors: Debian's
# bpftrace summing off-CPU ns by @[kstack, ustack, tid] in the kernel
# (bt) and by @[ustack, tid] (bt-u), each run's exit code checked and its
# output checked for the ping-pong's waits. VARIANTS="none bt ..." runs a
# subset. The variants run interleaved, the order rotating each round.
# Prints per variant the median CPU time, its range and its increase over
# nothing, and (BPF variants) the programs' own run time per switch-out
# of the target (BPF_ENABLE_STATS: CPU time inside the programs, which a
# loaded machine does not inflate as it does wall time). The load before
# and after. Needs root, clang, bpftool's vmlinux.h in BUILD_DIR/bpf;
# bpftrace for bt and bt-u (apt-get install bpftrace).
# Usage: bench/perf/offcpu_floor.sh BUILD_DIR [N] [ROUNDS]
set -u
B=$(cd "${1:?build dir}" && pwd); N=${2:-50000}; ROUNDS=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "bench offcpu_floor: needs root"; exit 1; }
[ -f "$B/bpf/offcpu.bpf.o" ] || { echo "bench offcpu_floor: $B has no BPF build"; exit 1; }
T=$(mktemp -d /tmp/offcpu-floor.XXXXXX); [ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
cc -O2 -g -fno-omit-frame-pointer "$here/offcpu_floor_pp.c" -o "$T/pp" -lpthread &&
  cc -O2 "$here/offcpu_floor_loader.c" -o "$T/loader" -lbpf || exit 1
bpfcc() { clang -target bpf -D__TARGET_ARCH_x86 -O2 -g -Wall -I"$B/bpf" "$@"; }
for v in EMPTY:empty NONE:filter USER:user KERN:kern WALK:walk "KTIME -DREPS=10:ktime10"; do
  bpfcc -DF_${v%%:*} -c "$here/offcpu_floor.bpf.c" -o "$T/${v#*:}.o" || exit 1
done
cp "$B/bpf/offcpu.bpf.o" "$T/prog.o"
vs=(${VARIANTS:-none empty filter user walk kern ktime10 prog prog-k dummy dummy-cpu rtdiag rtdiag-k ${RTDIAG_BEFORE:+before before-k} bt bt-u})
for v in "${vs[@]}"; do case $v in bt*) command -v bpftrace > /dev/null ||
  { echo "bench offcpu_floor: $v needs bpftrace (apt-get install bpftrace)"; exit 1; } ;; esac; done
# off-CPU ns summed in the kernel by bpftrace, as rtdiag's BPF path does:
# the stacks taken at the switch-out (sched_switch runs in prev), summed
# at the switch-in; the run ends with the ping-pong's exit
bt_prog() { # STACKS KEY
  cat <<EOT
tracepoint:sched:sched_switch {
  if (pid == \$1) { @start[tid] = nsecs; $1 }
  \$t = @start[args->next_pid];
  if (\$t) { @[$2, args->next_pid] = sum(nsecs - \$t); delete(@start[args->next_pid]); }
}
tracepoint:sched:sched_process_exit /pid == \$1 && tid == \$1/ { exit(); }
BEGIN { printf("ready\\n"); }
END { clear(@start); $(echo "$1" | grep -q @ks && echo "clear(@ks);") clear(@us); }
EOT
}
bt_prog "@ks[tid] = kstack; @us[tid] = ustack;" "@ks[args->next_pid], @us[args->next_pid]" > "$T/bt.bt"
bt_prog "@us[tid] = ustack;" "@us[args->next_pid]" > "$T/bt-u.bt"
ncpu=$(nproc)
nfds() { ls -l /proc/$1/fd 2>/dev/null | grep -c "$2"; }
run() { # VARIANT
  local v=$1 lp= f=$T/go
  rm -f "$f" "$T/err" "$T/ns" "$T/bt.out" "$T/o.folded"; mkfifo "$f"
  "$T/pp" "$N" 0 < "$f" > "$T/out" & local wp=$!
  exec 3> "$f"
  while [ "$(ls /proc/$wp/task | wc -l)" -lt 2 ]; do sleep 0.01; done
  case $v in
    none) ;;
    dummy) "$T/loader" -d -p $wp > "$T/ns" 2> "$T/err" & lp=$! ;;
    dummy-cpu) "$T/loader" -D -p $wp > "$T/ns" 2> "$T/err" & lp=$! ;;
    prog) "$T/loader" -o "$T/prog.o" -p $wp > "$T/ns" 2> "$T/err" & lp=$! ;;
    prog-k) "$T/loader" -o "$T/prog.o" -k -p $wp > "$T/ns" 2> "$T/err" & lp=$! ;;
    rtdiag*|before*)
      local bin=$B/rtdiag; [ "${v#before}" != "$v" ] && bin=$RTDIAG_BEFORE
      "$bin" perf record --off-cpu --off-cpu-via bpf $([ "${v%-k}" != "$v" ] && echo --no-kernel) \
        -p $wp -o "$T/o.folded" > /dev/null 2> "$T/err" & lp=$!
      # ready: its three BPF links and its perf events (a ring and a
      # dummy event per CPU at least)
      until [ "$(nfds $lp bpf_link)" -ge 3 ] && [ "$(nfds $lp perf_event)" -ge $((2 * ncpu)) ]; do
        kill -0 $lp 2>/dev/null || break; sleep 0.02; done ;;
    bt*) bpftrace "$T/$v.bt" $wp > "$T/bt.out" 2> "$T/err" & lp=$!
      until grep -q ready "$T/bt.out" 2>/dev/null; do kill -0 $lp 2>/dev/null || break; sleep 0.02; done ;;
    *) "$T/loader" -o "$T/$v.o" -p $wp > "$T/ns" 2> "$T/err" & lp=$! ;;
  esac
  case $v in none|rtdiag*|before*|bt*) ;; *)
    until grep -q ready "$T/err" 2>/dev/null; do kill -0 $lp 2>/dev/null || break; sleep 0.02; done ;;
  esac
  echo x >&3; exec 3>&-
  wait $wp; [ -n "$lp" ] && { wait $lp || echo "$v: exit $?: $(cat "$T/err")"; }
  # the tools' answers hold the ping-pong's waits: its second thread's
  # stack (rtdiag's profile) or its main thread's tid (bpftrace's keys),
  # and with kernel stacks the pipe read they wait in
  local want=$([ "${v%-k}" = "$v" ] && [ "${v%-u}" = "$v" ] && echo pipe_read || echo .)
  case $v in
    rtdiag*|before*) grep -q "start_thread" "$T/o.folded" && grep -q "$want" "$T/o.folded" ||
      echo "$v: no ping-pong waits in its profile" ;;
    bt*) grep -q ", $wp\]: [0-9]" "$T/bt.out" && grep -q "$want" "$T/bt.out" ||
      echo "$v: no ping-pong waits in its output" ;;
  esac
  awk '{print $2}' "$T/out" >> "$T/cpu.$v"
  [ -s "$T/ns" ] && awk '$1 > 0 {print $2}' "$T/ns" >> "$T/ns.$v"
}
echo "off-CPU floor bench: pinned ping-pong, $N round trips ($((2 * N)) switches), $ROUNDS rounds interleaved; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 0 $((ROUNDS - 1))); do
  for k in $(seq 0 $((${#vs[@]} - 1))); do run "${vs[$(( (r + k) % ${#vs[@]} ))]}"; done
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
range() { sort -g | awk 'NR==1 {lo=$1} {hi=$1} END {printf "%.3f..%.3f", lo, hi}'; }
base=$(median < "$T/cpu.none")
for v in "${vs[@]}"; do
  m=$(median < "$T/cpu.$v")
  ns=$([ -s "$T/ns.$v" ] && echo "program $(median < "$T/ns.$v") ns a switch-out" || echo "")
  printf "%-8s CPU %.3f s (%s) %+6.1f%%  %s\n" "$v" "$m" "$(range < "$T/cpu.$v")" \
    "$(echo "($m / $base - 1) * 100" | bc -l)" "$ns"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
