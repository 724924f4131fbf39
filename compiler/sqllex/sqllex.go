// Package sqllex splits SQL text into tokens the way one engine does, or
// refuses it. It is the one place that knows where each engine's comments,
// strings and quoted names begin and end.
//
// Both sides of incrc use it, which is why it is a leaf package under
// compiler: the compiler (which never imports the dialects) lexes quality
// checks with the Check rules and validates source.query with the Portable
// rules; each dialect names its engine's Rules, and dialects lex every
// statement they render back with them (see dialects.Writer).
//
// Why two gates for source.query rather than one. A query is the spec's one
// SQL pass-through, written for the engine the user runs. Validation is
// dialect-independent, so it reads the query with Portable: the reading a
// reviewer has, in which everything the engines are known to read
// differently in ways a reviewer cannot see is refused (a "--" not followed
// by a space, "#" and "//", nested or executable comments, optimizer
// hints, a lone carriage return or a trailing backslash in a comment,
// backslashes in quotes, "$"). Refusing every construct one of the ten
// engines cannot classify would also refuse, say, BigQuery's backtick
// names because Snowflake's rules here do not know backticks; so instead,
// compiling for a dialect lexes the query again with that engine's Rules,
// and anything those rules cannot classify is refused there, with the
// spec's file:line:col. What reaches an engine has been read by its own
// rules.
//
// Lex is that strict reading. LexExact reads as the engine does, without
// the refusals for constructs engines disagree on: the dialects use it to
// lex their own output back (their literals use the engine's own escapes),
// and tests use it to check each rule against the real engine.
//
// Facts this package could not verify for an engine are Unknown, and an
// Unknown fact refuses the text that depends on it.
package sqllex

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is what a token is.
type Kind uint8

const (
	EOF     Kind = iota
	Word         // an unquoted name or keyword
	Quoted       // a quoted name: "x", `x`, [x]
	String       // a string literal, in any quoting the engine has
	Number       // digits, a fraction, an exponent
	Op           // an operator
	Punct        // ( ) [ ] { } , . ; :
	Param        // a bind parameter or session variable: ?, $1, :name, @name
	Comment      // a comment, line or block
)

var kindNames = [...]string{"end", "word", "quoted name", "string", "number", "operator", "punctuation", "parameter", "comment"}

func (k Kind) String() string { return kindNames[k] }

// Token is one lexical unit.
type Token struct {
	Kind Kind
	Off  int    // byte offset in the input
	Text string // as written
	// Value is the name of a Quoted token and the value of a String token,
	// escapes decoded; for other kinds it is Text.
	Value string
}

// End is the offset just past the token.
func (t Token) End() int { return t.Off + len(t.Text) }

// Error is text the rules cannot read with certainty, at a byte offset.
type Error struct {
	Off int
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("offset %d: %s", e.Off, e.Msg) }

// Lex reads s with r, strictly: it refuses what engines are known to read
// differently (see the package comment) on top of what r cannot classify.
// The last token is EOF.
func Lex(r *Rules, s string) ([]Token, error) { return lex(nil, r, s, true) }

// LexExact reads s as the engine of r does. It still refuses what r cannot
// classify. The last token is EOF.
func LexExact(r *Rules, s string) ([]Token, error) { return lex(nil, r, s, false) }

// AppendExact is LexExact appending the tokens to dst: a caller that lexes
// one statement after another reuses one slice.
func AppendExact(dst []Token, r *Rules, s string) ([]Token, error) { return lex(dst, r, s, false) }

type lexer struct {
	r      *Rules
	s      string
	strict bool
	toks   []Token
	// inExec is set inside a MySQL executable comment read as code: its
	// closing */ ends it.
	inExec bool
}

// lex appends the tokens of s to dst; a nil dst is a new slice sized for
// s.
func lex(dst []Token, r *Rules, s string, strict bool) ([]Token, error) {
	l := lexer{r: r, s: s, strict: strict, toks: dst}
	if dst == nil {
		l.toks = make([]Token, 0, len(s)/4+4)
	}
	if err := l.run(); err != nil {
		return dst, err
	}
	return append(l.toks, Token{Kind: EOF, Off: len(s)}), nil
}

