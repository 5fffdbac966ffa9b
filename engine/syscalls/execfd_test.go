package syscalls

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestExecDescriptor(t *testing.T) {
	cwd := uint64(int64(-100) & 0xffffffff) // AT_FDCWD as an int argument
	tests := []struct {
		name  string
		call  Call
		path  string
		fd    int
		rest  string
		viaFd bool
	}{
		{"execve absolute", Call{Nr: unix.SYS_EXECVE}, "/bin/true", 0, "", false},
		{"execve /dev/fd", Call{Nr: unix.SYS_EXECVE}, "/dev/fd/4", 4, "", true},
		{"execve /proc/self/fd below", Call{Nr: unix.SYS_EXECVE}, "/proc/self/fd/7/bin/prog", 7, "bin/prog", true},
		{"execve /dev/fd not a number", Call{Nr: unix.SYS_EXECVE}, "/dev/fd/x", 0, "", false},
		{"fexecve", Call{Nr: unix.SYS_EXECVEAT, Args: [6]uint64{3, 0, 0, 0, atEmptyPath}}, "", 3, "", true},
		{"empty path without the flag", Call{Nr: unix.SYS_EXECVEAT, Args: [6]uint64{3}}, "", 0, "", false},
		{"relative to a directory", Call{Nr: unix.SYS_EXECVEAT, Args: [6]uint64{5}}, "prog", 5, "prog", true},
		{"relative to the cwd", Call{Nr: unix.SYS_EXECVEAT, Args: [6]uint64{cwd}}, "prog", 0, "", false},
		{"execveat absolute", Call{Nr: unix.SYS_EXECVEAT, Args: [6]uint64{5}}, "/bin/true", 0, "", false},
		{"execveat /dev/fd", Call{Nr: unix.SYS_EXECVEAT, Args: [6]uint64{cwd}}, "/dev/fd/9", 9, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fd, rest, ok := ExecDescriptor(&tt.call, tt.path)
			if ok != tt.viaFd || fd != tt.fd || rest != tt.rest {
				t.Errorf("ExecDescriptor(%q) = %d, %q, %v; want %d, %q, %v", tt.path, fd, rest, ok, tt.fd, tt.rest, tt.viaFd)
			}
		})
	}
}
