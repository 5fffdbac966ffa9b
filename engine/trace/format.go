// # Trace file format, version 3
//
// All integers in fixed-size fields are little-endian. A trace file is:
//
//	magic    8 bytes  "RWNDTRC\x00"
//	version  uint32   format version (CurrentVersion)
//	frames   ...      until the end of the file
//
// Each frame is:
//
//	type     1 byte   FrameHeader, FrameEvents, FrameBlob or FrameFooter
//	clen     uint32   length of the compressed payload
//	ulen     uint32   length of the payload once decompressed
//	crc      uint32   CRC-32C (Castagnoli) of the compressed payload
//	payload  clen bytes, one or more zstd frames
//
// The first frame is always the header frame, the footer frame (when present)
// is always the last one. Frames are appended in order and never rewritten, so
// that a file cut anywhere (a crash, a full disk, a recording still under way)
// is readable up to its last complete frame.
//
// Frame payloads, once decompressed:
//
//   - FrameHeader (1): the JSON encoding of Header.
//   - FrameEvents (2): a batch of encoded events, back to back (see below).
//   - FrameBlob (3): a uint32 blob id followed by the raw bytes of the blob
//     (typically the contents of a file the program mapped). Blob ids are
//     0, 1, 2, … in the order of the blob frames in the file; a blob frame
//     always comes before the events that refer to it.
//   - FrameFooter (4): the JSON encoding of Footer, written by Writer.Close.
//
// # Packed files
//
// rewind pack (and record --with-sources) stores source files and separate
// debug files in the trace, so that the recording debugs on a machine that
// lacks them. Each is an ordinary blob frame (its id, then the file's
// bytes), after the last events frame and before the footer; no event maps
// it. The footer's "packed" list (Footer.Packed, PackedFile) names them:
// kind ("source" or "debug"), path, blob id, size, SHA-256 and, for a debug
// file, the image it belongs to and that image's build-id. Their blob ids
// are the trace's last ones, so that packing again drops and rewrites them
// without renumbering the blobs events map. Pack rewrites the whole file
// beside it and renames it over the original; frames of a file are still
// never rewritten in place. The format version is unchanged: a reader that
// predates packing sees blobs no event maps and a footer field it ignores.
// A trace cut inside its packed files loses their index (the footer) but
// keeps all its events.
//
// # Event encoding
//
// "uvarint" and "varint" are the encodings of encoding/binary (varint is
// zig-zag encoded). An event is:
//
//	kind      1 byte   Event.Kind
//	presence  uvarint  a bitmask of the fields that follow
//	fields    the fields whose presence bit is set, in the order of the bits
//
// Absent fields are zero: a field is present when it is non-zero (non-empty for
// slices, non-nil for Map), except Time and Tid, present when they differ from
// the previous event's. The fields are:
//
//	bit  field      encoding
//	0    Time       varint: Time minus the previous event's Time (any thread)
//	1    Tid        varint; present when it differs from the previous event's
//	2    Regs       regs: delta against the thread's previous Regs
//	3    ExitRegs   regs: delta against this event's Regs, or against the
//	                thread's previous Regs if this event has no Regs
//	4    Syscall    varint
//	5    Flags      uvarint
//	6    Mem        mems: uvarint count, then count × (uvarint Addr,
//	                uvarint length, bytes)
//	7    In         mems
//	8    Map        3 × uvarint: Blob, Offset, Length
//	9    Data       uvarint length, bytes
//	10   Hash       8 bytes
//	11   Signo      varint
//	12   Siginfo    uvarint length, bytes
//	13   Value      varint: Value minus the Value of the previous event that had one
//	14   Aux        uvarint
//	15   StackHash  8 bytes
//	16   Status     varint
//	17   NewTid     varint
//	18   Shared     3 × uvarint: Object, Offset, Size; then uvarint length
//	                and the bytes of Path
//	19   Hooks      uvarint count, then count × (uvarint Site, Stub, Page, Nr)
//	20   Image      uvarint length, the JSON of an Image (KindExec)
//
// A register set ("regs") is a uvarint bitmask of the registers that differ
// from the base registers, then for each of them, in bit order, the varint of
// the wrapping difference new−base. The bits stand for, from bit 0 (the
// registers that change most often first): rax rip rcx r11 orig_rax rdx rsi
// rdi r10 r8 r9 rsp rbp rbx r12 r13 r14 r15 eflags fs_base gs_base cs ss ds es
// fs gs.
//
// A thread's base registers start at zero, become the Regs of each of its
// events that has Regs, and are forgotten at its KindThreadExit. The delta
// state (previous Time, previous Tid, previous Value, per-thread registers)
// runs across frames: event frames must be decoded in file order, from the
// first one.
//
// The KindSyscall event of a getpid loop thus takes about 14 bytes before
// compression and about 2 after (see TestSize).
//
// # Canonical form
//
// Because absent means zero, empty slices (Mem, In, Data, Siginfo and each
// Mem.Data) are read back as nil. Writers may pass either nil or empty.
package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

