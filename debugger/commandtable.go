package debugger

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rewind-debugger/rewind/engine/timeline"
)

// The groups of help's listing, in its order.
const (
	groupBreak   = "Breakpoints, watchpoints and displays"
	groupRun     = "Running forwards"
	groupReverse = "Running backwards"
	groupTime    = "Time travel"
	groupStack   = "Stack and threads"
	groupData    = "Data and code"
	groupSession = "Session"
)

// gdb's answers, after kill, to commands that need the program.
var (
	errNoStack     = errors.New("No stack.")
	errNoThread    = errors.New("No thread selected")
	errNoRegisters = errors.New("The program has no registers now.")
	errNoFrame     = errors.New("No frame selected.")
	errNoThreads   = errors.New("No threads.")
)

// newCommandTable is the command language (docs/commands.md): rewind's
// commands and gdb's habits, each once.
func newCommandTable() *Registry {
	return newRegistry([]*Command{
		// Breakpoints, watchpoints and displays.
		{Name: "break", Aliases: []string{"b", "br"}, GDB: true, Group: groupBreak,
			Usage: "break LOC [if COND]", Help: "stop where LOC (FILE:LINE, FUNC, *ADDR) is reached, when COND holds",
			Complete: CompleteLocation, run: func(s *Session, _, args string, res *Result) error { return s.cmdBreak(args, false, res) }},
		{Name: "tbreak", Aliases: []string{"tb"}, GDB: true, Group: groupBreak,
			Usage: "tbreak LOC [if COND]", Help: "a breakpoint deleted by its first stop",
			Complete: CompleteLocation, run: func(s *Session, _, args string, res *Result) error { return s.cmdBreak(args, true, res) }},
		{Name: "watch", GDB: true, Group: groupBreak, killed: errNotRunning,
			Usage: "watch [-l|-location] EXPR", Help: "stop after each write that changes EXPR (-l: the memory it names now)",
			Complete: CompleteExpression, run: (*Session).cmdWatch},
		{Name: "rwatch", GDB: true, Group: groupBreak, killed: errNotRunning,
			Usage: "rwatch EXPR", Help: "stop after each access to EXPR (the hardware traps reads with writes)",
			Complete: CompleteExpression, run: (*Session).cmdWatch},
		{Name: "awatch", GDB: true, Group: groupBreak, killed: errNotRunning,
			Usage: "awatch EXPR", Help: "stop after each read or write of EXPR",
			Complete: CompleteExpression, run: (*Session).cmdWatch},
		{Name: "delete", Aliases: []string{"d"}, GDB: true, Group: groupBreak,
			Usage: "delete [N...] | delete display N | delete checkpoint N", Help: "delete breakpoints and watchpoints (all without N), a display or a checkpoint",
			Complete: CompleteBreakpoint, run: cmdDeleteAny},
		{Name: "enable", GDB: true, Group: groupBreak,
			Usage: "enable [N...] | enable display [N...]", Help: "arm breakpoints and watchpoints again (all without N), or displays",
			Complete: CompleteBreakpoint, run: cmdEnableAny},
		{Name: "disable", GDB: true, Group: groupBreak,
			Usage: "disable [N...] | disable display [N...]", Help: "keep breakpoints and watchpoints listed but unarmed, or displays hidden",
			Complete: CompleteBreakpoint, run: cmdEnableAny},
		{Name: "condition", GDB: true, Group: groupBreak,
			Usage: "condition N [EXPR]", Help: "set, or remove, the condition of breakpoint N",
			Complete: CompleteBreakpoint, run: func(s *Session, _, args string, res *Result) error { return s.cmdCondition(args, res) }},
		{Name: "ignore", GDB: true, Group: groupBreak,
			Usage: "ignore N COUNT", Help: "skip the next COUNT hits of breakpoint N in the direction of travel",
			Complete: CompleteBreakpoint, run: func(s *Session, _, args string, res *Result) error { return s.cmdIgnore(args, res) }},
		{Name: "display", GDB: true, Group: groupBreak, Formats: true,
			Usage: "display[/FMT] [EXPR]", Help: "show EXPR now and after every stop (without EXPR: show the displays)",
			Complete: CompleteExpression, run: (*Session).cmdDisplay},
		{Name: "undisplay", GDB: true, Group: groupBreak,
			Usage: "undisplay [N...]", Help: "delete displays (all without N)",
			Complete: CompleteDisplay, run: func(s *Session, _, args string, res *Result) error { return s.cmdUndisplay(args, res) }},

		// Running forwards.
		{Name: "run", Aliases: []string{"r"}, GDB: true, Group: groupRun,
			Usage: "run", Help: "back to the start of the recording, then continue",
			run: func(s *Session, _, _ string, res *Result) error { return s.cmdRun(res) }},
		{Name: "start", GDB: true, Group: groupRun,
			Usage: "start", Help: "stop at main's first line (the program's start when it has none)",
			run: func(s *Session, _, _ string, res *Result) error {
				s.habits.killed = false
				return s.cmdStart(res)
			}},
		twin("continue", false), twin("step", false), twin("next", false), twin("stepi", false),
		motion(false, "nexti", "ni", "nexti [N]", "one instruction, over calls", CompleteCount,
			instructionMotion(false, func(s *Session) func() (*timeline.Stop, error) { return s.nextInstruction })),
		twin("finish", false),
		motion(false, "until", "u", "until [LOC]", "to a line after this one (a loop's end), or to LOC in this frame",
			CompleteLocation, (*Session).cmdUntil),
		motion(false, "advance", "", "advance LOC", "run to LOC, or until the current frame returns", CompleteLocation, (*Session).cmdUntil),
		{Name: "kill", Aliases: []string{"k"}, GDB: true, Group: groupRun,
			Usage: "kill", Help: "end the program, as gdb: nothing to inspect until run, start or restart",
			run: func(s *Session, _, _ string, res *Result) error { return s.cmdKill(res) }},

		// Running backwards.
		twin("continue", true), twin("step", true), twin("next", true), twin("stepi", true), twin("finish", true),

		// Time travel.
		{Name: "goto", Group: groupTime, killed: errNotRunning,
			Usage: "goto #N | start | end | MOMENT", Help: "go to an event, an end of the recording, or a moment a stop or history showed",
			Complete: CompleteMoment, run: func(s *Session, _, args string, res *Result) error { return s.cmdGoto(args, res) }},
		{Name: "when", Group: groupTime, killed: errNotRunning,
			Usage: "when", Help: "the current event number",
			run: func(s *Session, _, _ string, res *Result) error { return s.cmdWhen(res) }},
		{Name: "events", Group: groupTime, killed: errNotRunning,
			Usage: "events [N [M]]", Help: "the recorded events N to M (default: around now)",
			Complete: CompleteMoment, run: func(s *Session, _, args string, res *Result) error { return s.cmdEvents(args, res) }},
		{Name: "history", Group: groupTime, killed: errNotRunning,
			Usage: "history EXPR | history watchpoint N", Help: "every write to EXPR's location over the whole recording",
			Complete: CompleteExpression, run: func(s *Session, _, args string, res *Result) error { return s.cmdHistory(args, res) }},
		{Name: "origin", Aliases: []string{"o"}, Group: groupTime, killed: errNotRunning, Forms: []string{"origin --forward", "origin --read"},
			Usage: "origin [--forward|--read] [EXPR]", Help: "back to the write of EXPR's value (--forward: the next write, --read: the next access)",
			Complete: CompleteExpression, run: func(s *Session, _, args string, res *Result) error { return s.cmdOrigin(args, res) }},
		{Name: "why", Group: groupTime,
			Usage: "why [N]", Help: "explain the failure, following at most N links back",
			Complete: CompleteCount, run: func(s *Session, _, args string, res *Result) error { return s.cmdWhy(args, res) }},
		{Name: "checkpoint", GDB: true, Group: groupTime, killed: errNotRunning,
			Usage: "checkpoint", Help: "name the current moment, to restart there",
			run: func(s *Session, _, _ string, res *Result) error { return s.cmdCheckpoint(res) }},
		{Name: "restart", GDB: true, Group: groupTime,
			Usage: "restart N", Help: "return to checkpoint N, forwards or backwards",
			Complete: CompleteCheckpoint, run: func(s *Session, _, args string, res *Result) error { return s.cmdRestart(args, res) }},

		// Stack and threads.
		{Name: "backtrace", Aliases: []string{"bt", "where"}, GDB: true, Group: groupStack, killed: errNoStack,
			Usage: "backtrace [full] [N]", Help: "the stack of the selected thread (full: with each frame's locals)",
			Complete: CompleteCount, run: cmdBacktraceAny},
		{Name: "frame", Aliases: []string{"f"}, GDB: true, Group: groupStack, killed: errNoStack,
			Usage: "frame [N]", Help: "select frame N, or show the selected one",
			Complete: CompleteFrame, run: (*Session).cmdFrame},
		{Name: "up", GDB: true, Group: groupStack, killed: errNoStack,
			Usage: "up [N]", Help: "select the caller's frame", Complete: CompleteCount, run: (*Session).cmdFrame},
		{Name: "down", GDB: true, Group: groupStack, killed: errNoStack,
			Usage: "down [N]", Help: "select the callee's frame", Complete: CompleteCount, run: (*Session).cmdFrame},
		{Name: "thread", Aliases: []string{"t"}, GDB: true, Group: groupStack, killed: errNoThread,
			Usage: "thread [N]", Help: "select thread N (gdb's number or the recorded id), or show the selected one",
			Complete: CompleteThread, run: func(s *Session, _, args string, res *Result) error { return s.cmdThreadNumber(args, res) }},
		{Name: "process", Aliases: []string{"inferior"}, GDB: true, Group: groupStack,
			Usage: "process [PID]", Help: "debug another process of the recording, or show which one is debugged",
			run: func(s *Session, _, args string, res *Result) error { return s.cmdProcess(args, res) }},

		// Data and code.
		{Name: "print", Aliases: []string{"p"}, GDB: true, Group: groupData, killed: errNotRunning, Formats: true,
			Usage: "print[/FMT] EXPR", Help: "the value of EXPR, kept in the value history ($N)",
			Complete: CompleteExpression, run: cmdPrintAny},
		{Name: "output", GDB: true, Group: groupData, killed: errNotRunning, Formats: true,
			Usage: "output[/FMT] EXPR", Help: "the value of EXPR alone, not in the history",
			Complete: CompleteExpression, run: cmdPrintAny},
		{Name: "call", GDB: true, Group: groupData, killed: errNotRunning,
			Usage: "call EXPR", Help: "print EXPR (a recording cannot run the program's functions)",
			Complete: CompleteExpression, run: cmdPrintAny},
		{Name: "printf", GDB: true, Group: groupData,
			Usage: `printf "FMT", ARGS...`, Help: "format values as C's printf",
			Complete: CompleteExpression, run: func(s *Session, _, args string, res *Result) error { return s.cmdPrintf(args, res) }},
		{Name: "echo", GDB: true, Group: groupData,
			Usage: "echo TEXT", Help: "print TEXT with C escapes, ending no line unless it says so",
			run: func(_ *Session, _, args string, res *Result) error {
				res.Text, res.unterminated = echoText(args), true
				return nil
			}},
		{Name: "ptype", GDB: true, Group: groupData, killed: errNotRunning,
			Usage: "ptype EXPR|TYPE", Help: "the type of EXPR, or TYPE, spelled out",
			Complete: CompleteExpression, run: (*Session).cmdPtype},
		{Name: "whatis", GDB: true, Group: groupData, killed: errNotRunning,
			Usage: "whatis EXPR|TYPE", Help: "the type's name",
			Complete: CompleteExpression, run: (*Session).cmdPtype},
		{Name: "x", GDB: true, Group: groupData, killed: errNotRunning, Formats: true, Forms: []string{"x/"},
			Usage: "x/NFU ADDR", Help: "examine memory: N units (b, h, w, g) in format F (x, d, u, o, t, c, s, a, i)",
			Complete: CompleteExpression, run: (*Session).cmdExamine},
		{Name: "list", Aliases: []string{"l"}, GDB: true, Group: groupData, killed: errNotRunning,
			Usage: "list [LINE|FILE:LINE|FUNC|A,B|-]", Help: "source lines around a place (-: the ten before the last listed)",
			Complete: CompleteLocation, run: func(s *Session, _, args string, res *Result) error { return s.cmdList(args, res) }},
		{Name: "disassemble", Aliases: []string{"disas"}, GDB: true, Group: groupData, killed: errNotRunning,
			Usage: "disassemble [LOC]", Help: "the instructions of a function",
			Complete: CompleteLocation, run: func(s *Session, _, args string, res *Result) error { return s.cmdDisassemble(args, res) }},
		{Name: "info", Aliases: []string{"i"}, GDB: true, Group: groupData,
			Usage: "info SUBCOMMAND", Help: "describe the program's state (help info lists the subcommands)",
			Complete: CompleteSubcommand, Sub: newInfoTable()},

		// Session.
		{Name: "set", GDB: true, Group: groupSession, Forms: []string{"set print pretty"},
			Usage: "set SETTING VALUE", Help: "pagination, confirm, print pretty (on|off), width, height (N|unlimited)",
			Complete: CompleteSetting, run: func(s *Session, _, args string, res *Result) error { return s.cmdSet(args, res) }},
		{Name: "show", GDB: true, Group: groupSession,
			Usage: "show SETTING", Help: "a setting, in gdb's words",
			Complete: CompleteSetting, run: func(s *Session, _, args string, res *Result) error { return s.cmdShow(args, res) }},
		{Name: "source", GDB: true, Group: groupSession,
			Usage: "source FILE", Help: "run a file of commands, stopping at the first error",
			Complete: CompleteFile, run: func(s *Session, _, args string, res *Result) error { return s.cmdSource(args, res) }},
		{Name: "help", Aliases: []string{"h"}, GDB: true, Group: groupSession,
			Usage: "help [COMMAND]", Help: "the commands, or one command's usage",
			Complete: CompleteCommand, run: func(_ *Session, _, args string, res *Result) error { return commands.help(args, res) }},
		{Name: "quit", Aliases: []string{"q"}, GDB: true, Group: groupSession,
			Usage: "quit", Help: "end the batch or the UI",
			run: func(_ *Session, _, _ string, res *Result) error {
				res.Quit = true
				return nil
			}},
	}, unknownCommand)
}

