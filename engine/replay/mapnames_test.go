package replay

import (
	"slices"
	"testing"
)

func TestMapNames(t *testing.T) {
	lib := Mapping{Start: 0x10000, End: 0x14000, Offset: 0, Path: "/lib/a.so"}
	tests := []struct {
		name string
		do   func(n *mapNames)
		want mapNames
	}{
		{"add", func(n *mapNames) { n.add(lib) }, mapNames{lib}},
		{"unmapped", func(n *mapNames) { n.add(lib); n.forget(0x10000, 0x14000) }, nil},
		{"middle unmapped", func(n *mapNames) { n.add(lib); n.forget(0x11000, 0x12000) }, mapNames{
			{Start: 0x10000, End: 0x11000, Path: "/lib/a.so"},
			{Start: 0x12000, End: 0x14000, Offset: 0x2000, Path: "/lib/a.so"},
		}},
		{"mapped anew over a part", func(n *mapNames) {
			n.add(lib)
			n.add(Mapping{Start: 0x13000, End: 0x15000, Offset: 0x1000, Path: "/lib/b.so"})
		}, mapNames{
			{Start: 0x10000, End: 0x13000, Path: "/lib/a.so"},
			{Start: 0x13000, End: 0x15000, Offset: 0x1000, Path: "/lib/b.so"},
		}},
		{"elsewhere", func(n *mapNames) { n.add(lib); n.forget(0x20000, 0x30000) }, mapNames{lib}},
		{"between two, and the middle of a third", func(n *mapNames) {
			n.add(Mapping{Start: 0x1000, End: 0x2000, Path: "/a"})
			n.add(Mapping{Start: 0x2000, End: 0x3000, Path: "/b"})
			n.add(Mapping{Start: 0x3000, End: 0x6000, Path: "/c"})
			n.add(Mapping{Start: 0x6000, End: 0x7000, Path: "/d"})
			n.forget(0x2000, 0x3000)
			n.forget(0x4000, 0x5000)
		}, mapNames{
			{Start: 0x1000, End: 0x2000, Path: "/a"},
			{Start: 0x3000, End: 0x4000, Path: "/c"},
			{Start: 0x6000, End: 0x7000, Path: "/d"},
			{Start: 0x5000, End: 0x6000, Offset: 0x2000, Path: "/c"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n mapNames
			tt.do(&n)
			if !slices.Equal(n, tt.want) { // (nil and empty alike)
				t.Errorf("got %+v, want %+v", n, tt.want)
			}
		})
	}
	// What dlopen does after ld.so.cache was unmapped: a library in its
	// place is named by its own file.
	var n mapNames
	n.add(Mapping{Start: 0x7000, End: 0x10000, Path: "/etc/ld.so.cache"})
	n.forget(0x7000, pageEnd(0x7000, 35443))
	n.add(Mapping{Start: 0xb000, End: 0xc000, Path: "/lib/scale.so"})
	if path, off, ok := n.at(0xb800); !ok || path != "/lib/scale.so" || off != 0x800 {
		t.Errorf("at: %q %#x %v, want /lib/scale.so at 0x800", path, off, ok)
	}
	if _, _, ok := n.at(0x8000); ok {
		t.Errorf("at an unmapped address: named")
	}
}
