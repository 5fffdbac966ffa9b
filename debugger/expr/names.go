package expr

// Names an expression may use: variables (scoped, qualified or Go
// package paths), registers and their parts as gdb names them ($eax,
// $al, $pc), value history and convenience variables, and literals.

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rewind-debugger/rewind/dwarf"
)

func (e *evaluator) variable(name string) (dwarf.Value, bool, error) {
	v, ok, err := e.sc.Variable(name)
	if err != nil {
		return dwarf.Value{}, false, fmt.Errorf("%s: %w", name, err)
	}
	if !ok {
		return dwarf.Value{}, false, nil
	}
	v, err = e.fromRef(v)
	return v, err == nil, err
}

func (e *evaluator) ident(name string) (dwarf.Value, error) {
	if v, ok, err := e.variable(name); ok || err != nil {
		return v, err
	}
	// In a C++ method, a member of *this.
	if e.lang == dwarf.LangCPlusPlus && name != "this" {
		if this, ok, err := e.sc.Variable("this"); err == nil && ok {
			if v, err := e.member(this, name, true); err == nil {
				return v, nil
			}
		}
	}
	switch name {
	case "true", "false":
		return e.boolVal(name == "true"), nil
	case "nullptr", "nil", "NULL":
		return mkInt(pointerTo(voidType), 0), nil
	}
	if _, ok := e.sc.Type(name); ok {
		return dwarf.Value{}, errors.New("Attempt to use a type name as an expression")
	}
	return dwarf.Value{}, &noSymbolError{name}
}

// dottedName spells a chain of `.` member accesses on a name as one name
// ("main.x", "pkg.Var", "a.b.c"); ok is false for other nodes.
func dottedName(n Node) (string, bool) {
	switch n := n.(type) {
	case *Ident:
		return n.Name, true
	case *Member:
		if n.Arrow || n.Name == "" || !isIdentStart(n.Name[0]) {
			return "", false
		}
		if x, ok := dottedName(n.X); ok {
			return x + "." + n.Name, true
		}
	}
	return "", false
}

func (e *evaluator) evalMember(n *Member) (dwarf.Value, error) {
	dotted, isName := dottedName(n)
	if isName {
		if v, ok, err := e.variable(dotted); ok || err != nil {
			return v, err
		}
	}
	x, err := e.eval(n.X)
	if err != nil {
		var ns *noSymbolError
		if isName && errors.As(err, &ns) {
			return dwarf.Value{}, &noSymbolError{dotted}
		}
		return dwarf.Value{}, err
	}
	return e.member(x, n.Name, n.Arrow)
}

// registerTypes are the registers whose values are pointers, as in gdb.
func (e *evaluator) registerType(name string) *dwarf.Type {
	switch name {
	case "pc", "rip":
		lang := e.lang
		if lang == dwarf.LangGo {
			// gdb prints Go's $pc as C's code pointer; Go's
			// formatter would follow it into the code.
			lang = dwarf.LangC
		}
		fn := &dwarf.Type{Kind: dwarf.KindFunc, Name: "void ()", Size: 1, Lang: lang}
		return &dwarf.Type{Kind: dwarf.KindPointer, Name: "void (*)()", Size: 8, Elem: fn, Lang: lang}
	case "sp", "rsp", "fp", "rbp":
		return pointerTo(voidType)
	}
	return e.longT()
}

// subRegister is a part of a 64-bit register: size bytes from bit shift.
type subRegister struct {
	full  string
	shift uint
	size  int64
}

// subRegisters are the parts of the 64-bit registers gdb names.
var subRegisters = func() map[string]subRegister {
	m := map[string]subRegister{}
	for _, r := range []string{"a", "b", "c", "d"} {
		full := "r" + r + "x"
		m["e"+r+"x"] = subRegister{full, 0, 4}
		m[r+"x"] = subRegister{full, 0, 2}
		m[r+"l"] = subRegister{full, 0, 1}
		m[r+"h"] = subRegister{full, 8, 1}
	}
	for _, r := range []string{"si", "di", "bp", "sp"} {
		full := "r" + r
		m["e"+r] = subRegister{full, 0, 4}
		m[r] = subRegister{full, 0, 2}
		m[r+"l"] = subRegister{full, 0, 1}
	}
	delete(m, "sp") // $sp is the stack pointer, not the low half of rsp
	for i := 8; i <= 15; i++ {
		full := "r" + strconv.Itoa(i)
		m[full+"d"] = subRegister{full, 0, 4}
		m[full+"w"] = subRegister{full, 0, 2}
		m[full+"l"] = subRegister{full, 0, 1}
	}
	return m
}()

// registerAliases are gdb's generic register names.
var registerAliases = map[string]string{"pc": "rip", "sp": "rsp", "fp": "rbp"}

