package debugger

// This file gives $_siginfo: the siginfo of the signal the program stopped
// at, from the recording, with the type gdb synthesizes for it on
// x86-64 Linux (linux_get_siginfo_type), so that print, ptype and member
// access answer as gdb's do.

import (
	"errors"
	"sync"

	"github.com/rewind-debugger/rewind/dwarf"
	"github.com/rewind-debugger/rewind/engine/timeline"
)

// siginfoSize is the size of the kernel's siginfo_t.
const siginfoSize = 128

// errNoSiginfo is gdb's answer where its target has no siginfo for the
// thread; here, a stop that no recorded signal caused.
var errNoSiginfo = errors.New("Unable to read siginfo")

// siginfo is $_siginfo at the current stop: the siginfo recorded with the
// signal it is at. ok is false where gdb has no thread to ask (the program
// has ended): $_siginfo is then void. At other stops (a breakpoint, a
// step, the start) no signal was recorded: gdb would show the SIGTRAP of
// its own breakpoint or step there, which the program never received.
func (s *Session) siginfo() (v dwarf.Value, ok bool, err error) {
	st := s.lastStop
	if st != nil && (st.Reason == string(timeline.ReasonExit) || st.Reason == string(timeline.ReasonEnd)) {
		return dwarf.Value{}, false, nil
	}
	// A signal stop is just after the signal's event; another thread's
	// siginfo is not that signal's.
	v = dwarf.Value{Name: "$_siginfo", Type: siginfoType(), Bytes: make([]byte, siginfoSize)}
	var info []byte
	if st != nil && st.Reason == string(timeline.ReasonSignal) && st.Thread == s.currentThread() {
		info = s.tl.Index().Siginfo(st.Event - 1)
	}
	if info == nil {
		// The type stays, for ptype and whatis, as gdb's does.
		return v, true, errNoSiginfo
	}
	copy(v.Bytes, info)
	return v, true, nil
}

// siginfoType is gdb's struct siginfo for x86-64, built once.
var siginfoType = sync.OnceValue(func() *dwarf.Type {
	base := func(name string, size int64, enc int) *dwarf.Type {
		return &dwarf.Type{Kind: dwarf.KindBase, Name: name, Size: size, Encoding: enc, Lang: dwarf.LangC}
	}
	typedef := func(name string, t *dwarf.Type) *dwarf.Type {
		return &dwarf.Type{Kind: dwarf.KindTypedef, Name: name, Size: t.Size, Elem: t, Lang: dwarf.LangC}
	}
	intT, uintT := base("int", 4, dwarf.ATESigned), base("unsigned int", 4, dwarf.ATEUnsigned)
	longT, shortT := base("long", 8, dwarf.ATESigned), base("short", 2, dwarf.ATESigned)
	voidPtr := &dwarf.Type{Kind: dwarf.KindPointer, Name: "void *", Size: 8, Lang: dwarf.LangC,
		Elem: &dwarf.Type{Kind: dwarf.KindVoid, Name: "void", Size: 1, Lang: dwarf.LangC}}
	pid, uid, clock := typedef("__pid_t", intT), typedef("__uid_t", uintT), typedef("__clock_t", longT)
	sigval := composite(dwarf.KindUnion, "union sigval_t", field{"sival_int", intT}, field{"sival_ptr", voidPtr})
	pad := &dwarf.Type{Kind: dwarf.KindArray, Name: "int __attribute__ ((vector_size(28)))", Size: 28 * 4,
		Elem: intT, Count: 28, Vector: true, Lang: dwarf.LangC}
	anon := func(fields ...field) *dwarf.Type { return composite(dwarf.KindStruct, "struct {...}", fields...) }
	sifields := composite(dwarf.KindUnion, "union {...}",
		field{"_pad", pad},
		field{"_kill", anon(field{"si_pid", pid}, field{"si_uid", uid})},
		field{"_timer", anon(field{"si_tid", intT}, field{"si_overrun", intT}, field{"si_sigval", sigval})},
		field{"_rt", anon(field{"si_pid", pid}, field{"si_uid", uid}, field{"si_sigval", sigval})},
		field{"_sigchld", anon(field{"si_pid", pid}, field{"si_uid", uid}, field{"si_status", intT},
			field{"si_utime", clock}, field{"si_stime", clock})},
		field{"_sigfault", anon(field{"si_addr", voidPtr}, field{"_addr_lsb", shortT},
			field{"_addr_bnd", anon(field{"_lower", voidPtr}, field{"_upper", voidPtr})})},
		field{"_sigpoll", anon(field{"si_band", longT}, field{"si_fd", intT})},
		field{"_sigsys", anon(field{"_call_addr", voidPtr}, field{"_syscall", intT}, field{"_arch", uintT})},
	)
	return composite(dwarf.KindStruct, "struct siginfo",
		field{"si_signo", intT}, field{"si_errno", intT}, field{"si_code", intT}, field{"_sifields", sifields})
})

// field is a member of a synthesized type.
type field struct {
	name string
	typ  *dwarf.Type
}

// composite lays out a C struct or union of the members: each at the next
// offset its alignment allows (all at 0 in a union), the whole padded to
// its own alignment.
func composite(kind dwarf.TypeKind, name string, members ...field) *dwarf.Type {
	t := &dwarf.Type{Kind: kind, Name: name, Lang: dwarf.LangC}
	size, align := int64(0), int64(1)
	for _, m := range members {
		a := alignOf(m.typ)
		align = max(align, a)
		off := int64(0)
		if kind == dwarf.KindStruct {
			off = (size + a - 1) / a * a
		}
		t.Fields = append(t.Fields, dwarf.Field{Name: m.name, Type: m.typ, Offset: off})
		size = max(size, off+m.typ.Size)
	}
	t.Size = (size + align - 1) / align * align
	return t
}

// alignOf is a synthesized type's alignment: its largest scalar's size.
func alignOf(t *dwarf.Type) int64 {
	switch t.Kind {
	case dwarf.KindStruct, dwarf.KindUnion:
		a := int64(1)
		for _, f := range t.Fields {
			a = max(a, alignOf(f.Type))
		}
		return a
	case dwarf.KindArray, dwarf.KindTypedef:
		return alignOf(t.Elem)
	}
	return max(t.Size, 1)
}
