package compiler

import (
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

var cmpOps = map[string]bool{"=": true, "<>": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true}

var exprFuncs = map[string]int{"abs": 1, "coalesce": -1, "lower": 1, "upper": 1}

// maxExprDepth bounds nesting in a check: deep enough for any real rule,
// shallow enough that no input can exhaust the stack.
const maxExprDepth = 64

// ParseExpr parses a quality check. Column names are checked against cols.
// Errors are *OffsetError. Comments are refused: a check is re-spelled
// from its tree, and text the tree drops would only mislead a reviewer.
// String literals are one line of printable text (no control characters,
// no line breaks, no backslashes): a literal is spelled by each dialect's
// own rule and lexed back, but a reviewer reading the one-line check
// cannot see a line break in it, and the quarantine reason that quotes
// the check should read as the check does.
func ParseExpr(src string, cols []string) (ir.Expr, error) {
	toks, err := lexSQL(src)
	if err != nil {
		return nil, err
	}
	for _, t := range toks {
		switch t.kind {
		case tComment:
			return nil, errAt(t.off, "comments are not allowed in a check")
		case tParam:
			return nil, errAt(t.off, "%q is not allowed in a check: compare columns with literals", t.text)
		}
	}
	p := &exprParser{toks: toks, cols: cols}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.unexpected(t)
	}
	return e, nil
}

// sqlKeywords are words a check may not use, named in the error so that
// "LIKE is not allowed" is said rather than "unknown column LIKE".
var sqlKeywords = map[string]bool{
	"SELECT": true, "FROM": true, "WHERE": true, "UNION": true, "DROP": true, "DELETE": true, "INSERT": true,
	"UPDATE": true, "EXISTS": true, "CASE": true, "WHEN": true, "BETWEEN": true, "LIKE": true, "ILIKE": true,
	"CAST": true, "INTO": true, "TABLE": true, "EXEC": true, "CALL": true, "GRANT": true,
}

type exprParser struct {
	toks  []token
	i     int
	cols  []string
	depth int
}

func (p *exprParser) unexpected(t token) error {
	switch {
	case t.kind == tEOF:
		return errAt(t.off, "unexpected end of check")
	case t.kind == tPunct && t.text == ";":
		return errAt(t.off, "';' is not allowed in a check: a check is one condition")
	case t.kind == tIdent && sqlKeywords[t.upper()]:
		return errAt(t.off, "%s is not allowed in a check (allowed: columns, literals, comparisons, + - * /, AND, OR, NOT, IS [NOT] NULL, [NOT] IN, abs, coalesce, lower, upper)", t.upper())
	}
	return errAt(t.off, "unexpected %q", t.text)
}

func (p *exprParser) peek() token { return p.toks[p.i] }
func (p *exprParser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *exprParser) keyword(words ...string) bool {
	for k, w := range words {
		t := p.toks[min(p.i+k, len(p.toks)-1)]
		if t.kind != tIdent || t.upper() != w {
			return false
		}
	}
	p.i += len(words)
	return true
}

func (p *exprParser) punct(s string) bool {
	if t := p.peek(); t.kind == tPunct && t.text == s {
		p.i++
		return true
	}
	return false
}

func (p *exprParser) or() (ir.Expr, error) {
	if p.depth++; p.depth > maxExprDepth {
		return nil, errAt(p.peek().off, "the check nests deeper than %d levels", maxExprDepth)
	}
	defer func() { p.depth-- }()
	l, err := p.and()
	for err == nil && p.keyword("OR") {
		var r ir.Expr
		if r, err = p.and(); err == nil {
			l = ir.Binary{Op: "OR", L: l, R: r}
		}
	}
	return l, err
}

func (p *exprParser) and() (ir.Expr, error) {
	l, err := p.not()
	for err == nil && p.keyword("AND") {
		var r ir.Expr
		if r, err = p.not(); err == nil {
			l = ir.Binary{Op: "AND", L: l, R: r}
		}
	}
	return l, err
}

func (p *exprParser) not() (ir.Expr, error) {
	if p.keyword("NOT") {
		if p.depth++; p.depth > maxExprDepth {
			return nil, errAt(p.peek().off, "the check nests deeper than %d levels", maxExprDepth)
		}
		defer func() { p.depth-- }()
		x, err := p.not()
		return ir.Unary{Op: "NOT", X: x}, err
	}
	return p.cmp()
}

func (p *exprParser) cmp() (ir.Expr, error) {
	l, err := p.add()
	if err != nil {
		return nil, err
	}
	switch t := p.peek(); {
	case t.kind == tOp && cmpOps[t.text]:
		p.i++
		r, err := p.add()
		op := t.text
		if op == "!=" {
			op = "<>"
		}
		return ir.Binary{Op: op, L: l, R: r}, err
	case p.keyword("IS", "NOT", "NULL"):
		return ir.IsNull{X: l, Not: true}, nil
	case p.keyword("IS", "NULL"):
		return ir.IsNull{X: l, Not: false}, nil
	case p.keyword("NOT", "IN"):
		list, err := p.list()
		return ir.In{X: l, List: list, Not: true}, err
	case p.keyword("IN"):
		list, err := p.list()
		return ir.In{X: l, List: list, Not: false}, err
	}
	return l, nil
}

func (p *exprParser) list() ([]ir.Expr, error) {
	if !p.punct("(") {
		return nil, errAt(p.peek().off, "expected ( after IN")
	}
	var out []ir.Expr
	for {
		e, err := p.add()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if p.punct(")") {
			return out, nil
		}
		if !p.punct(",") {
			return nil, errAt(p.peek().off, "expected , or ) in the IN list")
		}
	}
}

