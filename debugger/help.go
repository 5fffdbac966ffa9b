package debugger

import (
	"fmt"
	"strings"
)

// CommandHelp is one command as help's JSON value describes it.
type CommandHelp struct {
	Name    string   `json:"name"`
	Aliases []string `json:"aliases,omitempty"`
	// GDB is false for rewind's own commands, which gdb lacks.
	GDB   bool   `json:"gdb"`
	Usage string `json:"usage"`
	Help  string `json:"help"`
	// Completes is what the argument is (CompletionKind's name).
	Completes   string        `json:"completes"`
	Subcommands []CommandHelp `json:"subcommands,omitempty"`
}

// describe is a command's help entry, with its subcommands'.
func (c *Command) describe() CommandHelp {
	h := CommandHelp{Name: c.Name, Aliases: c.Aliases, GDB: c.GDB, Usage: c.Usage, Help: c.Help, Completes: c.Complete.String()}
	if c.Sub != nil {
		for _, sc := range c.Sub.commands {
			h.Subcommands = append(h.Subcommands, sc.describe())
		}
	}
	return h
}

// help answers help [COMMAND]: the table grouped, or one command.
func (r *Registry) help(args string, res *Result) error {
	topic := strings.TrimSpace(args)
	if topic == "" {
		var b strings.Builder
		b.WriteString("List of commands (* rewind's own, not gdb's):\n")
		group := ""
		var list []CommandHelp
		for _, c := range r.commands {
			if c.Group != group {
				group = c.Group
				fmt.Fprintf(&b, "\n%s:\n", group)
			}
			writeHelpLine(&b, c)
			list = append(list, c.describe())
		}
		b.WriteString("\nType \"help\" followed by a command name for its usage; \"help info\" lists info's subcommands.")
		res.Text, res.Value = b.String(), list
		return nil
	}
	name, rest := splitCommand(topic)
	c, ok := r.Lookup(name)
	if ok && rest != "" && c.Sub != nil {
		// help info frame: the subcommand.
		sub, _ := splitCommand(rest)
		if sc, found := c.Sub.Lookup(sub); found {
			c = sc
		}
	}
	if !ok {
		return fmt.Errorf("Undefined command: %q.  Try \"help\".", name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n%s.", c.Usage, capitalize(c.Help))
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "\nAliases: %s.", strings.Join(c.Aliases, ", "))
	}
	if !c.GDB {
		b.WriteString("\nrewind's own: gdb has no such command.")
	}
	if c.Sub != nil {
		b.WriteString("\n\nSubcommands:\n")
		for _, sc := range c.Sub.commands {
			writeHelpLine(&b, sc)
		}
	}
	res.Text, res.Value = strings.TrimRight(b.String(), "\n"), c.describe()
	return nil
}

// writeHelpLine is one command's line of a listing.
func writeHelpLine(b *strings.Builder, c *Command) {
	mark := ""
	if !c.GDB {
		mark = " *"
	}
	also := ""
	if len(c.Aliases) > 0 {
		also = " (also " + strings.Join(c.Aliases, ", ") + ")"
	}
	fmt.Fprintf(b, "  %s%s -- %s%s\n", c.Usage, mark, c.Help, also)
}

// capitalize starts a sentence of help.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
