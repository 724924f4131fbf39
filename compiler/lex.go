package compiler

import (
	"errors"
	"fmt"
	"strings"

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
// Compiling for a dialect reads it again with that engine's rules
// (dialects.CheckQuery).
func checkQuery(q, watermark string) []*OffsetError {
	var out []*OffsetError
	for _, p := range sqllex.QueryProblems(sqllex.Portable, q, watermark) {
		out = append(out, &OffsetError{Off: p.Off, Msg: p.Msg})
	}
	return out
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