// unknownCommand answers a name the table lacks; one of print's gdb
// spellings that assigns is refused for what it would do.
func unknownCommand(name, args string) error {
	if isPrintCommand(name) && hasAssignment(args) {
		return errCannotChange(args)
	}
	return fmt.Errorf("unknown command %q", name)
}

// twinMotion is a motion gdb has both ways: its forward name, alias,
// usage and help, the backward one's alias (gdb's, none for
// reverse-finish) and help, and its handler either way.
type twinMotion struct {
	name, alias, usage, help string
	backAlias, backHelp      string
	complete                 CompletionKind
	run                      func(reverse bool) handler
}

// twins are the motions gdb has both ways, by their forward names (the
// backward one is reverse-NAME): twin(name, reverse) is one of them.
var twins = []twinMotion{
	{"continue", "c", "continue [N]", "run to the next stop (N: ignore the breakpoint stopped at N-1 more times)",
		"rc", "run backwards to the previous stop", CompleteCount, func(reverse bool) handler {
			return func(s *Session, _, args string, res *Result) error {
				if reverse {
					return s.cmdContinue(args, res, s.continueBackward)
				}
				return s.cmdContinue(args, res, s.continueForward)
			}
		}},
	{"step", "s", "step [N]", "to the next line, into calls", "rs", "back to the previous line, into calls",
		CompleteCount, func(reverse bool) handler { return lineMotion(reverse, true) }},
	{"next", "n", "next [N]", "to the next line, over calls", "rn", "back to the previous line, over calls",
		CompleteCount, func(reverse bool) handler { return lineMotion(reverse, false) }},
	// In the thread selected (thread N), as gdb: the others run first when
	// they come before it.
	{"stepi", "si", "stepi [N]", "one instruction of the selected thread", "rsi", "back one instruction of the selected thread",
		CompleteCount, func(reverse bool) handler {
			return instructionMotion(reverse, func(s *Session) func() (*timeline.Stop, error) {
				if reverse {
					return func() (*timeline.Stop, error) { return s.reverseStepiOverHook(s.currentThread()) }
				}
				return func() (*timeline.Stop, error) { return s.stepiOverHook(s.currentThread()) }
			})
		}},
	{"finish", "fin", "finish", "run until the selected frame returns, and show its value", "", "back to the call of the selected frame",
		CompleteNone, func(reverse bool) handler {
			return func(s *Session, _, _ string, res *Result) error { return s.cmdFinish(res, reverse) }
		}},
}

