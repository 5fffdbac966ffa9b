package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testHeader returns a header with every field set.
func testHeader() *Header {
	return &Header{
		FormatVersion: CurrentVersion,
		RewindVersion: "0.1.0-test",
		Program:       "/usr/bin/true",
		Args:          []string{"true", "--flag", "a b"},
		Env:           []string{"HOME=/root", "LANG=C.UTF-8"},
		Cwd:           "/tmp",
		ExeBuildID:    "0123456789abcdef",
		ExeSHA256:     strings.Repeat("ab", 32),
		CPUModel:      "Test CPU @ 3.00GHz",
		CPUFlags:      []string{"sse4_2", "avx2"},
		Kernel:        "6.1.0-test",
		Hostname:      "box",
		Rlimits: map[string][2]uint64{
			"RLIMIT_STACK":  {8 << 20, math.MaxUint64},
			"RLIMIT_NOFILE": {1024, 4096},
		},
		Created: time.Date(2025, 3, 4, 5, 6, 7, 890123456, time.UTC),
		Pid:     4242,
	}
}

// canon returns a deep copy of e in the canonical form the reader returns:
// empty slices are nil.
func canon(e *Event) *Event { return e.Clone() }

// scribble overwrites the slices of e, as a caller reusing its buffers would.
func scribble(e *Event) {
	for _, ms := range [][]Mem{e.Mem, e.In} {
		for i := range ms {
			ms[i].Addr ^= 0xdead
			for j := range ms[i].Data {
				ms[i].Data[j] ^= 0x5a
			}
		}
	}
	for _, b := range [][]byte{e.Data, e.Siginfo} {
		for j := range b {
			b[j] ^= 0xa5
		}
	}
	if e.Map != nil {
		e.Map.Offset++
	}
	if e.Shared != nil {
		e.Shared.Size++
	}
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func randMems(rng *rand.Rand, full bool) []Mem {
	n := rng.IntN(4)
	if full {
		n = 1 + rng.IntN(3)
	}
	var ms []Mem
	for range n {
		l := rng.IntN(64)
		if full {
			l++
		}
		ms = append(ms, Mem{Addr: rng.Uint64(), Data: randBytes(rng, l)})
	}
	return ms
}

// presence says which optional fields a generated event has.
type presence int

const (
	allFields  presence = iota // every field set, for every kind
	someFields                 // each optional field present or absent at random
	noFields                   // only Kind, Tid, Time and registers
)

// genEvents generates n events of several interleaved threads, cycling
// through every Kind.
func genEvents(rng *rand.Rand, n int, pr presence) []*Event {
	tids := []int32{1000, 1001, 1002, 77777}
	regs := map[int32]*Regs{}
	for _, t := range tids {
		r := new(Regs)
		for i := range r {
			r[i] = rng.Uint64()
		}
		regs[t] = r
	}
	var evs []*Event
	now := int64(0)
	for i := range n {
		tid := tids[rng.IntN(len(tids))]
		r := regs[tid]
		// Change a few registers: small deltas, random values, sometimes all.
		switch rng.IntN(4) {
		case 0:
			for i := range r {
				r[i] = rng.Uint64()
			}
		default:
			for range rng.IntN(5) {
				j := rng.IntN(len(r))
				if rng.IntN(2) == 0 {
					r[j] += uint64(rng.IntN(200)) - 100
				} else {
					r[j] = rng.Uint64()
				}
			}
		}
		now += rng.Int64N(100000) - 1000 // occasionally backwards
		e := &Event{Kind: Kind(1 + i%9), Tid: tid, Time: now, Regs: *r}
		e.ExitRegs = *r
		e.ExitRegs[RAX] = rng.Uint64()
		if rng.IntN(3) == 0 {
			e.ExitRegs[RCX] = rng.Uint64()
		}
		has := func() bool {
			switch pr {
			case allFields:
				return true
			case someFields:
				return rng.IntN(2) == 0
			}
			return false
		}
		full := pr == allFields
		if has() {
			e.Flags = rng.Uint32() | 1
		}
		if has() {
			e.Syscall = int32(rng.Uint32()) | 1
		}
		if has() {
			e.Mem = randMems(rng, full)
		}
		if has() {
			e.In = randMems(rng, full)
		}
		if has() {
			e.Map = &MapFile{Blob: rng.Uint32(), Offset: rng.Uint64(), Length: rng.Uint64()}
		}
		if has() {
			e.Data = randBytes(rng, 1+rng.IntN(100))
		}
		if has() {
			e.Hash = rng.Uint64() | 1
		}
		if has() {
			e.Signo = 1 + rng.Int32N(64)
		}
		if has() {
			e.Siginfo = randBytes(rng, 128)
		}
		if has() {
			e.Value = rng.Uint64() | 1
		}
		if has() {
			e.Aux = rng.Uint64() | 1
		}
		if has() {
			e.StackHash = rng.Uint64() | 1
		}
		if has() {
			e.Status = int32(rng.Uint32()) | 1
		}
		if has() {
			e.NewTid = int32(rng.Uint32()) | 1
		}
		if has() {
			e.Shared = &SharedMap{Object: rng.Uint32(), Offset: rng.Uint64(), Size: rng.Uint64(), Path: string(randBytes(rng, rng.IntN(20)))}
		}
		if pr == someFields && rng.IntN(5) == 0 {
			e.Regs = Regs{} // no registers at all
		}
		if pr == someFields && rng.IntN(5) == 0 {
			e.ExitRegs = Regs{}
		}
		evs = append(evs, e)
	}
	return evs
}

// extremeEvents exercises wrapping deltas and range limits.
func extremeEvents() []*Event {
	var max Regs
	for i := range max {
		max[i] = math.MaxUint64
	}
	return []*Event{
		{Kind: KindExec, Tid: math.MaxInt32, Time: math.MaxInt64, Regs: max, Value: math.MaxUint64},
		{Kind: KindSyscall, Tid: math.MinInt32, Time: math.MinInt64, Regs: Regs{1}, ExitRegs: max,
			Syscall: math.MinInt32, Flags: math.MaxUint32, Status: math.MinInt32, NewTid: math.MaxInt32,
			Signo: math.MaxInt32, Value: 1, Aux: math.MaxUint64, Hash: math.MaxUint64, StackHash: math.MaxUint64,
			Map: &MapFile{Blob: math.MaxUint32, Offset: math.MaxUint64, Length: math.MaxUint64}},
		{Kind: KindSyscall, Tid: math.MinInt32, Time: 0, Regs: max, ExitRegs: Regs{}, Value: math.MaxUint64},
		{Kind: KindThreadExit, Tid: math.MinInt32},
		{Kind: KindSyscall, Tid: math.MinInt32, Regs: max}, // base is zero again after the thread exit
		{Kind: Kind(0)},
		{Kind: Kind(255), Tid: 1, Map: &MapFile{}},
		{Kind: KindSignal, Tid: 1, Mem: []Mem{{Addr: 0}, {Addr: math.MaxUint64, Data: []byte{}}}},
		{Kind: KindSharedMem, Tid: 1, Shared: &SharedMap{Object: math.MaxUint32, Offset: math.MaxUint64, Size: math.MaxUint64, Path: "/memfd:x (deleted)"}},
		{Kind: KindSharedMem, Tid: 1, Shared: &SharedMap{}},
		{Kind: KindSyscall, Tid: 1, Hooks: []HookPatch{{Site: math.MaxUint64, Stub: 0x7fff0000, Page: 0x7fff0000, Nr: math.MaxUint32}, {}}},
	}
}

// createTest creates a trace at path with the test header.
func createTest(t testing.TB, path string) *Writer {
	t.Helper()
	w, err := Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// writeTrace writes events to path (and blobs first) and closes it.
func writeTrace(t testing.TB, path string, evs []*Event, foot *Footer) {
	t.Helper()
	w := createTest(t, path)
	for _, e := range evs {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(foot); err != nil {
		t.Fatal(err)
	}
}

// closeAndOpen closes w with foot and opens the trace it wrote, at path.
func closeAndOpen(t testing.TB, w *Writer, foot *Footer, path string) *Reader {
	t.Helper()
	if err := w.Close(foot); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func compareEvents(t *testing.T, got, want []*Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("read %d events, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name string
		evs  []*Event
	}{
		{"no events", nil},
		{"one event", genEvents(rng, 1, allFields)},
		{"every kind, all fields", genEvents(rng, 9*20, allFields)},
		{"every kind, some fields", genEvents(rng, 9*200, someFields)},
		{"every kind, no optional fields", genEvents(rng, 9*20, noFields)},
		{"extreme values", extremeEvents()},
		{"many frames", genEvents(rng, 20000, someFields)},
		{"one huge event", []*Event{{Kind: KindSyscall, Tid: 5, Syscall: 0,
			Mem: []Mem{{Addr: 0x1000, Data: randBytes(rng, 3*frameTarget)}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.trace")
			w := createTest(t, path)
			var want []*Event
			for _, e := range tt.evs {
				want = append(want, canon(e))
				if err := w.Append(e); err != nil {
					t.Fatal(err)
				}
				scribble(e) // the writer must have copied what it keeps
			}
			if w.Events() != int64(len(tt.evs)) {
				t.Errorf("Events() = %d, want %d", w.Events(), len(tt.evs))
			}
			foot := &Footer{ExitStatus: 256, Exited: true, Warnings: []string{"w1"}}
			if err := w.Close(foot); err != nil {
				t.Fatal(err)
			}
			if err := w.Append(&Event{}); !errors.Is(err, ErrClosed) {
				t.Errorf("Append after Close: %v, want ErrClosed", err)
			}
			if _, err := os.Stat(path + ".partial"); !os.IsNotExist(err) {
				t.Errorf(".partial still there after Close: %v", err)
			}

			h, got, f, warn, err := ReadAll(path)
			if err != nil {
				t.Fatal(err)
			}
			if warn != "" {
				t.Errorf("warning %q", warn)
			}
			if !reflect.DeepEqual(h, testHeader()) {
				t.Errorf("header\n got %+v\nwant %+v", h, testHeader())
			}
			var indexed int64
			for _, n := range f.FrameEvents {
				if n <= 0 {
					t.Errorf("footer index %v has an empty frame", f.FrameEvents)
				}
				indexed += n
			}
			if indexed != int64(len(tt.evs)) {
				t.Errorf("footer index %v counts %d events, want %d", f.FrameEvents, indexed, len(tt.evs))
			}
			wantFoot := &Footer{Events: int64(len(tt.evs)), ExitStatus: 256, Exited: true, Warnings: []string{"w1"},
				FrameEvents: f.FrameEvents}
			if !reflect.DeepEqual(f, wantFoot) {
				t.Errorf("footer %+v, want %+v", f, wantFoot)
			}
			compareEvents(t, got, want)
		})
	}
}

func TestCanonicalEmpty(t *testing.T) {
	e := &Event{Kind: KindSyscall, Tid: 1, Mem: []Mem{}, In: []Mem{{Addr: 5, Data: []byte{}}},
		Data: []byte{}, Siginfo: []byte{}}
	path := filepath.Join(t.TempDir(), "t.trace")
	writeTrace(t, path, []*Event{e}, nil)
	_, got, _, _, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	want := &Event{Kind: KindSyscall, Tid: 1, In: []Mem{{Addr: 5}}}
	compareEvents(t, got, []*Event{want})
}

func TestRegOrder(t *testing.T) {
	var seen [len(Regs{})]bool
	var names []string
	for _, r := range regOrder {
		if seen[r] {
			t.Fatalf("register %s twice in regOrder", RegNames[r])
		}
		seen[r] = true
		names = append(names, RegNames[r])
	}
	// The order is documented in format.go.
	const doc = "rax rip rcx r11 orig_rax rdx rsi rdi r10 r8 r9 rsp rbp rbx r12 r13 r14 r15 eflags fs_base gs_base cs ss ds es fs gs"
	if got := strings.Join(names, " "); got != doc {
		t.Errorf("regOrder is\n%s\nthe format documentation says\n%s", got, doc)
	}
}

func TestHeaderVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.trace")
	h := testHeader()
	h.FormatVersion = 99
	w, err := Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	if h.FormatVersion != 99 {
		t.Error("Create changed the caller's header")
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Header().FormatVersion != CurrentVersion {
		t.Errorf("FormatVersion %d", r.Header().FormatVersion)
	}
	if r.Footer() == nil || r.Footer().Events != 0 {
		t.Errorf("footer %+v", r.Footer())
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next: %v, want EOF", err)
	}
}

func TestBlobs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	blobs := [][]byte{
		{},
		{42},
		randBytes(rng, 1<<20),
		bytes.Repeat([]byte("compressible "), 300000),
		randBytes(rng, 1000),
	}
	path := filepath.Join(t.TempDir(), "t.trace")
	w := createTest(t, path)
	var want []*Event
	for i, b := range blobs {
		for _, e := range genEvents(rng, 50, someFields) {
			want = append(want, canon(e))
			if err := w.Append(e); err != nil {
				t.Fatal(err)
			}
		}
		buf := bytes.Clone(b)
		id, err := w.AddBlob(buf)
		if err != nil {
			t.Fatal(err)
		}
		if id != uint32(i) {
			t.Errorf("blob id %d, want %d", id, i)
		}
		clear(buf) // AddBlob must have copied it
		e := &Event{Kind: KindSyscall, Tid: 1, Syscall: 9, Map: &MapFile{Blob: id, Length: uint64(len(b))}}
		want = append(want, canon(e))
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := closeAndOpen(t, w, nil, path)
	defer r.Close()
	if r.Blobs() != len(blobs) || r.Footer().Blobs != len(blobs) {
		t.Errorf("Blobs() = %d, footer %d, want %d", r.Blobs(), r.Footer().Blobs, len(blobs))
	}
	// Blobs are readable before, during and after reading the events.
	for id := len(blobs) - 1; id >= 0; id-- {
		got, err := r.Blob(uint32(id))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, blobs[id]) {
			t.Errorf("blob %d: %d bytes differ from the %d written", id, len(got), len(blobs[id]))
		}
	}
	var got []*Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if e.Map != nil && e.Kind == KindSyscall && e.Syscall == 9 {
			b, err := r.Blob(e.Map.Blob)
			if err != nil || len(b) != int(e.Map.Length) {
				t.Errorf("blob %d: %d bytes, %v", e.Map.Blob, len(b), err)
			}
		}
		got = append(got, e)
	}
	compareEvents(t, got, want)
	if _, err := r.Blob(uint32(len(blobs))); err == nil {
		t.Error("Blob of a missing id succeeded")
	}
	if w := r.Truncated(); w != "" {
		t.Errorf("Truncated() = %q", w)
	}
}

func TestVersions(t *testing.T) {
	data, _, _ := buildTrace(t, 1, 1)
	dir := t.TempDir()
	for _, tt := range []struct {
		version uint32
		want    string
	}{
		{CurrentVersion + 1, fmt.Sprintf("trace format version %d is newer than this rewind supports (%d); upgrade rewind", CurrentVersion+1, CurrentVersion)},
		{0, "invalid trace format version 0"},
	} {
		d := bytes.Clone(data)
		binary.LittleEndian.PutUint32(d[len(Magic):], tt.version)
		path := filepath.Join(dir, "t.trace")
		if err := os.WriteFile(path, d, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(path)
		if err == nil || err.Error() != path+": "+tt.want {
			t.Errorf("version %d: %v", tt.version, err)
		}
		if errors.Is(err, ErrNewerVersion) != (tt.version > CurrentVersion) {
			t.Errorf("version %d: errors.Is(ErrNewerVersion) wrong", tt.version)
		}
	}
	// Version 1 (before KindEnd and Header.CPU) still reads.
	d := bytes.Clone(data)
	binary.LittleEndian.PutUint32(d[len(Magic):], 1)
	if _, _, err := readBytes(d); err != nil {
		t.Errorf("version 1: %v", err)
	}
	// Only the preamble: not enough for a trace, but recognized as one.
	if _, _, err := readBytes(data[:PreambleSize]); err == nil || errors.Is(err, ErrNotTrace) {
		t.Errorf("preamble only: %v", err)
	}
}
