package dialects

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/incrc/incrc/compiler"
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
	declared []compiler.Param
	parts    []Part
	cur      []byte // the current statement, in shared.buf when there is one
	params   []string
	meant    Meant
	queries  []string // source queries, by placeholder number
	// types are the column types of the plan's typed parameters, for a
	// dialect that spells them (ParamTyper); nil for a lone statement.
	types map[compiler.ParamType]compiler.Type
	// shared is what the statements of one Render for one dialect share.
	shared *shared
	err    error
}

// shared is what the Writers of one Render for one dialect share, one
// after the other. Render takes it from sharedPool and puts it back.
type shared struct {
	// names index quoted by name: the names quoted so far and what each
	// reads back as. The statements quote the same names over and over
	// (QuoteIdent and FoldIdent are functions of the name).
	names  map[string]int
	quoted []quotedName
	// part counts the parts begun: a name whose part is not this one is
	// not in the current part's Meant yet.
	part int
	// spelled are the names the parts of this Render meant, part after
	// part from the first: a part's Meant.Names is its stretch, from on.
	// They are kept in chunks (see grow).
	spelled []Spelled
	from    int
	// buf is the space the statements are written in, reused: End copies
	// each out.
	buf []byte
	// w is the Writer of the statement being rendered (renderStatement).
	w Writer
	// parts, params and strings hold the parts the statements return, the
	// parameters each part binds and the string literals each meant, one
	// list after the other: a slab for many short lists rather than an
	// allocation each (see grow). They are handed out, so release drops
	// them.
	parts   []Part
	params  []string
	strings []Spelled
	// rendered is the list render returned last, kept only when its
	// caller was done with it (see release).
	rendered []Rendered
	// types are the engine's names of the column types spelled so far
	// (ColumnType is a function of the type).
	types map[compiler.Type]string
	// passed is what the lex-back remembers for the dialect (passedFor),
	// once looked up.
	passed      *passedTable
	passedKnown bool
}

// size makes the slabs room for the lists of a Render of n statements,
// a little more than such a Render usually has (the golden specs'): a
// part a statement, four or five names and one or two parameters a part,
// a string literal every fifth part. A slab that runs out is followed by
// another (grow).
func (sh *shared) size(n int) {
	sh.parts = slab(sh.parts, n+n/8+1)
	sh.params = slab(sh.params, 3*n/2+8)
	sh.strings = slab(sh.strings, n/4+4)
	sh.spelled = slab(sh.spelled, 5*n+16)
}

// slab is an empty slab with room for n: s, a slab no one holds a list
// of (see release), when it has the room.
func slab[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	return s[:0]
}

// grow appends v to list, which is empty or the last list appended to
// *slab, and returns the longer list, capped: lists that grow one after
// the other share the slab's allocation. A full slab is replaced by a new
// one of size (or room for four such lists, or twice the full one, so
// that the slab kept for the next Render has room for all this one
// needed: see release), the list copied to it; the lists handed out keep
// the old one.
func grow[T any](slab *[]T, list []T, v T, size int) []T {
	n := len(list)
	if len(*slab) == cap(*slab) {
		*slab = append(make([]T, 0, max(size, 4*(n+1), 2*cap(*slab))), list...)
	}
	*slab = append(*slab, v)
	end := len(*slab)
	return (*slab)[end-n-1 : end : end]
}

var sharedPool = sync.Pool{New: func() any { return &shared{names: map[string]int{}} }}

// begin starts a part: the names quoted from now on are its own.
func (sh *shared) begin() {
	sh.part++
	sh.from = len(sh.spelled)
}

// release empties sh for another Render and puts it in the pool. The
// parts rendered keep the slabs (and spelled): they are dropped, unless
// reuse says the parts are dropped already (render's use is done with
// them), and then emptied for the next Render.
func (sh *shared) release(reuse bool) {
	clear(sh.names)
	clear(sh.types)
	sh.passed, sh.passedKnown = nil, false
	clear(sh.quoted) // the cols they hold go with them
	sh.quoted, sh.from, sh.buf = sh.quoted[:0], 0, sh.buf[:0]
	if reuse {
		// The strings the slabs hold go; the slabs stay, for the last
		// stretch of each was made for a Render like this one.
		clear(sh.parts)
		clear(sh.params)
		clear(sh.strings)
		clear(sh.spelled)
		clear(sh.rendered)
		sh.rendered = sh.rendered[:0]
	} else {
		sh.parts, sh.params, sh.strings, sh.spelled, sh.rendered = nil, nil, nil, nil, nil
	}
	sh.w = Writer{}
	sharedPool.Put(sh)
}

