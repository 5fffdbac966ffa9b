package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// buildTrace writes a trace in memory: nFrames event frames of perFrame
// events each, a blob after the first frame, then a footer. It returns the
// file, the offsets of all frames and the events.
func buildTrace(t testing.TB, nFrames, perFrame int) ([]byte, []int64, []*Event) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	path := filepath.Join(t.TempDir(), "t.trace")
	w := createTest(t, path)
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
	for off := int64(PreambleSize); off < int64(len(data)); {
		offs = append(offs, off)
		off += FrameHeaderSize + int64(binary.LittleEndian.Uint32(data[off+1:]))
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
		{name: "header payload", at: offs[0] + FrameHeaderSize + 3, openErr: "mem: the header (frame 0) fails its CRC check"},
		{name: "header type", at: offs[0], openErr: "frame 0 at offset 12: unknown frame type 129"},
		{name: "first events payload", at: offs[1] + FrameHeaderSize + 1, events: 0, cond: Damaged, footer: true,
			msg: damaged(1, 0)},
		{name: "middle events crc", at: offs[4] + 9, events: 2 * perFrame, cond: Damaged, footer: true,
			msg: damaged(4, 2*perFrame)},
		{name: "middle events payload", at: offs[4] + FrameHeaderSize + 10, events: 2 * perFrame, cond: Damaged, footer: true,
			msg: damaged(4, 2*perFrame)},
		{name: "last events payload", at: offs[6] + FrameHeaderSize + 5, events: 4 * perFrame, cond: Damaged, footer: true,
			msg: damaged(6, 4*perFrame)},
		{name: "frame type", at: offs[5], events: 3 * perFrame, cond: Damaged,
			msg: fmt.Sprintf("damaged trace: frame 5 at offset %d is unreadable (unknown frame type 130); %d events usable, the last %d bytes of the file cannot be read",
				offs[5], 3*perFrame, int64(len(data))-offs[5])},
		// A length beyond the end of the file looks like a file cut there.
		{name: "frame length", at: offs[5] + 4, events: 3 * perFrame, cond: Unfinished,
			msg: fmt.Sprintf("the recording did not finish: the file ends inside frame 5 (events from #%d); %d events usable", 3*perFrame, 3*perFrame)},
		// No event maps the blob: the events are all usable.
		{name: "blob payload", at: offs[2] + FrameHeaderSize + 20, events: nFrames * perFrame, cond: Complete, footer: true, badBlob: true},
		{name: "footer payload", at: offs[7] + FrameHeaderSize + 2, events: nFrames * perFrame, cond: Damaged,
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
	w := createTest(t, path)
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
	data[offs[2]+FrameHeaderSize+100] ^= 1
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

func TestPartialReadable(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	path := filepath.Join(t.TempDir(), "t.trace")
	w := createTest(t, path)
	partial := w.Partial()
	if !strings.HasPrefix(partial, path+".") || !strings.HasSuffix(partial, ".partial") {
		t.Errorf("Partial() = %q, want %s.NNNN.partial", partial, path)
	}

	// Right after Create, once written (Flush): the header alone.
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
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
