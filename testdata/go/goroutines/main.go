// Command goroutines exercises the Go runtime's nondeterminism: many threads
// (Ms) scheduling goroutines, a pipeline of 4 workers connected by channels,
// randomized map iteration order (the runtime seeds it from its own random
// source, via AT_RANDOM / getrandom / rdtsc), crypto/rand (getrandom) and
// time.Now (vDSO clock_gettime).
package main

import (
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"time"
)

func main() {
	// Pipeline: source -> 4 parallel squarers -> sink.
	in := make(chan int)
	out := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := range in {
				out <- v * v
			}
		}()
	}
	go func() {
		for i := 1; i <= 100; i++ {
			in <- i
		}
		close(in)
	}()
	go func() {
		wg.Wait()
		close(out)
	}()
	sum := 0
	for v := range out {
		sum += v
	}
	fmt.Println("pipeline sum:", sum)

	m := map[string]int{}
	for i := 0; i < 12; i++ {
		m[fmt.Sprintf("k%02d", i)] = i
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	fmt.Println("map order:", strings.Join(keys, " "))

	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	fmt.Printf("random: %x\n", b)
	fmt.Println("now:", time.Now().UnixNano())
}
