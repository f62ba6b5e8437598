// go-record: a Go program serving net/http/pprof on 127.0.0.1, for
// `rtdiag record --go-trace` (tests/integration/record/test_gotrace.sh).
//
//	go-record DIR   writes DIR/addr (host:port) once it listens, then
//	                each round's number on stdout; exits by itself after
//	                10 minutes
//
// One goroutine does rounds of: a user log message (runtime/trace.Log,
// category "rtd", message "sleep N"), at once time.Sleep(20 ms), then
// prints N. Nothing else runs, so the M that ran it has nothing to do
// while it sleeps: in the recording the goroutine blocks (GoBlock, reason
// sleep) right after the log, and that M's OS thread goes off the CPU.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"path/filepath"
	"runtime/trace"
	"time"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() {
		ctx := context.Background()
		for i := 0; ; i++ {
			trace.Log(ctx, "rtd", fmt.Sprintf("sleep %d", i))
			time.Sleep(20 * time.Millisecond)
			fmt.Println(i)
		}
	}()
	tmp := filepath.Join(os.Args[1], "addr.tmp")
	if err := os.WriteFile(tmp, []byte(ln.Addr().String()), 0o644); err != nil {
		panic(err)
	}
	os.Rename(tmp, filepath.Join(os.Args[1], "addr"))
	go func() {
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	}()
	http.Serve(ln, nil)
}
