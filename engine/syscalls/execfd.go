package syscalls

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// atEmptyPath is AT_EMPTY_PATH, execveat's flag to run the file its
// descriptor refers to.
const atEmptyPath = 0x1000

// ExecDescriptor tells whether an execve or execveat of path (its path
// argument, read from the caller) reaches the program through one of the
// caller's descriptors: execveat(fd, "", AT_EMPTY_PATH) (fexecve),
// execveat(dirfd, "relative/path"), or a path under /dev/fd/N or
// /proc/self/fd/N. It returns the descriptor and the path beneath it ("" when
// the descriptor is the program itself). The kernel names such a program
// /dev/fd/N[/rest] in the new image (AT_EXECFN, a script's argument), so
// replay must run it through the same descriptor number.
func ExecDescriptor(c *Call, path string) (fd int, rest string, ok bool) {
	if c.Nr == unix.SYS_EXECVEAT && !strings.HasPrefix(path, "/") {
		fd := int(int32(c.Args[0]))
		if fd == unix.AT_FDCWD {
			return 0, "", false
		}
		if path == "" && c.Args[4]&atEmptyPath == 0 {
			return 0, "", false // ENOENT
		}
		return fd, path, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
		num, ok := strings.CutPrefix(path, dir)
		if !ok {
			continue
		}
		num, rest, _ := strings.Cut(num, "/")
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 {
			return 0, "", false
		}
		return n, rest, true
	}
	return 0, "", false
}