func errAt(off int, format string, args ...any) *Error {
	return &Error{Off: off, Msg: fmt.Sprintf(format, args...)}
}

func (l *lexer) emit(k Kind, off, end int, value string) {
	l.toks = append(l.toks, Token{Kind: k, Off: off, Text: l.s[off:end], Value: value})
}

func (l *lexer) at(i int) byte {
	if i < len(l.s) {
		return l.s[i]
	}
	return 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentPart(c byte) bool { return identPart[c] }

// identPart is isIdentStart or isDigit, by byte: the lexer asks it of
// nearly every byte of a statement.
var identPart = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isIdentStart(byte(c)) || isDigit(byte(c))
	}
	return t
}()

func (l *lexer) run() error {
	s, r := l.s, l.r
	i := 0
	for i < len(s) {
		c := s[i]
		var err error
		switch {
		case isSpace(c):
			i++
			continue
		// Names and numbers first, the most common tokens: no case below
		// but these two starts with a letter, '_' or a digit.
		case isIdentStart(c):
			i, err = l.wordOrPrefixed(i)
		case isDigit(c):
			i, err = l.number(i)
		case c == '-' && l.at(i+1) == '-':
			i, err = l.dash(i)
		case c == '/' && l.at(i+1) == '*':
			i, err = l.block(i)
		case c == '*' && l.at(i+1) == '/' && l.inExec:
			// The end of a MySQL executable comment read as code.
			l.inExec = false
			i += 2
		case c == '#':
			if !r.Hash {
				if l.strict {
					return errAt(i, "'#' starts a comment on MySQL and BigQuery and is code elsewhere: use -- for a comment")
				}
				i, err = l.op(i)
				break
			}
			i, err = l.line(i, 1)
		case c == '/' && l.at(i+1) == '/':
			if !r.SlashSlash {
				if l.strict {
					return errAt(i, "'//' starts a comment on Snowflake and is code elsewhere: use -- for a comment")
				}
				i, err = l.op(i)
				break
			}
			i, err = l.line(i, 2)
		case c == '\'':
			i, err = l.str(i, i, '\'', false)
		case c == '"':
			if r.DoubleQuoted {
				i, err = l.str(i, i, '"', false)
			} else {
				i, err = l.quoted(i, i, '"', Quoted, false, true, false)
			}
		case c == '`':
			switch r.Backtick {
			case BacktickDoubled:
				i, err = l.quoted(i, i, '`', Quoted, false, true, false)
			case BacktickEscaped:
				i, err = l.quoted(i, i, '`', Quoted, true, false, true)
			default:
				i, err = l.op(i)
			}
			if err == nil && r.PlainBackticks {
				err = plainBacktick(l.toks[len(l.toks)-1])
			}
		case c == '[' && r.Brackets:
			end := strings.IndexByte(s[i+1:], ']')
			if end < 0 {
				return errAt(i, "unterminated quoted identifier: close it with ]")
			}
			name := s[i+1 : i+1+end]
			if err := l.checkQuotedText(i+1, name); err != nil {
				return err
			}
			l.emit(Quoted, i, i+end+2, name)
			i += end + 2
		case c == '[' && r.GuardBrackets:
			if err := guardBracket(s, i); err != nil {
				return err
			}
			l.emit(Punct, i, i+1, "[")
			i++
		case c == '$':
			i, err = l.dollar(i)
		case c == '?':
			if r.Params&ParamQuestion != 0 {
				j := i + 1
				for r.Params&ParamNumbered != 0 && isDigit(l.at(j)) {
					j++
				}
				l.emit(Param, i, j, s[i:j])
				i = j
				break
			}
			i, err = l.op(i)
		case c == ':':
			switch {
			case l.at(i+1) == ':':
				l.emit(Op, i, i+2, "::")
				i += 2
			case r.Params&ParamColon != 0 && isIdentStart(l.at(i+1)):
				j := l.word(i + 1)
				l.emit(Param, i, j, s[i:j])
				i = j
			default:
				l.emit(Punct, i, i+1, ":")
				i++
			}
		case c == '@':
			if r.Params&ParamAt != 0 && (isIdentStart(l.at(i+1)) || l.at(i+1) == '@') {
				j := i + 1
				if l.at(j) == '@' {
					j++
				}
				j = l.word(j)
				l.emit(Param, i, j, s[i:j])
				i = j
				break
			}
			i, err = l.op(i)
		case c == '.' && isDigit(l.at(i+1)):
			i, err = l.number(i)
		case c == '(' || c == ')' || c == ',' || c == '.' || c == ';' || c == '[' || c == ']' || c == '{' || c == '}':
			l.emit(Punct, i, i+1, s[i:i+1])
			i++
		default:
			i, err = l.op(i)
		}
		if err != nil {
			return err
		}
	}
	if l.inExec {
		return errAt(len(s), "unterminated /*! comment")
	}
	return nil
}