// quotedName is a name as QuoteIdent spells it and the name it reads back
// as (FoldIdent), and the part that last spelled it.
type quotedName struct {
	Spelled
	part int
	// cols are alias.name as Col spelled it, one per alias: a statement
	// names the same few aliases' columns over and over.
	cols []aliased
}

// aliased is a quoted name prefixed with an alias and a dot.
type aliased struct{ alias, text string }

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

// S appends text: keywords, punctuation and what the Writer's methods
// returned.
func (w *Writer) S(parts ...string) {
	for _, p := range parts {
		w.cur = append(w.cur, p...)
	}
}

// quote spells one identifier part and records it. Names come validated
// from the spec or from the compiler; one that a quoted name cannot hold
// on every engine is refused rather than spelled.
func (w *Writer) quote(name string) string {
	if i := w.quoted(name); i >= 0 {
		return w.shared.quoted[i].Text
	}
	return ""
}

// quoted records name as quote does and returns its index in the
// shared's quoted, or -1 when it is refused.
func (w *Writer) quoted(name string) int {
	if w.shared == nil {
		w.shared = &shared{names: map[string]int{}}
	}
	sh := w.shared
	i, ok := sh.names[name]
	if !ok {
		if i := strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f || r == utf8.RuneError }); i >= 0 || name == "" {
			w.Fail(fmt.Errorf("%s: the name %q cannot be quoted", w.d.Name(), name))
			return -1
		}
		q := quotedName{Spelled: Spelled{Text: w.d.QuoteIdent(name), Value: name}, part: sh.part - 1}
		if f, ok := w.d.(IdentFolder); ok {
			q.Value = f.FoldIdent(name)
		}
		i = len(sh.quoted)
		sh.quoted = append(sh.quoted, q)
		sh.names[name] = i
	}
	q := &sh.quoted[i]
	if q.part != sh.part {
		// The first time in this part.
		q.part = sh.part
		names := grow(&sh.spelled, sh.spelled[sh.from:], q.Spelled, 64)
		sh.from = len(sh.spelled) - len(names)
	}
	return i
}

// Ident appends a quoted identifier.
func (w *Writer) Ident(name string) { w.cur = append(w.cur, w.quote(name)...) }

// Idents returns quoted identifiers joined by ", ", each prefixed with
// alias and a dot when alias is not empty.
func (w *Writer) Idents(alias string, names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return w.Col(alias, names[0])
	}
	var buf [256]byte // on the stack: the one allocation is the string
	b := buf[:0]
	for i, n := range names {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, w.Col(alias, n)...)
	}
	return string(b)
}

// Col returns alias.name quoted, or name alone without an alias. The
// spelling with an alias is kept with the name: the statements of a
// Render spell the same columns of the same aliases again and again.
func (w *Writer) Col(alias, name string) string {
	i := w.quoted(name)
	if i < 0 {
		if alias == "" {
			return ""
		}
		return alias + "."
	}
	q := &w.shared.quoted[i]
	if alias == "" {
		return q.Text
	}
	for _, c := range q.cols {
		if c.alias == alias {
			return c.text
		}
	}
	text := alias + "." + q.Text
	q.cols = append(q.cols, aliased{alias: alias, text: text})
	return text
}

// WriteCol appends what Col returns: alias.name quoted, or name alone
// without an alias. The renderers' hot paths write names straight into
// the statement rather than building each as a string first.
func (w *Writer) WriteCol(alias, name string) {
	i := w.quoted(name)
	if alias != "" {
		w.cur = append(w.cur, alias...)
		w.cur = append(w.cur, '.')
	}
	if i >= 0 {
		w.cur = append(w.cur, w.shared.quoted[i].Text...)
	}
}

// WriteIdents appends what Idents returns.
func (w *Writer) WriteIdents(alias string, names []string) {
	for i, n := range names {
		if i > 0 {
			w.cur = append(w.cur, ", "...)
		}
		w.WriteCol(alias, n)
	}
}

// WriteTable appends what Table returns.
func (w *Writer) WriteTable(t compiler.Table) {
	parts := t.Parts
	if n, ok := w.d.(TableNamer); ok {
		parts = n.TableParts(t)
	}
	for i, p := range parts {
		if i > 0 {
			w.cur = append(w.cur, '.')
		}
		w.cur = append(w.cur, w.quote(p)...)
	}
}

// WriteParam appends what Param returns.
func (w *Writer) WriteParam(name string) { w.cur = append(w.cur, w.Param(name)...) }

