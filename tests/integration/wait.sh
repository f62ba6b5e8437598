# wait.sh - sourced by the integration tests' lib.sh files: wait for a
# condition, never for a time.
#
# wait_until CMD...: runs CMD every 50 ms until it succeeds (status 0), or
# gives up (status 1) after RTD_TEST_WAIT seconds (default 300). The bound
# only keeps a broken test from hanging: on a 2-core machine at load 30 a
# program can take tens of seconds to start, so it is minutes, and a test
# never waits longer than its condition takes.
wait_until() {
  local n=$(( ${RTD_TEST_WAIT:-300} * 20 )) i=0
  until "$@" 2>/dev/null; do
    i=$((i+1))
    [ $i -ge $n ] && return 1
    sleep 0.05
  done
  return 0
}

# perf_fds PID N: PID holds at least N perf_event file descriptors (an
# attached counter counts from its perf_event_open when not opened
# disabled)
perf_fds() { [ "$(find /proc/"$1"/fd -lname 'anon_inode:\[perf_event\]' 2>/dev/null | wc -l)" -ge "$2" ]; }