// opChars are operator characters on every engine; OpChars adds the
// engine's own.
const opChars = "+-*/%<>=!|&^~"

// multiCharOps are the operators of more than one character, a longer one
// before any that begins it.
var multiCharOps = [...]string{"<=>", "->>", "::", "||", "<>", "<=", ">=", "!=", "=>", "->", "==", "<<", ">>"}

func (l *lexer) op(i int) (int, error) {
	s := l.s
	c := s[i]
	if c >= utf8.RuneSelf {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return 0, errAt(i, "unexpected character %q", r)
	}
	if strings.IndexByte(opChars, c) < 0 && strings.IndexByte(l.r.OpChars, c) < 0 {
		return 0, errAt(i, "unexpected character %q", rune(c))
	}
	if l.strict && strings.HasPrefix(s[i:], "*/") {
		return 0, errAt(i, "'*/' outside a comment: Spark reads the end of a hint there")
	}
	// Every operator of more than one character has one of these second.
	if next := l.at(i + 1); next == '=' || next == '>' || next == '<' || next == ':' || next == '|' {
		for _, op := range multiCharOps {
			if strings.HasPrefix(s[i:], op) {
				l.emit(Op, i, i+len(op), op)
				return i + len(op), nil
			}
		}
	}
	l.emit(Op, i, i+1, s[i:i+1])
	return i + 1, nil
}

// dash reads what starts with "--": a comment, or (MySQL) two minus signs.
func (l *lexer) dash(i int) (int, error) {
	next := l.at(i + 2)
	spaced := i+2 >= len(l.s) || next <= ' ' || next == 0x7f
	if l.strict && !spaced {
		return 0, errAt(i, "'--' directly followed by %q: most engines read a comment, MySQL reads minus minus; write '-- ' for a comment or '- -' for two minus signs", rune(next))
	}
	if l.r.DashSpace && !spaced {
		l.emit(Op, i, i+1, "-")
		return i + 1, nil
	}
	return l.line(i, 2)
}

// line reads a line comment whose opener is n bytes long.
func (l *lexer) line(i, n int) (int, error) {
	s := l.s
	j := i + n
	for j < len(s) {
		c := s[j]
		if c == '\n' || c == '\r' && l.at(j+1) == '\n' {
			break
		}
		if c == '\\' && (l.at(j+1) == '\n' || l.at(j+1) == '\r') {
			if l.strict {
				return 0, errAt(j, "a backslash at the end of a comment line: Spark continues the comment on the next line, other engines do not")
			}
			if l.r.Continued && l.at(j+1) == '\n' {
				j += 2
				continue
			}
		}
		if c == '\r' {
			switch {
			case l.strict:
				return 0, errAt(j, "a carriage return alone ends a comment on PostgreSQL, DuckDB, Trino, Spark and BigQuery but not on SQLite or MySQL: end lines with \\n")
			case l.r.CRLineEnd == Yes:
			case l.r.CRLineEnd == No:
				j++
				continue
			default:
				return 0, errAt(j, "%s: whether a carriage return ends a comment is not known: end lines with \\n", l.r.Name)
			}
			break
		}
		size, err := l.commentChar(j)
		if err != nil {
			return 0, err
		}
		j += size
	}
	l.emit(Comment, i, j, l.s[i:j])
	return j, nil
}

