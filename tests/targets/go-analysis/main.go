// go-analysis: a Go program whose waits are known, for rtdiag's trace
// analyses (tests/integration/goanalysis).
//
//	go-analysis trace OUT        record an execution trace of one round
//	go-analysis serve ADDR [S]   serve net/http/pprof on ADDR (127.0.0.1:0
//	                             picks a port, printed as "listening ADDR"),
//	                             running rounds (and a channel ping-pong for
//	                             steady trace traffic) until killed, or S
//	                             seconds
//
// One round, each wait in a goroutine whose start function says what it is
// (in trace mode the program prints each wait as it measured it, "wait
// FUNCTION NANOSECONDS", the client's dial "dial main.netClient NS", and
// each region "region NAME NANOSECONDS"):
//
//	main.chanWaiter   blocked receiving on a channel for 50 ms
//	main.mutexWaiter  blocked on a sync.Mutex held for 40 ms
//	main.netClient    waiting 30 ms for a loopback server's reply (network)
//	main.sleeper      in a nanosleep system call for 20 ms, then 1 ms asleep
//	main.regions      task "known-task" with regions "sleep-25ms" (25 ms)
//	                  and "spin" (about 10 ms of work) inside it
//	main.spinner      2*GOMAXPROCS goroutines spinning 5 ms each, after the
//	                  others, so they wait for Ps (scheduler latency)
//
// The trace mode runs the CPU profiler too, and main.cpuBurn spins 100 ms
// after the round (CPU samples in the trace).
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync"
	"syscall"
	"time"
)

var sink int

// What the goroutines measured: each writes its own slot (no lock: a
// contended lock would add waits of its own), read after the round.
type measure struct {
	kind, name string
	d          time.Duration
}

var (
	mChan, mMutex, mRead, mDial, mSleep, mRegion1, mRegion2 measure
)

func note(m *measure, kind, name string, d time.Duration) {
	*m = measure{kind, name, d}
}

func measuredLines() []string {
	var out []string
	for _, m := range []*measure{&mChan, &mMutex, &mRead, &mDial, &mSleep, &mRegion1, &mRegion2} {
		if m.name != "" {
			out = append(out, fmt.Sprintf("%s %s %d", m.kind, m.name, m.d.Nanoseconds()))
		}
	}
	return out
}

func spin(d time.Duration) {
	end := time.Now().Add(d)
	x := 0
	for time.Now().Before(end) {
		for i := 0; i < 1000; i++ {
			x += i * i % 7
		}
	}
	sink += x
}

//go:noinline
func chanWaiter(c chan int, done *sync.WaitGroup) {
	defer done.Done()
	t := time.Now()
	<-c
	note(&mChan, "wait", "main.chanWaiter", time.Since(t))
}

//go:noinline
func mutexWaiter(mu *sync.Mutex, done *sync.WaitGroup) {
	defer done.Done()
	t := time.Now()
	mu.Lock()
	note(&mMutex, "wait", "main.mutexWaiter", time.Since(t))
	mu.Unlock()
}

//go:noinline
func netClient(addr string, done *sync.WaitGroup) {
	defer done.Done()
	t0 := time.Now()
	c, err := net.Dial("tcp", addr)
	note(&mDial, "dial", "main.netClient", time.Since(t0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer c.Close()
	c.Write([]byte("ping"))
	buf := make([]byte, 4)
	t := time.Now()
	io.ReadFull(c, buf)
	note(&mRead, "wait", "main.netClient", time.Since(t))
}

//go:noinline
func sleeper(done *sync.WaitGroup) {
	defer done.Done()
	ts := syscall.Timespec{Nsec: 20 * 1000 * 1000}
	t := time.Now()
	syscall.Nanosleep(&ts, nil)
	note(&mSleep, "wait", "main.sleeper", time.Since(t))
	// Go 1.22+'s syscall profile ends a call at the goroutine's next
	// state change with a stack: a short sleep gives it one
	time.Sleep(time.Millisecond)
}

//go:noinline
func regions(done *sync.WaitGroup) {
	defer done.Done()
	ctx, task := trace.NewTask(context.Background(), "known-task")
	t := time.Now()
	trace.WithRegion(ctx, "sleep-25ms", func() { time.Sleep(25 * time.Millisecond) })
	note(&mRegion1, "region", "sleep-25ms", time.Since(t))
	t = time.Now()
	trace.WithRegion(ctx, "spin", func() { spin(10 * time.Millisecond) })
	note(&mRegion2, "region", "spin", time.Since(t))
	task.End()
}

//go:noinline
func spinner(done *sync.WaitGroup) {
	defer done.Done()
	spin(5 * time.Millisecond)
}

// cpuBurn: 100 ms of the process's CPU time (not of the wall clock: on a
// loaded machine 100 ms of wall can be a few ms of CPU and no sample),
// ~10 CPU samples at the profiler's 100 Hz; at most 10 s of wall.
//
//go:noinline
func cpuBurn() {
	start, end := cpuTime(), time.Now().Add(10*time.Second)
	for cpuTime()-start < 100*time.Millisecond && time.Now().Before(end) {
		spin(time.Millisecond)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func round(ln net.Listener) {
	var done sync.WaitGroup
	// the server answers each connection after 30 ms
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 4)
		io.ReadFull(c, buf)
		time.Sleep(30 * time.Millisecond)
		c.Write(buf)
		c.Close()
	}()
	c := make(chan int)
	var mu sync.Mutex
	mu.Lock()
	done.Add(5)
	go chanWaiter(c, &done)
	go mutexWaiter(&mu, &done)
	go netClient(ln.Addr().String(), &done)
	go sleeper(&done)
	go regions(&done)
	time.Sleep(40 * time.Millisecond)
	mu.Unlock()
	time.Sleep(10 * time.Millisecond)
	c <- 1
	done.Wait()
	n := 2 * runtime.GOMAXPROCS(0)
	done.Add(n)
	for i := 0; i < n; i++ {
		go spinner(&done)
	}
	done.Wait()
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: go-analysis trace OUT | serve ADDR [SECONDS]")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	switch os.Args[1] {
	case "trace":
		f, err := os.Create(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		// CPU profiling while tracing puts CPU samples in the trace
		_ = pprof.StartCPUProfile(io.Discard)
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		round(ln)
		cpuBurn()
		trace.Stop()
		pprof.StopCPUProfile()
		f.Close()
		for _, m := range measuredLines() {
			fmt.Println(m)
		}
	case "serve":
		srv, err := net.Listen("tcp", os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("listening %s\n", srv.Addr())
		go http.Serve(srv, nil)
		// steady traffic, so a trace's buffers fill (and reach the
		// reader) during a capture, not only at its end
		go func() {
			a, b := make(chan int), make(chan int)
			go func() {
				for v := range a {
					b <- v
				}
			}()
			for i := 0; ; i++ {
				a <- i
				<-b
				if i%10 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}()
		var end time.Time
		if len(os.Args) > 3 {
			s, _ := strconv.ParseFloat(os.Args[3], 64)
			end = time.Now().Add(time.Duration(s * float64(time.Second)))
		}
		for end.IsZero() || time.Now().Before(end) {
			round(ln)
		}
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "usage: go-analysis trace OUT | serve ADDR [SECONDS]")
		os.Exit(2)
	}
}
