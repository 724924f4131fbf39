package sqllex

import (
	"errors"
	"fmt"
	"strings"
)

// QueryProblems reads a source query with the rules r and returns what
// keeps the window from wrapping it safely: text the rules cannot read
// with certainty, more than one statement, bind parameters, parentheses
// that do not balance (the query is wrapped in one), a function only other
// engines have, or a filter on the watermark column that is not half-open
// (BETWEEN, <=, or >= with the column on the right), which would read
// boundary rows twice. Each problem is at its byte offset in q.
//
// It lives here, beside the lexer, because both sides ask it: validation
// with the Portable rules, and each dialect with its engine's rules before
// it renders a statement around the query.
func QueryProblems(r *Rules, q, watermark string) []*Error {
	all, err := Lex(r, q)
	if err != nil {
		var le *Error
		if errors.As(err, &le) {
			return []*Error{le}
		}
		return []*Error{{Msg: err.Error()}}
	}
	var toks []Token
	for _, t := range all {
		if t.Kind != Comment {
			toks = append(toks, t)
		}
	}
	at := func(off int, format string, args ...any) *Error {
		return &Error{Off: off, Msg: fmt.Sprintf(format, args...)}
	}
	var problems []*Error
	if first := strings.ToUpper(toks[0].Value); first != "SELECT" && first != "WITH" {
		problems = append(problems, at(toks[0].Off, "must be a SELECT (or WITH ... SELECT)"))
	}
	isWM := func(i int) bool {
		if i < 0 || i >= len(toks) {
			return false
		}
		t := toks[i]
		return (t.Kind == Word || t.Kind == Quoted) && strings.EqualFold(t.Value, watermark)
	}
	punct := func(t Token, s string) bool { return t.Kind == Punct && t.Text == s }
	var open []int // offsets of the unclosed parentheses
	for i, t := range toks {
		switch {
		case punct(t, "("):
			open = append(open, t.Off)
		case punct(t, ")"):
			if len(open) == 0 {
				problems = append(problems, at(t.Off, "')' closes a parenthesis the query did not open: incrc wraps the query in one, which it would close"))
				continue
			}
			open = open[:len(open)-1]
		case punct(t, ";"):
			problems = append(problems, at(t.Off, "must be one statement: remove the ';'"))
		case t.Kind == Word && !r.Portable && r != Check && i+1 < len(toks) && punct(toks[i+1], "(") &&
			(i == 0 || toks[i-1].Value != ".") && !r.HasFunction(t.Text):
			problems = append(problems, at(t.Off, "calls %s(), a function of %s only, and this query runs on %s, which has none: a source query is written in the dialect of the database it runs on (the target's, or with source.connection the source's)",
				strings.ToLower(t.Text), strings.Join(OnlyIn(t.Text), " and "), r.Name))
		case t.Kind == Param:
			problems = append(problems, at(t.Off, "must not use bind parameters (%s): the window is applied outside the query", t.Text))
		case watermark == "":
		case t.Kind == Word && strings.ToUpper(t.Text) == "BETWEEN" && isWM(i-1):
			problems = append(problems, at(t.Off, "filters the watermark column %q with BETWEEN, which includes both ends and reads boundary rows twice: remove the filter, incrc applies the half-open window [lo, hi) outside the query", watermark))
		case t.Kind == Op && t.Text == "<=" && isWM(i-1), t.Kind == Op && t.Text == ">=" && isWM(i+1):
			problems = append(problems, at(t.Off, "filters the watermark column %q with an inclusive upper bound, which reads boundary rows twice: remove the filter, incrc applies the half-open window [lo, hi) outside the query", watermark))
		}
	}
	for _, off := range open {
		problems = append(problems, at(off, "'(' is never closed"))
	}
	return problems
}
