package dwarf

// This file holds the plain types shared by the parts of the package:
// registers, memory, frames, types and values. They carry no behaviour
// beyond small helpers, like Go's debug/elf types.

// Memory reads the target's memory at run-time addresses. The debugger
// passes the replaying process; tests pass a live process or a byte slice.
type Memory interface {
	ReadAt(p []byte, addr uint64) (int, error)
}

// DWARF register numbers of x86-64 (System V psABI, figure 3.36).
const (
	RegRAX = 0
	RegRDX = 1
	RegRCX = 2
	RegRBX = 3
	RegRSI = 4
	RegRDI = 5
	RegRBP = 6
	RegRSP = 7
	RegR8  = 8
	RegR15 = 15
	RegRIP = 16
	// NumRegs is the number of general registers a frame tracks.
	NumRegs = 17
)

// Regs is the general registers of one frame by DWARF number, with the
// ones an unwinder could not recover marked invalid. FSBase is needed by
// thread-local variables (DW_OP_form_tls_address).
type Regs struct {
	R      [NumRegs]uint64
	Valid  [NumRegs]bool
	FSBase uint64
	// XMM are the SSE registers (DWARF 17 to 32) when HaveXMM. No CFI
	// saves them: an outer frame has the inner frame's, as gdb takes
	// them (a variable an optimizer kept in one, argc in xmm5, is read).
	XMM     [16][16]byte
	HaveXMM bool
}

// RegXMM0 is the DWARF number of xmm0; xmm15 is RegXMM0+15.
const RegXMM0 = 17

// Set stores a valid register value.
func (r *Regs) Set(n int, v uint64) { r.R[n], r.Valid[n] = v, true }

// PC is the frame's instruction pointer.
func (r *Regs) PC() uint64 { return r.R[RegRIP] }

// SP is the frame's stack pointer.
func (r *Regs) SP() uint64 { return r.R[RegRSP] }

// Frame is one frame of a call stack. Inlined calls are frames of their
// own sharing the registers of the physical frame they were inlined into.
type Frame struct {
	// Level is the frame number as gdb shows it (0 is where execution is).
	Level int
	// PC is the frame's pc: the current pc for frame 0, the return
	// address for callers.
	PC uint64
	// CFA is the canonical frame address (the caller's sp before the call).
	CFA  uint64
	Regs Regs
	// Saved is where the frame's code saved its caller's registers, by
	// DWARF number (0: not in memory): gdb's info frame lists them.
	Saved [NumRegs]uint64
	// Function is the function (or inlined function) the frame is in; nil
	// when the pc has no debug information.
	Function *Function
	// Inlined marks a frame that is an inlined call inside the next one.
	Inlined bool
	// Symbol names the pc when there is no debug information.
	Symbol string
	// File and Line are the source position of the frame (for a caller,
	// the line of the call).
	File string
	Line int
}

// Function is a function, or one inlined instance of a function, with the
// DWARF entry its variables are read from.
type Function struct {
	Name     string // demangled, qualified ("ns::fn<int>", "main.main")
	Low      uint64 // run-time entry address
	High     uint64 // run-time end (exclusive) of the first range
	Ranges   [][2]uint64
	DeclFile string
	DeclLine int
	// Entry is the address after the prologue, where `break FUNC` stops.
	Entry uint64
	// CallFile and CallLine are the call site of an inlined instance.
	CallFile string
	CallLine int
	Inlined  bool
	image    *Image
	offset   uint64 // dwarf.Offset of the DIE
	cu       uint64 // dwarf.Offset of the compilation unit
	// optimized: see cuInfo.optimized.
	optimized bool
}

// TypeKind classifies a Type.
type TypeKind int

// Type kinds.
const (
	KindVoid TypeKind = iota
	KindBase          // integers, floats, bool, char (see Encoding)
	KindPointer
	KindReference // C++ lvalue and rvalue references
	KindStruct    // struct and class
	KindUnion
	KindArray
	KindEnum
	KindTypedef
	KindFunc
	KindQualified // const/volatile/restrict/atomic wrappers
)

// Lang is the source language of a compilation unit.
type Lang int

// Languages.
const (
	LangC Lang = iota
	LangCPlusPlus
	LangRust
	LangGo
	LangOther
)