// commentChar checks the character at j inside a comment and returns its
// size.
func (l *lexer) commentChar(j int) (int, error) {
	r, size := utf8.DecodeRuneInString(l.s[j:])
	switch {
	case r == utf8.RuneError && size == 1:
		return 0, errAt(j, "invalid UTF-8")
	case !l.strict:
	case r == '\v' || r == '\f' || r == 0x85 || r == 0x2028 || r == 0x2029:
		return 0, errAt(j, "line separator %q inside a comment: editors show a new line, engines do not end the comment there", r)
	case r < 0x20 && r != '\t' && r != '\n', r == 0x7f:
		return 0, errAt(j, "control character %q inside a comment", r)
	}
	return size, nil
}

// block reads what starts with "/*".
func (l *lexer) block(i int) (int, error) {
	s, r := l.s, l.r
	rest := s[i+2:]
	switch {
	case strings.HasPrefix(rest, "!"), strings.HasPrefix(rest, "M!"):
		if l.strict {
			return 0, errAt(i, "MySQL executes the text of /*! ... */ comments (MariaDB also /*M! ... */): write it as SQL or remove it")
		}
		if r.Executable {
			// The text is code; the version number after the "!" is not.
			j := i + 3
			if rest[0] == 'M' {
				j++
			}
			for isDigit(l.at(j)) {
				j++
			}
			l.inExec = true
			return j, nil
		}
	case strings.HasPrefix(rest, "+"):
		if l.strict {
			return 0, errAt(i, "optimizer hints (/*+ ... */) are code on Spark and MySQL 8 and comments elsewhere: remove it")
		}
		if r.Hints {
			l.emit(Op, i, i+3, "/*+")
			return i + 3, nil
		}
	}
	depth := 1
	j := i + 2
	for j < len(s) {
		switch {
		case strings.HasPrefix(s[j:], "*/"):
			j += 2
			if depth--; depth == 0 {
				l.emit(Comment, i, j, l.s[i:j])
				return j, nil
			}
			continue
		case strings.HasPrefix(s[j:], "/*"):
			switch {
			case l.strict:
				return 0, errAt(j, "a comment inside a comment: PostgreSQL, DuckDB and Spark nest comments, the other engines end at the first */")
			case r.Nested == Yes:
				depth++
				j += 2
				continue
			case r.Nested == Unknown:
				return 0, errAt(j, "%s: whether comments nest is not known: remove the inner /*", r.Name)
			}
		}
		size, err := l.commentChar(j)
		if err != nil {
			return 0, err
		}
		j += size
	}
	if r.OpenComment && !l.strict {
		l.emit(Comment, i, j, l.s[i:j])
		return j, nil
	}
	return 0, errAt(i, "unterminated /* comment")
}

