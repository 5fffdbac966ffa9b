// Package hook is the page rewind maps into every process it records under
// its seccomp filter: a freestanding image at a fixed address through which
// patched system call sites make their calls. The filter lets the image's
// own syscall instruction (Untraced) through, so that a call the hook
// records itself costs no ptrace stop: in record mode it appends a record
// (number, arguments, result, bytes written) to a buffer in the page that
// the recorder turns into events at the thread's next stop (docs/design.md,
// §6 "System call buffering").
// In replay mode the hook answers a call from the records replay put in
// the buffer when it is the next one recorded (AppendRecord), and makes
// any other call through the traced instruction for replay to answer.
//
// The image is built from src/entry.S and src/hook.c by src/build.sh (go generate)
// and committed as hook.bin.
package hook

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"fmt"
	"slices"
)

//go:generate sh src/build.sh

// Image is the hook's code, mapped at Base.
//
//go:embed hook.bin
var Image []byte

// The page's layout: layout.h's, which TestLayout checks.
const (
	Base          = 0x70000000 // the code
	Untraced      = 0x70000000 // syscall; ret — let through by the filter
	Traced        = 0x70000003 // syscall; ret — the rip of a buffered call's event
	Reexec        = 0x70000008 // syscall; int3 — let through: replay's re-executed calls
	Entry         = 0x70000010 // where a patched site's stub jumps
	TrapCode      = 0x70002d00 // the code patched cpuid and rdtsc sites call, to Ctl
	TrapEntry     = 0x70002d00 // where a patched cpuid's or rdtsc's stub calls
	Ctl           = 0x70003000 // the control page
	TrapStackTop  = 0x70004000 // patched cpuid's and rdtsc's stack, in the control page
	StackTop      = 0x70005000 // the hook's stack, below the buffer
	Buf           = 0x70005000 // the records
	BufSize       = 0x100000
	Files         = 0x70105000 // the table of the files the recorder stored
	FilesMax      = 4096
	CpuidTable    = 0x70125000 // cpuid's answers (SetCpuid)
	CpuidMax      = 256
	Size          = 0x127000 // the whole mapping
	CodeSize      = Ctl - Base
	ctlMode       = 0
	ctlLen        = 8
	ctlUserRSP    = 16
	ctlCalls      = 24
	ctlPos        = 32
	ctlStub       = 40
	ctlRet        = 48
	ctlFlags      = 4
	ctlStreams    = 56
	ctlProcDev    = 88
	ctlNFiles     = 96
	ctlNCpuid     = 104
	ctlTrapRSP    = 112
	ctlNShared    = 120
	ctlShared     = 128
	ctlMissNr     = 640
	ctlMissRet    = 648
	ctlWaiting    = 656
	ctlXCR0       = 664
	SharedMax     = 16
	trapMissSkip  = 10
	flagTscTrap   = 2
	flagShared    = 1
	flagWait      = 4
	flagStdTraced = 8
	// Retrace is the error a read waiting in the hook (FlagWait) is given
	// by the recorder when it stops the thread there: the hook makes the
	// call traced.
	Retrace = 4000
	// FileNew is Record.File for an mmap of a file the recorder had not
	// stored, which the record carries (Record.New), at most NewFileMax
	// bytes, its path shorter than newFilePath.
	FileNew      = 0xffffffffffffffff
	NewFileMax   = 65536
	newFilePath  = 4096
	CtlModeAddr  = Ctl + ctlMode
	CtlLenAddr   = Ctl + ctlLen
	CtlCallsAddr = Ctl + ctlCalls
	CtlPosAddr   = Ctl + ctlPos
	CtlMissAddr  = Ctl + ctlMissNr // {nr, result}: a call made again whose result differs
)

// UntracedIP is the instruction pointer the kernel (and the filter) sees
// for a call made at Untraced: the address after the instruction.
const UntracedIP = Untraced + 2

// ReexecIP is where a call made at Reexec runs from, which the filter lets
// through too: replay makes a call again there (its thread's registers
// set, rip at Reexec) to the int3 after it, one stop where the call's own
// instruction would stop at the filter first.
const ReexecIP = Reexec + 2

// Mode is what the hook does with the calls it gets.
type Mode uint32

