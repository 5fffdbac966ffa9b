package trace

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// getpidLoop returns the events of a loop calling getpid from three call
// sites: registers identical but for the rax/rip pattern.
func getpidLoop(n int) []*Event {
	rng := rand.New(rand.NewPCG(11, 12))
	var base Regs
	for i := range base {
		base[i] = rng.Uint64()
	}
	const pid = 31337
	evs := make([]*Event, n)
	t := int64(1e6)
	for i := range evs {
		e := &Event{Kind: KindSyscall, Tid: pid, Syscall: 39, Regs: base}
		t += 1500 + rng.Int64N(256)
		e.Time = t
		e.Regs[RIP] = 0x401000 + uint64(i%3)*0x40
		e.Regs[RCX] = e.Regs[RIP]
		e.Regs[RAX] = uint64(-38 & (1<<64 - 1))
		e.Regs[OrigRAX] = 39
		e.ExitRegs = e.Regs
		e.ExitRegs[RAX] = pid
		evs[i] = e
	}
	return evs
}

func TestSize(t *testing.T) {
	const n = 100000
	path := filepath.Join(t.TempDir(), "t.trace")
	writeTrace(t, path, getpidLoop(n), &Footer{Exited: true})
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	per := float64(st.Size()) / n
	t.Logf("%d KindSyscall events (getpid loop): %d bytes, %.2f bytes/event", n, st.Size(), per)
	if per >= 8 {
		t.Errorf("%.2f bytes/event, want < 8", per)
	}
	_, got, _, warn, err := ReadAll(path)
	if err != nil || warn != "" || len(got) != n {
		t.Fatalf("read back: %d events, %q, %v", len(got), warn, err)
	}
}

func BenchmarkAppend(b *testing.B) {
	evs := getpidLoop(1000)
	path := filepath.Join(b.TempDir(), "t.trace")
	w := createTest(b, path)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := w.Append(evs[i%len(evs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if err := w.Close(nil); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkNext(b *testing.B) {
	const n = 100000
	path := filepath.Join(b.TempDir(), "t.trace")
	writeTrace(b, path, getpidLoop(n), nil)
	b.ReportAllocs()
	var r *Reader
	for b.Loop() {
		if r == nil {
			var err error
			if r, err = Open(path); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := r.Next(); err == io.EOF {
			r.Close()
			r = nil
		}
	}
	if r != nil {
		r.Close()
	}
}
