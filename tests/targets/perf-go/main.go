// perf-go: two hot Go functions (3:1 by work), for the CPU profiler test
// built with Go 1.19 and Go 1.23, with and without a symbol table.
// usage: perf-go SECONDS (of its own CPU time: on a loaded machine a
// span of wall time can hold too few samples for the 3:1 to show; at most
// ten times SECONDS of wall)
package main

import (
	"os"
	"strconv"
	"syscall"
	"time"
)

var sink uint64

//go:noinline
func hotLoop(n int) uint64 {
	x := sink
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func warmLoop(n int) uint64 {
	x := sink
	for i := 0; i < n; i++ {
		x ^= x<<13 + uint64(i)
	}
	return x
}

func main() {
	secs := 1.0
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	want := time.Duration(secs * float64(time.Second))
	end := time.Now().Add(10 * want)
	for cpuTime() < want && time.Now().Before(end) {
		sink += hotLoop(3000000)
		sink += warmLoop(1000000)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