func (p *exprParser) add() (ir.Expr, error) {
	l, err := p.mul()
	for err == nil {
		t := p.peek()
		if t.kind != tOp || t.text != "+" && t.text != "-" {
			break
		}
		p.i++
		var r ir.Expr
		if r, err = p.mul(); err == nil {
			l = ir.Binary{Op: t.text, L: l, R: r}
		}
	}
	return l, err
}

func (p *exprParser) mul() (ir.Expr, error) {
	l, err := p.unary()
	for err == nil {
		t := p.peek()
		if t.kind != tOp || t.text != "*" && t.text != "/" {
			break
		}
		p.i++
		var r ir.Expr
		if r, err = p.unary(); err == nil {
			l = ir.Binary{Op: t.text, L: l, R: r}
		}
	}
	return l, err
}

func (p *exprParser) unary() (ir.Expr, error) {
	if t := p.peek(); t.kind == tOp && t.text == "-" {
		p.i++
		if p.depth++; p.depth > maxExprDepth {
			return nil, errAt(t.off, "the check nests deeper than %d levels", maxExprDepth)
		}
		defer func() { p.depth-- }()
		x, err := p.unary()
		return ir.Unary{Op: "-", X: x}, err
	}
	return p.primary()
}

func (p *exprParser) primary() (ir.Expr, error) {
	t := p.next()
	switch t.kind {
	case tNumber:
		n, ok := ir.CanonicalNumber(t.text)
		if !ok {
			return nil, errAt(t.off, "malformed number %q", t.text)
		}
		return ir.Lit{Text: n}, nil
	case tString:
		return ir.Str{Value: t.text}, nil
	case tPunct:
		if t.text == "(" {
			e, err := p.or()
			if err != nil {
				return nil, err
			}
			if !p.punct(")") {
				return nil, errAt(p.peek().off, "expected )")
			}
			return e, nil
		}
	case tIdent, tQuotedIdent:
		switch u := t.upper(); {
		case t.kind == tIdent && (u == "TRUE" || u == "FALSE" || u == "NULL"):
			return ir.Lit{Text: u}, nil
		case p.punct("("):
			fn := strings.ToLower(t.text)
			arity, ok := exprFuncs[fn]
			if !ok {
				return nil, errAt(t.off, "function %s is not allowed in a check (allowed: abs, coalesce, lower, upper)", quote(t.text))
			}
			var args []ir.Expr
			for !p.punct(")") {
				if len(args) > 0 && !p.punct(",") {
					return nil, errAt(p.peek().off, "expected , or ) in %s()", fn)
				}
				a, err := p.or()
				if err != nil {
					return nil, err
				}
				args = append(args, a)
			}
			switch {
			case arity < 0 && len(args) == 0:
				return nil, errAt(t.off, "%s() takes at least one argument", fn)
			case arity >= 0 && len(args) != arity:
				return nil, errAt(t.off, "%s() takes %d argument(s), got %d", fn, arity, len(args))
			}
			return ir.Call{Fn: fn, Args: args}, nil
		default:
			if t.kind == tIdent && sqlKeywords[u] && !contains(p.cols, t.text) {
				return nil, p.unexpected(t)
			}
			if !contains(p.cols, t.text) {
				return nil, errAt(t.off, "unknown column %s%s", quote(t.text), suggest(t.text, p.cols))
			}
			return ir.ColRef{Name: t.text}, nil
		}
	}
	return nil, p.unexpected(t)
}

// ParseMeasure parses "count", "count(*)", "count(col)", "sum(col)",
// "min(col)" or "max(col)". Errors are *OffsetError.
func ParseMeasure(src string, cols []string) (ir.Measure, error) {
	toks, err := lexSQL(src)
	if err != nil {
		return ir.Measure{}, err
	}
	bad := func(off int) error {
		return errAt(off, "measure %s: expected count, count(col), sum(col), min(col) or max(col)", quote(src))
	}
	for _, t := range toks {
		if t.kind == tComment {
			return ir.Measure{}, bad(t.off)
		}
	}
	if toks[0].kind != tIdent {
		return ir.Measure{}, bad(toks[0].off)
	}
	fn := strings.ToLower(toks[0].text)
	if fn != "count" && fn != "sum" && fn != "min" && fn != "max" {
		return ir.Measure{}, bad(toks[0].off)
	}
	if toks[1].kind == tEOF {
		if fn != "count" {
			return ir.Measure{}, errAt(toks[1].off, "measure %s: %s needs a column, as in %s(amount)", quote(src), fn, fn)
		}
		return ir.Measure{Fn: "count"}, nil
	}
	if toks[1].text != "(" || toks[1].kind != tPunct {
		return ir.Measure{}, bad(toks[1].off)
	}
	arg := toks[2]
	if arg.kind == tEOF {
		return ir.Measure{}, bad(arg.off)
	}
	if toks[3].text != ")" || toks[3].kind != tPunct {
		return ir.Measure{}, bad(toks[3].off)
	}
	if toks[4].kind != tEOF {
		return ir.Measure{}, bad(toks[4].off)
	}
	if fn == "count" && arg.text == "*" && arg.kind == tOp {
		return ir.Measure{Fn: "count"}, nil
	}
	if arg.kind != tIdent && arg.kind != tQuotedIdent {
		return ir.Measure{}, bad(arg.off)
	}
	if !contains(cols, arg.text) {
		return ir.Measure{}, errAt(arg.off, "measure %s: unknown column %s%s", quote(src), quote(arg.text), suggest(arg.text, cols))
	}
	return ir.Measure{Fn: fn, Column: arg.text}, nil
}
