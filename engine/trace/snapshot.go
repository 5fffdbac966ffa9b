package trace

import (
	"encoding/json"
	"fmt"
)

// Snapshot is the state of a running process rewind attached to (rewind
// record -p): the first event of such a trace, KindSnapshot, holds it in
// place of the exec a recording normally starts from. Replay rebuilds the
// process from it in a fresh one, and reverse execution stops there.
//
// The bytes of the memory are not in the JSON: they are blobs (Region.Blobs),
// written before the event, so that a large address space streams to the file
// without being held twice.
type Snapshot struct {
	Pid     int      `json:"pid"`
	Exe     string   `json:"exe"`
	Cmdline []string `json:"cmdline,omitempty"`
	Regions []Region `json:"regions"`
	// Threads are in the order of their tids; the event's Tid is the first.
	Threads  []ThreadState `json:"threads"`
	Handlers []SigAction   `json:"handlers,omitempty"`
	Files    []OpenFile    `json:"files,omitempty"`
	// Layout is the kernel's view of the address space that brk and
	// /proc/PID/stat rely on; replay sets it with PR_SET_MM_MAP so that a
	// brk it executes again answers what the recording's did.
	Layout  MMLayout   `json:"layout"`
	Cwd     string     `json:"cwd,omitempty"`
	Rlimits []Rlimit   `json:"rlimits,omitempty"`
	Auxv    []AuxEntry `json:"auxv,omitempty"`
	// Ring: taken by the ring buffer (record --keep-last) while it
	// recorded, rather than when rewind attached.
	Ring bool `json:"ring,omitempty"`
}

// Region is one mapping of the address space and what it holds.
type Region struct {
	Start  uint64 `json:"start"`
	Size   uint64 `json:"size"`
	Perms  string `json:"perms"` // "r-xp": read, write, exec, then shared or private
	Offset uint64 `json:"offset,omitempty"`
	// Path is the file, or [heap], [stack], [vdso]…; "" for anonymous memory.
	Path string `json:"path,omitempty"`
	// At most one of File, Stored, Zero and Skipped says what the bytes
	// are (Blobs may add to Stored).
	File *FileRef `json:"file,omitempty"`
	// Stored is the trace's copy of the file mapped here (an exec's
	// Image): Length bytes from Offset of blob Blob.
	Stored *MapFile `json:"stored,omitempty"`
	// Blobs hold the bytes in order, each at most MaxRegionBlob long.
	Blobs []uint32 `json:"blobs,omitempty"`
	// Runs, when set, say where the bytes of Blobs go, one run after the
	// other: the pages in no run were never touched (zeros). Unset, the
	// bytes cover the whole region.
	Runs []Run `json:"runs,omitempty"`
	// Zero: private anonymous memory never touched, all zeros.
	Zero bool `json:"zero,omitempty"`
	// Skipped says why the bytes are not kept ([vvar], [vsyscall]).
	Skipped string `json:"skipped,omitempty"`
	// Object names the shared memory object of a MAP_SHARED region, as
	// KindSharedMem events and the mmap that makes one do: replay maps its
	// copy of the object there, and the recording logs what others write
	// into it.
	Object *SharedMap `json:"object,omitempty"`
	// Data are the bytes while the snapshot is taken, before the recorder
	// stores them as Blobs.
	Data []byte `json:"-"`
}

// Run is a stretch of a region, from its offset Off.
type Run struct {
	Off uint64 `json:"off"`
	Len uint64 `json:"len"`
}

// MaxRegionBlob bounds one blob of a region's bytes.
const MaxRegionBlob = 64 << 20

// End returns the address just past the region.
func (r *Region) End() uint64 { return r.Start + r.Size }

// Shared reports a MAP_SHARED region.
func (r *Region) Shared() bool { return len(r.Perms) >= 4 && r.Perms[3] == 's' }

// FileRef stands for the bytes of a read-only private file mapping: replay
// maps the file again and checks that its bytes hash to SHA256, so a file
// changed on disk since is caught.
type FileRef struct {
	Path   string   `json:"path"`
	Offset uint64   `json:"offset"`
	Size   uint64   `json:"size"`
	SHA256 [32]byte `json:"sha256"`
}

