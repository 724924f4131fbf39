package dialects

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler/sqllex"
)

// Writer accumulates the SQL of one statement (or a few, for operations an
// engine spells in several) and the parameters it binds, in marker order.
//
// It also records what it meant each statement to hold: every quoted name
// and string literal it spelled, the numbers it re-spelled from a spec, and
// where it embedded the source query. End lexes each statement back with
// the engine's own rules and fails unless the engine would read exactly
// that (see CheckPart): a statement that does not read back as written is
// never returned.
type Writer struct {
	d        Dialect
	declared []ir.Param
	parts    []Part
	cur      []byte // the current statement
	params   []string
	meant    Meant
	queries  []string // source queries, by placeholder number
	// names are the spellings of the names quoted for names.d, each with
	// the number of the statement that last listed it in its meant.Names;
	// stmt numbers the statements. They last as long as the Writer.
	names nameSpellings
	stmt  int
	// types are the column types of the plan's typed parameters, for a
	// dialect that spells them (ParamTyper); nil for a lone statement.
	types map[ir.ParamType]ir.Type
	err   error
	lex   lexScratch // the lex-back's, reused (render)
}

// nameSpellings is how a Writer spelled each name it quoted for d.
type nameSpellings struct {
	d   Dialect
	set map[string]nameSpelling
}

type nameSpelling struct {
	sp   Spelled
	stmt int
}

// Part is one SQL statement and the names of the parameters it binds, in
// the order of its markers.
type Part struct {
	SQL    string
	Params []string
	// Reads marks a part whose one row a count step reads (ReadCount,
	// ReadCounts); the other parts of the statement only run. A count with
	// no part marked reads its first (see Reading).
	Reads bool
	// Meant is what the writer meant SQL to hold: the lex-back compares it
	// with what the engine's rules read.
	Meant Meant
}

// Meant is what a statement was written to hold, for the lex-back.
type Meant struct {
	// Names are the quoted names it spelled, each with the name it must
	// read back as; Strings the string literals, each with its value.
	// A spelling listed twice means what it is listed with last.
	Names, Strings []Spelled
	// Numbers are the numbers re-spelled from the spec's expressions.
	Numbers []string
	// Queries are where the source query was embedded.
	Queries []Span
}

// Spelled is a quoted name or a string literal as written, and what it
// must read back as.
type Spelled struct{ Text, Value string }

// Span is a byte range of a statement: the embedded source query.
type Span struct{ Off, End int }

// Dialect returns the dialect being rendered.
func (w *Writer) Dialect() Dialect { return w.d }

// Printf appends formatted text. It is for keywords and numbers the
// renderer chose; names, literals and parameters go through their own
// methods so that the lex-back knows them.
func (w *Writer) Printf(format string, args ...any) { w.cur = fmt.Appendf(w.cur, format, args...) }

// S appends text: keywords and punctuation the renderer chose.
func (w *Writer) S(parts ...string) {
	for _, p := range parts {
		w.cur = append(w.cur, p...)
	}
}

// Int appends a number the renderer chose (a count, a position).
func (w *Writer) Int(n int) { w.cur = strconv.AppendInt(w.cur, int64(n), 10) }

// quote appends one identifier part and records it. Names come validated
// from the spec or from the compiler; one that a quoted name cannot hold
// on every engine is refused rather than spelled. A name is spelled once
// a render and listed once a statement in what the statement meant; the
// lex-back checks every occurrence all the same.
func (w *Writer) quote(name string) {
	if w.names.set == nil {
		w.names.set = map[string]nameSpelling{}
	}
	if w.names.d != w.d {
		clear(w.names.set)
		w.names.d = w.d
	}
	ns, ok := w.names.set[name]
	if !ok {
		if i := strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f || r == utf8.RuneError }); i >= 0 || name == "" {
			w.Fail(fmt.Errorf("%s: the name %q cannot be quoted", w.d.Name(), name))
			return
		}
		ns.sp = Spelled{Text: w.d.QuoteIdent(name), Value: name}
		if f, ok := w.d.(IdentFolder); ok {
			ns.sp.Value = f.FoldIdent(name)
		}
		ns.stmt = -1
	}
	if ns.stmt != w.stmt {
		ns.stmt = w.stmt
		w.names.set[name] = ns
		if w.meant.Names == nil {
			// Room for the names of most statements at once.
			w.meant.Names = make([]Spelled, 0, 16)
		}
		w.meant.Names = append(w.meant.Names, ns.sp)
	}
	w.cur = append(w.cur, ns.sp.Text...)
}