// The modes (CTL_MODE).
const (
	ModeTraced Mode = 0 // every call traced (the page is mapped, unused)
	ModeRecord Mode = 1 // calls it knows recorded in the buffer
	ModeReplay Mode = 2 // calls answered from the records replay gives, the rest traced
)

// Record is one call the hook made and recorded.
type Record struct {
	Nr      uint64
	Args    [6]uint64
	Ret     int64
	Site    uint64   // the address after the patched site: the call's rip
	Inputs  []Output // the path the call read, with its NUL; a write's first bytes
	Outputs []Output
	// Hash is a write's (FNV-1a 64 of the bytes written, low bit set, as
	// trace.Event's), else 0: replay's hook checks it.
	Hash uint64
	// File is the file an mmap mapped: its entry in the table of stored
	// files (SetStored), from 1; FileNew for one New holds; else 0.
	File uint64
	// New is the file an mmap mapped that the recorder had not stored
	// (File is FileNew), read whole by the hook.
	New NewFile
	// Std is the standard stream rewind passed that a write went to (1
	// stdout, 2 stderr), whose bytes Inputs then holds whole; else 0.
	Std uint64
	// Remake, in a record replay gives, has the hook make the call again
	// (a ReplayTraced one: its effect is the kernel's) with RemakeArgs
	// and check that it returns Ret, where others are answered from the
	// record.
	Remake     bool
	RemakeArgs [6]uint64
	// RemakePath, for an mmap made again, is the path of a file the hook
	// opens to map (for the descriptor of RemakeArgs) and closes after:
	// replay's copy of a stored file, which the process does not hold.
	RemakePath string
}

// NewFile is a file the hook read whole when the program mapped it, the
// recorder not having stored it yet: what fstat said of it (times in
// nanoseconds), its path and its bytes.
type NewFile struct {
	Dev, Ino, Size, MtimeNs, CtimeNs uint64
	Path                             string
	Data                             []byte
}

// newFileHeader is the size of hook.c's struct newfile.
const newFileHeader = 5 * 8

// Output is memory a call wrote (or, in Inputs, read).
type Output struct {
	Addr uint64
	Data []byte
}

// recHeader is the size of a record's fixed part (struct rec).
const recHeader = 4 + 4 + 8 + 6*8 + 8 + 8 + 8 + 8 + 8 + 8 + 6*8

// ParseRecords reads the records of buf, the buffer's committed bytes.
func ParseRecords(buf []byte) ([]Record, error) {
	var out []Record
	for off := 0; off < len(buf); {
		var r Record
		size, err := ParseRecord(buf, off, &r)
		if err != nil {
			return out, err
		}
		out = append(out, r)
		off += size
	}
	return out, nil
}

// PeekRecord reads the number and the size of the record at off of buf,
// without the rest: ok is false for a record cut or malformed, which
// ParseRecord says more of.
func PeekRecord(buf []byte, off int) (nr uint64, size int, ok bool) {
	if len(buf)-off < recHeader {
		return 0, 0, false
	}
	b := buf[off:]
	size = int(binary.LittleEndian.Uint32(b))
	return binary.LittleEndian.Uint64(b[8:]), size, size >= recHeader && size <= len(b)
}

