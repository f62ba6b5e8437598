// Command gen writes a Go execution trace of a busy program, for the
// pictures tests and benchmarks: producers and consumers over channels,
// mutexes, timers, syscalls, allocation (GC cycles), user tasks, regions
// and logs, with CPU profiling on so the trace carries CPU samples.
//
//	gen OUT.trace ROUNDS
//
// The trace grows with ROUNDS (about 1 MB per 40 rounds with Go 1.23).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync"
	"time"
)

var sink [][]byte

func work(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

func round(ctx context.Context, r int) {
	ctx, task := trace.NewTask(ctx, "round")
	defer task.End()
	ch := make(chan int, 4)
	var mu sync.Mutex
	var wg sync.WaitGroup
	total := 0
	for p := 0; p < 8; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			trace.WithRegion(ctx, "produce", func() {
				for i := 0; i < 50; i++ {
					ch <- work(200 + p)
					if i%10 == 0 {
						sink = append(sink, make([]byte, 4096))
					}
				}
			})
		}(p)
	}
	done := make(chan struct{})
	for c := 0; c < 4; c++ {
		go func() {
			for v := range ch {
				mu.Lock()
				total += v
				mu.Unlock()
			}
			done <- struct{}{}
		}()
	}
	wg.Wait()
	close(ch)
	for c := 0; c < 4; c++ {
		<-done
	}
	time.Sleep(50 * time.Microsecond)
	f, _ := os.Open("/dev/null")
	io.Copy(io.Discard, f)
	f.Close()
	trace.Log(ctx, "total", strconv.Itoa(total))
	if len(sink) > 2000 {
		sink = nil
	}
	_ = r
}

func main() {
	out, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	rounds, _ := strconv.Atoi(os.Args[2])
	pprof.StartCPUProfile(io.Discard)
	trace.Start(out)
	for r := 0; r < rounds; r++ {
		round(context.Background(), r)
	}
	trace.Stop()
	pprof.StopCPUProfile()
	out.Close()
	fmt.Fprintln(os.Stderr, "gen: rounds", rounds)
}
