// files writes, reads, stats and removes a file N times in DIR through
// package os, whose calls go through the syscall package's Syscall6 (a
// site of shape syscall; cmp $-4095,%rax), and prints a sum of what it
// read and saw.
//
//	files DIR N
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: files DIR N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	sum := 0
	for i := range n {
		path := filepath.Join(os.Args[1], "f"+strconv.Itoa(i))
		if err := os.WriteFile(path, []byte(strconv.Itoa(i*i)), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		st, err := os.Stat(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		v, _ := strconv.Atoi(string(b))
		sum += v + int(st.Size())
		os.Remove(path)
	}
	fmt.Printf("rounds %d sum %d\n", n, sum)
}
