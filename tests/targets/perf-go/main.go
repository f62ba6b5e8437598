// perf-go: two hot Go functions (3:1 by work), for the CPU profiler test
// built with Go 1.19 and Go 1.23, with and without a symbol table.
// usage: perf-go SECONDS
package main

import (
	"os"
	"strconv"
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
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for time.Now().Before(end) {
		sink += hotLoop(3000000)
		sink += warmLoop(1000000)
	}
}
