// gotrace-tiny: the smallest useful runtime/trace recording (a few KB),
// made to seed fuzz/corpus/gotrace with real Go 1.22+ traces: one task,
// one region, one log, a goroutine and a channel.
//
// Usage: gotrace-tiny TRACE_OUT
package main

import (
	"context"
	"os"
	"runtime/trace"
)

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := trace.Start(f); err != nil {
		panic(err)
	}
	ctx, task := trace.NewTask(context.Background(), "tiny")
	trace.WithRegion(ctx, "chan", func() {
		c := make(chan int)
		go func() { c <- 42 }()
		trace.Log(ctx, "got", string(rune('0'+<-c%10)))
	})
	task.End()
	trace.Stop()
	if err := f.Close(); err != nil {
		panic(err)
	}
}
