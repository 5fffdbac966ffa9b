package ptrace

import (
	"bufio"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDeviceCPU reads /proc/interrupts' shapes: the device lines counted
// per CPU column, the CPUs' own lines left out, and a CPU chosen only
// where it takes most of the interrupts of the CPUs rewind may use.
func TestDeviceCPU(t *testing.T) {
	vm := `           CPU0       CPU1       
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 36:          0     918751 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0
 39:       4010          0 PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0
NMI:          0          0   Non-maskable interrupts
LOC:    6749019    6849678   Local timer interrupts
ERR:          0
`
	spread := `            CPU0       CPU2       CPU3
 120:       5000       4000       4500   PCI-MSI 524288-edge      nvme0q1
 121:       100        90         0      PCI-MSI 524289-edge      nvme0q2
 RES:    2310543    2105386    999   Rescheduling interrupts
`
	tests := []struct {
		name    string
		text    string
		allowed []int
		want    int // -1: none
	}{
		{"one CPU takes the disk's", vm, []int{0, 1}, 1},
		{"only the other allowed", vm, []int{0}, 0},
		{"spread over the CPUs", spread, []int{0, 2, 3}, -1},
		{"the busy one not allowed", vm, []int{0, 5}, 0},
		{"not /proc/interrupts", "hello\nworld\n", []int{0, 1}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var set unix.CPUSet
			for _, c := range tt.allowed {
				set.Set(c)
			}
			got := -1
			if counts, ok := deviceInterrupts(bufio.NewScanner(strings.NewReader(tt.text))); ok {
				if c, ok := busiest(counts, &set); ok {
					got = c
				}
			}
			if got != tt.want {
				t.Errorf("device CPU %d, want %d", got, tt.want)
			}
		})
	}
}

// TestClaimCPU: a CPU claimed once is refused to a second recording until
// the first releases it.
func TestClaimCPU(t *testing.T) {
	const cpu = 1000 // no machine's: no recording running beside the test holds it
	release, ok := ClaimCPU(cpu)
	if !ok {
		t.Fatal("first claim refused")
	}
	if r2, ok := ClaimCPU(cpu); ok {
		r2()
		t.Fatal("second claim granted while the first holds the CPU")
	}
	release()
	release, ok = ClaimCPU(cpu)
	if !ok {
		t.Fatal("claim refused after release")
	}
	release()
}
