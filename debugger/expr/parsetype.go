package expr

// Type names inside expressions: casts, sizeof and {T} need to tell a
// type from a value, which C's grammar leaves to the symbol table; the
// parser asks the scope, as gdb does.

import (
	"strings"
)

// tryCast parses `(type) operand` at a '('. It reports false, with the
// position unchanged, when the parentheses hold an expression.
func (p *parser) tryCast() (Node, bool, error) {
	save := p.pos
	p.next() // (
	tn, ok := p.tryTypeName(true)
	if !ok || !p.is(")") {
		p.pos = save
		return nil, false, nil
	}
	cast := !tn.simple()
	if !cast {
		// A lone name: a cast only if it names a type.
		if p.isType != nil {
			cast = p.isType(tn.Name)
		} else {
			switch after := p.peekAt(1); after.kind {
			case tokIdent, tokInt, tokFloat, tokChar, tokString, tokDollar:
				cast = true
			case tokPunct:
				switch after.text {
				case "(", "!", "~", "{":
					cast = true
				case "*", "&", "-", "+":
					// (T)*p or (x)*p: decided by the Scope at evaluation.
					p.ambiguous = true
				}
			}
		}
	}
	if !cast {
		p.pos = save
		return nil, false, nil
	}
	p.next() // )
	x, err := p.parseUnary()
	if err != nil {
		return nil, true, err
	}
	return &Cast{Type: tn, X: x}, true, nil
}

// simple reports whether the type is a lone name, which may as well be a
// variable.
func (t *TypeName) simple() bool {
	if t.Tag != "" || t.Builtin || strings.Contains(t.Name, "<") {
		return false
	}
	for _, op := range t.Ops {
		if op.Kind != '[' { // (a*) and (a&) are no expressions; (a[3]) is
			return false
		}
	}
	return true
}

// cTypeWords are the keywords a C type name is made of.
var cTypeWords = map[string]bool{
	"signed": true, "unsigned": true, "short": true, "long": true, "int": true, "char": true,
	"float": true, "double": true, "void": true, "_Bool": true, "bool": true,
	"__int128": true, "wchar_t": true, "char16_t": true, "char32_t": true, "char8_t": true,
}

var typeQualifiers = map[string]bool{"const": true, "volatile": true, "restrict": true, "__restrict": true, "_Atomic": true}

// tryTypeName parses a type name at the current position; on failure the
// position is unchanged. allowName permits a plain (possibly qualified or
// templated) name as the base.
func (p *parser) tryTypeName(allowName bool) (*TypeName, bool) {
	save := p.pos
	fail := func() (*TypeName, bool) { p.pos = save; return nil, false }
	for p.peek().kind == tokIdent && typeQualifiers[p.peek().text] {
		p.next()
	}
	tn := &TypeName{}
	t := p.peek()
	if t.kind != tokIdent && !(t.kind == tokPunct && t.text == "::") {
		return fail()
	}
	switch {
	case t.text == "struct" || t.text == "union" || t.text == "enum" || t.text == "class":
		p.next()
		name, ok := p.qualifiedName(false, true)
		if !ok {
			return fail()
		}
		tn.Tag, tn.Name = t.text, t.text+" "+name
	case cTypeWords[t.text]:
		var words []string
		for p.peek().kind == tokIdent && (cTypeWords[p.peek().text] || typeQualifiers[p.peek().text]) {
			if w := p.next().text; cTypeWords[w] {
				words = append(words, w)
			}
		}
		name, ok := canonicalCType(words)
		if !ok {
			return fail()
		}
		tn.Name, tn.Builtin = name, true
	default:
		if !allowName || t.text == "sizeof" {
			return fail()
		}
		name, ok := p.qualifiedName(true, true)
		if !ok {
			return fail()
		}
		tn.Name = name
	}
	for p.peek().kind == tokIdent && typeQualifiers[p.peek().text] {
		p.next()
	}
	for {
		switch {
		case p.is("*"):
			p.next()
			tn.Ops = append(tn.Ops, TypeOp{Kind: '*'})
			for p.peek().kind == tokIdent && typeQualifiers[p.peek().text] {
				p.next()
			}
			continue
		case p.is("&"), p.is("&&"):
			p.next()
			tn.Ops = append(tn.Ops, TypeOp{Kind: '&'})
			continue
		}
		break
	}
	for p.is("[") {
		p.next()
		lit := p.peek()
		if lit.kind != tokInt {
			return fail()
		}
		p.next()
		v, _, _, err := parseIntText(lit.text, false)
		if err != nil || !p.accept("]") {
			return fail()
		}
		tn.Ops = append(tn.Ops, TypeOp{Kind: '[', N: int64(v)})
	}
	return tn, true
}