// twin is the command of the twin named name, forwards or backwards.
func twin(name string, reverse bool) *Command {
	w := twins[slices.IndexFunc(twins, func(w twinMotion) bool { return w.name == name })]
	if reverse {
		return motion(true, "reverse-"+w.name, w.backAlias, "reverse-"+w.usage, w.backHelp, w.complete, w.run(true))
	}
	return motion(false, w.name, w.alias, w.usage, w.help, w.complete, w.run(false))
}

// motion is one of gdb's commands that run the program forwards (or,
// reverse, backwards) to a stop: refused after kill, as gdb refuses them.
func motion(reverse bool, name, alias, usage, help string, complete CompletionKind, run handler) *Command {
	c := &Command{Name: name, GDB: true, Group: groupRun, killed: errNotRunning, Usage: usage, Help: help, Complete: complete, run: run}
	if reverse {
		c.Group = groupReverse
	}
	if alias != "" {
		c.Aliases = []string{alias}
	}
	return c
}

// lineMotion is step and next, forwards or backwards: N line steps of the
// selected frame, into calls or over them.
func lineMotion(reverse, into bool) handler {
	return func(s *Session, _, args string, res *Result) error {
		op := func() (*timeline.Stop, error) { return s.stepInSelected(into) }
		if reverse {
			op = func() (*timeline.Stop, error) { return s.reverseLine(into) }
		}
		return s.repeat(args, res, s.scoped(reverse, s.lineStep(op)))
	}
}

