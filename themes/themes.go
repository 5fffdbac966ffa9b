// Package themes holds every style of the UI, built from one palette per
// theme: dark, light and high contrast, plus a colourless variant for
// NO_COLOR. Views take a *Theme and never build colours themselves.
package themes

import (
	"image/color"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// Palette is the handful of colours a theme is made of.
type Palette struct {
	Fg, Muted, Bg, Subtle   color.Color // text, secondary text, background, panel tint
	Accent                  color.Color // focus, titles, the current line
	Current                 color.Color // background of the current line/pc
	Changed                 color.Color // values changed since the previous stop
	Breakpoint              color.Color
	Watch                   color.Color // watchpoint hits, writes
	Error                   color.Color
	Syscall, Signal, Thread color.Color // timeline event kinds
}

// Theme is the styles of every pane.
type Theme struct {
	Name string
	// NoColor is set for the colourless theme: views must then mark things
	// with characters (">", "*", "!") rather than colour alone.
	NoColor bool
	P       Palette

	Base, Muted, Title, TitleFocused lipgloss.Style
	Border, BorderFocused            lipgloss.Style // pane frames (lipgloss.Border set)
	Current, Selected                lipgloss.Style // current line/pc; cursor row in a list
	Changed, Breakpoint, Watch       lipgloss.Style
	Error, Key, Help                 lipgloss.Style
	Syscall, Signal, Thread          lipgloss.Style
	StatusBar, StatusKey, Prompt     lipgloss.Style
	LineNumber                       lipgloss.Style
}

// Names are the theme names the config accepts.
var Names = []string{"dark", "light", "high-contrast"}

// Dark is the default theme.
func Dark() *Theme {
	return build("dark", Palette{
		Fg: lipgloss.Color("#d0d0d0"), Muted: lipgloss.Color("#808080"), Bg: lipgloss.Color("#1c1c1c"), Subtle: lipgloss.Color("#262626"),
		Accent: lipgloss.Color("#5fafff"), Current: lipgloss.Color("#303a4a"), Changed: lipgloss.Color("#ffaf00"),
		Breakpoint: lipgloss.Color("#ff5f5f"), Watch: lipgloss.Color("#d787ff"), Error: lipgloss.Color("#ff5f5f"),
		Syscall: lipgloss.Color("#87d787"), Signal: lipgloss.Color("#ff875f"), Thread: lipgloss.Color("#5fd7d7"),
	}, false)
}

// Light is for terminals with a light background.
func Light() *Theme {
	return build("light", Palette{
		Fg: lipgloss.Color("#262626"), Muted: lipgloss.Color("#6c6c6c"), Bg: lipgloss.Color("#ffffff"), Subtle: lipgloss.Color("#eeeeee"),
		Accent: lipgloss.Color("#005fd7"), Current: lipgloss.Color("#d7e7ff"), Changed: lipgloss.Color("#af5f00"),
		Breakpoint: lipgloss.Color("#d70000"), Watch: lipgloss.Color("#8700af"), Error: lipgloss.Color("#d70000"),
		Syscall: lipgloss.Color("#008700"), Signal: lipgloss.Color("#d75f00"), Thread: lipgloss.Color("#008787"),
	}, false)
}

// HighContrast uses the 16 basic colours at full intensity.
func HighContrast() *Theme {
	return build("high-contrast", Palette{
		Fg: lipgloss.Color("15"), Muted: lipgloss.Color("7"), Bg: lipgloss.Color("0"), Subtle: lipgloss.Color("8"),
		Accent: lipgloss.Color("14"), Current: lipgloss.Color("4"), Changed: lipgloss.Color("11"),
		Breakpoint: lipgloss.Color("9"), Watch: lipgloss.Color("13"), Error: lipgloss.Color("9"),
		Syscall: lipgloss.Color("10"), Signal: lipgloss.Color("11"), Thread: lipgloss.Color("14"),
	}, false)
}

// NoColor has no colours at all (NO_COLOR): emphasis by bold, reverse and
// characters only.
func NoColor() *Theme {
	return build("no-color", Palette{}, true)
}

// The 16-colour palettes replace dark and light on terminals that only have
// the basic colours: converted to the nearest of those, the truecolor
// palettes lose the current line and the status bar (both become the
// background) and give breakpoints, changes and signals the same red.
var (
	dark16 = Palette{
		Fg: lipgloss.Color("7"), Muted: lipgloss.Color("8"), Bg: lipgloss.Color("0"), Subtle: lipgloss.Color("8"),
		Accent: lipgloss.Color("12"), Current: lipgloss.Color("4"), Changed: lipgloss.Color("11"),
		Breakpoint: lipgloss.Color("9"), Watch: lipgloss.Color("13"), Error: lipgloss.Color("9"),
		Syscall: lipgloss.Color("10"), Signal: lipgloss.Color("3"), Thread: lipgloss.Color("14"),
	}
	light16 = Palette{
		Fg: lipgloss.Color("0"), Muted: lipgloss.Color("8"), Bg: lipgloss.Color("15"), Subtle: lipgloss.Color("7"),
		Accent: lipgloss.Color("4"), Current: lipgloss.Color("14"), Changed: lipgloss.Color("3"),
		Breakpoint: lipgloss.Color("1"), Watch: lipgloss.Color("5"), Error: lipgloss.Color("1"),
		Syscall: lipgloss.Color("2"), Signal: lipgloss.Color("9"), Thread: lipgloss.Color("6"),
	}
)

// ForProfile fits a theme to the colours the terminal has. Truecolor and
// 256-colour terminals keep it (lipgloss converts to the nearest of 256,
// which keeps every role apart); 16-colour terminals get the theme's
// palette of basic colours; terminals without colour (TERM=dumb, NO_COLOR)
// get the colourless theme, whose marks do not depend on colour.
func ForProfile(t *Theme, p colorprofile.Profile) *Theme {
	switch {
	case t.NoColor || p == colorprofile.Unknown || p > colorprofile.ANSI:
		return t
	case p == colorprofile.ASCII || p == colorprofile.NoTTY:
		return NoColor()
	case t.Name == "dark":
		return build(t.Name, dark16, false)
	case t.Name == "light":
		return build(t.Name, light16, false)
	}
	return t // high-contrast is made of the basic colours already
}

// ByName returns a theme by its config name; ok is false for unknown names.
func ByName(name string, dark bool) (*Theme, bool) {
	switch name {
	case "", "auto":
		if dark {
			return Dark(), true
		}
		return Light(), true
	case "dark":
		return Dark(), true
	case "light":
		return Light(), true
	case "high-contrast":
		return HighContrast(), true
	case "no-color":
		return NoColor(), true
	}
	return nil, false
}

func build(name string, p Palette, none bool) *Theme {
	t := &Theme{Name: name, P: p, NoColor: none}
	st := lipgloss.NewStyle
	fg := func(c color.Color) lipgloss.Style {
		if none || c == nil {
			return st()
		}
		return st().Foreground(c)
	}
	t.Base = fg(p.Fg)
	t.Muted = fg(p.Muted)
	if none {
		t.Muted = st().Faint(true)
	}
	t.Title = fg(p.Muted).Bold(true)
	t.TitleFocused = fg(p.Accent).Bold(true)
	if none {
		t.TitleFocused = st().Bold(true).Reverse(true)
	}
	t.Border = fg(p.Muted).Border(lipgloss.RoundedBorder())
	t.BorderFocused = fg(p.Accent).Border(lipgloss.ThickBorder())
	if none {
		t.Border = st().Border(lipgloss.NormalBorder())
		t.BorderFocused = st().Border(lipgloss.DoubleBorder())
	}
	t.Current = st().Bold(true)
	t.Selected = st().Reverse(true)
	if !none {
		t.Current = st().Background(p.Current).Foreground(p.Fg).Bold(true)
		t.Selected = st().Background(p.Accent).Foreground(p.Bg)
	}
	t.Changed = fg(p.Changed).Bold(true)
	t.Breakpoint = fg(p.Breakpoint).Bold(true)
	t.Watch = fg(p.Watch).Bold(true)
	t.Error = fg(p.Error).Bold(true)
	t.Key = fg(p.Accent).Bold(true)
	t.Help = fg(p.Muted)
	t.Syscall = fg(p.Syscall)
	t.Signal = fg(p.Signal).Bold(true)
	t.Thread = fg(p.Thread)
	t.StatusBar = st().Reverse(true)
	if !none {
		t.StatusBar = st().Background(p.Subtle).Foreground(p.Fg)
	}
	t.StatusKey = fg(p.Accent).Bold(true)
	if !none {
		t.StatusKey = t.StatusKey.Background(p.Subtle)
	}
	t.Prompt = fg(p.Accent).Bold(true)
	t.LineNumber = fg(p.Muted)
	return t
}
