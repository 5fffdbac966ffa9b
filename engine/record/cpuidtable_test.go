package record

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rewind-debugger/rewind/engine/hook"
)

// TestCpuidTableKept: the cpuid table is asked once and kept in the
// cache; the next recording's comes from there and answers the cpuids
// that trap as it says; a damaged kept table is asked again.
func TestCpuidTableKept(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("REWIND_CACHE", cache)
	asked := (&Recorder{}).cpuidTable()
	kept, _ := filepath.Glob(filepath.Join(cache, "cpuid", "*.json"))
	if len(asked) < 2 || len(kept) != 1 {
		t.Fatalf("%d answers asked, %d tables kept; want some, and one", len(asked), len(kept))
	}
	// A mark the CPU would not give: the kept table is the one used.
	marked := append([]hook.CpuidAnswer(nil), asked...)
	last := &marked[len(marked)-1]
	last.Ecx ^= 0x5a5a
	data, _ := json.Marshal(marked)
	for _, tc := range []struct {
		name string
		file []byte
		want []hook.CpuidAnswer
	}{
		{"kept", data, marked},
		{"damaged", []byte(`[{"leaf":`), asked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(kept[0], tc.file, 0o644); err != nil {
				t.Fatal(err)
			}
			r := &Recorder{}
			got := r.cpuidTable()
			if len(got) != len(tc.want) {
				t.Fatalf("the table: %d answers, want %d", len(got), len(tc.want))
			}
			for i, a := range got {
				if !sameAnswer(a, tc.want[i]) {
					t.Fatalf("answer %d: %+v, want %+v", i, a, tc.want[i])
				}
				v, x := r.cpuid(a.Leaf, a.Sub)
				if v != uint64(a.Eax)|uint64(a.Ebx)<<32 || x != uint64(a.Ecx)|uint64(a.Edx)<<32 {
					t.Fatalf("a trapped cpuid %#x.%d answers %#x %#x, the table %+v", a.Leaf, a.Sub, v, x, a)
				}
			}
		})
	}
}

// sameAnswer compares two answers but for the fields that name the core
// that asked (its APIC ids), which differ between two asks.
func sameAnswer(a, b hook.CpuidAnswer) bool {
	switch a.Leaf {
	case 1:
		a.Ebx &= 0x00ffffff
		b.Ebx &= 0x00ffffff
	case 0xb, 0x1f:
		a.Edx, b.Edx = 0, 0
	case 0x8000001e:
		// Intel: the x2APIC id in edx; AMD: the extended APIC id in
		// eax, the compute unit in ebx's low byte.
		a.Eax, b.Eax = 0, 0
		a.Ebx &^= 0xff
		b.Ebx &^= 0xff
		a.Edx, b.Edx = 0, 0
	}
	return a == b
}
