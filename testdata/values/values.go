// values.go fills package-level variables of Go types (strings, slices,
// maps small and large, structs, interfaces, errors, channels), prints the
// rendering the debugger is expected to produce for each (computed from
// the data), then blocks on stdin so a test can read the variables of the
// live process.
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Point is a plain struct.
type Point struct {
	X, Y int
	Name string
}

// MyErr is an error implemented by a pointer.
type MyErr struct {
	Code int
}

func (e *MyErr) Error() string { return fmt.Sprintf("code %d", e.Code) }

var (
	str      string
	ints     []int
	small    map[string]int
	large    map[string]int
	intmap   map[int]string
	pt       Point
	ptp      *Point
	iface    interface{}
	ifaceInt interface{}
	err      error
	ch       chan int
	arr      [3]int8
	flag     bool
	f64      float64
	nilmap   map[string]int
	nilslice []int
	nilerr   error
	bytes    []byte
	keyB     string // a key of small, for map lookups
	nested   Outer
)

// Outer nests a struct, a slice, a map and pointers, for delve's depth rules.
type Outer struct {
	In   Point
	P    *Point
	S    []Point
	M    map[int]string
	Err  error
	Next *Outer
}

func main() {
	str = "hello, gopher"
	ints = make([]int, 3, 4)
	for i := range ints {
		ints[i] = (i + 1) * 10
	}
	small = map[string]int{"a": 1, "b": 2, "c": 3}
	large = map[string]int{}
	for i := 0; i < 40; i++ {
		large[fmt.Sprintf("k%02d", i)] = i * i
	}
	intmap = map[int]string{1: "one", 2: "two"}
	pt = Point{X: 3, Y: -4, Name: "pt"}
	ptp = &Point{X: 1, Y: 2, Name: "heap"}
	iface = ptp
	ifaceInt = 42
	err = &MyErr{Code: 7}
	ch = make(chan int, 4)
	ch <- 1
	ch <- 2
	arr = [3]int8{-1, 0, 1}
	flag = true
	f64 = 2.5
	bytes = []byte("xyz")
	keyB = "b"
	nested = Outer{In: pt, P: ptp, S: []Point{pt}, M: map[int]string{1: "one"}, Err: err}
	nested.Next = &nested

	// The expected renderings, in delve's format, computed from the data.
	intsText := make([]string, len(ints))
	for i, v := range ints {
		intsText[i] = fmt.Sprint(v)
	}
	fmt.Printf("str\t%q\n", str)
	fmt.Printf("ints\t[]int len: %d, cap: %d, [%s]\n", len(ints), cap(ints), strings.Join(intsText, ","))
	fmt.Printf("small\t%s\n", mapText("map[string]int", small))
	fmt.Printf("large\t%s\n", mapText("map[string]int", large))
	fmt.Printf("pt\tmain.Point {X: %d, Y: %d, Name: %q}\n", pt.X, pt.Y, pt.Name)
	fmt.Printf("ptp\t*main.Point {X: %d, Y: %d, Name: %q}\n", ptp.X, ptp.Y, ptp.Name)
	fmt.Printf("iface\tinterface {}(*main.Point) *{X: %d, Y: %d, Name: %q}\n", ptp.X, ptp.Y, ptp.Name)
	fmt.Printf("ifaceInt\tinterface {}(int) %d\n", ifaceInt)
	fmt.Printf("err\terror(*main.MyErr) *{Code: %d}\n", err.(*MyErr).Code)
	fmt.Printf("ch\tchan int %d/%d\n", len(ch), cap(ch))
	fmt.Printf("arr\t[3]int8 [%d,%d,%d]\n", arr[0], arr[1], arr[2])
	fmt.Printf("flag\t%v\n", flag)
	fmt.Printf("f64\t%v\n", f64)
	if nilmap == nil && nilslice == nil && nilerr == nil {
		fmt.Printf("nilmap\tmap[string]int nil\n")
		fmt.Printf("nilslice\t[]int len: 0, cap: 0, nil\n")
		fmt.Printf("nilerr\terror nil\n")
	}
	fmt.Printf("bytes\t[]uint8 len: %d, cap: %d, [%d,%d,%d]\n", len(bytes), cap(bytes), bytes[0], bytes[1], bytes[2])
	// Past delve's default depth (one level), structs show as addresses.
	fmt.Printf("nested\tmain.Outer {In: main.Point {X: %d, Y: %d, Name: %q}, P: *main.Point {X: %d, Y: %d, Name: %q}, "+
		"S: []main.Point len: 1, cap: 1, [(*main.Point)(%p)], M: map[int]string [1: %q, ], Err: error(*main.MyErr) *{Code: %d}, "+
		"Next: *main.Outer {In: (*main.Point)(%p), P: *(*main.Point)(%p), S: []main.Point len: 1, cap: 1, [(*main.Point)(%p)], "+
		"M: map[int]string [...], Err: error(*main.MyErr) %p, Next: *(*main.Outer)(%p)}}\n",
		nested.In.X, nested.In.Y, nested.In.Name, nested.P.X, nested.P.Y, nested.P.Name,
		&nested.S[0], nested.M[1], nested.Err.(*MyErr).Code,
		&nested.In, nested.P, &nested.S[0], nested.Err, nested.Next)
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')
}

// mapText renders a map the way delve prints it, with the keys sorted; the
// test sorts the debugger's entries the same way, as map order is random.
func mapText(typ string, m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(typ + " [")
	for _, k := range keys {
		fmt.Fprintf(&b, "%q: %d, ", k, m[k])
	}
	b.WriteString("]")
	return b.String()
}
