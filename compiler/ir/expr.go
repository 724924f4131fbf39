package ir

import "strings"

// Expr is a parsed quality check. Only column references, literals,
// comparisons, arithmetic, AND/OR/NOT, IS [NOT] NULL, [NOT] IN and a few
// functions are accepted, so a check can never carry SQL of its own: it is
// re-spelled from the tree by each dialect.
type Expr interface{ exprNode() }

type (
	// ColRef is a declared column.
	ColRef struct{ Name string }
	// Lit is TRUE, FALSE, NULL or a number. The parser keeps numbers in
	// CanonicalNumber's form; a dialect re-spells a Lit from that form and
	// refuses anything else, so no text of a spec reaches SQL through it.
	Lit struct{ Text string }
	// Str is a string literal, decoded: its value, not the spec's
	// spelling. Each dialect spells it by its own literal rule.
	Str struct{ Value string }
	// Unary is NOT x or -x.
	Unary struct {
		Op string
		X  Expr
	}
	// Binary is l op r for comparison, arithmetic, AND and OR.
	Binary struct {
		Op   string
		L, R Expr
	}
	// IsNull is x IS [NOT] NULL.
	IsNull struct {
		X   Expr
		Not bool
	}
	// In is x [NOT] IN (list).
	In struct {
		X    Expr
		List []Expr
		Not  bool
	}
	// Call is one of the allowed functions.
	Call struct {
		Fn   string
		Args []Expr
	}
)

func (ColRef) exprNode() {}

func (Lit) exprNode() {}

func (Str) exprNode() {}

func (Unary) exprNode() {}

func (Binary) exprNode() {}

func (IsNull) exprNode() {}

func (In) exprNode() {}

func (Call) exprNode() {}

// Columns returns the columns e refers to, in order of appearance.
func Columns(e Expr) []string {
	var out []string
	var walk func(Expr)
	walk = func(e Expr) {
		switch e := e.(type) {
		case ColRef:
			if !contains(out, e.Name) {
				out = append(out, e.Name)
			}
		case Unary:
			walk(e.X)
		case Binary:
			walk(e.L)
			walk(e.R)
		case IsNull:
			walk(e.X)
		case Exact:
			walk(e.X)
		case In:
			walk(e.X)
			for _, x := range e.List {
				walk(x)
			}
		case Call:
			for _, x := range e.Args {
				walk(x)
			}
		}
	}
	walk(e)
	return out
}

// Measure is one reconciliation measure: count, or fn(column).
type Measure struct {
	Fn     string // count | sum | min | max
	Column string // empty for count(*)
}

func (m Measure) String() string {
	if m.Column == "" {
		return m.Fn
	}
	return m.Fn + "(" + m.Column + ")"
}

// CanonicalNumber re-spells a number in the one form every engine reads
// the same way (digits, an optional fraction with digits on both sides of
// the point, an optional exponent "e" with a sign only when negative), or
// reports that s is not a number.
func CanonicalNumber(s string) (string, bool) {
	// A number as every engine reads it: digits, a fraction, an exponent
	// (numberParts).
	intPart, frac, sign, exp, ok := numberParts(s)
	if !ok || intPart == "" && frac == "" {
		return "", false
	}
	if intPart == "" {
		intPart = "0"
	}
	out := intPart
	if strings.Contains(s, ".") {
		if frac == "" {
			frac = "0"
		}
		out += "." + frac
	}
	if exp != "" {
		out += "e"
		if sign == "-" {
			out += "-"
		}
		out += exp
	}
	return out, true
}
