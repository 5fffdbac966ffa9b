// Command symm is the symmetry check's Go program (e2e/symmetry_test.go):
// calls, a method, a closure and recursion, without system calls between.
package main

import "os"

type acc struct{ total uint64 }

func (a *acc) add(v uint64) {
	a.total = a.total*31 + v
}

func depth(n uint64) uint64 {
	if n == 0 {
		return 1
	}
	r := depth(n-1) + n
	return r
}

func main() {
	rounds := uint64(len(os.Args)) * 200
	a := &acc{}
	twice := func(x uint64) uint64 { return x * 2 }
	for k := uint64(0); k < rounds; k++ {
		d := depth(k % 5)
		a.add(twice(d))
	}
	os.Exit(int(a.total & 1))
}
