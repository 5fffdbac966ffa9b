package debugger

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// tables are the command table and the subcommand tables in it, by the
// prefix their phrases have.
func tables() map[string]*Registry {
	out := map[string]*Registry{"": Commands()}
	for _, c := range Commands().Commands() {
		if c.Sub != nil {
			out[c.Name+" "] = c.Sub
		}
	}
	return out
}

// TestRegistryNames: every spelling of every command resolves to that
// command, and no spelling names two.
func TestRegistryNames(t *testing.T) {
	for prefix, r := range tables() {
		seen := map[string]string{}
		for _, c := range r.Commands() {
			for _, n := range c.names() {
				if prev, dup := seen[n]; dup {
					t.Errorf("%q%s names both %s and %s", prefix, n, prev, c.Name)
				}
				seen[n] = c.Name
				if got, ok := r.Lookup(n); !ok || got != c {
					t.Errorf("Lookup(%q%s) = %v, %v; want %s", prefix, n, got, ok, c.Name)
				}
			}
			if (c.run == nil) == (c.Sub == nil) {
				t.Errorf("%s%s: needs a handler or subcommands, not both", prefix, c.Name)
			}
			if c.Help == "" || !strings.HasPrefix(c.Usage, prefix+c.Name) {
				t.Errorf("%s%s: usage %q, help %q", prefix, c.Name, c.Usage, c.Help)
			}
		}
	}
}

// TestRegistryDuplicatesPanic: a table with one spelling twice is refused
// when it is built.
func TestRegistryDuplicatesPanic(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a spelling of two commands was accepted")
		}
	}()
	newRegistry([]*Command{{Name: "a", Aliases: []string{"x"}}, {Name: "x"}}, unknownCommand)
}

