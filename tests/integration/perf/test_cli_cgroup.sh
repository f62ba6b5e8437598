#!/usr/bin/env bash
# rtdiag perf trace --cgroup PATH sees the processes in that cgroup and no
# other: cgroup v2 (a path relative to the v2 mount), then cgroup v1 (the
# perf_event hierarchy mounted in a temporary directory, an absolute path).
# A process in the cgroup first makes single calls until the trace shows
# one (the monitor is live), then N calls; a process outside makes N calls
# at the same time.
. "$(dirname "$0")/lib.sh"
[ -d "$TRACEFS/events/syscalls/sys_enter_getppid" ] || skip "no syscalls:sys_enter_getppid"
# mounting v1 perf_event takes the controller off v2: one cgroup test at a time
exec 9> /tmp/rtdiag-perf-cgroup.lock
flock -w 120 9 || fail "cannot lock /tmp/rtdiag-perf-cgroup.lock"
n=4000
CGS=() V1= PIDS=
cleanup() {
  [ -n "$PIDS" ] && kill $PIDS 2>/dev/null
  for d in "${CGS[@]}"; do
    # a killed process leaves its cgroup a moment later
    for i in $(seq 20); do [ -d "$d" ] || break; rmdir "$d" 2>/dev/null || sleep 0.05; done
  done
  if [ -n "$V1" ]; then
    # see test_cgroup_v1.c: retry until perf_event is unbound from v1
    for i in $(seq 10); do
      sleep 0.1; umount "$V1" || break
      sleep 0.2
      [ "$(awk '$1=="perf_event"{print $2}' /proc/cgroups)" = 0 ] && break
      mount -t cgroup -o perf_event none "$V1" || break
    done
    rmdir "$V1"
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

# check_cgroup WHAT ARG DIR: trace --cgroup ARG, where DIR is that cgroup
check_cgroup() {
  local what=$1 arg=$2 dir=$3 out=$TMP/out.$1 err=$TMP/err.$1
  CGS+=("$dir")
  mkdir "$dir" || fail "$what: mkdir $dir"
  "$R" perf trace -m 256 --cgroup "$arg" -e syscalls:sys_enter_getppid > "$out" 2> "$err" & rp=$!
  (
    echo $BASHPID > "$dir/cgroup.procs" || exit 1
    for i in $(seq 200); do [ -s "$out" ] && break; "$TARGET" flood 1; sleep 0.05; done
    exec "$TARGET" flood $n
  ) & mp=$!
  PIDS="$rp $mp"
  for i in $(seq 200); do [ -s "$out" ] && break; kill -0 $rp 2>/dev/null || break; sleep 0.05; done
  [ -s "$out" ] || { cat "$err"; fail "$what: no event of the process in the cgroup within 10 s"; }
  "$TARGET" flood $n & op=$!
  PIDS="$rp $mp $op"
  wait $mp $op
  kill -INT $rp
  wait $rp || { cat "$err"; fail "$what: trace failed"; }
  PIDS=
  local mine others warm
  mine=$(awk -v p=$mp '{split($3,a,"/"); if (a[1] == p) c++} END {print c+0}' "$out")
  others=$(awk -v p=$op '{split($3,a,"/"); if (a[1] == p) c++} END {print c+0}' "$out")
  warm=$(awk -v p=$mp -v o=$op '{split($3,a,"/"); if (a[1] != p && a[1] != o) c++} END {print c+0}' "$out")
  grep -q 'lost' "$err" && fail "$what: losses: $(cat "$err")"
  [ "$mine" = $n ] && [ "$others" = 0 ] && [ "$warm" -ge 1 ] ||
    fail "$what: $mine calls of pid $mp in the cgroup (want $n), $others of pid $op outside (want 0), $warm warm-up calls"
  rmdir "$dir" || fail "$what: rmdir $dir"
  ok "$what --cgroup $arg: exactly the $n calls in the cgroup (+$warm warm-up), none of the $n outside"
}

CG2=$(mnt_of cgroup2)
if [ -n "$CG2" ]; then
  name=rtdiag-perf-cli-$$
  check_cgroup v2 "$name" "$CG2/$name"
else
  echo "note: no cgroup v2 mount"
fi

grep -q '^perf_event' /proc/cgroups || { [ -n "$CG2" ] && exit 0; skip "no perf_event controller"; }
V1=$(mktemp -d /tmp/rtdiag-perf-cg1.XXXXXX)
if ! mount -t cgroup -o perf_event none "$V1" 2> "$TMP/merr"; then
  rmdir "$V1"; V1=
  [ -n "$CG2" ] || skip "no cgroup v2 mount, and the v1 perf_event hierarchy cannot be mounted: $(cat "$TMP/merr")"
  echo "note: v1 not tested: the perf_event hierarchy cannot be mounted: $(cat "$TMP/merr")"
  exit 0
fi
check_cgroup v1 "$V1/rtdiag-perf-cli-$$" "$V1/rtdiag-perf-cli-$$"
