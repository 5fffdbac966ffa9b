package ui

import (
	"fmt"
	"testing"
)

func TestJumpList(t *testing.T) {
	type op struct {
		kind string // push, back, fwd
		arg  string // push: the moment left; back: the moment now
		want string // back/fwd: the moment to go to ("" none)
	}
	for _, c := range []struct {
		name string
		ops  []op
	}{
		{"empty", []op{{"back", "#5", ""}, {"fwd", "", ""}}},
		{"one jump and back", []op{{"push", "#9", ""}, {"back", "#3 write 1 to 0x10", "#9"}, {"back", "#9", ""}}},
		{"back then forward returns to the jump's stop", []op{
			{"push", "#9", ""}, {"back", "#3", "#9"}, {"fwd", "", "#3"}, {"fwd", "", ""}}},
		{"a chain of origins, walked back and forth", []op{
			{"push", "#50", ""}, {"push", "#40", ""}, {"push", "#30", ""},
			{"back", "#20", "#30"}, {"back", "#30", "#40"}, {"back", "#40", "#50"}, {"back", "#50", ""},
			{"fwd", "", "#40"}, {"fwd", "", "#30"}, {"fwd", "", "#20"}, {"fwd", "", ""}}},
		{"a jump after going back drops the forward part", []op{
			{"push", "#50", ""}, {"push", "#40", ""}, {"back", "#30", "#40"},
			{"push", "#40", ""}, {"fwd", "", ""}, {"back", "#35", "#40"}, {"back", "#40", "#50"}}},
		{"the same moment twice is one entry", []op{
			{"push", "#7", ""}, {"push", "#7", ""}, {"back", "#2", "#7"}, {"back", "#7", ""}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var j jumpList
			for i, o := range c.ops {
				var got string
				var ok bool
				switch o.kind {
				case "push":
					j.Push(o.arg)
					continue
				case "back":
					got, ok = j.Back(o.arg)
				case "fwd":
					got, ok = j.Forward()
				}
				if ok != (o.want != "") || got != o.want {
					t.Fatalf("op %d %s(%s) = %q, %v; want %q (list %v at %d)", i, o.kind, o.arg, got, ok, o.want, j.moments, j.pos)
				}
			}
		})
	}
	t.Run("bounded", func(t *testing.T) {
		var j jumpList
		for i := range jumpMax + 10 {
			j.Push(fmt.Sprintf("#%d", i))
		}
		if len(j.moments) != jumpMax || j.moments[0] != "#10" {
			t.Fatalf("%d entries from %s, want %d from #10", len(j.moments), j.moments[0], jumpMax)
		}
	})
}
