package ptrace

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// ProcPath returns the /proc path of name (maps, smaps, exe, map_files/…)
// for process pid, read through a live thread of it. The main thread's own
// entries lose the address space once it has exited while other threads
// live (pthread_exit in main): its maps read empty and its exe link is gone,
// so a trampoline would be placed over mappings and data would not be
// found.
func ProcPath(pid int, name string) string {
	if !Zombie(pid) {
		return fmt.Sprintf("/proc/%d/%s", pid, name)
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil && tid != pid && !Zombie(tid) {
			return fmt.Sprintf("/proc/%d/%s", tid, name)
		}
	}
	return fmt.Sprintf("/proc/%d/%s", pid, name)
}

// Zombie reports whether thread tid has exited (state Z or X in its stat).
func Zombie(tid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", tid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}