// Idents appends quoted identifiers joined by ", ", each prefixed with
// alias and a dot when alias is not empty.
func (w *Writer) Idents(alias string, names []string) {
	for i, n := range names {
		if i > 0 {
			w.cur = append(w.cur, ", "...)
		}
		w.Col(alias, n)
	}
}

// Col appends alias.name quoted, or name alone without an alias.
func (w *Writer) Col(alias, name string) {
	if alias != "" {
		w.cur = append(w.cur, alias...)
		w.cur = append(w.cur, '.')
	}
	w.quote(name)
}

// Qual is what qualifies a column: an alias the renderer chose (t, s,
// EXCLUDED), or a table by its name, where a statement cannot alias it
// (a DELETE's target on some engines).
type Qual struct {
	alias string
	table ir.Table
}

// Alias qualifies by an alias the renderer chose.
func Alias(a string) Qual { return Qual{alias: a} }

// Named qualifies by a table's name.
func Named(t ir.Table) Qual { return Qual{table: t} }

// ColOf appends q.name, name quoted.
func (w *Writer) ColOf(q Qual, name string) {
	if q.alias != "" {
		w.Col(q.alias, name)
		return
	}
	w.Table(q.table)
	w.cur = append(w.cur, '.')
	w.quote(name)
}

// Table appends a qualified table name, each part quoted.
func (w *Writer) Table(t ir.Table) {
	parts := t.Parts
	if n, ok := w.d.(TableNamer); ok {
		parts = n.TableParts(t)
	}
	for i, p := range parts {
		if i > 0 {
			w.cur = append(w.cur, '.')
		}
		w.quote(p)
	}
}

// Param appends the marker for a declared parameter and records its use;
// a dialect that types its parameters (ParamTyper) spells the type
// around it.
func (w *Writer) Param(name string) {
	if pt, ok := w.d.(ParamTyper); ok {
		for _, p := range w.declared {
			if p.Name != name {
				continue
			}
			if t, typed := w.types[p.Type]; typed {
				pt.TypedParam(w, func() { w.param(name) }, t)
				return
			}
		}
	}
	w.param(name)
}

func (w *Writer) param(name string) {
	ok := false
	for _, p := range w.declared {
		ok = ok || p.Name == name
	}
	if !ok && w.err == nil {
		w.err = fmt.Errorf("parameter %q is used but not declared", name)
	}
	if w.d.Caps().ReusesParams {
		for i, p := range w.params {
			if p == name {
				w.cur = append(w.cur, w.d.Placeholder(i+1)...)
				return
			}
		}
	}
	w.params = append(w.params, name)
	w.cur = append(w.cur, w.d.Placeholder(len(w.params))...)
}

// Type appends the engine's spelling of a portable type.
func (w *Writer) Type(t ir.Type) {
	s, err := w.d.ColumnType(t)
	if err != nil {
		w.Fail(err)
	}
	w.cur = append(w.cur, s...)
}

// Infix appends a op b: the spelling most hooks' comparisons share
// (NullSafeEqual's " IS NOT DISTINCT FROM ").
func (w *Writer) Infix(a func(), op string, b func()) {
	a()
	w.cur = append(w.cur, op...)
	b()
}