// Type is a DWARF type, resolved. Pointers between types may be cyclic
// (a list node pointing to its own type).
type Type struct {
	Kind TypeKind
	Name string // as the language writes it ("struct node", "std::vector<int>", "[]int")
	Size int64  // in bytes; -1 when unknown
	// Encoding is DW_ATE_* of a base type (signed, unsigned, float, boolean,
	// signed_char, unsigned_char, UTF).
	Encoding int
	// Elem is the pointee, element, typedef target or qualified type.
	Elem *Type
	// Count is the number of elements of an array (-1: unknown, as for
	// a flexible array member). Dims holds the inner dimensions of
	// multi-dimensional arrays written as one DW_TAG_array_type.
	Count int64
	// Fields are the members of a struct, class or union, base classes
	// included (Field.Base).
	Fields []Field
	// Enumerators are the values of an enum.
	Enumerators []Enumerator
	// Variants is a Rust enum (DW_TAG_variant_part): the discriminant field
	// and the variants it selects.
	Variants *VariantPart
	// Params and Result describe a function type; Variadic marks one
	// taking more arguments after them ("...").
	Params   []*Type
	Result   *Type
	Variadic bool
	Lang     Lang
	// GoKind is DW_AT_go_kind (reflect.Kind) for Go types; GoKey and GoElem
	// come from DW_AT_go_key and DW_AT_go_elem (maps, channels).
	GoKind int
	GoKey  *Type
	GoElem *Type
	// GoRuntimeType is DW_AT_go_runtime_type: the offset of the type's
	// runtime._type from the start of the binary's types section
	// (runtime.types). An interface's dynamic type is found through it.
	GoRuntimeType uint64
	// TypeParams are the template type parameters of a C++ or Rust type,
	// in order: a Rust Vec<T> stores its buffer as untyped bytes, so T is
	// only known from here.
	TypeParams []*Type
	// Scoped marks a C++ "enum class" (DW_AT_enum_class), whose enumerators
	// gdb prints qualified by the enum's name.
	Scoped bool
	// Class marks a C++ DW_TAG_class_type, which ptype writes "class".
	Class bool
	// Vector marks an array that is a GNU vector, which ptype writes
	// with __attribute__ ((vector_size(N))) (N counts elements, as gdb
	// writes it).
	Vector bool
	// Offset is the DIE offset, for identity and caching.
	Offset uint64
}

// Field is a member of a struct, union or class.
type Field struct {
	Name   string
	Type   *Type
	Offset int64 // byte offset within the parent
	// BitSize and BitOffset describe a bitfield: BitOffset counts from the
	// least significant bit of the storage at Offset (little-endian).
	BitSize   int64
	BitOffset int64
	// Base marks a C++ base class subobject.
	Base bool
	// Artificial marks a member the compiler added (a C++ vtable
	// pointer), which ptype does not list.
	Artificial bool
}

// Enumerator is one named value of an enum.
type Enumerator struct {
	Name  string
	Value int64
}

// VariantPart is a Rust-style tagged union: the discriminant and the
// variants it selects.
type VariantPart struct {
	Discr    *Field // nil when the discriminant is niche-encoded in a field
	Variants []Variant
}

// Variant is one arm of a VariantPart. Default is the arm taken when no
// DiscrValue matches.
type Variant struct {
	DiscrValue int64
	Default    bool
	Field      Field
}

// Value is a typed location in the target, or a value computed by an
// expression. Exactly one of Addr (in memory) or Bytes (in registers, or
// computed) holds the contents, unless Optimized is set.
type Value struct {
	Name string
	Type *Type
	// Addr is the address of an lvalue in memory.
	Addr  uint64
	InMem bool
	Bytes []byte
	// Optimized marks a variable the compiler did not keep at this pc.
	Optimized bool
	// Err explains why the value could not be read (unreadable memory).
	Err error
	// Synthetic is set on a pointer the compiler optimized away whose
	// target is known (DW_OP_implicit_pointer); Bytes then hold zeros,
	// which is what gdb computes with, and printing shows gdb's
	// "<synthetic pointer>".
	Synthetic *ImplicitPointer
}

// DW_ATE_* base type encodings (Type.Encoding), shared by the type reader,
// the location evaluator, the formatter and the expression evaluator.
const (
	ATEAddress      = 0x1
	ATEBoolean      = 0x2
	ATEComplexFloat = 0x3
	ATEFloat        = 0x4
	ATESigned       = 0x5
	ATESignedChar   = 0x6
	ATEUnsigned     = 0x7
	ATEUnsignedChar = 0x8
	ATESignedFixed  = 0xd
	ATEUTF          = 0x10
)
