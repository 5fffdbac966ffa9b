// Command gochain is a Go call chain main.a -> main.b -> main.c that stops
// itself with SIGSTOP, so that a test can unwind it with Go's
// .debug_frame call frame information.
package main

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// The main goroutine stays on the main thread, the one the test reads.
func init() { runtime.LockOSThread() }

//go:noinline
func c(x int) int {
	fmt.Printf("c x=%d\n", x)
	fmt.Println("ready")
	syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	return x + 1
}

//go:noinline
func b(x int) int {
	fmt.Printf("b x=%d\n", x)
	return c(x*2) + x
}

//go:noinline
func a(x int) int {
	fmt.Printf("a x=%d\n", x)
	return b(x+3) + x
}

func main() { fmt.Println(a(len(os.Args))) }
