package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSeededAnalysis: an image seeded with another image's analysis of the
// same file (another recording's, kept as JSON) patches a fresh mapping
// and finds a trapping instruction's window without reading the file, and
// scans again where memory does not hold the instructions it describes.
func TestSeededAnalysis(t *testing.T) {
	const a, b, c = 0x10000, 0x20000, 0x30000
	m := &countingMem{fakeMem: newFakeMem(0x40000)}
	for _, base := range []int{a, b, c} {
		copy(m.data[base:], sampleCode)
	}
	m.data[c+10] = 0x90 // not the bytes the kept scan describes (seto)
	fresh := func(addr uint64, im *Image) *Space {
		t.Helper()
		var s Space
		if w := s.Map(m, Mapping{Addr: addr, Len: 0x1000, Prot: unix.PROT_READ | unix.PROT_EXEC, Image: im, Fresh: true}); len(w) != 0 {
			t.Errorf("warnings %q", w)
		}
		return &s
	}
	first := NewImage(func() ([]byte, error) { return nil, errors.New("no file") })
	fresh(a, first)
	win := Window{Start: 0x500, Code: []byte{0x0f, 0xa2, 0x89, 0xc3}, Len: 2}
	first.cacheWindow(0x500, cachedWindow{Window: win, site: 0x500, ok: true})
	kept, learned := first.Analysis()
	if !learned || len(kept.Scans) != 1 || len(kept.Windows) != 1 {
		t.Fatalf("analysis %+v (learned %v), want one scan and one window", kept, learned)
	}
	data, err := json.Marshal(kept)
	if err != nil {
		t.Fatal(err)
	}
	var back Analysis
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}

	loads := 0
	second := NewImage(func() ([]byte, error) { loads++; return nil, errors.New("no file") })
	second.Seed(back)
	m.read = 0
	s := fresh(b, second)
	if sites := s.Sites(); len(sites) != 2 || sites[0].Addr != b+8 || sites[1].Addr != b+19 {
		t.Errorf("sites %+v, want +8 and +19 from %#x", sites, b)
	}
	if !bytes.Equal(m.data[b+8:b+10], []byte{0x0f, 0x0b}) {
		t.Errorf("not patched: % x", m.data[b+8:b+12])
	}
	w, ok := second.FindWindow(0x7000, 0, 0x7500, 2, false)
	if !ok || w.Start != 0x7500 || !bytes.Equal(w.Code, win.Code) {
		t.Errorf("window %+v %v, want the kept one at 0x7500", w, ok)
	}
	if loads != 0 {
		t.Errorf("the seeded image read its file %d times", loads)
	}
	if m.read != 8 {
		t.Errorf("the seeded image's first mapping read %d bytes, want 8 (its two sites, checked)", m.read)
	}
	const d = 0x38000 // another fresh mapping of the same file
	copy(m.data[d:], sampleCode)
	m.read = 0
	if sites := fresh(d, second).Sites(); len(sites) != 2 || m.read != 0 {
		t.Errorf("the seeded image's second mapping: %d sites, %d bytes read; want 2 and none (checked once)", len(sites), m.read)
	}
	if _, learned := second.Analysis(); learned {
		t.Error("the seeded image says it learned something")
	}

	// Where memory differs, the kept scan is not used: the rdrand at +8 is
	// gone, the rdseed at +19 found again.
	third := NewImage(func() ([]byte, error) { return nil, errors.New("no file") })
	third.Seed(back)
	if sites := fresh(c, third).Sites(); len(sites) != 1 || sites[0].Addr != c+19 {
		t.Errorf("memory unlike the kept scan: sites %+v, want only +19 from %#x", sites, c)
	}

	// Seeded later: the kept analysis is asked for once, when first
	// looked at, not before.
	asked := 0
	later := NewImage(func() ([]byte, error) { return nil, errors.New("no file") })
	later.SeedLater(func() (Analysis, bool) { asked++; return back, true })
	if a, learned := later.Analysis(); asked != 0 || learned || len(a.Windows) != 0 {
		t.Errorf("before any lookup: asked %d times, analysis %+v", asked, a)
	}
	for range 2 {
		if _, ok := later.FindWindow(0x7000, 0, 0x7500, 2, false); !ok {
			t.Error("no window from the analysis seeded later")
		}
	}
	if asked != 1 {
		t.Errorf("the kept analysis was asked for %d times, want once", asked)
	}

	// Another version's analysis is not seeded, nor another patching
	// algorithm's.
	back.Patch++
	other := NewImage(func() ([]byte, error) { return nil, errors.New("no file") })
	other.Seed(back)
	if a, _ := other.Analysis(); len(a.Scans)+len(a.Windows) != 0 {
		t.Errorf("seeded from another patching algorithm: %+v", a)
	}
	back.Patch--
	back.Version++
	fourth := NewImage(func() ([]byte, error) { return nil, errors.New("no file") })
	fourth.Seed(back)
	if a, _ := fourth.Analysis(); len(a.Scans)+len(a.Windows) != 0 {
		t.Errorf("seeded from another version: %+v", a)
	}
}