// qualifiedName reads name(::name)*, with Go's pkg.Name dots when dots is
// set and template arguments when templates is set (in types only: in an
// expression a<b is a comparison). A leading :: (the global scope) is
// dropped.
func (p *parser) qualifiedName(dots, templates bool) (string, bool) {
	var b strings.Builder
	p.accept("::")
	for {
		t := p.peek()
		if t.kind != tokIdent || typeQualifiers[t.text] || t.text == "sizeof" {
			return "", false
		}
		p.next()
		b.WriteString(t.text)
		if templates && p.is("<") {
			args, ok := p.templateArgs()
			if !ok {
				return "", false
			}
			b.WriteString(args)
		}
		switch {
		case p.is("::"):
			p.next()
			b.WriteString("::")
		case dots && p.is(".") && p.peekAt(1).kind == tokIdent:
			p.next()
			b.WriteString(".")
		default:
			return b.String(), true
		}
	}
}

// templateArgs reads a balanced <...> as gdb spells it ("<int, std::allocator<int> >").
func (p *parser) templateArgs() (string, bool) {
	var b strings.Builder
	depth := 0
	for {
		t := p.next()
		switch {
		case t.kind == tokEOF:
			return "", false
		case t.kind == tokPunct && t.text == "<":
			depth++
			b.WriteString("<")
		case t.kind == tokPunct && (t.text == ">" || t.text == ">>"):
			for range len(t.text) {
				if depth == 0 {
					return "", false
				}
				depth--
				if strings.HasSuffix(b.String(), ">") {
					b.WriteString(" ")
				}
				b.WriteString(">")
			}
			if depth == 0 {
				return b.String(), true
			}
		case t.kind == tokPunct && t.text == ",":
			b.WriteString(", ")
		case t.kind == tokPunct && (t.text == "*" || t.text == "&"):
			if s := b.String(); !strings.HasSuffix(s, "*") && !strings.HasSuffix(s, "&") {
				b.WriteString(" ")
			}
			b.WriteString(t.text)
		default:
			if s := b.String(); len(s) > 0 && (isIdentChar(s[len(s)-1])) && (t.kind == tokIdent || t.kind == tokInt) {
				b.WriteString(" ")
			}
			b.WriteString(t.text)
		}
	}
}

// canonicalCType spells a list of C type keywords as gdb does.
func canonicalCType(words []string) (string, bool) {
	count := map[string]int{}
	for _, w := range words {
		count[w]++
	}
	uns, sgn, longs, short := count["unsigned"] > 0, count["signed"] > 0, count["long"], count["short"] > 0
	pre := ""
	if uns {
		pre = "unsigned "
	}
	switch {
	case len(words) == 0 || uns && sgn || longs > 2:
		return "", false
	case count["char"] > 0:
		switch {
		case uns:
			return "unsigned char", true
		case sgn:
			return "signed char", true
		}
		return "char", true
	case count["double"] > 0:
		if longs > 0 {
			return "long double", true
		}
		return "double", true
	case count["float"] > 0:
		return "float", true
	case count["void"] > 0:
		return "void", true
	case count["_Bool"] > 0:
		return "_Bool", true
	case count["bool"] > 0:
		return "bool", true
	case count["__int128"] > 0:
		return pre + "__int128", true
	case count["wchar_t"] > 0, count["char16_t"] > 0, count["char32_t"] > 0, count["char8_t"] > 0:
		return words[len(words)-1], true
	case short:
		return pre + "short", true
	case longs == 2:
		return pre + "long long", true
	case longs == 1:
		return pre + "long", true
	}
	return pre + "int", true
}
