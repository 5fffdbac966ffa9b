// Command httpserve exercises network I/O inside the Go runtime: an
// net/http server on 127.0.0.1:0 (random port) and a client GET to it, both
// in one process. The netpoller (epoll_wait, non-blocking sockets, eventfd or
// pipe wakeups) runs on several threads; the body carries a random number.
package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	n := rand.Uint64()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from server, path %s, random %d\n", r.URL.Path, n)
	})}
	go srv.Serve(ln)

	resp, err := http.Get("http://" + ln.Addr().String() + "/rewind")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("status:", resp.StatusCode)
	fmt.Print("body: ", string(body))
	srv.Close()
}
