package bench

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rewind-debugger/rewind/engine/record"
	"github.com/rewind-debugger/rewind/internal/testprog/cc"
)

// What recording a running process costs (rewind record -p):
//
//	go test -run XXX -bench Attach -benchtime 3x ./bench/
//
// BenchmarkAttachPause: the pause the process sees while rewind seizes and
// snapshots it, against its resident memory, and the snapshot's size in
// the trace. BenchmarkAttachedService: a loopback TCP service's requests
// per second while recorded, against the same service not recorded.

// daemon runs a testdata/attach program with -d (it forks away and its
// parent exits) and returns its pid and its stdin; it is killed at the end.
func daemon(b *testing.B, src string, args ...string) (pid int, port int, in io.WriteCloser) {
	b.Helper()
	bin := filepath.Join(b.TempDir(), strings.TrimSuffix(src, ".c"))
	cc.Build(b, filepath.Join("..", "testdata", "attach", src), bin, "-O1", "-pthread")
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	cmd := exec.Command(bin, append([]string{"-d"}, args...)...)
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Run(); err != nil {
		b.Fatalf("start %s: %v", bin, err)
	}
	inR.Close()
	outW.Close()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		b.Fatalf("%s did not start: %v", bin, err)
	}
	fmt.Sscanf(line, "pid %d port %d", &pid, &port)
	b.Cleanup(func() {
		unix.Kill(pid, unix.SIGKILL)
		inW.Close()
		outR.Close()
	})
	return pid, port, inW
}

// attachFor records process pid for d and returns the snapshot's facts and
// the trace's size.
func attachFor(b *testing.B, pid int, d time.Duration, started func()) (record.AttachInfo, int64) {
	b.Helper()
	out := filepath.Join(b.TempDir(), "attached.rwd")
	var info record.AttachInfo
	_, err := record.Record(record.Options{Attach: pid, Duration: d, Output: out, Warn: io.Discard,
		Attached: func(a record.AttachInfo) {
			info = a
			if started != nil {
				started()
			}
		}})
	if err != nil {
		b.Fatalf("record -p %d: %v", pid, err)
	}
	st, err := os.Stat(out)
	if err != nil {
		b.Fatal(err)
	}
	return info, st.Size()
}

func BenchmarkAttachPause(b *testing.B) {
	for _, mib := range []int{16, 256} {
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			file := filepath.Join(b.TempDir(), "data")
			os.WriteFile(file, make([]byte, 4096), 0o644)
			pid, _, _ := daemon(b, "target.c", file, fmt.Sprint(mib))
			var worst time.Duration
			best := time.Hour
			var info record.AttachInfo
			var size int64
			for i := 0; i < b.N; i++ {
				info, size = attachFor(b, pid, 100*time.Millisecond, nil)
				worst, best = max(worst, info.Pause), min(best, info.Pause)
			}
			b.ReportMetric(float64(worst.Microseconds())/1000, "worst-pause-ms")
			b.ReportMetric(float64(best.Microseconds())/1000, "best-pause-ms")
			b.ReportMetric(float64(rss(b, pid))/1024, "rss-MiB")
			b.ReportMetric(float64(info.Bytes)/(1<<20), "snapshot-MiB")
			b.ReportMetric(float64(size)/(1<<20), "trace-MiB")
		})
	}
}

// rss reads a process's resident memory in KiB.
func rss(b *testing.B, pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			var kib int
			fmt.Sscanf(strings.TrimPrefix(l, "VmRSS:"), "%d", &kib)
			return kib
		}
	}
	return 0
}

func BenchmarkAttachedService(b *testing.B) {
	pid, port, _ := daemon(b, "service.c")
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	const requests = 300
	// serve may run on a goroutine of its own: it returns its error.
	serve := func() (time.Duration, error) {
		start := time.Now()
		for i := 0; i < requests; i++ {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return 0, err
			}
			io.WriteString(c, "add 1\nget\nx\n")
			_, err = io.ReadAll(c)
			c.Close()
			if err != nil {
				return 0, err
			}
		}
		return time.Since(start), nil
	}
	type result struct {
		d   time.Duration
		err error
	}
	var nat, rec time.Duration
	for i := 0; i < b.N; i++ {
		d, err := serve()
		if err != nil {
			b.Fatal(err)
		}
		nat += d
		done := make(chan result, 1)
		// The client starts once the snapshot is taken, and the
		// recording lasts longer than it.
		attachFor(b, pid, 10*time.Second, func() {
			go func() {
				d, err := serve()
				done <- result{d, err}
			}()
		})
		r := <-done
		if r.err != nil {
			b.Fatal(r.err)
		}
		rec += r.d
	}
	b.ReportMetric(float64(requests*b.N)/nat.Seconds(), "native-req/s")
	b.ReportMetric(float64(requests*b.N)/rec.Seconds(), "attached-req/s")
	b.ReportMetric(rec.Seconds()/nat.Seconds(), "attached/native")
}
