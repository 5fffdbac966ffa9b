package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
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

// writeTrace writes events to path (and blobs first) and closes it.
func writeTrace(t testing.TB, path string, evs []*Event, foot *Footer) {
	t.Helper()
	w, err := Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(foot); err != nil {
		t.Fatal(err)
	}
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
			w, err := Create(path, testHeader())
			if err != nil {
				t.Fatal(err)
			}
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
	w, err := Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
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
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}

	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
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

// buildTrace writes a trace in memory: nFrames event frames of perFrame
// events each, a blob after the first frame, then a footer. It returns the
// file, the offsets of all frames and the events.
func buildTrace(t testing.TB, nFrames, perFrame int) ([]byte, []int64, []*Event) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	path := filepath.Join(t.TempDir(), "t.trace")
	w, err := Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	var evs []*Event
	for i := range nFrames {
		for _, e := range genEvents(rng, perFrame, someFields) {
			evs = append(evs, canon(e))
			if err := w.Append(e); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if _, err := w.AddBlob(randBytes(rng, 3000)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data, frameOffsets(data), evs
}

// frameOffsets returns where each frame of a complete trace starts.
func frameOffsets(data []byte) []int64 {
	var offs []int64
	for off := int64(preambleSize); off < int64(len(data)); {
		offs = append(offs, off)
		off += frameHeaderSize + int64(binary.LittleEndian.Uint32(data[off+1:]))
	}
	return offs
}

// readBytes reads a trace from memory, like ReadAll.
func readBytes(data []byte) (*Reader, []*Event, error) {
	r, err := newReader(bytes.NewReader(data), int64(len(data)), "mem")
	if err != nil {
		return nil, nil, err
	}
	var evs []*Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			return r, evs, nil
		}
		if err != nil {
			return r, evs, err
		}
		evs = append(evs, e)
	}
}

