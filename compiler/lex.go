package compiler

import (
	"errors"
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler/sqllex"
)

// token is one lexical unit of an SQL fragment from a spec.
type token struct {
	kind tokKind
	text string // identifiers as written; keywords upper-cased in upper
	off  int    // byte offset in the fragment
}

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tQuotedIdent
	tNumber
	tString
	tOp
	tPunct
	tParam
	tComment
)

// OffsetError is an error at a byte offset of an SQL fragment from a spec
// (a quality check, a measure, a source query). Validation turns the
// offset into a line and column inside the YAML scalar.
type OffsetError struct {
	Off int
	Msg string
}

func (e *OffsetError) Error() string { return e.Msg }

func errAt(off int, format string, args ...any) *OffsetError {
	return &OffsetError{Off: off, Msg: fmt.Sprintf(format, args...)}
}

func (t token) upper() string { return strings.ToUpper(t.text) }

// lexSQL splits a quality check or a measure into tokens, with the Check
// rules of sqllex: every comment form is a comment (which the parsers
// refuse), "--" always starts one, literals are one line of printable text
// without backslashes, and what engines read differently is refused. A
// string token's text is its value, a quoted name's text the name.
func lexSQL(s string) ([]token, error) {
	toks, err := lexSQLWith(sqllex.Check, s)
	if err != nil {
		return nil, err
	}
	return toks, nil
}

var kinds = map[sqllex.Kind]tokKind{
	sqllex.EOF: tEOF, sqllex.Word: tIdent, sqllex.Quoted: tQuotedIdent, sqllex.Number: tNumber, sqllex.String: tString,
	sqllex.Op: tOp, sqllex.Punct: tPunct, sqllex.Param: tParam, sqllex.Comment: tComment,
}

func offsetError(err error) *OffsetError {
	var le *sqllex.Error
	if errors.As(err, &le) {
		return &OffsetError{Off: le.Off, Msg: le.Msg}
	}
	return &OffsetError{Msg: err.Error()}
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// checkQuery validates a source query with the Portable rules: the
// reading every engine agrees with, refusing what they read differently.
// Compiling for a dialect reads it again with that engine's rules (see
// CheckQuery).
func checkQuery(q, watermark string) []*OffsetError {
	return QueryProblems(sqllex.Portable, q, watermark)
}

// QueryProblems reads a source query with the lexical rules r and returns
// what keeps the window from wrapping it safely: text the rules cannot
// read with certainty, more than one statement, bind parameters,
// parentheses that do not balance (the query is wrapped in one), or a
// filter on the watermark column that is not half-open (BETWEEN, <=, or
// >= with the column on the right), which would read boundary rows twice.
func QueryProblems(r *sqllex.Rules, q, watermark string) []*OffsetError {
	all, err := lexSQLWith(r, q)
	if err != nil {
		return []*OffsetError{err}
	}
	var toks []token
	for _, t := range all {
		if t.kind != tComment {
			toks = append(toks, t)
		}
	}
	var problems []*OffsetError
	if toks[0].upper() != "SELECT" && toks[0].upper() != "WITH" {
		problems = append(problems, errAt(toks[0].off, "must be a SELECT (or WITH ... SELECT)"))
	}
	isWM := func(i int) bool {
		if i < 0 || i >= len(toks) {
			return false
		}
		t := toks[i]
		return (t.kind == tIdent || t.kind == tQuotedIdent) && strings.EqualFold(t.text, watermark)
	}
	var open []int // offsets of the unclosed parentheses
	for i, t := range toks {
		switch {
		case t.kind == tPunct && t.text == "(":
			open = append(open, t.off)
		case t.kind == tPunct && t.text == ")":
			if len(open) == 0 {
				problems = append(problems, errAt(t.off, "')' closes a parenthesis the query did not open: incrc wraps the query in one, which it would close"))
				continue
			}
			open = open[:len(open)-1]
		case t.kind == tPunct && t.text == ";":
			problems = append(problems, errAt(t.off, "must be one statement: remove the ';'"))
		case t.kind == tIdent && !r.Portable && r != sqllex.Check && i+1 < len(toks) && toks[i+1].kind == tPunct && toks[i+1].text == "(" &&
			(i == 0 || toks[i-1].text != ".") && !r.HasFunction(t.text):
			problems = append(problems, errAt(t.off, "calls %s(), a function of %s only, and this query runs on %s, which has none: a source query is written in the dialect of the database it runs on (the target's, or with source.connection the source's)",
				strings.ToLower(t.text), strings.Join(sqllex.OnlyIn(t.text), " and "), r.Name))
		case t.kind == tParam:
			problems = append(problems, errAt(t.off, "must not use bind parameters (%s): the window is applied outside the query", t.text))
		case watermark == "":
		case t.kind == tIdent && t.upper() == "BETWEEN" && isWM(i-1):
			problems = append(problems, errAt(t.off, "filters the watermark column %q with BETWEEN, which includes both ends and reads boundary rows twice: remove the filter, incrc applies the half-open window [lo, hi) outside the query", watermark))
		case t.kind == tOp && t.text == "<=" && isWM(i-1), t.kind == tOp && t.text == ">=" && isWM(i+1):
			problems = append(problems, errAt(t.off, "filters the watermark column %q with an inclusive upper bound, which reads boundary rows twice: remove the filter, incrc applies the half-open window [lo, hi) outside the query", watermark))
		}
	}
	for _, off := range open {
		problems = append(problems, errAt(off, "'(' is never closed"))
	}
	return problems
}

// lexSQLWith is lexSQL with other rules: an engine's, or Portable.
func lexSQLWith(r *sqllex.Rules, s string) ([]token, *OffsetError) {
	toks, err := sqllex.Lex(r, s)
	if err != nil {
		return nil, offsetError(err)
	}
	out := make([]token, len(toks))
	for i, t := range toks {
		out[i] = token{kind: kinds[t.Kind], text: t.Text, off: t.Off}
		if t.Kind == sqllex.String || t.Kind == sqllex.Quoted {
			out[i].text = t.Value
		}
	}
	return out, nil
}

// CheckQuery reads a plan's source query with an engine's rules, as
// compiling for that engine must: validation read it with the Portable
// rules, and this reading refuses what only that engine reads differently
// or what its rules cannot classify. Each problem is a diagnostic at its
// place in the spec (at no place for a plan built without a spec).
func CheckQuery(p *ir.Plan, r *sqllex.Rules) Diagnostics {
	q := p.Source.Query
	if q == "" {
		return nil
	}
	wm := ""
	if p.Watermark != nil {
		wm = p.Watermark.Name
	}
	s := p.SourceQuery
	// Lower trims the query: offsets in it start after the leading space.
	lead := max(strings.Index(s.Value, q), 0)
	var ds Diagnostics
	for _, problem := range QueryProblems(r, q, wm) {
		ds.add(s.At(lead+problem.Off), "source.query, as %s reads it: %s", r.Name, problem.Msg)
	}
	return ds
}