// quoted reads a quoted string or name that starts at open (after any
// prefix, which starts at from) with quote q.
func (l *lexer) quoted(from, open int, q byte, kind Kind, backslash, doubled, oneLine bool) (int, error) {
	s := l.s
	// The value is a slice of s unless an escape or a doubled quote
	// makes it differ: then val holds what came before start.
	var val strings.Builder
	j := open + 1
	start, escaped := j, false
	for {
		// Printable ASCII but the quote and a backslash stands for itself
		// (the last case below): most of a name or a literal.
		for j < len(s) && s[j] >= 0x20 && s[j] < 0x7f && s[j] != q && s[j] != '\\' {
			j++
		}
		if j >= len(s) {
			if kind == Quoted {
				return 0, errAt(open, "unterminated quoted identifier: close it with %c", q)
			}
			return 0, errAt(open, "unterminated string literal: close it with %c", q)
		}
		c := s[j]
		switch {
		case c == '\\' && l.strict:
			if kind == Quoted {
				return 0, errAt(j, "%q in a quoted identifier: engines disagree on what it means", c)
			}
			return 0, errAt(j, "backslash in a string literal: engines disagree on what it means")
		case c == '\\' && backslash:
			if j+1 >= len(s) {
				j++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[j+1:])
			val.WriteString(s[start:j])
			val.WriteString(unescape(r))
			j += 1 + size
			start, escaped = j, true
			continue
		case c == q:
			if doubled && l.at(j+1) == q {
				val.WriteString(s[start:j])
				val.WriteByte(q)
				j += 2
				start, escaped = j, true
				continue
			}
			if l.r.Portable && q != '`' && strings.Contains(s[open:j+1], tripled(q)) {
				return 0, errAt(open, "three %c in a row: BigQuery reads a triple-quoted string there", q)
			}
			value := s[start:j]
			if escaped {
				val.WriteString(value)
				value = val.String()
			}
			l.emit(kind, from, j+1, value)
			return j + 1, nil
		case (c == '\n' || c == '\r') && oneLine:
			if kind == Quoted {
				return 0, errAt(open, "unterminated quoted identifier: %s ends it at the line end", l.r.Name)
			}
			return 0, errAt(open, "unterminated string literal: %s ends a quoted string at the line end (use a triple-quoted string)", l.r.Name)
		case c >= 0x20 && c < 0x7f:
			// Printable ASCII, what quotedChar passes as it is.
			j++
			continue
		}
		_, size, err := l.quotedChar(j, kind)
		if err != nil {
			return 0, err
		}
		j += size
	}
}

// tripled is three quotes q in a row, without building it for each
// literal: the lexer asks at every quoted string.
func tripled(q byte) string {
	switch q {
	case '\'':
		return "'''"
	case '"':
		return `"""`
	case '`':
		return "```"
	}
	return strings.Repeat(string(q), 3)
}

// quotedChar checks the character at j inside quotes and returns it.
func (l *lexer) quotedChar(j int, kind Kind) (rune, int, error) {
	r, size := utf8.DecodeRuneInString(l.s[j:])
	what := "a string literal"
	if kind == Quoted {
		what = "a quoted identifier"
	}
	switch {
	case r == utf8.RuneError && size == 1:
		return 0, 0, errAt(j, "invalid UTF-8 in %s", what)
	case (r < 0x20 || r == 0x7f) && (l.r.OneLineLiterals || l.strict && r != '\t' && r != '\n' && r != '\r'):
		return 0, 0, errAt(j, "control character %q in %s", r, what)
	case l.r.OneLineLiterals && (r == 0x85 || r == 0x2028 || r == 0x2029):
		return 0, 0, errAt(j, "line separator %q in %s", r, what)
	case l.r.OneLineLiterals && !unicode.IsPrint(r):
		// A bidirectional control, a zero-width or other invisible
		// character: the reviewer of a one-line check cannot see it.
		return 0, 0, errAt(j, "character %U in %s is not printable: a reviewer cannot see it", r, what)
	}
	return r, size, nil
}

// checkQuotedText applies quotedChar to a name read without escapes.
func (l *lexer) checkQuotedText(off int, text string) error {
	for j := 0; j < len(text); {
		_, size, err := l.quotedChar(off+j, Quoted)
		if err != nil {
			return err
		}
		j += size
	}
	return nil
}

// unescape is the value of a backslash escape, as MySQL, BigQuery, Spark
// and Snowflake read the common ones; an unknown escape stands for the
// character itself.
func unescape(r rune) string {
	switch r {
	case 'n':
		return "\n"
	case 't':
		return "\t"
	case 'r':
		return "\r"
	case '0':
		return "\x00"
	case 'b':
		return "\b"
	case 'Z':
		return "\x1a"
	}
	return string(r)
}

