package record

import "testing"

func TestProcMemPid(t *testing.T) {
	tests := []struct {
		path string
		pid  int
		ok   bool
	}{
		{"/proc/123/mem", 123, true},
		{"/proc/123/task/124/mem", 123, true},
		{"/proc/123/maps", 0, false},
		{"/proc/self/mem", 0, false}, // readlink never gives it
		{"/proc/123/task/124/maps", 0, false},
		{"/tmp/proc/123/mem", 0, false},
		{"/proc/123/mem/x", 0, false},
	}
	for _, tt := range tests {
		pid, ok := procMemPid(tt.path)
		if pid != tt.pid || ok != tt.ok {
			t.Errorf("procMemPid(%q) = %d, %v; want %d, %v", tt.path, pid, ok, tt.pid, tt.ok)
		}
	}
}
