package trace

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// Big blobs at the end of a recording. A file seen for the first time (a
// freshly built 26 MB executable, its libraries) is compressed into the
// trace by the writer's one goroutine, 3–5 ms a MB here, while the program
// runs on its own CPU; a short program ends first, and the end of the
// recording waited ~100 ms for the rest, one CPU busy and the others idle.
// A big blob is compressed in frames of tailChunk bytes (the trace's
// readers decode frames one after the other): one after the other while
// the recording goes on, so that the program keeps its CPU, and, once the
// writer is closing (the program has ended), the rest on every CPU at
// once.

// tailChunk is the size of a big blob's frames, and the size from which a
// blob is split (twice it).
const tailChunk = 4 << 20

// tailEncoder compresses big blobs for a Writer (its tail is set when the
// writer starts closing).
type tailEncoder struct {
	tail  atomic.Bool
	extra []*zstd.Encoder // the other CPUs', made when first needed
}

// compress appends src compressed with enc to dst, as compress does, in
// frames of tailChunk bytes when src is big and compresses.
func (t *tailEncoder) compress(enc *zstd.Encoder, src, dst []byte) []byte {
	if len(src) < 2*tailChunk {
		return compress(enc, src, dst)
	}
	if !compressible(enc, src) {
		return appendRawFrame(dst, src) // (compress would sample it again)
	}
	for len(src) > 0 && !t.tail.Load() {
		n := min(tailChunk, len(src))
		dst = enc.EncodeAll(src[:n], dst)
		src = src[n:]
	}
	if len(src) == 0 {
		return dst
	}
	var chunks [][]byte
	for ; len(src) > 0; src = src[min(tailChunk, len(src)):] {
		chunks = append(chunks, src[:min(tailChunk, len(src))])
	}
	encs := append([]*zstd.Encoder{enc}, t.encoders(min(runtime.GOMAXPROCS(0), len(chunks))-1)...)
	outs := make([][]byte, len(chunks))
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, e := range encs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(chunks); i = int(next.Add(1) - 1) {
				outs[i] = e.EncodeAll(chunks[i], make([]byte, 0, len(chunks[i])/2))
			}
		}()
	}
	wg.Wait()
	for _, o := range outs {
		dst = append(dst, o...)
	}
	return dst
}

// encoders returns n encoders besides the writer's, made once; fewer where
// one cannot be made.
func (t *tailEncoder) encoders(n int) []*zstd.Encoder {
	for len(t.extra) < n {
		e, err := newEncoder()
		if err != nil {
			break
		}
		t.extra = append(t.extra, e)
	}
	return t.extra[:min(n, len(t.extra))]
}

// close releases the encoders made.
func (t *tailEncoder) close() {
	for _, e := range t.extra {
		e.Close()
	}
	t.extra = nil
}
