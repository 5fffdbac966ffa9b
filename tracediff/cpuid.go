package tracediff

import "fmt"

// cpuidResult renders a cpuid's answer without the fields that name the
// CPU the thread ran on (its APIC ids, core and node numbers): record pins
// each run to one CPU, not always the same one, and which it was is not
// what the program did. value is eax | ebx<<32, aux ecx | edx<<32.
func cpuidResult(leaf uint32, value, aux uint64) string {
	eax, ebx := uint32(value), uint32(value>>32)
	ecx, edx := uint32(aux), uint32(aux>>32)
	switch leaf {
	case 0x1:
		ebx &= 0x00ffffff // bits 31-24: the initial APIC id
	case 0xb, 0x1f:
		edx = 0 // the x2APIC id
	case 0x8000001e:
		eax, ebx, ecx = 0, 0, 0 // extended APIC id, core and node ids
	}
	return fmt.Sprintf("%#x %#x %#x %#x", eax, ebx, ecx, edx)
}