// CurrentVersion is the trace format version this package writes, and the
// newest one it reads.
//
// Version 2 added KindEnd and Header.CPU; version 3 KindSharedMem and
// Event.Shared; version 4 the flags of the program's own ptrace, emulated
// (FlagSkipped, FlagNoRedo, FlagPtraceStop, FlagSingleStep), which an older
// replay would ignore and diverge on; version 5 the hook page of system
// call buffering (Header.Hook, FlagBuffered, FlagHookSite); version 6
// Event.Hooks, sites patched where known code is mapped again; version 7
// Header.DataHash, preemption points whose data hash an older replay would
// compute otherwise and never find; version 8 Event.Image, the address
// space an exec left, which replay rebuilds where the files differ;
// version 9 Header.Xgetbv and FlagXgetbv, xgetbv sites trapped, which an
// older replay would run and then look for a cpuid. Older traces read the
// same.
const CurrentVersion = 9

// Magic is the first 8 bytes of every trace file.
const Magic = "RWNDTRC\x00"

// Frame types (the first byte of a frame).
const (
	// FrameHeader holds the JSON encoding of Header; it is always the first frame.
	FrameHeader byte = 1
	// FrameEvents holds a batch of encoded events.
	FrameEvents byte = 2
	// FrameBlob holds a uint32 blob id followed by the blob's bytes.
	FrameBlob byte = 3
	// FrameFooter holds the JSON encoding of Footer; it is always the last frame.
	FrameFooter byte = 4
)

const (
	// PreambleSize is the size of the magic and the version, before the
	// first frame.
	PreambleSize = len(Magic) + 4
	// FrameHeaderSize is the size of a frame's type, lengths and CRC.
	FrameHeaderSize = 1 + 4 + 4 + 4
	// frameTarget is the uncompressed size above which the writer closes an
	// events frame.
	frameTarget = 256 << 10
	// maxFrameLen is the largest payload a frame can describe.
	maxFrameLen = 1<<32 - 1
	// MaxEventMem is the most memory one event may carry. It keeps the
	// events frame an event closes below maxFrameLen. The recorder refuses,
	// in words, a system call that wrote more (replay stops there), rather
	// than keeping part of it.
	MaxEventMem = 1 << 30
	// maxZstdExpansion bounds what one compressed byte decompresses to:
	// the densest zstd block, a 3-byte header and a byte repeated,
	// makes 128 KiB from 4 bytes.
	maxZstdExpansion = (128 << 10) / 4
)