// word returns the end of the name that starts at i.
func (l *lexer) word(i int) int {
	for i < len(l.s) && (isIdentPart(l.s[i]) || l.s[i] == '$' && l.r.DollarInNames) {
		i++
	}
	return i
}

// wordOrPrefixed reads a name, or a string whose prefix it is (E'..',
// r'..', b'..').
func (l *lexer) wordOrPrefixed(i int) (int, error) {
	s, r := l.s, l.r
	j := l.word(i)
	if r.PathNames && strings.HasPrefix(s[j:], "://") {
		return 0, errAt(i, "%s reads %s:// and what follows as one name (a path): write the path as a string", r.Name, s[i:j])
	}
	if q := l.at(j); q == '\'' || q == '"' {
		switch p := strings.ToLower(s[i:j]); {
		case p == "e" && q == '\'' && r.EStrings:
			return l.quoted(i, j, '\'', String, true, true, false)
		case p == "r" && r.Raw == RawPlain:
			return l.rawPlain(i, j, q)
		case r.Raw == RawPrefixes && (p == "r" || p == "b" || p == "rb" || p == "br"):
			return l.str(i, j, q, p != "b")
		}
	}
	l.emit(Word, i, j, s[i:j])
	return j, nil
}

// str reads a string whose quote is at open (after any prefix, which
// starts at from), triple-quoted where the rules have it; a raw string
// keeps its escapes in the value.
func (l *lexer) str(from, open int, q byte, raw bool) (int, error) {
	triple := tripled(q)
	if !l.r.Triple || !strings.HasPrefix(l.s[open:], triple) {
		end, err := l.quoted(from, open, q, String, l.r.Backslash, !l.r.NoDoubledQuotes, l.r.NoNewlineInQuotes)
		if err == nil && raw {
			t := &l.toks[len(l.toks)-1]
			t.Value = t.Text[open-from+1 : len(t.Text)-1]
		}
		return end, err
	}
	s := l.s
	j := open + 3
	for {
		if j >= len(s) {
			return 0, errAt(open, "unterminated string literal: close it with %s", triple)
		}
		if s[j] == '\\' {
			if l.strict {
				return 0, errAt(j, "backslash in a string literal: engines disagree on what it means")
			}
			j += 2
			continue
		}
		if strings.HasPrefix(s[j:], triple) {
			text := s[open+3 : j]
			l.emit(String, from, j+3, text)
			return j + 3, nil
		}
		_, size, err := l.quotedChar(j, String)
		if err != nil {
			return 0, err
		}
		j += size
	}
}

// rawPlain reads a Spark raw string: no escapes, it ends at the first
// quote.
func (l *lexer) rawPlain(from, open int, q byte) (int, error) {
	end := strings.IndexByte(l.s[open+1:], q)
	if end < 0 {
		return 0, errAt(open, "unterminated string literal: close it with %c", q)
	}
	text := l.s[open+1 : open+1+end]
	if l.strict && strings.IndexByte(text, '\\') >= 0 {
		return 0, errAt(open+1+strings.IndexByte(text, '\\'), "backslash in a string literal: engines disagree on what it means")
	}
	if err := l.checkQuotedText(open+1, text); err != nil {
		return 0, err
	}
	l.emit(String, from, open+end+2, text)
	return open + end + 2, nil
}

