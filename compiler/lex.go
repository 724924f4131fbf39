package compiler

import (
	"fmt"
	"strings"
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
)

func (t token) upper() string { return strings.ToUpper(t.text) }

// lexSQL splits an SQL fragment into tokens, dropping comments. It fails on
// what cannot be lexed with certainty: an unterminated string, quoted
// identifier or comment, so that nothing a spec writes can escape the
// statement it is placed in.
func lexSQL(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated /* comment at offset %d", i)
			}
			i += end + 4
		case c == '\'':
			j := i + 1
			for {
				if j >= len(s) {
					return nil, fmt.Errorf("unterminated string literal at offset %d", i)
				}
				if s[j] == '\\' {
					return nil, fmt.Errorf("backslash in string literal at offset %d: engines disagree on what it means", j)
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
				return nil, fmt.Errorf("unterminated quoted identifier at offset %d", i)
			}
			toks = append(toks, token{tQuotedIdent, s[i+1 : i+1+end], i})
			i += end + 2
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			toks = append(toks, token{tIdent, s[i:j], i})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'e' || s[j] == 'E') {
				j++
			}
			toks = append(toks, token{tNumber, s[i:j], i})
			i = j
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
			return nil, fmt.Errorf("unexpected character %q at offset %d", c, i)
		}
	}
	return append(toks, token{kind: tEOF, off: len(s)}), nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// checkQuery rejects a source query that the window cannot wrap safely:
// more than one statement, bind parameters, or a filter on the watermark
// column that is not half-open (BETWEEN, <=, or >= with the column on the
// right), which would read boundary rows twice.
func checkQuery(q, watermark string) []string {
	toks, err := lexSQL(q)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	if len(toks) == 0 || toks[0].upper() != "SELECT" && toks[0].upper() != "WITH" {
		problems = append(problems, "must be a SELECT (or WITH ... SELECT)")
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
			problems = append(problems, "must be one statement without ';'")
		case t.kind == tParam:
			problems = append(problems, fmt.Sprintf("must not use bind parameters (%s): the window is applied outside the query", t.text))
		case watermark == "":
		case t.kind == tIdent && t.upper() == "BETWEEN" && isWM(i-1):
			problems = append(problems, fmt.Sprintf("filters the watermark column %q with BETWEEN, which includes both ends: windows are half-open, col >= lo AND col < hi", watermark))
		case t.kind == tOp && t.text == "<=" && isWM(i-1), t.kind == tOp && t.text == ">=" && isWM(i+1):
			problems = append(problems, fmt.Sprintf("filters the watermark column %q with an inclusive upper bound: windows are half-open, use < (the window is applied outside the query anyway)", watermark))
		}
	}
	return problems
}