// Table returns a qualified table name, each part quoted.
func (w *Writer) Table(t compiler.Table) string {
	parts := t.Parts
	if n, ok := w.d.(TableNamer); ok {
		parts = n.TableParts(t)
	}
	if len(parts) == 1 {
		return w.quote(parts[0])
	}
	var buf [128]byte // on the stack: the one allocation is the string
	b := buf[:0]
	for i, p := range parts {
		if i > 0 {
			b = append(b, '.')
		}
		b = append(b, w.quote(p)...)
	}
	return string(b)
}

// Param returns the marker for a declared parameter and records its use.
func (w *Writer) Param(name string) string {
	m := w.param(name)
	if pt, ok := w.d.(ParamTyper); ok {
		for _, p := range w.declared {
			if p.Name != name {
				continue
			}
			if t, typed := w.types[p.Type]; typed {
				return pt.TypedParam(m, t)
			}
		}
	}
	return m
}

func (w *Writer) param(name string) string {
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
				return w.d.Placeholder(i + 1)
			}
		}
	}
	if sh := w.shared; sh != nil {
		w.params = grow(&sh.params, w.params, name, 64)
	} else {
		w.params = append(w.params, name)
	}
	return w.d.Placeholder(len(w.params))
}

// Type returns the engine's spelling of a portable type.
func (w *Writer) Type(t compiler.Type) string {
	sh := w.shared
	if sh != nil {
		if s, ok := sh.types[t]; ok {
			return s
		}
	}
	s, err := w.d.ColumnType(t)
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return s
	}
	if sh != nil {
		if sh.types == nil {
			sh.types = map[compiler.Type]string{}
		}
		sh.types[t] = s
	}
	return s
}

// Dollar is the marker $n, for the engines that number their parameters
// that way. The first ones are spelled once, not at every marker.
func Dollar(n int) string {
	if n > 0 && n < len(dollars) {
		return dollars[n]
	}
	return "$" + strconv.Itoa(n)
}

var dollars = func() (d [100]string) {
	for n := range d {
		d[n] = "$" + strconv.Itoa(n)
	}
	return d
}()

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
	meant := w.meant
	w.cur = w.cur[:0]
	w.meant = Meant{}
	if sh := w.shared; sh != nil {
		if n := len(sh.spelled); n > sh.from {
			meant.Names = sh.spelled[sh.from:n:n]
		}
		sh.begin()
	}
	params := w.params
	w.params = nil
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
	t := w.passed()
	if h, ok := t.remembered(p); !ok {
		if err := CheckPart(w.d, p); err != nil {
			w.Fail(err)
			return
		}
		t.remember(h, p)
	}
	if sh := w.shared; sh != nil {
		w.parts = grow(&sh.parts, w.parts, p, 16)
	} else {
		w.parts = append(w.parts, p)
	}
}

// passed is what the lex-back remembers for w's dialect.
func (w *Writer) passed() *passedTable {
	sh := w.shared
	if sh == nil {
		return passedFor(w.d)
	}
	if !sh.passedKnown {
		sh.passed, sh.passedKnown = passedFor(w.d), true
	}
	return sh.passed
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

// String spells a string constant in the dialect's literal syntax and
// records it. A value that cannot be spelled the same way on every
// setting of the engine (a NUL, a control character other than tab and
// line ends, invalid UTF-8) is refused: spec literals never hold one.
func (w *Writer) String(s string) string {
	for i, r := range s {
		if r == utf8.RuneError || r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			w.Fail(fmt.Errorf("%s: cannot spell %q in a string literal (character %d)", w.d.Name(), s, i))
			return "''"
		}
	}
	var spelled string
	if q, ok := w.d.(StringQuoter); ok {
		spelled = q.StringLit(s)
	} else {
		spelled = StringLit(s)
	}
	if sh := w.shared; sh != nil {
		w.meant.Strings = grow(&sh.strings, w.meant.Strings, Spelled{Text: spelled, Value: s}, 16)
	} else {
		w.meant.Strings = append(w.meant.Strings, Spelled{Text: spelled, Value: s})
	}
	return spelled
}

// Number re-spells a number from its validated form and records it; what
// is not a number is refused.
func (w *Writer) Number(text string) string {
	n, ok := compiler.CanonicalNumber(text)
	if !ok {
		w.Fail(fmt.Errorf("%s: %q is not a number", w.d.Name(), text))
		return "0"
	}
	w.meant.Numbers = append(w.meant.Numbers, n)
	return n
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

// Query returns the place of a source query in the statement: End embeds
// the query there, once the indentation around it is final.
func (w *Writer) Query(q string) string {
	w.queries = append(w.queries, q)
	return queryMark + strconv.Itoa(len(w.queries)-1) + "\x00"
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
