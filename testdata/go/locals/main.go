// Package main has locals of every Go kind a debugger must print.
package main

import (
	"fmt"
	"os"
	"strings"
)

type point struct {
	X, Y int
	Name string
}

func describe(p point, tags []string) string {
	return fmt.Sprintf("%s(%d,%d) %s", p.Name, p.X, p.Y, strings.Join(tags, ","))
}

func main() {
	counts := map[string]int{"alpha": 1, "beta": 2, "gamma": 3}
	primes := []int{2, 3, 5, 7, 11}
	greeting := "hello, rewind"
	origin := point{X: 3, Y: -4, Name: "p"}
	var err error = os.ErrNotExist
	n := len(counts) + len(primes)
	fmt.Println(describe(origin, []string{greeting}), n, err != nil)
	fmt.Println(counts["beta"], primes[4])
}