// Header describes a recording. It is the first frame of the file.
type Header struct {
	// FormatVersion is the trace format version (CurrentVersion when written).
	FormatVersion int `json:"format_version"`
	// RewindVersion is the version of the rewind that recorded the trace.
	RewindVersion string `json:"rewind_version"`
	// Program is the absolute path of the recorded executable.
	Program string `json:"program"`
	// Args is the argument vector, argv[0] included.
	Args []string `json:"args"`
	// Env is the environment, as "NAME=value" strings.
	Env []string `json:"env"`
	// Cwd is the working directory the program started in.
	Cwd string `json:"cwd"`
	// ExeBuildID is the executable's GNU build ID, in hex (empty if none).
	ExeBuildID string `json:"exe_build_id,omitempty"`
	// ExeSHA256 is the hex SHA-256 of the executable file.
	ExeSHA256 string `json:"exe_sha256,omitempty"`
	// Late, when set, fills in the fields that take long to learn and
	// that nothing reads while the trace is written (the executable's
	// SHA-256: ~25 ms for a 30 MB binary built since it was last
	// hashed): the Writer calls it on its copy of the header, on its own
	// goroutine while the program starts, before it writes the header.
	Late func(*Header) `json:"-"`
	// CPUModel is the CPU model name of the recording machine.
	CPUModel string `json:"cpu_model,omitempty"`
	// CPUFlags are the CPU feature flags of the recording machine, less
	// those hidden from the program (CPUHidden).
	CPUFlags []string `json:"cpu_flags,omitempty"`
	// CPUHidden are the features of the recording machine its cpuid
	// answers hid from the program (record --cpu-features): the program did
	// not use them, and a replay does not need them.
	CPUHidden []string `json:"cpu_hidden,omitempty"`
	// CPUSpec is the --cpu-features the recording was made with ("" for native).
	CPUSpec string `json:"cpu_spec,omitempty"`
	// Kernel is the kernel release of the recording machine.
	Kernel string `json:"kernel,omitempty"`
	// Hostname is the recording machine's host name.
	Hostname string `json:"hostname,omitempty"`
	// Rlimits maps a resource limit name (such as "RLIMIT_STACK") to its
	// soft and hard values.
	Rlimits map[string][2]uint64 `json:"rlimits,omitempty"`
	// Created is when the recording started.
	Created time.Time `json:"created"`
	// Pid is the process id of the recorded program.
	Pid int `json:"pid"`
	// CPUIDFaulting says cpuid was trapped and its answers logged; replay
	// traps it too, or, on a CPU that cannot, stops at each with a
	// breakpoint.
	CPUIDFaulting bool `json:"cpuid_faulting,omitempty"`
	// Xgetbv says the xgetbv instructions found in the code were trapped
	// (patch.Xgetbv) and their answers logged: replay traps the same
	// sites. Not in recordings of running processes, nor before it was.
	Xgetbv bool `json:"xgetbv,omitempty"`
	// XCR0 is the answer of xgetbv with ecx 0 the hook gives at patched
	// xgetbv sites (hook.TrapXgetbv), the same in replay; 0 when none
	// were patched (recordings before it, or a CPU without XSAVE).
	XCR0 uint64 `json:"xcr0,omitempty"`
	// CpuidPatched says the machine could not fault on cpuid and the
	// recorder trapped the cpuid instructions it found in the code (as it
	// does rdrand's) to log their answers: replay traps the same sites.
	CpuidPatched bool `json:"cpuid_patched,omitempty"`
	// Cpuid is the table of cpuid's answers the recorder wrote into each
	// hook page (engine/hook), which patched cpuid sites read: replay
	// writes the same. Empty: cpuid was not patched.
	Cpuid []CpuidAnswer `json:"cpuid,omitempty"`
	// CPU is the CPU the program was bound to (nil in traces from before
	// binding): replay binds to it too, so that cpuid answers agree.
	CPU *int `json:"cpu,omitempty"`
	// Ignored is the set of signals the program started with ignored (bit
	// N-1 for signal N; nil in traces from before it was kept): replay
	// starts it with the same ones.
	Ignored *uint64 `json:"ignored_signals,omitempty"`
	// Patch is the version of the code patching algorithm (engine/patch)
	// the recorder used: replay patches the same sites only with the same
	// algorithm. 0: a trace from before rdrand and the vDSO were patched.
	Patch int `json:"patch,omitempty"`
	// DataHash names the hash of the global data that preemption points
	// hold (Event.Aux of KindPreempt): DataHashCRC for ptrace.DataSum;
	// empty for ptrace.DataHash, FNV-1a, which traces made before it hold.
	DataHash string `json:"data_hash,omitempty"`
	// WriteHash names the hash of the bytes a write wrote (Event.Hash of
	// a write): WriteHashCRC; empty for FNV-1a, which traces made before
	// it hold (WriteSum).
	WriteHash string `json:"write_hash,omitempty"`
	// Hook names the hook page image (engine/hook) the recorder mapped
	// into every process it recorded under its seccomp filter; empty: none.
	Hook string `json:"hook,omitempty"`
	// VDSO describes the recording kernel's vDSO, so that a replay on a
	// kernel whose vDSO differs can warn.
	VDSO *VDSO `json:"vdso,omitempty"`
	// Chaos says the recording randomised its scheduling (record --chaos)
	// with a generator seeded by ChaosSeed. Replay needs neither: the
	// decisions are in the log.
	Chaos     bool   `json:"chaos,omitempty"`
	ChaosSeed uint64 `json:"chaos_seed,omitempty"`
	// Attached says the recording started from a running process (rewind
	// record -p): its first event is a KindSnapshot, and the recording
	// ended with the process detached, still running.
	Attached bool `json:"attached,omitempty"`
}

