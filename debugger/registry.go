package debugger

import (
	"fmt"
	"slices"
	"strings"
)

// CompletionKind says what a command's argument is, so that a prompt can
// offer more than the command's name (the UI completes names today; the
// kind is what a smarter completer would draw its candidates from).
type CompletionKind int

// The kinds of argument a command takes.
const (
	CompleteNone       CompletionKind = iota // no argument, or nothing worth offering
	CompleteCount                            // a repeat count (step 3)
	CompleteLocation                         // FILE:LINE, FUNC, *ADDR: the program's symbols and files
	CompleteExpression                       // an expression: the program's variables
	CompleteBreakpoint                       // breakpoint and watchpoint numbers
	CompleteDisplay                          // display numbers
	CompleteCheckpoint                       // checkpoint numbers
	CompleteThread                           // thread numbers
	CompleteFrame                            // frame levels
	CompleteMoment                           // #N, start, end, a moment a stop showed
	CompleteFile                             // a file of commands
	CompleteSubcommand                       // one of the command's subcommands (info)
	CompleteSetting                          // a setting of set and show
	CompleteCommand                          // a command's name (help)
)

var completionNames = [...]string{"none", "count", "location", "expression", "breakpoint", "display",
	"checkpoint", "thread", "frame", "moment", "file", "subcommand", "setting", "command"}

// String is the kind's name, as help's JSON value gives it.
func (k CompletionKind) String() string {
	if int(k) < len(completionNames) {
		return completionNames[k]
	}
	return fmt.Sprintf("CompletionKind(%d)", int(k))
}

// handler runs a command: name is the spelling typed (an alias, or with a
// format: print/x), args what follows it.
type handler func(s *Session, name, args string, res *Result) error

// Command is one command of the language: every interface (batch mode,
// the UI's prompt, MCP) and help learn of it here, so a command cannot be
// runnable in one place and missing from another.
type Command struct {
	// Name is the canonical spelling, as help and completion show it.
	Name string
	// Aliases are the other spellings that run it (short forms).
	Aliases []string
	// GDB says gdb has the command too (by its name or an alias); help
	// marks the others (goto, when, history…) as rewind's own.
	GDB bool
	// Usage is the command with its arguments, Help one line on it.
	Usage, Help string
	// Group orders help's listing.
	Group string
	// Complete is what its argument is.
	Complete CompletionKind
	// Forms are extra phrases the prompt offers (origin --read, x/).
	Forms []string
	// Formats says NAME/FMT spells it too (print/x, x/4g, display/i).
	Formats bool
	// Sub are its subcommands (info's), looked up by the first word of
	// the arguments.
	Sub *Registry
	// killed is gdb's answer to it after kill, when it needs the program
	// (nil: it runs); for a command with subcommands, theirs counts.
	killed error
	run    handler
}

// names are all the spellings that run the command.
func (c *Command) names() []string {
	return append([]string{c.Name}, c.Aliases...)
}

// Registry is a table of commands looked up by any of their spellings.
type Registry struct {
	commands []*Command
	byName   map[string]*Command
	// unknown is the error for a name the table lacks (with its
	// arguments: some names are refused for what they would do).
	unknown func(name, args string) error
}

// newRegistry indexes a table. Two commands with one spelling are a
// programming error: the table is fixed, so it panics at start-up rather
// than let one shadow the other.
func newRegistry(cmds []*Command, unknown func(name, args string) error) *Registry {
	r := &Registry{commands: cmds, byName: map[string]*Command{}, unknown: unknown}
	for _, c := range cmds {
		for _, n := range c.names() {
			if prev, ok := r.byName[n]; ok {
				panic(fmt.Sprintf("debugger: %q names both %s and %s", n, prev.Name, c.Name))
			}
			r.byName[n] = c
		}
	}
	return r
}

// Commands lists the table in its order.
func (r *Registry) Commands() []*Command { return slices.Clone(r.commands) }

// Lookup finds the command a spelling names; NAME/FMT finds NAME when it
// takes a format.
func (r *Registry) Lookup(name string) (*Command, bool) {
	if c, ok := r.byName[name]; ok {
		return c, true
	}
	if base, _, ok := strings.Cut(name, "/"); ok {
		if c, ok := r.byName[base]; ok && c.Formats {
			return c, true
		}
	}
	return nil, false
}

// Completions are the phrases a prompt offers, in the table's order: each
// command's name and forms, and each subcommand after its command.
func (r *Registry) Completions() []string {
	var out []string
	for _, c := range r.commands {
		out = append(out, c.Name)
		out = append(out, c.Forms...)
		if c.Sub != nil {
			for _, p := range c.Sub.Completions() {
				out = append(out, c.Name+" "+p)
			}
		}
	}
	return out
}

// commands is the command language (commandtable.go). It is set by init:
// its handlers reach Execute, which reads it, and Go refuses such a cycle
// in a variable's initializer.
var commands *Registry

func init() { commands = newCommandTable() }

// Commands is the command language's table, for interfaces that list or
// complete commands.
func Commands() *Registry { return commands }

// dispatch runs one command through a table: gdb's refusal after kill
// first, then the command (or its subcommand).
func (s *Session) dispatch(r *Registry, name, args string, res *Result) error {
	c, ok := r.Lookup(name)
	if s.habits.killed {
		if err := killedRefusal(c, ok, name, args); err != nil {
			return err
		}
	}
	return s.runCommand(r, c, ok, name, args, res)
}

// runCommand runs a command looked up (ok) in r, or its subcommand.
func (s *Session) runCommand(r *Registry, c *Command, ok bool, name, args string, res *Result) error {
	if !ok {
		return r.unknown(name, args)
	}
	if c.run == nil {
		name, args = splitCommand(args)
		sc, ok := c.Sub.Lookup(name)
		return s.runCommand(c.Sub, sc, ok, name, args, res)
	}
	return c.run(s, name, args, res)
}

// killedRefusal is gdb's answer, after kill, to a command that needs the
// program (nil for those that do not). An unknown name with a format
// (foo/x) is refused as one that reads the program, as gdb does.
func killedRefusal(c *Command, known bool, name, args string) error {
	if !known {
		if strings.Contains(name, "/") {
			return errNotRunning
		}
		return nil
	}
	if c.Sub != nil && c.killed == nil {
		sub, _ := splitCommand(args)
		if sc, ok := c.Sub.Lookup(sub); ok {
			return sc.killed
		}
		return nil
	}
	return c.killed
}
