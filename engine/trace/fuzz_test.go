package trace

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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
// them past the CRC check), and as a whole file (the preamble and the
// header frame too). Reading must never panic.
func FuzzReader(f *testing.F) {
	prefix := fuzzPrefix(f)
	enc, err := newEncoder()
	if err != nil {
		f.Fatal(err)
	}

	// Seeds: the frames of real traces, cut and whole, and raw event payloads.
	rng := rand.New(rand.NewPCG(13, 14))
	path := filepath.Join(f.TempDir(), "t.trace")
	w := createTest(f, path)
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
		f.Add(data)
		f.Add(body)
		f.Add(body[:len(body)/2])
	}
	data, _, _ := buildTrace(f, 2, 3)
	f.Add(data[len(prefix):])
	f.Add(payload)
	f.Add(payload[:len(payload)-3])
	f.Add([]byte{})
	f.Add(prefix)
	f.Add(prefix[:len(prefix)-1])
	f.Add(appendFrame(appendPreamble(nil), enc, FrameHeader, []byte(`{"format_version":1,"args":[""],"rlimits":{"x":[1,2]},"cpu":-1}`)))
	f.Add(appendFrame(appendPreamble(nil), enc, FrameHeader, []byte(`[`)))
	f.Add([]byte{byte(KindSyscall), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})

	f.Fuzz(func(t *testing.T, in []byte) {
		// A whole file.
		readFuzz(t, in, false)

		// Raw frames after the header.
		readFuzz(t, append(bytes.Clone(prefix), in...), true)

		// The same bytes as the payload of valid frames.
		file := bytes.Clone(prefix)
		file = appendFrame(file, enc, FrameEvents, in)
		file = appendFrame(file, enc, FrameBlob, in)
		file = appendFrame(file, enc, FrameEvents, in)
		file = appendFrame(file, enc, FrameFooter, in)
		readFuzz(t, file, true)
	})
}

// readFuzz reads a whole trace file. A file whose header is valid must be
// opened; any other may be refused.
func readFuzz(t *testing.T, file []byte, validHeader bool) {
	r, err := newReader(bytes.NewReader(file), int64(len(file)), "fuzz")
	if err != nil {
		if validHeader {
			t.Fatalf("valid header refused: %v", err)
		}
		return
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

// TestFrameSizeClaims opens traces whose header frame claims a huge
// decompressed size, in its frame header or in the zstd frame's: they are
// refused without allocating what they claim.
func TestFrameSizeClaims(t *testing.T) {
	// A zstd frame with a 1 KiB window, a content size of fcs and one
	// empty raw block.
	zstdFrame := func(fcs uint32) []byte {
		return binary.LittleEndian.AppendUint32([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x80, 0x00}, fcs)[:10:10]
	}
	for _, c := range []struct {
		name string
		ulen uint32
		comp []byte
	}{
		{"zstd content size", 16, append(zstdFrame(0xfffffff0), 0x01, 0x00, 0x00)},
		{"frame header size", 0xfffffff0, append(zstdFrame(16), 0x01, 0x00, 0x00)},
		{"both", 0xfffffff0, append(zstdFrame(0xfffffff0), 0x01, 0x00, 0x00)},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := make([]byte, FrameHeaderSize)
			h[0] = FrameHeader
			binary.LittleEndian.PutUint32(h[1:], uint32(len(c.comp)))
			binary.LittleEndian.PutUint32(h[5:], c.ulen)
			binary.LittleEndian.PutUint32(h[9:], crc32.Checksum(c.comp, castagnoli))
			file := append(append(appendPreamble(nil), h...), c.comp...)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := newReader(bytes.NewReader(file), int64(len(file)), "bomb")
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "frame 0") {
				t.Errorf("open: %v, want an error about frame 0", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
				t.Errorf("a %d-byte file allocated %d MiB", len(file), n>>20)
			}
		})
	}
}
