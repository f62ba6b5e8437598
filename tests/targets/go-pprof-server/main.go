// go-pprof-server: Go's own net/http/pprof on 127.0.0.1, for the agent's
// tests to send the same requests to both and compare the answers.
//
//	go-pprof-server DIR   writes DIR/addr (host:port) once it listens;
//	                      exits by itself after 10 minutes
//
// A few goroutines block on a channel and contend on a mutex, with the
// block and mutex profiles on, so /block and /mutex have samples.
package main

import (
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

func main() {
	runtime.SetBlockProfileRate(1)
	runtime.SetMutexProfileFraction(1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	var mu sync.Mutex
	ch := make(chan int)
	go func() {
		for i := 0; ; i++ {
			time.Sleep(10 * time.Millisecond)
			ch <- i
		}
	}()
	for g := 0; g < 2; g++ {
		go func() {
			for range ch {
				mu.Lock()
				time.Sleep(time.Millisecond)
				mu.Unlock()
			}
		}()
	}
	tmp := filepath.Join(os.Args[1], "addr.tmp")
	if err := os.WriteFile(tmp, []byte(ln.Addr().String()), 0o644); err != nil {
		panic(err)
	}
	os.Rename(tmp, filepath.Join(os.Args[1], "addr"))
	time.AfterFunc(10*time.Minute, func() { os.Exit(0) })
	http.Serve(ln, nil)
}
