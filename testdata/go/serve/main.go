// Command serve is a long-running net/http server on 127.0.0.1 for the
// attach tests: it prints "pid P addr A" and answers each request with the
// number of requests so far, until it gets a request for /quit, which it
// answers before it ends.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var hits atomic.Int64
	done := make(chan struct{})
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hit %d %s\n", hits.Add(1), r.URL.Path)
	})
	http.HandleFunc("/quit", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "bye")
		close(done)
	})
	fmt.Printf("pid %d addr %s\n", os.Getpid(), ln.Addr())
	srv := &http.Server{}
	go srv.Serve(ln)
	<-done
	// Shutdown lets the /quit handler's answer out before the process
	// ends (returning at once raced it, and a client that kept its
	// connection saw the server gone).
	srv.Shutdown(context.Background())
}