// ParseRecord reads the record at off of buf into r and returns its size.
// r's memory slices are reused and its Data point into buf: the recorder
// turns thousands of records a flush into events that the trace's writer
// copies, and a copy of each would be garbage at once.
func ParseRecord(buf []byte, off int, r *Record) (int, error) {
	le := binary.LittleEndian
	if len(buf)-off < recHeader {
		return 0, fmt.Errorf("hook buffer: a record at %d of %d bytes is cut", off, len(buf))
	}
	b := buf[off:]
	size, nout, nin := int(le.Uint32(b)), int(le.Uint16(b[4:])), int(le.Uint16(b[6:]))
	if size < recHeader || size > len(b) {
		return 0, fmt.Errorf("hook buffer: a record at %d says it has %d bytes, %d left", off, size, len(b))
	}
	*r = Record{Nr: le.Uint64(b[8:]), Ret: int64(le.Uint64(b[64:])), Site: le.Uint64(b[72:]), Hash: le.Uint64(b[80:]), File: le.Uint64(b[88:]), Std: le.Uint64(b[96:]),
		Remake: le.Uint64(b[104:]) != 0, Inputs: r.Inputs[:0], Outputs: r.Outputs[:0]}
	for i := range r.Args {
		r.Args[i] = le.Uint64(b[16+8*i:])
		r.RemakeArgs[i] = le.Uint64(b[112+8*i:])
	}
	if v := le.Uint64(b[104:]); v > 1 && v >= Buf+uint64(off+recHeader) && v < Buf+uint64(off+size) {
		// (buf is the buffer from its start, as AppendRecord laid it.)
		path := b[v-Buf-uint64(off) : size]
		if end := bytes.IndexByte(path, 0); end >= 0 {
			r.RemakePath = string(path[:end])
		}
	}
	p := recHeader
	for i := 0; i < nin+nout; i++ {
		if p+16 > size {
			return 0, fmt.Errorf("hook buffer: memory %d of the record at %d is cut", i, off)
		}
		addr, n := le.Uint64(b[p:]), int(le.Uint64(b[p+8:]))
		p += 16
		if n < 0 || p+n > size {
			return 0, fmt.Errorf("hook buffer: memory %d of the record at %d is cut", i, off)
		}
		m := Output{Addr: addr, Data: b[p : p+n : p+n]}
		if i < nin {
			r.Inputs = append(r.Inputs, m)
		} else {
			r.Outputs = append(r.Outputs, m)
		}
		p += (n + 7) &^ 7
	}
	if r.File == FileNew {
		if err := r.takeNew(); err != nil {
			return 0, fmt.Errorf("hook buffer: the record at %d: %w", off, err)
		}
	}
	return size, nil
}

// takeNew moves the new file an mmap's record carries in its inputs (a
// struct newfile with the path, then the bytes) into r.New.
func (r *Record) takeNew() error {
	if len(r.Inputs) != 2 || len(r.Inputs[0].Data) < newFileHeader+2 {
		return fmt.Errorf("an mmap of a new file carries %d inputs, not the file", len(r.Inputs))
	}
	le := binary.LittleEndian
	h, path := r.Inputs[0].Data[:newFileHeader], r.Inputs[0].Data[newFileHeader:]
	end := bytes.IndexByte(path, 0)
	if end <= 0 {
		return fmt.Errorf("an mmap of a new file carries no path")
	}
	r.New = NewFile{Dev: le.Uint64(h), Ino: le.Uint64(h[8:]), Size: le.Uint64(h[16:]), MtimeNs: le.Uint64(h[24:]), CtimeNs: le.Uint64(h[32:]),
		Path: string(path[:end]), Data: r.Inputs[1].Data}
	if uint64(len(r.New.Data)) != r.New.Size {
		return fmt.Errorf("an mmap of a new file of %d bytes carries %d", r.New.Size, len(r.New.Data))
	}
	r.Inputs = r.Inputs[:0]
	return nil
}

// AppendRecord appends r to buf as the hook lays records out (what
// ParseRecords reads): replay gives the hook the records it answers
// calls from this way. buf holds the records before r as the buffer
// will (r's address is Buf+len(buf)), for RemakePath's address.
func AppendRecord(buf []byte, r *Record) []byte {
	le := binary.LittleEndian
	start := len(buf)
	buf = le.AppendUint32(buf, uint32(RecordSize(r)))
	buf = le.AppendUint16(buf, uint16(len(r.Outputs)))
	buf = le.AppendUint16(buf, uint16(len(r.Inputs)))
	buf = le.AppendUint64(buf, r.Nr)
	for _, a := range r.Args {
		buf = le.AppendUint64(buf, a)
	}
	buf = le.AppendUint64(buf, uint64(r.Ret))
	buf = le.AppendUint64(buf, r.Site)
	buf = le.AppendUint64(buf, r.Hash)
	buf = le.AppendUint64(buf, r.File)
	buf = le.AppendUint64(buf, r.Std)
	remake := uint64(0)
	switch {
	case r.Remake && r.RemakePath != "":
		remake = Buf + uint64(start+RecordSize(r)-pathRoom(r.RemakePath))
	case r.Remake:
		remake = 1
	}
	buf = le.AppendUint64(buf, remake)
	for _, a := range r.RemakeArgs {
		buf = le.AppendUint64(buf, a)
	}
	for _, o := range slices.Concat(r.Inputs, r.Outputs) {
		buf = le.AppendUint64(buf, o.Addr)
		buf = le.AppendUint64(buf, uint64(len(o.Data)))
		buf = append(buf, o.Data...)
		buf = append(buf, make([]byte, (8-len(o.Data)%8)%8)...)
	}
	if r.Remake && r.RemakePath != "" {
		buf = append(buf, r.RemakePath...)
		buf = append(buf, make([]byte, pathRoom(r.RemakePath)-len(r.RemakePath))...)
	}
	return buf
}

