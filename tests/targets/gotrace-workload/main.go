// gotrace-workload: a Go program that records its own execution trace
// while it runs goroutines, channels, a mutex, syscalls, GC, CPU profiling
// and runtime/trace tasks, regions and logs. It prints a manifest of the
// tasks, regions and log messages it made, one per line, so a test can
// check a decoder finds exactly those.
//
// Usage: gotrace-workload TRACE_OUT [SCALE]
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
	"strings"
	"sync"
	"time"
)

var manifest []string

func note(kind, a string, b ...string) {
	s := kind + " " + strconv.Quote(a)
	for _, x := range b {
		s += " " + strconv.Quote(x)
	}
	manifest = append(manifest, s)
}

func spin(n int) int {
	x := 0
	for i := 0; i < n; i++ {
		x += i * i % 7
	}
	return x
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gotrace-workload TRACE_OUT [SCALE]")
		os.Exit(2)
	}
	scale := 1
	if len(os.Args) > 2 {
		scale, _ = strconv.Atoi(os.Args[2])
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// CPU profiling during tracing puts CPUSample events in the trace (Go 1.19).
	_ = pprof.StartCPUProfile(io.Discard)
	if err := trace.Start(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}

	ctx, task := trace.NewTask(context.Background(), "main-task")
	note("task", "main-task")
	trace.Log(ctx, "phase", "start")
	note("log", "phase", "start")

	// Channels: a pipeline of goroutines.
	trace.WithRegion(ctx, "pipeline", func() {
		in := make(chan int)
		out := make(chan int, 4)
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for v := range in {
					out <- v * 2
				}
			}()
		}
		go func() {
			for i := 0; i < 200*scale; i++ {
				in <- i
			}
			close(in)
		}()
		go func() { wg.Wait(); close(out) }()
		sum := 0
		for v := range out {
			sum += v
		}
		_ = sum
	})
	note("region", "pipeline")

	// Mutex contention and sub-tasks with regions and logs.
	var mu sync.Mutex
	var wg sync.WaitGroup
	shared := 0
	for i := 0; i < 3; i++ {
		wg.Add(1)
		name := fmt.Sprintf("worker-%d", i)
		note("task", name)
		note("region", "locked work")
		note("log", "worker", name+` says "hi" ünïcödé`)
		go func(name string) {
			defer wg.Done()
			wctx, wt := trace.NewTask(ctx, name)
			defer wt.End()
			r := trace.StartRegion(wctx, "locked work")
			for k := 0; k < 50*scale; k++ {
				mu.Lock()
				shared += spin(1000)
				mu.Unlock()
				runtime.Gosched()
			}
			r.End()
			trace.Log(wctx, "worker", name+` says "hi" ünïcödé`)
		}(name)
	}
	wg.Wait()

	// Syscalls: a pipe and file I/O.
	trace.WithRegion(ctx, "syscalls", func() {
		r, w, _ := os.Pipe()
		go func() {
			for i := 0; i < 20*scale; i++ {
				w.Write([]byte("ping\n"))
				time.Sleep(100 * time.Microsecond)
			}
			w.Close()
		}()
		io.Copy(io.Discard, r)
		tmp, _ := os.CreateTemp("", "gotrace-workload")
		for i := 0; i < 10*scale; i++ {
			tmp.Write(make([]byte, 4096))
			tmp.Sync()
		}
		tmp.Close()
		os.Remove(tmp.Name())
	})
	note("region", "syscalls")

	// GC: garbage and forced collections.
	trace.WithRegion(ctx, "gc", func() {
		var keep [][]byte
		for i := 0; i < 2000*scale; i++ {
			keep = append(keep, make([]byte, 1024))
			if len(keep) > 500 {
				keep = keep[:0]
			}
		}
		runtime.GC()
		runtime.GC()
	})
	note("region", "gc")

	// CPU for the profiler.
	trace.WithRegion(ctx, "cpu", func() { _ = spin(30000000) })
	note("region", "cpu")

	// Many region names, each used twice: more than a text writer keeps
	// quoted (64 strings), some longer than it keeps (56 bytes), some
	// with characters that JSON and strconv.Quote escape alike (a quote,
	// a backslash, a newline, a tab) or pass through (UTF-8).
	trace.WithRegion(ctx, "names", func() {
		for i := 0; i < 2*100; i++ {
			name := fmt.Sprintf("name-%d", i%100)
			switch i % 100 % 4 {
			case 1:
				name += strings.Repeat("-long", 12)
			case 2:
				name += " \"quoted\" back\\slash\nnew line\ttab é"
			}
			trace.WithRegion(ctx, name, func() {})
			note("region", name)
		}
	})
	note("region", "names")

	// A long message (40 KiB: larger than a chunk of rtdiag's decoding
	// thread's hand-over, smaller than the runtime's 64 KiB trace buffer,
	// which would cut it).
	// Go 1.22+ runtimes cut every trace string at 1024 bytes (the
	// runtime's maxTraceStringLen), log messages included.
	blob := strings.Repeat("0123456789abcdef", 2560)
	trace.Log(ctx, "blob", blob)
	if v := runtime.Version(); !strings.HasPrefix(v, "go1.19") &&
		!strings.HasPrefix(v, "go1.20") && !strings.HasPrefix(v, "go1.21") {
		blob = blob[:1024]
	}
	note("log", "blob", blob)

	trace.Log(ctx, "phase", "done")
	note("log", "phase", "done")
	task.End()
	trace.Stop()
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, m := range manifest {
		fmt.Println(m)
	}
}
