package dialects

import (
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler"
)

// Writer accumulates the SQL of one statement (or a few, for operations an
// engine spells in several) and the parameters it binds, in marker order.
type Writer struct {
	d        Dialect
	declared []compiler.Param
	parts    []Part
	cur      strings.Builder
	params   []string
	err      error
}

// Part is one SQL statement and the names of the parameters it binds, in
// the order of its markers.
type Part struct {
	SQL    string
	Params []string
}

// Dialect returns the dialect being rendered.
func (w *Writer) Dialect() Dialect { return w.d }

// Printf appends formatted text.
func (w *Writer) Printf(format string, args ...any) { fmt.Fprintf(&w.cur, format, args...) }

// S appends text.
func (w *Writer) S(parts ...string) {
	for _, p := range parts {
		w.cur.WriteString(p)
	}
}

// Ident appends a quoted identifier.
func (w *Writer) Ident(name string) { w.cur.WriteString(w.d.QuoteIdent(name)) }

// Idents returns quoted identifiers joined by ", ", each prefixed with
// alias and a dot when alias is not empty.
func (w *Writer) Idents(alias string, names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = w.Col(alias, n)
	}
	return strings.Join(out, ", ")
}

// Col returns alias.name quoted, or name alone without an alias.
func (w *Writer) Col(alias, name string) string {
	if alias == "" {
		return w.d.QuoteIdent(name)
	}
	return alias + "." + w.d.QuoteIdent(name)
}

// Table returns a qualified table name, each part quoted.
func (w *Writer) Table(t compiler.Table) string {
	if n, ok := w.d.(TableNamer); ok {
		return n.TableName(t)
	}
	out := make([]string, len(t.Parts))
	for i, p := range t.Parts {
		out[i] = w.d.QuoteIdent(p)
	}
	return strings.Join(out, ".")
}

// Param returns the marker for a declared parameter and records its use.
func (w *Writer) Param(name string) string {
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
	w.params = append(w.params, name)
	return w.d.Placeholder(len(w.params))
}

// Type returns the engine's spelling of a portable type.
func (w *Writer) Type(t compiler.Type) string {
	s, err := w.d.ColumnType(t)
	if err != nil && w.err == nil {
		w.err = err
	}
	return s
}

// Fail records an error; the statement does not render.
func (w *Writer) Fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// End closes the current statement and starts another: for operations an
// engine spells as several statements.
func (w *Writer) End() {
	sql := strings.TrimSpace(w.cur.String())
	if sql != "" {
		w.parts = append(w.parts, Part{SQL: sql, Params: w.params})
	}
	w.cur.Reset()
	w.params = nil
}

// String spells a string constant in the dialect's literal syntax.
func (w *Writer) String(s string) string {
	if q, ok := w.d.(StringQuoter); ok {
		return q.StringLit(s)
	}
	return StringLit(s)
}

// Number re-spells a number from its validated form; what is not a
// number is refused.
func (w *Writer) Number(text string) string {
	n, ok := compiler.CanonicalNumber(text)
	if !ok {
		w.Fail(fmt.Errorf("%s: %q is not a number", w.d.Name(), text))
		return "0"
	}
	return n
}

// StringLit spells a string constant. Backslashes never reach here: specs
// with them are rejected, since engines disagree on their meaning.
func StringLit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