func TestTruncated(t *testing.T) {
	const nFrames, perFrame = 5, 12
	data, offs, evs := buildTrace(t, nFrames, perFrame)
	// Frames: 0 header, 1 events, 2 blob, 3..6 events, 7 footer.
	if len(offs) != nFrames+3 {
		t.Fatalf("%d frames, want %d", len(offs), nFrames+3)
	}
	frameEnd := func(i int) int64 {
		if i+1 < len(offs) {
			return offs[i+1]
		}
		return int64(len(data))
	}
	// eventsBefore is the number of events in complete frames before cut.
	eventsBefore := func(cut int64) int {
		n := 0
		for i, off := range offs {
			if frameEnd(i) <= cut && off != offs[2] && i != 0 && i != len(offs)-1 {
				n += perFrame
			}
		}
		return n
	}
	var cuts []int64
	for _, i := range []int{3, len(offs) - 2, len(offs) - 1} { // a middle frame, the last events frame, the footer
		for c := offs[i]; c < frameEnd(i); c++ {
			cuts = append(cuts, c)
		}
	}
	for _, cut := range cuts {
		r, got, err := readBytes(data[:cut])
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		want := evs[:eventsBefore(cut)]
		if len(got) != len(want) {
			t.Fatalf("cut at %d: read %d events, want %d", cut, len(got), len(want))
		}
		compareEvents(t, got, want)
		st := r.Status()
		if st.Condition != Unfinished || st.Usable != int64(len(want)) || st.Total != -1 || st.Message != r.Truncated() {
			t.Fatalf("cut at %d: Status() = %+v, Truncated() = %q", cut, st, r.Truncated())
		}
		if r.Footer() != nil {
			t.Fatalf("cut at %d: footer %+v", cut, r.Footer())
		}
		if _, err := r.Blob(0); err != nil {
			t.Fatalf("cut at %d: blob: %v", cut, err)
		}
	}

	// Some precise messages: before Next reaches the end, Truncated says
	// what Open found; after, and from Status, it has the counts.
	for _, tt := range []struct {
		cut          int64
		before, want string
	}{
		{offs[4] + 5, fmt.Sprintf("the trace ends early: frame 4 at offset %d incomplete", offs[4]),
			fmt.Sprintf("the recording did not finish: the file ends inside frame 4 (events from #%d); %d events usable", 2*perFrame, 2*perFrame)},
		{offs[2] + 5, fmt.Sprintf("the trace ends early: frame 2 at offset %d incomplete", offs[2]),
			fmt.Sprintf("the recording did not finish: the file ends inside frame 2 (blob 0); %d events usable", perFrame)},
		{offs[4], "the recording did not finish (the trace has no footer)",
			fmt.Sprintf("the recording did not finish (the trace has no footer); %d events usable", 2*perFrame)},
		{int64(len(data)) - 1, fmt.Sprintf("the trace ends early: frame 7 at offset %d incomplete", offs[7]),
			fmt.Sprintf("the recording did not finish: the file ends inside the footer (frame 7); %d events usable", nFrames*perFrame)},
	} {
		r, err := newReader(bytes.NewReader(data[:tt.cut]), tt.cut, "mem")
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Truncated(); got != tt.before {
			t.Errorf("cut at %d: Truncated() before Next = %q, want %q", tt.cut, got, tt.before)
		}
		if got := r.Status().Message; got != tt.want {
			t.Errorf("cut at %d: Status().Message = %q, want %q", tt.cut, got, tt.want)
		}
		if got := r.Truncated(); got != tt.want {
			t.Errorf("cut at %d: Truncated() after Status = %q, want %q", tt.cut, got, tt.want)
		}
	}

	// Cuts in the preamble and the header frame make Open fail, cleanly;
	// once the magic is there, with a message that says why.
	for cut := int64(0); cut < offs[1]; cut++ {
		_, _, err := readBytes(data[:cut])
		if err == nil {
			t.Fatalf("cut at %d: no error", cut)
		}
		if cut >= int64(len(Magic)) && !strings.Contains(err.Error(), "the file ends inside its header") {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
}

func TestCorruption(t *testing.T) {
	const nFrames, perFrame = 5, 40
	data, offs, evs := buildTrace(t, nFrames, perFrame)
	// Frames: 0 header, 1 events, 2 blob, 3..6 events, 7 footer.
	damaged := func(frame, first int) string {
		lost := fmt.Sprintf("frames %d–6", frame)
		if frame == 6 {
			lost = "frame 6"
		}
		return fmt.Sprintf("damaged trace: frame %d (events #%d–#%d) fails its CRC check; %d of %d events usable, %d lost (%s)",
			frame, first, first+perFrame-1, first, nFrames*perFrame, nFrames*perFrame-first, lost)
	}
	tests := []struct {
		name    string
		at      int64 // byte to flip
		openErr string
		events  int
		cond    Condition
		msg     string // Status().Message
		footer  bool
		badBlob bool
	}{
		{name: "header payload", at: offs[0] + frameHeaderSize + 3, openErr: "mem: the header (frame 0) fails its CRC check"},
		{name: "header type", at: offs[0], openErr: "frame 0 at offset 12: unknown frame type 129"},
		{name: "first events payload", at: offs[1] + frameHeaderSize + 1, events: 0, cond: Damaged, footer: true,
			msg: damaged(1, 0)},
		{name: "middle events crc", at: offs[4] + 9, events: 2 * perFrame, cond: Damaged, footer: true,
			msg: damaged(4, 2*perFrame)},
		{name: "middle events payload", at: offs[4] + frameHeaderSize + 10, events: 2 * perFrame, cond: Damaged, footer: true,
			msg: damaged(4, 2*perFrame)},
		{name: "last events payload", at: offs[6] + frameHeaderSize + 5, events: 4 * perFrame, cond: Damaged, footer: true,
			msg: damaged(6, 4*perFrame)},
		{name: "frame type", at: offs[5], events: 3 * perFrame, cond: Damaged,
			msg: fmt.Sprintf("damaged trace: frame 5 at offset %d is unreadable (unknown frame type 130); %d events usable, the last %d bytes of the file cannot be read",
				offs[5], 3*perFrame, int64(len(data))-offs[5])},
		// A length beyond the end of the file looks like a file cut there.
		{name: "frame length", at: offs[5] + 4, events: 3 * perFrame, cond: Unfinished,
			msg: fmt.Sprintf("the recording did not finish: the file ends inside frame 5 (events from #%d); %d events usable", 3*perFrame, 3*perFrame)},
		// No event maps the blob: the events are all usable.
		{name: "blob payload", at: offs[2] + frameHeaderSize + 20, events: nFrames * perFrame, cond: Complete, footer: true, badBlob: true},
		{name: "footer payload", at: offs[7] + frameHeaderSize + 2, events: nFrames * perFrame, cond: Damaged,
			msg: fmt.Sprintf("damaged trace: the footer (frame 7) fails its CRC check; %d events usable (the footer's count of them is lost)", nFrames*perFrame)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := bytes.Clone(data)
			bad[tt.at] ^= 0x80
			r, got, err := readBytes(bad)
			if tt.openErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.openErr) {
					t.Fatalf("Open: %v, want %q", err, tt.openErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			compareEvents(t, got, evs[:tt.events])
			st := r.Status()
			if st.Condition != tt.cond || st.Usable != int64(tt.events) || st.Message != tt.msg {
				t.Errorf("Status() = %+v, want %v, %d events usable, message %q", st, tt.cond, tt.events, tt.msg)
			}
			if warn := r.Truncated(); warn != tt.msg {
				t.Errorf("Truncated() = %q, want %q", warn, tt.msg)
			}
			if (r.Footer() != nil) != tt.footer {
				t.Errorf("footer %+v", r.Footer())
			}
			_, err = r.Blob(0)
			if (err != nil) != tt.badBlob {
				t.Errorf("Blob(0): %v", err)
			}
			if err != nil && !strings.Contains(err.Error(), "crc mismatch") {
				t.Errorf("Blob(0): %v", err)
			}

			// Check, which skips decoding when the footer indexes the
			// frames, agrees with reading every event.
			path := filepath.Join(t.TempDir(), "t.trace")
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			cst, err := Check(path)
			if err != nil {
				t.Fatal(err)
			}
			if cst != st {
				t.Errorf("Check() = %+v, want %+v", cst, st)
			}
		})
	}
}

// TestDamagedBlob damages a blob that an event maps: the events before that
// one are usable, and the message names the frame, the blob and the event.
func TestDamagedBlob(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	path := filepath.Join(t.TempDir(), "t.trace")
	w, err := Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	appendAll := func(evs []*Event) {
		for _, e := range evs {
			e.Map = nil // only the event below maps a blob
			if err := w.Append(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendAll(genEvents(rng, 30, someFields))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	id, err := w.AddBlob(randBytes(rng, 5000))
	if err != nil {
		t.Fatal(err)
	}
	appendAll(genEvents(rng, 7, someFields))
	if err := w.Append(&Event{Kind: KindSyscall, Tid: 1, Syscall: 9, Map: &MapFile{Blob: id, Length: 5000, Path: "/lib/libx.so"}}); err != nil {
		t.Fatal(err)
	}
	appendAll(genEvents(rng, 20, someFields))
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Frames: 0 header, 1 events, 2 blob, 3 events, 4 footer.
	offs := frameOffsets(data)
	data[offs[2]+frameHeaderSize+100] ^= 1
	r, got, err := readBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	st := r.Status()
	want := "damaged trace: frame 2 (blob 0, /lib/libx.so) fails its CRC check, and event #37 maps it; 37 of 58 events usable, 21 lost"
	if len(got) != 37 || st.Condition != Damaged || st.Usable != 37 || st.Total != 58 || st.Message != want {
		t.Errorf("read %d events; Status() = %+v, want message %q", len(got), st, want)
	}
}

func TestNotATrace(t *testing.T) {
	dir := t.TempDir()
	for _, content := range []string{"RWND", "#!/bin/sh\necho hello\n", "RWNDTRC\x01\x01\x00\x00\x00"} {
		path := filepath.Join(dir, "x")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(path)
		if !errors.Is(err, ErrNotTrace) || err.Error() != "not a rewind trace: "+path {
			t.Errorf("%q: %v", content, err)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestEmptyReservation opens the empty file that claims a trace's name
// while its recording runs (or after it was killed): the message says so,
// and names the .partial file that holds the events.
func TestEmptyReservation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p[1]-1.rwd") // a glob character in the name
	p, err := Reserve(path, true)
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.Start(testHeader())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	want := fmt.Sprintf("not a rewind trace: %s is empty: the name reserved by a recording that has not finished (still running, or killed); what it recorded is in %s",
		path, w.Partial())
	if !errors.Is(err, ErrNotTrace) || err == nil || err.Error() != want {
		t.Errorf("Open of the reservation: %v, want %q", err, want)
	}
	w.Abort()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(w.Partial()); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	if !errors.Is(err, ErrNotTrace) || !strings.Contains(err.Error(), path+" is empty (") {
		t.Errorf("Open of an empty file: %v", err)
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
	if _, _, err := readBytes(data[:preambleSize]); err == nil || errors.Is(err, ErrNotTrace) {
		t.Errorf("preamble only: %v", err)
	}
}

func TestPartialReadable(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	path := filepath.Join(t.TempDir(), "t.trace")
	w, err := Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	partial := w.Partial()
	if !strings.HasPrefix(partial, path+".") || !strings.HasSuffix(partial, ".partial") {
		t.Errorf("Partial() = %q, want %s.NNNN.partial", partial, path)
	}

	// Right after Create: the header alone.
	r, err := Open(partial)
	if err != nil {
		t.Fatal(err)
	}
	if w := r.Truncated(); w != "the recording did not finish (the trace has no footer)" {
		t.Errorf("Truncated() before Next = %q", w)
	}
	r.Close()
	h, got, f, warn, err := ReadAll(partial)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h, testHeader()) || len(got) != 0 || f != nil ||
		warn != "the recording did not finish (the trace has no footer); 0 events usable" {
		t.Errorf("after Create: %+v %d %+v %q", h, len(got), f, warn)
	}

	var want []*Event
	for range 3 {
		for _, e := range genEvents(rng, 100, someFields) {
			want = append(want, canon(e))
			if err := w.Append(e); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		_, got, f, warn, err := ReadAll(partial)
		if err != nil {
			t.Fatal(err)
		}
		compareEvents(t, got, want)
		if f != nil || warn != fmt.Sprintf("the recording did not finish (the trace has no footer); %d events usable", len(want)) {
			t.Errorf("footer %+v, warning %q", f, warn)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("final file exists before Close: %v", err)
		}
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	_, got, _, warn, err = ReadAll(path)
	if err != nil || warn != "" {
		t.Fatal(err, warn)
	}
	compareEvents(t, got, want)
}

func TestAbort(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	path := filepath.Join(t.TempDir(), "t.trace")
	w, err := Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	var want []*Event
	for _, e := range genEvents(rng, 3000, someFields) {
		want = append(want, canon(e))
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Abort()
	w.Abort() // harmless
	if err := w.Append(want[0]); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Abort: %v", err)
	}
	if err := w.Close(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Close after Abort: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("final file exists after Abort: %v", err)
	}
	_, got, f, warn, err := ReadAll(w.Partial())
	if err != nil {
		t.Fatal(err)
	}
	compareEvents(t, got, want)
	if f != nil || warn != fmt.Sprintf("the recording did not finish (the trace has no footer); %d events usable", len(want)) {
		t.Errorf("footer %+v, warning %q", f, warn)
	}
}

func TestWriterError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.trace")
	w, err := Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	w.f.Close() // make every write fail
	e := &Event{Kind: KindSyscall, Tid: 1, Data: make([]byte, 1000)}
	for i := 0; err == nil && i < 10000; i++ {
		err = w.Append(e)
	}
	if err == nil {
		err = w.Flush()
	}
	if !errors.Is(err, ErrWrite) || !strings.Contains(err.Error(), "cannot write the trace: writing frame 1 at offset") {
		t.Fatalf("no error surfaced: %v", err)
	}
	if err := w.Close(nil); err == nil {
		t.Error("Close succeeded")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("final file exists after a failed Close: %v", err)
	}
}

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
	w, err := Create(path, testHeader())
	if err != nil {
		b.Fatal(err)
	}
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

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestReserve checks how a trace takes its name and its .partial file, and
// what each way of ending leaves in the directory.
func TestReserve(t *testing.T) {
	partialRE := regexp.MustCompile(`^t\.rwd\.\d+\.partial$`)
	tests := []struct {
		name      string
		existing  string // "file" or "dir" at the trace's path beforehand
		exclusive bool
		end       string // "close", "abort", "discard"
		err       error  // of Reserve
		left      string // what is left at path: "trace", "old", "none", "empty"
		partial   bool   // a .partial file is left
	}{
		{name: "new name, closed", exclusive: true, end: "close", left: "trace"},
		{name: "new name, aborted", exclusive: true, end: "abort", left: "none", partial: true},
		{name: "new name, discarded", exclusive: true, end: "discard", left: "none"},
		{name: "taken name", existing: "file", exclusive: true, err: fs.ErrExist, left: "old"},
		{name: "replace, closed", existing: "file", end: "close", left: "trace"},
		{name: "replace, aborted", existing: "file", end: "abort", left: "old", partial: true},
		{name: "directory", existing: "dir", err: ErrWrite},
		{name: "directory, exclusive", existing: "dir", exclusive: true, err: fs.ErrExist},
		// -o /dev/null once replaced the device by the trace.
		{name: "FIFO", existing: "fifo", err: ErrWrite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "t.rwd")
			switch tt.existing {
			case "file":
				writeTestFile(t, path, "old")
			case "dir":
				if err := os.Mkdir(path, 0o755); err != nil {
					t.Fatal(err)
				}
			case "fifo":
				if err := syscall.Mkfifo(path, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, err := Reserve(path, tt.exclusive)
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("Reserve: %v, want %v", err, tt.err)
			}
			if err != nil {
				if names := dirNames(t, dir); len(names) != 1 || names[0] != "t.rwd" {
					t.Errorf("a failed Reserve left %q", names)
				}
				return
			}
			if !partialRE.MatchString(filepath.Base(p.Partial())) {
				t.Errorf("Partial() = %q", p.Partial())
			}
			if st, err := os.Stat(path); tt.exclusive && (err != nil || st.Size() != 0) {
				t.Errorf("the name is not reserved: %v", err)
			}
			switch tt.end {
			case "discard":
				p.Discard()
				p.Discard()
			default:
				w, err := p.Start(testHeader())
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Append(&Event{Kind: KindExec, Tid: 1}); err != nil {
					t.Fatal(err)
				}
				if tt.end == "close" {
					err = w.Close(nil)
				} else {
					w.Abort()
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(path)
			var got string
			switch {
			case errors.Is(err, fs.ErrNotExist):
				got = "none"
			case err != nil:
				t.Fatal(err)
			case string(data) == "old":
				got = "old"
			case len(data) == 0:
				got = "empty"
			default:
				got = "trace"
				if st, err := Check(path); err != nil || st.Condition != Complete || st.Usable != 1 {
					t.Errorf("Check: %+v, %v", st, err)
				}
			}
			if got != tt.left {
				t.Errorf("left %s at the trace's path, want %s", got, tt.left)
			}
			var partials []string
			for _, n := range dirNames(t, dir) {
				if partialRE.MatchString(n) {
					partials = append(partials, n)
				}
			}
			if len(partials) != map[bool]int{false: 0, true: 1}[tt.partial] {
				t.Fatalf("left .partial files %q, want %v", partials, tt.partial)
			}
			if tt.partial {
				st, err := Check(filepath.Join(dir, partials[0]))
				if err != nil || st.Condition != Unfinished || st.Usable != 1 {
					t.Errorf("the .partial file: %+v, %v", st, err)
				}
			}
		})
	}
}

// TestReserveErrors checks the failures Reserve catches before a recording
// starts, and a Close that cannot put the trace in place.
func TestReserveErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Reserve(filepath.Join(dir, "missing", "t.rwd"), true); !errors.Is(err, ErrWrite) {
		t.Errorf("Reserve in a missing directory: %v, want ErrWrite", err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Reserve(sub, false); !errors.Is(err, ErrWrite) || !strings.Contains(err.Error(), "it is a directory") {
		t.Errorf("Reserve of a directory: %v", err)
	}

	// Something takes the trace's place during the recording: Close fails,
	// keeps the .partial file and does not remove what is there.
	path := filepath.Join(dir, "t.rwd")
	w, err := Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(nil); !errors.Is(err, ErrWrite) {
		t.Errorf("Close over a directory: %v, want ErrWrite", err)
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		t.Errorf("the directory is gone: %v", err)
	}
	if _, err := Check(w.Partial()); err != nil {
		t.Errorf("the .partial file: %v", err)
	}
}

// TestReserveConcurrent takes names as concurrent recordings do: each
// claims the first free t-N.rwd, and all get distinct, valid traces.
func TestReserveConcurrent(t *testing.T) {
	const n = 16
	dir := t.TempDir()
	paths := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for k := 1; ; k++ {
				path := filepath.Join(dir, fmt.Sprintf("t-%d.rwd", k))
				p, err := Reserve(path, true)
				if errors.Is(err, fs.ErrExist) {
					continue
				}
				if err != nil {
					errs[i] = err
					return
				}
				w, err := p.Start(testHeader())
				if err == nil {
					if err = w.Append(&Event{Kind: KindExec, Tid: int32(i + 1)}); err == nil {
						err = w.Close(nil)
					}
				}
				paths[i], errs[i] = path, err
				return
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if seen[paths[i]] {
			t.Errorf("%s taken twice", paths[i])
		}
		seen[paths[i]] = true
		_, evs, _, warn, err := ReadAll(paths[i])
		if err != nil || warn != "" || len(evs) != 1 || evs[0].Tid != int32(i+1) {
			t.Errorf("%s: %d events, %q, %v", paths[i], len(evs), warn, err)
		}
	}
	if names := dirNames(t, dir); len(names) != n {
		t.Errorf("directory holds %q, want the %d traces alone", names, n)
	}
}

// writeTestFile writes a file or fails the test.
func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