// pathRoom is the room a record's RemakePath takes: its bytes, a NUL,
// padding to 8.
func pathRoom(path string) int {
	return (len(path) + 1 + 7) &^ 7
}

// RecordSize is the size of r laid out by AppendRecord.
func RecordSize(r *Record) int {
	size := recHeader
	for _, m := range [2][]Output{r.Inputs, r.Outputs} {
		for _, o := range m {
			size += 16 + (len(o.Data)+7)&^7
		}
	}
	if r.Remake && r.RemakePath != "" {
		size += pathRoom(r.RemakePath)
	}
	return size
}

// Bufferable says whether the hook records call nr itself (hook.c's
// outputs): calls that never block, whose outputs are fixed.
//
// The hook decides on the arguments too (fcntl's command); Bufferable
// says whether a site may be patched for it.
func Bufferable(nr uint64) bool {
	switch nr {
	case 39, 102, 104, 107, 108, 110, 186, // getpid, getuid, getgid, geteuid, getegid, getppid, gettid
		228, 96, 201, // clock_gettime, gettimeofday, time
		99,           // sysinfo
		5, 262, 4, 6, // fstat, newfstatat, stat, lstat
		3, 8, 72, 217, // close, lseek, fcntl (dup, flags, locks that do not wait), getdents64
		74, 75, // fsync, fdatasync
		87, 263, 83, 258, 84, // unlink, unlinkat, mkdir, mkdirat, rmdir
		90, 91, 268, 93, 260, // chmod, fchmod, fchmodat, fchown, fchownat
		0, 17, // read, pread64 (of regular files; read of a pipe or a socket with data there)
		44, 45, // sendto, recvfrom (of a socket, with no address, that need not wait)
		7, 232, // poll, epoll_wait (that need not wait, or alone on a run queue)
		257, 332, 21, 269, 439, // openat (of what never blocks), statx, access, faccessat, faccessat2
		89, 267, 318, 79, 63, // readlink, readlinkat, getrandom, getcwd, uname
		1, 18, 20, // write, pwrite64, writev (to regular files and memory devices; write to a pipe or a socket that need not wait)
		32, 33, 292, // dup, dup2, dup3
		16,            // ioctl (TCGETS, TIOCGWINSZ, TIOCGPGRP)
		9, 10, 11, 12, // mmap (private anonymous memory), mprotect, munmap, brk
		13, 14, // rt_sigaction, rt_sigprocmask
		59,            // execve of a path that names nothing (answered without the call)
		302,           // prlimit64 that sets nothing
		334,           // rseq, which the recorder refuses (ENOSYS, answered without the call)
		158, 218, 273, // arch_prctl (ARCH_SET_FS, ARCH_SET_GS), set_tid_address, set_robust_list
		22, 293, // pipe, pipe2
		98,  // getrusage
		221, // fadvise64
		202: // futex: a FUTEX_WAKE in a process of one thread that shares no memory
		return true
	}
	return false
}

// ReplayTraced says whether call nr, when the hook recorded it, is made
// again in replay rather than answered from its record: the memory calls,
// the signal dispositions and mask, the thread's fs/gs bases and the
// addresses the kernel keeps for it, which the kernel must hold for the
// replay to go on as recorded. Replay makes it, or has the hook make it
// (Record.Remake).
func ReplayTraced(nr uint64) bool {
	switch nr {
	case 9, 10, 11, 12, 13, 14, 158, 218, 273:
		return true
	}
	return false
}