// isHistoryName reports whether $name is a value of the history: $, $$,
// $N, $$N.
func isHistoryName(name string) bool {
	s := strings.TrimPrefix(name, "$")
	if s == "" {
		return true
	}
	_, err := strconv.ParseUint(s, 10, 32)
	return err == nil
}

func (e *evaluator) dollar(name string) (dwarf.Value, error) {
	if !isHistoryName(name) {
		if r, ok := e.sc.Register(name); ok {
			return mkInt(e.registerType(name), r), nil
		}
		if alias, ok := registerAliases[name]; ok {
			if r, ok := e.sc.Register(alias); ok {
				return mkInt(e.registerType(name), r), nil
			}
		}
		if sub, ok := subRegisters[name]; ok {
			if r, ok := e.sc.Register(sub.full); ok {
				return mkInt(e.intN(sub.size, false), normalize(r>>sub.shift, sub.size, true)), nil
			}
		}
	}
	if c, ok := e.sc.(Convenience); ok {
		if v, ok, err := c.Convenience(name); err != nil {
			if !e.typeOnly || !ok || v.Type == nil {
				return dwarf.Value{}, err
			}
			return v, nil
		} else if ok {
			return e.fromRef(v)
		}
	}
	if isHistoryName(name) {
		if name == "" || name == "$" {
			return dwarf.Value{}, errors.New("History is empty.")
		}
		return dwarf.Value{}, fmt.Errorf("History has not yet reached $%s.", name)
	}
	return dwarf.Value{Name: "$" + name, Type: voidType}, nil // gdb: an unset convenience variable is void
}

func (e *evaluator) intLit(n *IntLit) dwarf.Value {
	v := n.Value
	if e.lang == dwarf.LangRust && (strings.HasPrefix(n.Suffix, "i") || strings.HasPrefix(n.Suffix, "u")) {
		// 5u8, 1usize: a literal of that type.
		if t, ok := e.sc.Type(n.Suffix); ok {
			return mkInt(t, v)
		}
		size := int64(8)
		if bits, err := strconv.Atoi(n.Suffix[1:]); err == nil {
			size = int64(bits / 8)
		}
		enc := dwarf.ATEUnsigned
		if n.Suffix[0] == 'i' {
			enc = dwarf.ATESigned
		}
		return mkInt(e.base(n.Suffix, size, enc), v)
	}
	switch e.lang {
	case dwarf.LangGo:
		return mkInt(e.untypedT("int", 8, dwarf.ATESigned), v)
	case dwarf.LangRust:
		if v <= math.MaxInt32 {
			return mkInt(e.untypedT("i32", 4, dwarf.ATESigned), v)
		}
		return mkInt(e.untypedT("i64", 8, dwarf.ATESigned), v)
	}
	u := strings.Contains(n.Suffix, "u")
	longs := strings.Count(n.Suffix, "l")
	long := func(unsigned bool) *dwarf.Type {
		if longs == 2 {
			if unsigned {
				return e.base("unsigned long long", 8, dwarf.ATEUnsigned)
			}
			return e.base("long long", 8, dwarf.ATESigned)
		}
		return e.cInt(8, unsigned)
	}
	switch {
	case longs == 0 && !u && v <= math.MaxInt32:
		return mkInt(e.cInt(4, false), v)
	case longs == 0 && (u || n.Base != 10) && v <= math.MaxUint32:
		return mkInt(e.cInt(4, true), v)
	case !u && v <= math.MaxInt64:
		return mkInt(long(false), v)
	}
	return mkInt(long(true), v)
}

func (e *evaluator) floatLit(n *FloatLit) (dwarf.Value, error) {
	var t *dwarf.Type
	switch {
	case n.Suffix == "f32" || n.Suffix == "f":
		t = e.floatT(4)
	case n.Suffix == "f64":
		t = e.floatT(8)
	case n.Suffix == "l":
		t = e.floatT(16)
	case e.goLike():
		name := "float64"
		if e.lang == dwarf.LangRust {
			name = "f64"
		}
		t = e.untypedT(name, 8, dwarf.ATEFloat)
	default:
		t = e.floatT(8)
	}
	return mkFloat(t, n.Value)
}

func (e *evaluator) charLit(n *CharLit) dwarf.Value {
	r := n.Value
	switch e.lang {
	case dwarf.LangGo:
		return mkInt(e.untypedT("int32", 4, dwarf.ATESigned), uint64(r))
	case dwarf.LangRust:
		return mkInt(e.base("char", 4, dwarf.ATEUTF), uint64(r))
	}
	if r > 0xff {
		return mkInt(e.cInt(4, false), uint64(r))
	}
	return mkInt(e.base("char", 1, dwarf.ATESignedChar), normalize(uint64(r), 1, true))
}