// TestRegistryLookup: the spellings of docs/commands.md, with
// formats, find their command; unknown ones and formats of commands that
// take none do not.
func TestRegistryLookup(t *testing.T) {
	tests := []struct{ name, want string }{
		{"b", "break"}, {"br", "break"}, {"tb", "tbreak"}, {"d", "delete"}, {"c", "continue"},
		{"rc", "reverse-continue"}, {"s", "step"}, {"n", "next"}, {"si", "stepi"}, {"ni", "nexti"},
		{"rs", "reverse-step"}, {"rn", "reverse-next"}, {"rsi", "reverse-stepi"}, {"fin", "finish"},
		{"u", "until"}, {"advance", "advance"}, {"bt", "backtrace"}, {"where", "backtrace"}, {"f", "frame"},
		{"l", "list"}, {"p", "print"}, {"p/x", "print"}, {"print/d", "print"}, {"output/x", "output"},
		{"x", "x"}, {"x/4xg", "x"}, {"x/i", "x"}, {"display/i", "display"}, {"disas", "disassemble"},
		{"i", "info"}, {"inferior", "process"}, {"o", "origin"}, {"t", "thread"}, {"r", "run"},
		{"k", "kill"}, {"q", "quit"}, {"h", "help"}, {"goto", "goto"}, {"when", "when"},
		{"events", "events"}, {"history", "history"}, {"why", "why"},
		{"call/x", ""}, {"bogus", ""}, {"", ""}, {"/x", ""}, {"inspect", ""},
	}
	for _, tt := range tests {
		c, ok := Commands().Lookup(tt.name)
		got := ""
		if ok {
			got = c.Name
		}
		if got != tt.want {
			t.Errorf("Lookup(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestRegistryHelp: help lists every command, help NAME answers for every
// spelling, and help info lists every subcommand.
func TestRegistryHelp(t *testing.T) {
	var all Result
	if err := Commands().help("", &all); err != nil {
		t.Fatal(err)
	}
	list, _ := all.Value.([]CommandHelp)
	if len(list) != len(Commands().Commands()) {
		t.Errorf("help's value lists %d commands, the table has %d", len(list), len(Commands().Commands()))
	}
	for prefix, r := range tables() {
		for _, c := range r.Commands() {
			if prefix == "" && !strings.Contains(all.Text, "  "+c.Usage+" ") {
				t.Errorf("help does not list %s", c.Name)
			}
			for _, n := range c.names() {
				var res Result
				if err := Commands().help(prefix+n, &res); err != nil || !strings.HasPrefix(res.Text, "Usage: "+c.Usage+"\n") {
					t.Errorf("help %s%s = %q, %v", prefix, n, res.Text, err)
				}
			}
			if c.Sub != nil {
				var res Result
				Commands().help(c.Name, &res)
				for _, sc := range c.Sub.Commands() {
					if !strings.Contains(res.Text, "  "+sc.Usage+" ") {
						t.Errorf("help %s does not list %s", c.Name, sc.Name)
					}
				}
			}
		}
	}
	var res Result
	if err := Commands().help("bogus", &res); err == nil || err.Error() != `Undefined command: "bogus".  Try "help".` {
		t.Errorf("help bogus: %v", err)
	}
}

// TestRegistryCompletion: the prompt's phrases name every command and
// subcommand, and still offer every phrase the UI offered before the
// registry (its own commands, ask, layout and diff, aside).
func TestRegistryCompletion(t *testing.T) {
	phrases := Commands().Completions()
	for prefix, r := range tables() {
		for _, c := range r.Commands() {
			if !slices.Contains(phrases, prefix+c.Name) {
				t.Errorf("completion lacks %q", prefix+c.Name)
			}
			for _, f := range c.Forms {
				if !slices.Contains(phrases, prefix+f) {
					t.Errorf("completion lacks the form %q", prefix+f)
				}
			}
		}
	}
	before := []string{"break", "backtrace", "bt", "continue", "delete", "disassemble", "down", "events", "finish",
		"frame", "goto", "history", "disable", "enable", "info args", "info breakpoints", "info locals", "info registers", "info threads",
		"list", "next", "nexti", "output", "print", "ptype", "reverse-continue", "reverse-finish", "reverse-next", "reverse-step",
		"reverse-stepi", "start", "step", "stepi", "tbreak", "thread", "until", "advance", "up", "watch", "whatis", "when", "x/",
		"origin", "origin --forward", "origin --read", "why",
		"display", "undisplay", "info display", "condition", "ignore", "printf", "echo", "source", "checkpoint", "restart",
		"info checkpoints", "info watchpoints", "info sharedlibrary", "info symbol", "info signals", "info inferiors",
		"set print pretty", "show", "run", "kill", "quit"}
	for _, p := range before {
		// bt was offered as a name of its own: an alias now, which the
		// interpreter still runs.
		if _, alias := Commands().Lookup(p); !slices.Contains(phrases, p) && !(alias && p == "bt") {
			t.Errorf("completion no longer offers %q", p)
		}
	}
	seen := map[string]bool{}
	for _, p := range phrases {
		if seen[p] {
			t.Errorf("completion offers %q twice", p)
		}
		seen[p] = true
	}
}

// TestKilledRefusal: after kill, the commands that need the program give
// gdb's answers, by command and by info's subcommand; the others run.
func TestKilledRefusal(t *testing.T) {
	tests := []struct {
		line string
		want error
	}{
		{"bt", errNoStack}, {"where", errNoStack}, {"up", errNoStack}, {"frame 1", errNoStack},
		{"info registers", errNoRegisters}, {"i r", errNoRegisters}, {"info all-registers", errNoRegisters},
		{"info locals", errNoFrame}, {"info args", errNoFrame}, {"info f", errNoFrame},
		{"info threads", errNoThreads}, {"thread 1", errNoThread}, {"t", errNoThread},
		{"continue", errNotRunning}, {"rc", errNotRunning}, {"step", errNotRunning}, {"fin", errNotRunning},
		{"advance 3", errNotRunning}, {"rsi", errNotRunning}, {"goto #3", errNotRunning}, {"when", errNotRunning},
		{"print x", errNotRunning}, {"p/x x", errNotRunning}, {"x/4x $sp", errNotRunning}, {"output x", errNotRunning},
		{"call f()", errNotRunning}, {"o x", errNotRunning}, {"history x", errNotRunning}, {"l", errNotRunning},
		{"disas", errNotRunning}, {"checkpoint", errNotRunning}, {"events", errNotRunning}, {"ptype x", errNotRunning},
		{"whatis x", errNotRunning}, {"watch x", errNotRunning}, {"rwatch x", errNotRunning}, {"awatch x", errNotRunning},
		{"foo/x y", errNotRunning},
		{"info breakpoints", nil}, {"info bogus", nil}, {"info", nil}, {"display/x y", nil}, {"break main", nil},
		{"run", nil}, {"start", nil}, {"kill", nil}, {"quit", nil}, {"delete", nil}, {"set width 80", nil},
		{"restart 1", nil}, {"why", nil}, {"help", nil}, {"bogus", nil}, {"source f", nil}, {"echo x", nil},
	}
	for _, tt := range tests {
		name, args := splitCommand(tt.line)
		c, ok := Commands().Lookup(name)
		if got := killedRefusal(c, ok, name, args); !errors.Is(got, tt.want) {
			t.Errorf("after kill, %q: %v, want %v", tt.line, got, tt.want)
		}
	}
}