// VDSO identifies a kernel's vDSO image: its functions are patched into
// system calls at the addresses its symbols give, so a replay diverges on a
// kernel that places them elsewhere.
type VDSO struct {
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
	// Funcs maps each exported function to its offset in the image.
	Funcs map[string]uint64 `json:"funcs"`
}

// Footer closes a complete recording. It is the last frame of the file.
type Footer struct {
	// Events is the number of events in the trace (Writer.Close sets it).
	Events int64 `json:"events"`
	// ExitStatus is the wait status of the program (meaningful if Exited).
	ExitStatus int `json:"exit_status"`
	// Exited says that the program ended while it was recorded (as opposed
	// to a recording stopped or detached early).
	Exited bool `json:"exited"`
	// Blobs is the number of blobs in the trace (Writer.Close sets it).
	Blobs int `json:"blobs"`
	// Interrupted says why the recording stopped before the program ended
	// ("SIGTERM to rewind"): the trace then ends with a KindEnd event.
	Interrupted string `json:"interrupted,omitempty"`
	// Warnings are messages from the recorder worth showing with the trace.
	Warnings []string `json:"warnings,omitempty"`
	// FrameEvents is the number of events of each events frame, in file
	// order (Writer.Close sets it). A frame that fails its CRC check cannot
	// say how many events it held; with this index a reader still names
	// them, and counts the events lost. Traces of older writers lack it.
	FrameEvents []int64 `json:"frame_events,omitempty"`
	// Sources are the identities of the files blobs were read from
	// (Writer.Close sets them): a replay on the machine that recorded
	// maps such a file itself while its identity is unchanged, rather
	// than decompressing the trace's copy (Reader.BlobSource). Traces
	// of older writers, and files read without a cache, lack them.
	Sources []BlobSource `json:"sources,omitempty"`
	// Packed are the source and debug files rewind pack stored, so that
	// the recording debugs where they are absent (sources.go). Their
	// blobs are the trace's last ones; no event maps them.
	Packed []PackedFile `json:"packed,omitempty"`
	// Spread counts, by CPU, the processes the recorder moved there from
	// the program's (Header.CPU) while they computed side by side; replay
	// runs every process on the program's CPU.
	Spread map[int]int `json:"spread,omitempty"`
}

// BlobSource says which file a blob holds the contents of.
type BlobSource struct {
	Blob uint32  `json:"blob"`
	Key  FileKey `json:"key"`
}

// DataHashCRC is Header.DataHash for ptrace.DataSum.
const DataHashCRC = "crc32c+crc32"

// WriteHashCRC is Header.WriteHash for CRC-32C, which the hook page
// computes with SSE4.2's crc32 instruction 8 bytes at a time, ten times
// as fast as FNV-1a's byte at a time.
const WriteHashCRC = "crc32c"

