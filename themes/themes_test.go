package themes

import (
	"fmt"
	"image/color"
	"testing"

	"github.com/charmbracelet/colorprofile"
)

// TestRolesStayApart: on every colour profile a terminal may have, the
// colours that carry meaning stay distinct once converted to what the
// terminal can show: the current line and the status bar against the
// background, text against both, and the marks against each other.
func TestRolesStayApart(t *testing.T) {
	type pair struct {
		what string
		a, b func(Palette) color.Color
	}
	fg := func(p Palette) color.Color { return p.Fg }
	bg := func(p Palette) color.Color { return p.Bg }
	pairs := []pair{
		{"text/background", fg, bg},
		{"muted/background", func(p Palette) color.Color { return p.Muted }, bg},
		{"current line/background", func(p Palette) color.Color { return p.Current }, bg},
		{"current line/text", func(p Palette) color.Color { return p.Current }, fg},
		{"status bar/background", func(p Palette) color.Color { return p.Subtle }, bg},
		{"status bar/text", func(p Palette) color.Color { return p.Subtle }, fg},
		{"selection/background", func(p Palette) color.Color { return p.Accent }, bg},
		{"breakpoint/changed", func(p Palette) color.Color { return p.Breakpoint }, func(p Palette) color.Color { return p.Changed }},
		{"breakpoint/watch", func(p Palette) color.Color { return p.Breakpoint }, func(p Palette) color.Color { return p.Watch }},
		{"watch/accent", func(p Palette) color.Color { return p.Watch }, func(p Palette) color.Color { return p.Accent }},
		{"syscall/signal", func(p Palette) color.Color { return p.Syscall }, func(p Palette) color.Color { return p.Signal }},
		{"changed/text", func(p Palette) color.Color { return p.Changed }, fg},
	}
	for _, name := range Names {
		for _, prof := range []colorprofile.Profile{colorprofile.TrueColor, colorprofile.ANSI256, colorprofile.ANSI} {
			base, _ := ByName(name, true)
			th := ForProfile(base, prof)
			for _, pr := range pairs {
				a, b := prof.Convert(pr.a(th.P)), prof.Convert(pr.b(th.P))
				if fmt.Sprint(a) == fmt.Sprint(b) {
					t.Errorf("%s on %s: %s are both %v", name, prof, pr.what, a)
				}
			}
		}
	}
}

func TestForProfile(t *testing.T) {
	tests := []struct {
		theme   string
		prof    colorprofile.Profile
		noColor bool
		same    bool
	}{
		{"dark", colorprofile.TrueColor, false, true},
		{"dark", colorprofile.ANSI256, false, true},
		{"dark", colorprofile.ANSI, false, false},
		{"light", colorprofile.ANSI, false, false},
		{"high-contrast", colorprofile.ANSI, false, true},
		{"dark", colorprofile.ASCII, true, false},
		{"dark", colorprofile.Unknown, false, true},
	}
	for _, tt := range tests {
		base, _ := ByName(tt.theme, true)
		got := ForProfile(base, tt.prof)
		if got.NoColor != tt.noColor || (got == base) != tt.same {
			t.Errorf("ForProfile(%s, %s): no-color %v, kept %v", tt.theme, tt.prof, got.NoColor, got == base)
		}
		if !tt.noColor && got.Name != tt.theme {
			t.Errorf("ForProfile(%s, %s) is named %s", tt.theme, tt.prof, got.Name)
		}
	}
}