// Call appends fn(x, args...): x written by its writer, then the rest
// of the argument list as text the renderer chose (", UNIT").
func (w *Writer) Call(fn string, x func(), rest ...string) {
	w.cur = append(w.cur, fn...)
	w.cur = append(w.cur, '(')
	x()
	w.S(rest...)
	w.cur = append(w.cur, ')')
}

// Dollar is the marker $n, for the engines that number their parameters
// that way.
func Dollar(n int) string { return "$" + strconv.Itoa(n) }

// Fail records an error; the statement does not render.
func (w *Writer) Fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// End closes the current statement and starts another: for operations an
// engine spells as several statements. It embeds the source queries the
// statement reads and lexes the statement back (CheckPart).
func (w *Writer) End() {
	sql := string(bytes.TrimSpace(w.cur))
	meant, params := w.meant, w.params
	w.cur, w.meant, w.params = w.cur[:0], Meant{}, nil
	w.stmt++
	if sql == "" || w.err != nil {
		return
	}
	sql, spans, err := w.embed(sql)
	if err != nil {
		w.Fail(err)
		return
	}
	meant.Queries = spans
	p := Part{SQL: sql, Params: params, Meant: meant}
	if err = w.lex.check(w.d, p); err != nil {
		w.Fail(err)
		return
	}
	w.parts = append(w.parts, p)
}

// EndReading ends the current part as End does and marks it as one whose
// row a count step reads: a count taken after a write, or before and after
// it, where the engine cannot return it from the write itself.
func (w *Writer) EndReading() {
	n := len(w.parts)
	w.End()
	if len(w.parts) > n {
		w.parts[n].Reads = true
	}
}

// Reading reports whether a count step reads parts[i]: the parts marked
// Reads, or the first when none is (a count taken before the write that
// follows it). Every part runs, in order; a counts step adds up the rows
// of those it reads, register by register.
func Reading(parts []Part, i int) bool {
	for _, p := range parts {
		if p.Reads {
			return parts[i].Reads
		}
	}
	return i == 0
}

// String appends a string constant in the dialect's literal syntax and
// records it. A value that cannot be spelled the same way on every
// setting of the engine (a NUL, a control character other than tab and
// line ends, invalid UTF-8) is refused: spec literals never hold one.
func (w *Writer) String(s string) {
	for i, r := range s {
		if r == utf8.RuneError || r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			w.Fail(fmt.Errorf("%s: cannot spell %q in a string literal (character %d)", w.d.Name(), s, i))
			w.cur = append(w.cur, "''"...)
			return
		}
	}
	var spelled string
	if q, ok := w.d.(StringQuoter); ok {
		spelled = q.StringLit(s)
	} else {
		spelled = StringLit(s)
	}
	w.meant.Strings = append(w.meant.Strings, Spelled{Text: spelled, Value: s})
	w.cur = append(w.cur, spelled...)
}

// Number appends a number re-spelled from its validated form and records
// it; what is not a number is refused.
func (w *Writer) Number(text string) {
	n, ok := ir.CanonicalNumber(text)
	if !ok {
		w.Fail(fmt.Errorf("%s: %q is not a number", w.d.Name(), text))
		w.cur = append(w.cur, '0')
		return
	}
	w.meant.Numbers = append(w.meant.Numbers, n)
	w.cur = append(w.cur, n...)
}

// StringLit spells a string constant the standard way: a quote is
// doubled, every other character stands for itself. It is right for the
// engines that read no backslash escapes in '...' (DuckDB, SQLite, Trino);
// the others implement StringQuoter.
func StringLit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// DoubledString doubles both quotes and backslashes: the literal ends at
// the same quote whether the engine reads backslash escapes or not
// (MySQL's NO_BACKSLASH_ESCAPES, Snowflake, Redshift), and means the value
// where it does.
func DoubledString(s string) string {
	return "'" + doubled.Replace(s) + "'"
}

