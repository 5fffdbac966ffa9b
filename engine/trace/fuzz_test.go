package trace

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// fuzzPrefix returns the preamble and a valid header frame.
func fuzzPrefix(t testing.TB) []byte {
	enc, err := newEncoder()
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	hj, err := json.Marshal(testHeader())
	if err != nil {
		t.Fatal(err)
	}
	return appendFrame(appendPreamble(nil), enc, FrameHeader, hj)
}

// FuzzReader reads arbitrary bytes after a valid header, both as raw frames
// and wrapped in valid event and blob frames (so that the event decoder sees
// them past the CRC check). Reading must never panic.
func FuzzReader(f *testing.F) {
	prefix := fuzzPrefix(f)

	// Seeds: the frames of real traces, cut and whole, and raw event payloads.
	rng := rand.New(rand.NewPCG(13, 14))
	path := filepath.Join(f.TempDir(), "t.trace")
	w, err := Create(path, testHeader())
	if err != nil {
		f.Fatal(err)
	}
	c := newCodec()
	var payload []byte
	for i, e := range genEvents(rng, 30, someFields) {
		if i < 8 {
			payload = c.appendEvent(payload, e)
		}
		if err := w.Append(e); err != nil {
			f.Fatal(err)
		}
		if i%10 == 0 {
			if _, err := w.AddBlob(randBytes(rng, 40)); err != nil {
				f.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				f.Fatal(err)
			}
		}
	}
	if err := w.Close(&Footer{Exited: true}); err != nil {
		f.Fatal(err)
	}
	for _, p := range []string{path} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		body := data[len(prefix):]
		f.Add(body)
		f.Add(body[:len(body)/2])
	}
	data, _, _ := buildTrace(f, 2, 3)
	f.Add(data[len(prefix):])
	f.Add(payload)
	f.Add(payload[:len(payload)-3])
	f.Add([]byte{})
	f.Add([]byte{byte(KindSyscall), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})

	enc, err := newEncoder()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		// Raw frames after the header.
		readFuzz(t, append(bytes.Clone(prefix), in...))

		// The same bytes as the payload of valid frames.
		file := bytes.Clone(prefix)
		file = appendFrame(file, enc, FrameEvents, in)
		file = appendFrame(file, enc, FrameBlob, in)
		file = appendFrame(file, enc, FrameEvents, in)
		file = appendFrame(file, enc, FrameFooter, in)
		readFuzz(t, file)
	})
}

func readFuzz(t *testing.T, file []byte) {
	r, err := newReader(bytes.NewReader(file), int64(len(file)), "fuzz")
	if err != nil {
		t.Fatalf("valid header refused: %v", err)
	}
	var n int64
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil || e == nil {
			t.Fatalf("Next: %v, %v", e, err)
		}
		n++
	}
	if st := r.Status(); st.Usable != n || (st.Condition == Complete) != (st.Message == "") || st.Message != r.Truncated() {
		t.Fatalf("read %d events, Status() = %+v, Truncated() = %q", n, st, r.Truncated())
	}
	_ = r.Footer()
	for id := range r.Blobs() {
		r.Blob(uint32(id))
	}
	r.Blob(uint32(r.Blobs()))
}
