package dialects

import (
	"fmt"

	"github.com/incrc/incrc/compiler/ir"
)

// Expr spells an expression from the spec's restricted grammar, from its
// tree: nothing of the spec's text is copied. Column references are quoted
// (and qualified with alias when it is not empty), parameters become
// markers, string literals are spelled by the dialect's own rule and
// numbers re-spelled from their validated form, and parentheses follow
// precedence.
//
// The spacing closes the class of token sequences an engine could read
// differently. A comment opener ("--", "/*", "//", "#") needs two
// adjacent characters outside a literal or a quoted name, and the only
// operator characters this writes are a binary operator, always with a
// space on each side, and a unary minus, always directly before a column,
// a number, a marker or "(" (its operand is parenthesized unless it is
// one of those): so a "-" is never followed by "-", "/" never by "*" or
// "/", and "#" is never written. Names and literals are each one token
// (the lex-back checks it), and a number never runs into a name.
func Expr(w *Writer, alias string, e ir.Expr) { writeExpr(w, alias, e) }

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

// binaryPrec is the precedence of each binary operator the grammar has;
// an operator not here is refused, not copied.
var binaryPrec = map[string]int{
	"OR": precOr, "AND": precAnd,
	"=": precCmp, "<>": precCmp, "<": precCmp, "<=": precCmp, ">": precCmp, ">=": precCmp,
	"+": precAdd, "-": precAdd, "*": precMul, "/": precMul,
}

// writeExpr appends the expression as it walks the tree.
func writeExpr(w *Writer, alias string, e ir.Expr) {
	switch e := e.(type) {
	case ir.ColRef:
		w.Col(alias, e.Name)
		return
	case ir.Lit:
		switch e.Text {
		case "TRUE", "FALSE", "NULL":
			w.S(e.Text)
			return
		}
		w.Number(e.Text)
		return
	case ir.Str:
		w.String(e.Value)
		return
	case ir.ParamRef:
		w.Param(e.Name)
		return
	case ir.Unary:
		switch e.Op {
		case "NOT":
			// NOT's operand is always parenthesised unless it is an atom: its
			// precedence against comparisons differs between engines' modes.
			w.S("NOT ")
			wrap(w, alias, e.X, precAtom)
			return
		case "-":
			w.S("-")
			minusOperand(w, alias, e.X)
			return
		}
	case ir.Binary:
		p, ok := binaryPrec[e.Op]
		if !ok {
			break
		}
		// Left-associative: the right operand needs parentheses at equal
		// precedence (a - (b - c)), and comparisons never chain.
		right := p + 1
		left := p
		if p == precCmp {
			left = p + 1
		}
		wrap(w, alias, e.L, left)
		w.S(" ", e.Op, " ")
		wrap(w, alias, e.R, right)
		return
	case ir.Exact:
		if x, ok := w.d.(ExactTexter); ok {
			x.ExactText(w, func() { writeExpr(w, alias, e.X) })
			return
		}
		writeExpr(w, alias, e.X)
		return
	case ir.IsNull:
		wrap(w, alias, e.X, precCmp+1)
		if e.Not {
			w.S(" IS NOT NULL")
		} else {
			w.S(" IS NULL")
		}
		return
	case ir.In:
		// In the order of the text: a parameter is recorded where it is
		// spelled, and an engine with positional markers (?) binds them in
		// that order.
		wrap(w, alias, e.X, precCmp+1)
		if e.Not {
			w.S(" NOT IN ")
		} else {
			w.S(" IN ")
		}
		writeExprList(w, alias, e.List)
		return
	case ir.Call:
		if !isFuncName(e.Fn) {
			break
		}
		for i := 0; i < len(e.Fn); i++ {
			c := e.Fn[i]
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			w.cur = append(w.cur, c)
		}
		writeExprList(w, alias, e.Args)
		return
	}
	w.Fail(Unsupported(w.d, fmt.Sprintf("expression %#v", e)))
}

// writeExprList writes xs between parentheses, separated by ", ": an IN
// list, a call's arguments.
func writeExprList(w *Writer, alias string, xs []ir.Expr) {
	w.S("(")
	for i, x := range xs {
		if i > 0 {
			w.S(", ")
		}
		writeExpr(w, alias, x)
	}
	w.S(")")
}

// prec is the precedence of what writeExpr writes for e, known from the
// tree alone: an expression it cannot write fails the statement anyway.
func prec(w *Writer, e ir.Expr) int {
	switch e := e.(type) {
	case ir.Unary:
		switch e.Op {
		case "NOT":
			return precNot
		case "-":
			return precUnary
		}
	case ir.Binary:
		if p, ok := binaryPrec[e.Op]; ok {
			return p
		}
	case ir.Exact:
		if _, ok := w.d.(ExactTexter); !ok {
			return prec(w, e.X)
		}
	case ir.IsNull, ir.In:
		return precCmp
	}
	return precAtom
}

// minusOperand spells the operand of a unary minus: bare when it is a
// column, a number or a marker (none starts with "-"), parenthesized
// otherwise, so that "- -1" is spelled -(-1) and never --1.
func minusOperand(w *Writer, alias string, x ir.Expr) {
	switch x := x.(type) {
	case ir.ColRef, ir.ParamRef:
		writeExpr(w, alias, x)
		return
	case ir.Lit:
		if _, ok := ir.CanonicalNumber(x.Text); ok {
			w.Number(x.Text)
			return
		}
	}
	w.S("(")
	writeExpr(w, alias, x)
	w.S(")")
}

// isFuncName says whether fn is a function name the grammar allows,
// ^[a-z][a-z0-9_]*$: its name is written as a word, so nothing but
// letters, digits and _ may reach SQL through it.
func isFuncName(fn string) bool {
	for i := 0; i < len(fn); i++ {
		c := fn[i]
		if !('a' <= c && c <= 'z' || i > 0 && ('0' <= c && c <= '9' || c == '_')) {
			return false
		}
	}
	return fn != ""
}

// wrap writes e, parenthesized when it binds less tightly than min.
func wrap(w *Writer, alias string, e ir.Expr, min int) {
	if prec(w, e) < min {
		w.S("(")
		writeExpr(w, alias, e)
		w.S(")")
		return
	}
	writeExpr(w, alias, e)
}