// instructionMotion is stepi, nexti and reverse-stepi: N times one
// instruction, op giving the session's operation.
func instructionMotion(reverse bool, op func(s *Session) func() (*timeline.Stop, error)) handler {
	return func(s *Session, _, args string, res *Result) error {
		return s.repeat(args, res, s.scoped(reverse, op(s)))
	}
}

// cmdPrintAny is print, output and call: an expression that assigns is
// refused before it is evaluated, as a recording cannot change.
func cmdPrintAny(s *Session, name, args string, res *Result) error {
	if hasAssignment(args) {
		return errCannotChange(args)
	}
	return s.cmdPrint(name, args, res)
}

// cmdDeleteAny is delete and its gdb forms delete display N and delete
// checkpoint N.
func cmdDeleteAny(s *Session, _, args string, res *Result) error {
	if rest, ok := cutWord(args, "checkpoint"); ok {
		return s.cmdDeleteCheckpoint(rest, res)
	}
	if rest, ok := cutWord(args, "display"); ok {
		return s.cmdUndisplay(rest, res)
	}
	return s.cmdDelete(args, res)
}

// cmdEnableAny is enable and disable, of breakpoints or of displays.
func cmdEnableAny(s *Session, name, args string, res *Result) error {
	if rest, ok := cutWord(args, "display"); ok {
		return s.cmdEnableDisplay(name == "enable", rest, res)
	}
	return s.cmdEnable(name == "enable", args, res)
}

// cmdBacktraceAny is backtrace, with or without gdb's full.
func cmdBacktraceAny(s *Session, _, args string, res *Result) error {
	if rest, ok := cutFull(args); ok {
		return s.cmdBacktraceFull(rest, res)
	}
	return s.cmdBacktrace(args, res)
}
