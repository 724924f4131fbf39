package dialects

import (
	"strings"

	"github.com/incrc/incrc/compiler"
)

// Expr spells an expression from the spec's restricted grammar. Column
// references are quoted (and qualified with alias when it is not empty),
// parameters become markers, and parentheses follow precedence.
func Expr(w *Writer, alias string, e compiler.Expr) string {
	s, _ := expr(w, alias, e)
	return s
}

// Precedence, lowest first.
const (
	precOr = iota + 1
	precAnd
	precNot
	precCmp
	precAdd
	precMul
	precUnary
	precAtom
)

func binaryPrec(op string) int {
	switch op {
	case "OR":
		return precOr
	case "AND":
		return precAnd
	case "+", "-":
		return precAdd
	case "*", "/":
		return precMul
	}
	return precCmp
}

func expr(w *Writer, alias string, e compiler.Expr) (string, int) {
	switch e := e.(type) {
	case compiler.ColRef:
		return w.Col(alias, e.Name), precAtom
	case compiler.Lit:
		if _, ok := w.d.(StringQuoter); ok && len(e.Text) >= 2 && strings.HasPrefix(e.Text, "'") {
			// The spec spells strings the standard way ('' for a quote).
			inner := e.Text[1 : len(e.Text)-1]
			return w.String(strings.ReplaceAll(inner, "''", "'")), precAtom
		}
		return e.Text, precAtom
	case compiler.ParamRef:
		return w.Param(e.Name), precAtom
	case compiler.Unary:
		if e.Op == "NOT" {
			// NOT's operand is always parenthesised unless it is an atom: its
			// precedence against comparisons differs between engines' modes.
			return "NOT " + wrap(w, alias, e.X, precAtom), precNot
		}
		return e.Op + wrap(w, alias, e.X, precUnary), precUnary
	case compiler.Binary:
		p := binaryPrec(e.Op)
		// Left-associative: the right operand needs parentheses at equal
		// precedence (a - (b - c)), and comparisons never chain.
		right := p + 1
		left := p
		if p == precCmp {
			left = p + 1
		}
		return wrap(w, alias, e.L, left) + " " + e.Op + " " + wrap(w, alias, e.R, right), p
	case compiler.IsNull:
		if e.Not {
			return wrap(w, alias, e.X, precCmp+1) + " IS NOT NULL", precCmp
		}
		return wrap(w, alias, e.X, precCmp+1) + " IS NULL", precCmp
	case compiler.In:
		items := make([]string, len(e.List))
		for i, x := range e.List {
			items[i], _ = expr(w, alias, x)
		}
		op := " IN ("
		if e.Not {
			op = " NOT IN ("
		}
		return wrap(w, alias, e.X, precCmp+1) + op + strings.Join(items, ", ") + ")", precCmp
	case compiler.Call:
		args := make([]string, len(e.Args))
		for i, x := range e.Args {
			args[i], _ = expr(w, alias, x)
		}
		return strings.ToUpper(e.Fn) + "(" + strings.Join(args, ", ") + ")", precAtom
	}
	w.Fail(Unsupported(w.d, "expression"))
	return "", precAtom
}

func wrap(w *Writer, alias string, e compiler.Expr, min int) string {
	s, p := expr(w, alias, e)
	if p < min {
		return "(" + s + ")"
	}
	return s
}
