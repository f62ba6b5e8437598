// gen: writes a large Go execution trace (Go 1.19 format when built with
// Go 1.19) for the gotrace benchmark: goroutines ping-pong over channels,
// contend on a mutex, yield, allocate, make syscalls, and annotate with
// tasks, regions and logs until the trace reaches the requested size.
//
// Usage: gen OUT MEGABYTES
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
	"sync/atomic"
)

type countingWriter struct {
	f *os.File
	n int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	atomic.AddInt64(&w.n, int64(n))
	return n, err
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen OUT MEGABYTES")
		os.Exit(2)
	}
	mb, _ := strconv.Atoi(os.Args[2])
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := &countingWriter{f: f}
	limit := int64(mb) << 20
	// GEN_CPU=1: the CPU profiler on too, so the trace has CPU samples
	// (a profile's input: rtdiag convert -f folded)
	if os.Getenv("GEN_CPU") != "" {
		_ = pprof.StartCPUProfile(io.Discard)
		defer pprof.StopCPUProfile()
	}
	if err := trace.Start(w); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var stop int32
	var mu sync.Mutex
	var wg sync.WaitGroup
	var sink []byte
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx, task := trace.NewTask(context.Background(), fmt.Sprintf("worker-%d", i))
			defer task.End()
			a, b := make(chan int), make(chan int)
			go func() {
				for v := range a {
					b <- v + 1
				}
				close(b)
			}()
			for n := 0; atomic.LoadInt32(&stop) == 0; n++ {
				r := trace.StartRegion(ctx, "round")
				a <- n
				<-b
				mu.Lock()
				sink = make([]byte, 256)
				mu.Unlock()
				runtime.Gosched()
				if n%1000 == 0 {
					trace.Log(ctx, "progress", strconv.Itoa(n))
					os.Getpid()
					f.Stat()
				}
				r.End()
			}
			close(a)
		}(i)
	}
	for atomic.LoadInt64(&w.n) < limit {
		runtime.Gosched()
	}
	atomic.StoreInt32(&stop, 1)
	wg.Wait()
	trace.Stop()
	_ = sink
	f.Close()
}