// The replacers are built once: a Replacer builds its tables on first use.
var (
	doubled   = strings.NewReplacer("'", "''", `\`, `\\`)
	backslash = strings.NewReplacer(`\`, `\\`, "'", `\'`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
)

// BackslashString spells a string literal with backslash escapes, for the
// engines that read a doubled quote as two adjacent literals (BigQuery,
// Spark). Line ends and tabs are escaped too: BigQuery ends a '...' string
// at a raw line end.
func BackslashString(s string) string {
	return "'" + backslash.Replace(s) + "'"
}

// queryMark is the placeholder From writes where the source query goes;
// End replaces it. A NUL never appears in anything else a Writer writes.
const queryMark = "\x00query:"

// Query appends the place of a source query in the statement: End
// embeds the query there, once the indentation around it is final.
func (w *Writer) Query(q string) {
	w.queries = append(w.queries, q)
	w.cur = append(w.cur, queryMark...)
	w.cur = strconv.AppendInt(w.cur, int64(len(w.queries)-1), 10)
	w.cur = append(w.cur, 0)
}

// embed replaces the query placeholders of sql with the queries, as the
// engine's rules read them (EmbedQuery), and returns where each landed.
func (w *Writer) embed(sql string) (string, []Span, error) {
	var spans []Span
	for {
		i := strings.Index(sql, queryMark)
		if i < 0 {
			return sql, spans, nil
		}
		end := i + len(queryMark) + strings.IndexByte(sql[i+len(queryMark):], 0) + 1
		n, err := strconv.Atoi(sql[i+len(queryMark) : end-1])
		if err != nil || n >= len(w.queries) {
			return "", nil, fmt.Errorf("%s: a broken source query placeholder", w.d.Name())
		}
		line := sql[strings.LastIndexByte(sql[:i], '\n')+1 : i]
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		q, err := EmbedQuery(w.d.Lexer(), w.queries[n], indent)
		if err != nil {
			return "", nil, fmt.Errorf("%s: source query: %w", w.d.Name(), err)
		}
		sql = sql[:i] + q + sql[end:]
		spans = append(spans, Span{Off: i, End: i + len(q)})
	}
}

// EmbedQuery re-spells a source query for embedding in a statement, as the
// rules read it: comments become nothing (a block comment between two
// tokens a space), each line after the first is indented by indent, and
// trailing blanks go; the text of every other token, line ends inside
// literals included, is kept byte for byte. No comment reaches a compiled
// statement, so the lex-back can require that none is there.
func EmbedQuery(r *sqllex.Rules, q, indent string) (string, error) {
	toks, err := sqllex.LexExact(r, q)
	if err != nil {
		return "", err
	}
	var b []byte
	trimRight := func() {
		for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
			b = b[:len(b)-1]
		}
	}
	prev := 0
	for _, t := range toks {
		gap := q[prev:t.Off]
		if strings.TrimLeft(gap, " \t\r\n") != "" {
			return "", &sqllex.Error{Off: prev, Msg: "text the rules skip that is not blank"}
		}
		lines := strings.Split(gap, "\n")
		for k, l := range lines {
			if k > 0 {
				trimRight()
				b = append(b, '\n')
				if k < len(lines)-1 || t.Kind != sqllex.EOF {
					b = append(b, indent...)
				}
			}
			if k == len(lines)-1 && t.Kind != sqllex.EOF {
				b = append(b, l...)
			}
		}
		switch t.Kind {
		case sqllex.Comment:
			// A block comment between two tokens separates them: one space
			// does, unless blanks follow it anyway.
			if !strings.HasPrefix(t.Text, "/*") {
				break
			}
			trimRight()
			if n := len(b); n > 0 && b[n-1] != '\n' && t.End() < len(q) && !strings.ContainsRune(" \t\r\n", rune(q[t.End()])) {
				b = append(b, ' ')
			}
		case sqllex.EOF:
		default:
			b = append(b, t.Text...)
		}
		prev = t.End()
	}
	trimRight()
	return string(b), nil
}