// dollar reads what starts with "$": a parameter, a dollar-quoted string,
// or nothing the rules know.
func (l *lexer) dollar(i int) (int, error) {
	s, r := l.s, l.r
	if isDigit(l.at(i+1)) && r.Params&ParamDollar != 0 {
		j := i + 1
		for isDigit(l.at(j)) {
			j++
		}
		l.emit(Param, i, j, s[i:j])
		return j, nil
	}
	if r.Dollar != NoDollar {
		tagEnd := i + 1
		if r.Dollar == DollarTags && isIdentStart(l.at(tagEnd)) {
			for isIdentPart(l.at(tagEnd)) {
				tagEnd++
			}
		}
		if l.at(tagEnd) == '$' {
			delim := s[i : tagEnd+1]
			end := strings.Index(s[tagEnd+1:], delim)
			if end < 0 {
				return 0, errAt(i, "unterminated dollar-quoted string: close it with %s", delim)
			}
			body := s[tagEnd+1 : tagEnd+1+end]
			if err := l.checkQuotedText(tagEnd+1, body); err != nil {
				return 0, err
			}
			stop := tagEnd + 1 + end + len(delim)
			l.emit(String, i, stop, body)
			return stop, nil
		}
	}
	if r.Params&ParamDollarName != 0 && (isIdentStart(l.at(i+1)) || l.at(i+1) == '$') {
		j := i + 1
		for j < len(s) && (isIdentPart(s[j]) || s[j] == '$') {
			j++
		}
		l.emit(Param, i, j, s[i:j])
		return j, nil
	}
	if r.Portable {
		return 0, errAt(i, "'$' starts a dollar-quoted string on PostgreSQL, DuckDB and Snowflake, a parameter on SQLite and continues a name on MySQL: engines disagree")
	}
	return 0, errAt(i, "%s: unexpected character '$'", r.Name)
}

// number reads a number. The strict reading refuses one that runs into a
// name or a second dot, which engines split differently (1e, 0x10, 1..2).
func (l *lexer) number(i int) (int, error) {
	s := l.s
	j := i
	for isDigit(l.at(j)) {
		j++
	}
	if l.at(j) == '.' {
		j++
		for isDigit(l.at(j)) {
			j++
		}
	}
	if c := l.at(j); c == 'e' || c == 'E' {
		k := j + 1
		if l.at(k) == '+' || l.at(k) == '-' {
			k++
		}
		if isDigit(l.at(k)) {
			for isDigit(l.at(k)) {
				k++
			}
			j = k
		}
	}
	if c := l.at(j); l.strict && (isIdentPart(c) || c == '.' || c == '$') {
		end := j + 1
		for end < len(s) && (isIdentPart(s[end]) || s[end] == '.') {
			end++
		}
		return 0, errAt(i, "malformed number %q", s[i:end])
	}
	l.emit(Number, i, j, s[i:j])
	return j, nil
}

// plainBacktick refuses a backtick-quoted name that holds more than a
// plain name: engines without backtick quoting read its content as code.
func plainBacktick(t Token) error {
	bad := strings.IndexFunc(t.Value, func(c rune) bool {
		return !(c < utf8.RuneSelf && (isIdentPart(byte(c)) || c == '.' || c == '-' || c == ' '))
	})
	if bad < 0 {
		bad = strings.Index(t.Value, "--")
	}
	if bad >= 0 {
		return errAt(t.Off+1+bad, "backtick-quoted name %q: PostgreSQL, DuckDB, Trino and Snowflake read its text as code; quote it with \" or keep it to letters, digits, _ . - and spaces", t.Value)
	}
	return nil
}

// guardBracket refuses a "[" whose text up to the next "]" SQLite would
// read as a quoted name hiding a quote, a comment, a ';', a parameter or a
// parenthesis from the other engines' reading (or the reverse).
func guardBracket(s string, i int) error {
	end := strings.IndexByte(s[i+1:], ']')
	if end < 0 {
		end = len(s) - i - 1
	}
	inner := s[i+1 : i+1+end]
	if k := strings.IndexAny(inner, "'\"`;#$?:@\\()[]"); k >= 0 || strings.Contains(inner, "--") || strings.Contains(inner, "/*") {
		if k < 0 {
			k = strings.IndexAny(inner, "-/")
		}
		return errAt(i+1+k, "SQLite reads [...] as a quoted name and the other engines as code: keep quotes, comments, parentheses and ';' out of brackets")
	}
	return nil
}
