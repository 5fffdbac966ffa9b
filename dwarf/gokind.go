package dwarf

// Go's compiler tags each type with its reflect.Kind (DW_AT_go_kind), and
// a slice, a string or an interface is a plain struct in DWARF otherwise:
// the kind is what tells the formatter, the expression evaluator and the
// servers how to read a Go value. The constants are reflect.Kind's
// values, named here once so that no caller writes a bare number.

// The reflect.Kind values that DW_AT_go_kind carries (Type.GoKind).
const (
	GoKindBool          = 1
	GoKindInt           = 2
	GoKindInt8          = 3
	GoKindInt16         = 4
	GoKindInt32         = 5
	GoKindInt64         = 6
	GoKindUint          = 7
	GoKindUint8         = 8
	GoKindUint16        = 9
	GoKindUint32        = 10
	GoKindUint64        = 11
	GoKindUintptr       = 12
	GoKindFloat32       = 13
	GoKindFloat64       = 14
	GoKindComplex64     = 15
	GoKindComplex128    = 16
	GoKindArray         = 17
	GoKindChan          = 18
	GoKindFunc          = 19
	GoKindInterface     = 20
	GoKindMap           = 21
	GoKindPointer       = 22
	GoKindSlice         = 23
	GoKindString        = 24
	GoKindStruct        = 25
	GoKindUnsafePointer = 26
)

// GoKindOf is the reflect.Kind of a Go type: the first DW_AT_go_kind along
// its typedef chain (a named type may carry it on the typedef only), else
// one derived from the DWARF shape for the types older compilers leave
// untagged.
func GoKindOf(t *Type) int {
	for u := t; u != nil; u = u.Elem {
		if u.GoKind != 0 {
			return u.GoKind
		}
		if u.Kind != KindTypedef && u.Kind != KindQualified {
			break
		}
	}
	r := stripType(t)
	switch r.Kind {
	case KindPointer:
		if stripType(r.Elem).Kind == KindVoid {
			return GoKindUnsafePointer
		}
		return GoKindPointer
	case KindArray:
		return GoKindArray
	case KindStruct:
		return GoKindStruct
	case KindFunc:
		return GoKindFunc
	case KindBase:
		switch r.Encoding {
		case ATEBoolean:
			return GoKindBool
		case ATEFloat:
			if r.Size == 4 {
				return GoKindFloat32
			}
			return GoKindFloat64
		case ATEComplexFloat:
			if r.Size == 8 {
				return GoKindComplex64
			}
			return GoKindComplex128
		case ATESigned, ATESignedChar:
			return GoKindInt64
		}
		return GoKindUint
	}
	return 0
}
