package gdbserver

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// gdb reads the target's files (the executable, the loader, the libraries,
// their separate debug files) through vFile packets when its sysroot is
// "target:", its default. The server gives it the files as the recording's
// machine had them (debugger.Session.TargetFile): a recording replayed on
// another machine, or after a library was updated, shows gdb the recorded
// code and symbols rather than this machine's. Files are read only.

// gdb's File-I/O errno values (the protocol's, not the host's).
const (
	fioENOENT = 2
	fioEBADF  = 9
	fioEACCES = 13
	fioEINVAL = 22
)

// fioStatSize is the size of the protocol's struct stat.
const fioStatSize = 64

// maxFiles bounds the files gdb holds open at once.
const maxFiles = 64

// openFiles are the files gdb opened, by descriptor.
type openFiles struct {
	next  int
	files map[int][]byte
}

// vFile answers vFile:OP:ARGS (p without "File:"): setfs, open, pread,
// fstat and close; "" for the rest (pwrite, unlink, readlink), which gdb
// takes as unsupported.
func (sv *Server) vFile(p string) string {
	op, args, _ := strings.Cut(p, ":")
	f := strings.Split(args, ",")
	switch op {
	case "setfs":
		return "F0" // one file system: the recording's
	case "open":
		if len(f) < 2 {
			return fioError(fioEINVAL)
		}
		name, err := hex.DecodeString(f[0])
		flags, ferr := strconv.ParseUint(f[1], 16, 32)
		if err != nil || ferr != nil {
			return fioError(fioEINVAL)
		}
		if flags&3 != 0 { // O_RDONLY is 0 in the protocol too
			return fioError(fioEACCES)
		}
		if len(sv.open.files) >= maxFiles {
			return fioError(fioEINVAL)
		}
		data, fromTrace, err := sv.s.TargetFile(string(name))
		if err != nil {
			return fioError(fioENOENT)
		}
		if fromTrace {
			sv.logf("gdb reads %s from the recording", name)
		}
		if sv.open.files == nil {
			sv.open.files = map[int][]byte{}
		}
		sv.open.next++
		sv.open.files[sv.open.next] = data
		return fmt.Sprintf("F%x", sv.open.next)
	case "pread":
		if len(f) < 3 {
			return fioError(fioEINVAL)
		}
		data, ok := sv.fileOf(f[0])
		n, err1 := strconv.ParseUint(f[1], 16, 32)
		off, err2 := strconv.ParseUint(f[2], 16, 64)
		if !ok {
			return fioError(fioEBADF)
		}
		if err1 != nil || err2 != nil {
			return fioError(fioEINVAL)
		}
		// Escaping may double every byte of the reply.
		n = min(n, MaxPacket/2-32)
		if off >= uint64(len(data)) {
			return "F0;"
		}
		part := data[off:min(uint64(len(data)), off+n)]
		return fmt.Sprintf("F%x;", len(part)) + string(part)
	case "fstat":
		data, ok := sv.fileOf(f[0])
		if !ok {
			return fioError(fioEBADF)
		}
		var st [fioStatSize]byte
		binary.BigEndian.PutUint32(st[8:], 0o100444) // st_mode: a regular file, read only
		binary.BigEndian.PutUint32(st[12:], 1)       // st_nlink
		binary.BigEndian.PutUint64(st[28:], uint64(len(data)))
		binary.BigEndian.PutUint64(st[36:], 4096) // st_blksize
		binary.BigEndian.PutUint64(st[44:], (uint64(len(data))+511)/512)
		return fmt.Sprintf("F%x;", fioStatSize) + string(st[:])
	case "close":
		fd, err := strconv.ParseInt(f[0], 16, 32)
		if _, ok := sv.open.files[int(fd)]; err != nil || !ok {
			return fioError(fioEBADF)
		}
		delete(sv.open.files, int(fd))
		return "F0"
	}
	return ""
}

// fileOf is the file open at descriptor fd (hex).
func (sv *Server) fileOf(fd string) ([]byte, bool) {
	n, err := strconv.ParseInt(fd, 16, 32)
	if err != nil {
		return nil, false
	}
	data, ok := sv.open.files[int(n)]
	return data, ok
}

// fioError is a File-I/O failure reply.
func fioError(errno int) string { return fmt.Sprintf("F-1,%x", errno) }
