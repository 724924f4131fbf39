package compiler

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
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

// lexSQL splits an SQL fragment into tokens; comments become tComment
// tokens. It fails on what cannot be lexed with certainty, so that nothing
// a spec writes can escape the statement it is placed in. Where engines
// disagree, it takes the reading that sees more code: "--" starts a
// comment only before a space (MySQL reads --x as minus minus x), and a
// backslash is refused inside quotes (MySQL reads it as an escape, so
// its strings end later than everyone else's).
func lexSQL(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-' && (i+2 == len(s) || strings.IndexByte(" \t\r\n", s[i+2]) >= 0):
			j := i
			for j < len(s) && s[j] != '\n' {
				j++
			}
			toks = append(toks, token{tComment, s[i:j], i})
			i = j
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			if i+2 < len(s) && s[i+2] == '!' {
				return nil, errAt(i, "MySQL executes the text of /*! ... */ comments: write it as SQL or remove it")
			}
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, errAt(i, "unterminated /* comment")
			}
			toks = append(toks, token{tComment, s[i : i+end+4], i})
			i += end + 4
		case c == '\'':
			j := i + 1
			for {
				if j >= len(s) {
					return nil, errAt(i, "unterminated string literal: close it with '")
				}
				if s[j] == '\\' {
					return nil, errAt(j, "backslash in a string literal: engines disagree on what it means")
				}
				if s[j] < 0x20 && s[j] != '\t' && s[j] != '\n' && s[j] != '\r' {
					return nil, errAt(j, "control character %q in a string literal", s[j])
				}
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			toks = append(toks, token{tString, s[i : j+1], i})
			i = j + 1
		case c == '"' || c == '`':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, errAt(i, "unterminated quoted identifier: close it with %c", c)
			}
			name := s[i+1 : i+1+end]
			if k := strings.IndexFunc(name, func(r rune) bool { return r == '\\' || r < 0x20 }); k >= 0 {
				return nil, errAt(i+1+k, "%q in a quoted identifier: engines disagree on what it means", name[k])
			}
			toks = append(toks, token{tQuotedIdent, name, i})
			i += end + 2
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			toks = append(toks, token{tIdent, s[i:j], i})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			m := numberRe.FindString(s[i:])
			if j := i + len(m); j < len(s) && (isIdentPart(s[j]) || s[j] == '.') {
				return nil, errAt(i, "malformed number %q", s[i:j+1])
			}
			toks = append(toks, token{tNumber, m, i})
			i += len(m)
		case c == '$' || c == '?' || c == ':' && i+1 < len(s) && isIdentStart(s[i+1]) || c == '@':
			j := i + 1
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			toks = append(toks, token{tParam, s[i:j], i})
			i = j
		case strings.ContainsRune("<>=!", rune(c)):
			j := i + 1
			if j < len(s) && strings.ContainsRune("<>=", rune(s[j])) {
				j++
			}
			toks = append(toks, token{tOp, s[i:j], i})
			i = j
		case c == ':' && i+1 < len(s) && s[i+1] == ':':
			toks = append(toks, token{tOp, "::", i})
			i += 2
		case c == '|' && i+1 < len(s) && s[i+1] == '|':
			toks = append(toks, token{tOp, "||", i})
			i += 2
		case strings.ContainsRune("+-*/%", rune(c)):
			toks = append(toks, token{tOp, string(c), i})
			i++
		case strings.ContainsRune("(),.;", rune(c)):
			toks = append(toks, token{tPunct, string(c), i})
			i++
		default:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return nil, errAt(i, "unexpected character %q", r)
		}
	}
	return append(toks, token{kind: tEOF, off: len(s)}), nil
}

// numberRe is a number as every engine reads it: digits, a fraction, an
// exponent. Anything longer is refused rather than guessed at.
var numberRe = regexp.MustCompile(`^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?`)

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// checkQuery rejects a source query that the window cannot wrap safely:
// more than one statement, bind parameters, or a filter on the watermark
// column that is not half-open (BETWEEN, <=, or >= with the column on the
// right), which would read boundary rows twice.
func checkQuery(q, watermark string) []*OffsetError {
	all, err := lexSQL(q)
	if err != nil {
		return []*OffsetError{err.(*OffsetError)}
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
	for i, t := range toks {
		switch {
		case t.kind == tPunct && t.text == ";":
			problems = append(problems, errAt(t.off, "must be one statement: remove the ';'"))
		case t.kind == tParam:
			problems = append(problems, errAt(t.off, "must not use bind parameters (%s): the window is applied outside the query", t.text))
		case watermark == "":
		case t.kind == tIdent && t.upper() == "BETWEEN" && isWM(i-1):
			problems = append(problems, errAt(t.off, "filters the watermark column %q with BETWEEN, which includes both ends and reads boundary rows twice: remove the filter, incrc applies the half-open window [lo, hi) outside the query", watermark))
		case t.kind == tOp && t.text == "<=" && isWM(i-1), t.kind == tOp && t.text == ">=" && isWM(i+1):
			problems = append(problems, errAt(t.off, "filters the watermark column %q with an inclusive upper bound, which reads boundary rows twice: remove the filter, incrc applies the half-open window [lo, hi) outside the query", watermark))
		}
	}
	return problems
}