// ThreadState is what a thread needs, besides the memory it shares with its
// process, to be re-created: general registers (fs and gs bases included),
// the XSAVE area (x87, SSE, AVX…), its blocked mask, alternate signal stack,
// clear_child_tid and robust futex list.
type ThreadState struct {
	Tid        int      `json:"tid,omitempty"`
	Regs       Regs     `json:"regs"`
	XState     []byte   `json:"xstate,omitempty"`
	Blocked    uint64   `json:"blocked,omitempty"`
	AltStack   [24]byte `json:"altstack"` // stack_t
	TidAddress uint64   `json:"tid_address,omitempty"`
	RobustHead uint64   `json:"robust_head,omitempty"`
	RobustLen  uint64   `json:"robust_len,omitempty"`
	// Pending are the signals queued for this thread only, and Shared those
	// queued for the process (bit N-1 for signal N), when it was seized.
	Pending uint64 `json:"pending,omitempty"`
	Shared  uint64 `json:"shared,omitempty"`
}

// SigAction is the kernel's sigaction of one signal.
type SigAction struct {
	Sig      int    `json:"sig"`
	Handler  uint64 `json:"handler"` // SIG_DFL (0), SIG_IGN (1) or a function's address
	Flags    uint64 `json:"flags,omitempty"`
	Restorer uint64 `json:"restorer,omitempty"`
	Mask     uint64 `json:"mask,omitempty"`
}

// FileKind says what an open descriptor is, for replay's stand-ins.
type FileKind string

// Kinds of descriptors.
const (
	FileRegular FileKind = "file"   // a path, reopened at its position
	FilePipe    FileKind = "pipe"   // its traffic comes from the trace
	FileSocket  FileKind = "socket" // likewise
	FileAnon    FileKind = "anon"   // eventfd, epoll, timerfd, signalfd…
	FileOther   FileKind = "other"  // a device or a deleted file
)

// OpenFile is one open descriptor.
type OpenFile struct {
	Fd    int      `json:"fd"`
	Kind  FileKind `json:"kind"`
	Path  string   `json:"path"` // the /proc/PID/fd link: a path, "pipe:[N]"…
	Flags int      `json:"flags"`
	Pos   int64    `json:"pos,omitempty"`
}

// Rlimit is one resource limit.
type Rlimit struct {
	Resource int    `json:"resource"`
	Cur      uint64 `json:"cur"`
	Max      uint64 `json:"max"`
}

// AuxEntry is one entry of the auxiliary vector.
type AuxEntry struct {
	Type uint64 `json:"type"`
	Val  uint64 `json:"val"`
}

// MMLayout is the address space layout of struct prctl_mm_map, from
// /proc/PID/stat.
type MMLayout struct {
	StartCode  uint64 `json:"start_code"`
	EndCode    uint64 `json:"end_code"`
	StartData  uint64 `json:"start_data"`
	EndData    uint64 `json:"end_data"`
	StartBrk   uint64 `json:"start_brk"`
	Brk        uint64 `json:"brk"`
	StartStack uint64 `json:"start_stack"`
	ArgStart   uint64 `json:"arg_start"`
	ArgEnd     uint64 `json:"arg_end"`
	EnvStart   uint64 `json:"env_start"`
	EnvEnd     uint64 `json:"env_end"`
}

// DecodeSnapshot reads the snapshot of a KindSnapshot event.
func DecodeSnapshot(e *Event) (*Snapshot, error) {
	if e.Kind != KindSnapshot {
		return nil, fmt.Errorf("trace: event of kind %d is not a snapshot", e.Kind)
	}
	s := &Snapshot{}
	if err := json.Unmarshal(e.Data, s); err != nil {
		return nil, fmt.Errorf("trace: snapshot: %w", err)
	}
	if len(s.Threads) == 0 {
		return nil, fmt.Errorf("trace: snapshot of process %d has no thread", s.Pid)
	}
	return s, nil
}

// EncodeSnapshot makes the KindSnapshot event of s; the regions' bytes must
// already be blobs.
func EncodeSnapshot(s *Snapshot) (*Event, error) {
	if len(s.Threads) == 0 {
		return nil, fmt.Errorf("trace: snapshot of process %d has no thread", s.Pid)
	}
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("trace: snapshot: %w", err)
	}
	return &Event{Kind: KindSnapshot, Tid: int32(s.Threads[0].Tid), Regs: s.Threads[0].Regs, Data: data}, nil
}