// WriteSum is Event.Hash of the bytes a write wrote, by the hash alg
// names (Header.WriteHash): CRC-32C shifted left one bit, or FNV-1a 64;
// with the low bit set either way, so that no hash is 0 ("none").
func WriteSum(alg string, data []byte) uint64 {
	if alg == WriteHashCRC {
		return uint64(crc32.Checksum(data, castagnoli))<<1 | 1
	}
	h := fnv.New64a()
	h.Write(data)
	return h.Sum64() | 1
}

// Errors that can be tested with errors.Is.
var (
	// ErrNotTrace is returned by Open for a file that is not a trace.
	ErrNotTrace = errors.New("not a rewind trace")
	// ErrNewerVersion is returned by Open for a trace written by a newer rewind.
	ErrNewerVersion = errors.New("trace format version is newer than this rewind supports")
	// ErrClosed is returned by a Writer used after Close or Abort.
	ErrClosed = errors.New("trace: writer closed")
	// ErrWrite is wrapped by the errors of Reserve, Pending.Start and a
	// Writer when the file cannot be written (a directory in the way, no
	// permission, a full disk, an I/O error): the trace is not complete.
	ErrWrite = errors.New("cannot write the trace")

	errIncomplete = errors.New("incomplete")
	errUnreadable = errors.New("the trace cannot be read")
	errNoHeader   = errors.New("the file ends inside its header: no events (the recording stopped as it began)")
	errCRC        = errors.New("crc mismatch")
)

// versionError reports a trace whose format version this package cannot read.
type versionError struct {
	path    string
	version uint32
}

func (e *versionError) Error() string {
	if e.version == 0 {
		return fmt.Sprintf("%s: invalid trace format version 0", e.path)
	}
	return fmt.Sprintf("%s: trace format version %d is newer than this rewind supports (%d); upgrade rewind",
		e.path, e.version, CurrentVersion)
}

func (e *versionError) Unwrap() error {
	if e.version == 0 {
		return nil
	}
	return ErrNewerVersion
}

// frameError locates a problem with one frame.
type frameError struct {
	frame  int
	offset int64
	typ    byte // the frame's type, 0 when unknown
	err    error
}

func (e *frameError) Error() string {
	if e.err == errIncomplete {
		return fmt.Sprintf("frame %d at offset %d incomplete", e.frame, e.offset)
	}
	return fmt.Sprintf("frame %d at offset %d: %v", e.frame, e.offset, e.err)
}

func (e *frameError) Unwrap() error { return e.err }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendPreamble appends the magic and the current version.
func appendPreamble(b []byte) []byte {
	b = append(b, Magic...)
	return binary.LittleEndian.AppendUint32(b, CurrentVersion)
}

// appendFrame compresses payload with enc and appends the complete frame.
func appendFrame(dst []byte, enc *zstd.Encoder, typ byte, payload []byte) []byte {
	return appendFrameWith(dst, typ, payload, func(src, dst []byte) []byte { return compress(enc, src, dst) })
}

// appendFrameWith is appendFrame with the payload compressed by comp,
// which appends src's zstd frames to dst.
func appendFrameWith(dst []byte, typ byte, payload []byte, compress func(src, dst []byte) []byte) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, FrameHeaderSize)...)
	dst = compress(payload, dst)
	comp := dst[start+FrameHeaderSize:]
	h := dst[start : start+FrameHeaderSize]
	h[0] = typ
	binary.LittleEndian.PutUint32(h[1:], uint32(len(comp)))
	binary.LittleEndian.PutUint32(h[5:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[9:], crc32.Checksum(comp, castagnoli))
	return dst
}

