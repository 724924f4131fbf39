package dialects

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/incrc/incrc/compiler"
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

// binaryPrec is the precedence of each binary operator the grammar has;
// an operator not here is refused, not copied.
var binaryPrec = map[string]int{
	"OR": precOr, "AND": precAnd,
	"=": precCmp, "<>": precCmp, "<": precCmp, "<=": precCmp, ">": precCmp, ">=": precCmp,
	"+": precAdd, "-": precAdd, "*": precMul, "/": precMul,
}

func expr(w *Writer, alias string, e compiler.Expr) (string, int) {
	switch e := e.(type) {
	case compiler.ColRef:
		return w.Col(alias, e.Name), precAtom
	case compiler.Lit:
		switch e.Text {
		case "TRUE", "FALSE", "NULL":
			return e.Text, precAtom
		}
		return w.Number(e.Text), precAtom
	case compiler.Str:
		return w.String(e.Value), precAtom
	case compiler.ParamRef:
		return w.Param(e.Name), precAtom
	case compiler.Unary:
		switch e.Op {
		case "NOT":
			// NOT's operand is always parenthesised unless it is an atom: its
			// precedence against comparisons differs between engines' modes.
			return "NOT " + wrap(w, alias, e.X, precAtom), precNot
		case "-":
			return "-" + minusOperand(w, alias, e.X), precUnary
		}
	case compiler.Binary:
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
		return wrap(w, alias, e.L, left) + " " + e.Op + " " + wrap(w, alias, e.R, right), p
	case compiler.Exact:
		if x, ok := w.d.(ExactTexter); ok {
			s, _ := expr(w, alias, e.X)
			return x.ExactText(s), precAtom
		}
		return expr(w, alias, e.X)
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
		if !funcName.MatchString(e.Fn) {
			break
		}
		args := make([]string, len(e.Args))
		for i, x := range e.Args {
			args[i], _ = expr(w, alias, x)
		}
		return strings.ToUpper(e.Fn) + "(" + strings.Join(args, ", ") + ")", precAtom
	}
	w.Fail(Unsupported(w.d, fmt.Sprintf("expression %#v", e)))
	return "", precAtom
}

// minusOperand spells the operand of a unary minus: bare when it is a
// column, a number or a marker (none starts with "-"), parenthesized
// otherwise, so that "- -1" is spelled -(-1) and never --1.
func minusOperand(w *Writer, alias string, x compiler.Expr) string {
	switch x := x.(type) {
	case compiler.ColRef, compiler.ParamRef:
		s, _ := expr(w, alias, x)
		return s
	case compiler.Lit:
		if _, ok := compiler.CanonicalNumber(x.Text); ok {
			return w.Number(x.Text)
		}
	}
	s, _ := expr(w, alias, x)
	return "(" + s + ")"
}

// funcName is a function the grammar allows; its name is written as a
// word, so nothing but letters, digits and _ may reach SQL through it.
var funcName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func wrap(w *Writer, alias string, e compiler.Expr, min int) string {
	s, p := expr(w, alias, e)
	if p < min {
		return "(" + s + ")"
	}
	return s
}
