// corrupt: the demo's bug in Go. setName copies a name into name[8]
// through an unsafe pointer without a bound, past its end into next; sum
// walks the list and faults on the corrupted pointer.
package main

import (
	"fmt"
	"unsafe"
)

type node struct {
	name  [8]byte
	next  *node
	value int
}

//go:noinline
func setName(n *node, s string) {
	p := unsafe.Pointer(&n.name[0])
	for i := 0; i < len(s); i++ {
		*(*byte)(unsafe.Add(p, i)) = s[i] // no bound: runs into next
	}
}

//go:noinline
func sum(head *node) int {
	total := 0
	for n := head; n != nil; n = n.next {
		total += n.value
	}
	return total
}

func main() {
	c := &node{value: 3}
	b := &node{value: 2, next: c}
	a := &node{value: 1, next: b}
	setName(a, "alpha")
	setName(b, "bravo-overflowing")
	setName(c, "charlie")
	fmt.Println("sum", sum(a))
}
