// Command spin exercises a goroutine that makes no system call: with
// GOMAXPROCS(2) it spins on an atomic.Bool (`for !flag.Load() {}`) while main
// sleeps 50 ms and sets the flag. The Go runtime's async preemption (sysmon
// sending SIGURG via tgkill) may interrupt the spinner, and the recorder must
// preempt it to let other threads run.
package main

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	runtime.GOMAXPROCS(2)
	var flag atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !flag.Load() {
		}
	}()
	time.Sleep(50 * time.Millisecond)
	flag.Store(true)
	wg.Wait()
	fmt.Println("spin done")
}
