// gotrace-threads: a Go program that records its own execution trace
// (with the CPU profiler on, so the trace has CPU samples) while three
// goroutines, each locked to its OS thread, log that thread's id with
// runtime/trace and burn CPU. Around each log it reads CLOCK_MONOTONIC
// (clock_gettime, not Go's clock) and prints "log TID BEFORE AFTER", one
// line per log, so a test can check that a Go 1.22+ trace's M is the OS
// thread id and where the trace's clock falls against CLOCK_MONOTONIC.
//
// Usage: gotrace-threads TRACE_OUT
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// monotonic reads CLOCK_MONOTONIC (1) with the system call itself.
func monotonic() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func spin(d time.Duration) int {
	x := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 100000; i++ {
			x += i * i % 7
		}
	}
	return x
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gotrace-threads TRACE_OUT")
		os.Exit(2)
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = pprof.StartCPUProfile(io.Discard)
	if err := trace.Start(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lines []string
	logTid := func(tid int) {
		before := monotonic()
		trace.Log(context.Background(), "tid", strconv.Itoa(tid))
		after := monotonic()
		mu.Lock()
		lines = append(lines, fmt.Sprintf("log %d %d %d", tid, before, after))
		mu.Unlock()
	}
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tid := syscall.Gettid()
			logTid(tid)
			spin(150 * time.Millisecond)
			time.Sleep(20 * time.Millisecond)
			logTid(tid)
		}()
	}
	wg.Wait()
	trace.Stop()
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, l := range lines {
		fmt.Println(l)
	}
}
