// Package main moves its main goroutine to another thread, on every run:
// the steps of a debugger must follow the goroutine, not the thread.
package main

import (
	"fmt"
	"runtime"
)

func main() {
	// One P: the goroutine below runs on this very thread once main
	// blocks, and nothing can steal it to another one.
	runtime.GOMAXPROCS(1)
	ch := make(chan int)
	go func() {
		// Keep the thread main.main ran on: once this goroutine blocks,
		// the thread hands its P (and main.main) to another thread.
		runtime.LockOSThread()
		ch <- 42
		select {}
	}()
	v := <-ch
	fmt.Println("received", v)
}