// appendFileBlob appends the blob frame of payload (its id, then a file's
// contents) with its payload compressed in two parts: the id, then the
// contents, which the cache holds already compressed (payload is then only
// the id), or which are compressed now and also returned, for the cache.
// The cache's frames are appended from file.pre, or, from file.entry, are
// left for the caller to copy after what is appended (the frame's header
// counts them). Contents compressed now go through tail (tailcompress.go).
func appendFileBlob(dst []byte, enc *zstd.Encoder, tail *tailEncoder, payload []byte, file *fileBlob) (out, contents []byte) {
	start := len(dst)
	dst = append(dst, make([]byte, FrameHeaderSize)...)
	dst = enc.EncodeAll(payload[:4], dst)
	ulen := len(payload)
	comp := int64(len(dst) - start - FrameHeaderSize)
	sum := crc32.Checksum(dst[start+FrameHeaderSize:], castagnoli)
	switch {
	case file.entry != nil:
		ulen = file.ulen
		sum = crcCombine(sum, file.zsum, file.zlen)
		comp += file.zlen
	case file.pre != nil:
		dst = append(dst, file.pre...)
		ulen = file.ulen
		sum = crcCombine(sum, file.zsum, int64(len(file.pre)))
		comp += int64(len(file.pre))
	default:
		at := len(dst)
		dst = tail.compress(enc, payload[4:], dst)
		if file.cache != nil {
			contents = dst[at:]
		}
		sum = crcCombine(sum, crc32.Checksum(dst[at:], castagnoli), int64(len(dst)-at))
		comp += int64(len(dst) - at)
	}
	h := dst[start : start+FrameHeaderSize]
	h[0] = FrameBlob
	binary.LittleEndian.PutUint32(h[1:], uint32(comp))
	binary.LittleEndian.PutUint32(h[5:], uint32(ulen))
	binary.LittleEndian.PutUint32(h[9:], sum)
	return dst, contents
}

// rawCheck is the size from which compress first looks whether the data
// compresses at all: zstd's fastest level spent 130–210 ms (3–5 ms a MB,
// here) finding no match in the 40 MB a program read of a file of random
// base64, while the end of the recording waited for it.
const rawCheck = 1 << 20

// compress appends the zstd frame of src to dst: compressed, or, when
// samples of big data do not compress by a tenth, its bytes as they are.
func compress(enc *zstd.Encoder, src, dst []byte) []byte {
	if len(src) >= rawCheck && !compressible(enc, src) {
		return appendRawFrame(dst, src)
	}
	return enc.EncodeAll(src, dst)
}

// compressible says whether three samples of src (its start, middle and
// end) compress by a tenth.
func compressible(enc *zstd.Encoder, src []byte) bool {
	const sample = 32 << 10
	var in, out int
	var buf []byte
	for _, at := range []int{0, len(src)/2 - sample/2, len(src) - sample} {
		buf = enc.EncodeAll(src[at:at+sample], buf[:0])
		in, out = in+sample, out+len(buf)
	}
	return out < in*9/10
}

// appendRawFrame appends a zstd frame (RFC 8878) holding src in raw
// blocks, which any decoder copies: a single-segment frame whose header
// gives the content size, then blocks of at most 128 KiB.
func appendRawFrame(dst, src []byte) []byte {
	const maxBlock = 128 << 10
	dst = binary.LittleEndian.AppendUint32(dst, 0xFD2FB528) // magic
	dst = append(dst, 0xE0)                                 // 8-byte content size, single segment, no checksum, no dictionary
	dst = binary.LittleEndian.AppendUint64(dst, uint64(len(src)))
	for {
		n := min(len(src), maxBlock)
		h := uint32(n) << 3 // block type 0: raw
		if n == len(src) {
			h |= 1 // the last block
		}
		dst = append(dst, byte(h), byte(h>>8), byte(h>>16))
		dst = append(dst, src[:n]...)
		src = src[n:]
		if len(src) == 0 {
			return dst
		}
	}
}

// newEncoder returns a zstd encoder for EncodeAll use by one goroutine.
// The fastest level: the files a program maps are most of what a trace
// compresses, and at the default level their compression took three
// quarters of the recorder's CPU (python's imports), next to the program
// on the same cores, for traces 5% smaller.
func newEncoder() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil,
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderLevel(zstd.SpeedFastest))
}

// decoder is shared by all readers: DecodeAll is safe for concurrent use.
var decoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(4),
		zstd.WithDecoderMaxMemory(maxFrameLen),
		zstd.WithDecodeAllCapLimit(true))
})
