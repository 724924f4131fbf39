package dialects

import (
	"strconv"
	"strings"

	"github.com/incrc/incrc/compiler"
)

// lookupFrom spells a relation joined with its lookups as a derived table
// named src: the relation's own columns, and each lookup's columns from
// the row it matches (LEFT JOIN: a row without a match keeps its place,
// with NULLs).
func lookupFrom(w *Writer, r compiler.Relation) {
	inner := r
	inner.Columns, inner.Lookups = nil, nil
	w.S("(\n  SELECT ")
	n := 0
	for _, c := range r.Columns {
		if n > 0 {
			w.S(", ")
		}
		n++
		w.S(w.Col("src", c))
	}
	for i, l := range r.Lookups {
		alias := lookupAlias(i)
		for _, c := range l.Columns {
			if n > 0 {
				w.S(", ")
			}
			n++
			w.S(w.Col(alias, c.Lookup))
			w.S(" AS ")
			w.S(w.Col("", c.Source))
		}
	}
	w.S("\n  FROM ")
	mark := len(w.cur)
	writeFromAs(w, inner, "src")
	w.indentSince(mark, "  ")
	for i, l := range r.Lookups {
		alias := lookupAlias(i)
		w.S("\n  LEFT JOIN ")
		w.S(w.Table(l.Table))
		w.S(" AS ", alias, " ON ")
		t := terms{w: w, sep: "\n    AND "}
		for _, on := range l.On {
			t.next()
			w.S(w.Col(alias, on.Lookup))
			w.S(" = ")
			w.S(w.Col("src", on.Source))
		}
		if a := l.AsOf; a != nil {
			at := w.ConvertTime(w.Col("src", a.Column), a.Type, a.Valid)
			t.next()
			w.S(w.Col(alias, a.ValidFrom))
			w.S(" <= ", at)
			t.next()
			if a.OpenEnd == "" {
				to := w.Col(alias, a.ValidTo)
				w.S("(", at, " < ", to, " OR ", to, " IS NULL)")
			} else {
				// The open end is later than every time a row holds.
				w.S(at, " < ")
				w.S(w.Col(alias, a.ValidTo))
			}
		}
	}
	w.S("\n) AS src")
}

func lookupAlias(i int) string {
	if i < len(lookupAliases) {
		return lookupAliases[i]
	}
	return "incrc_l" + strconv.Itoa(i+1)
}

// lookupAliases are the first aliases, spelled once.
var lookupAliases = func() (a [8]string) {
	for i := range a {
		a[i] = "incrc_l" + strconv.Itoa(i+1)
	}
	return a
}()

// lookupOverlaps counts, in one statement, the rows of each lookup table
// that would match a source row twice.
func lookupOverlaps(w *Writer, op compiler.LookupOverlaps) {
	var parts []string
	for _, l := range op.Lookups {
		var key []string
		for _, on := range l.On {
			key = append(key, on.Lookup)
		}
		group := key
		if a := l.AsOf; a != nil {
			group = append(append([]string(nil), key...), a.ValidFrom)
			after := w.Col("b", a.ValidFrom) + " < " + w.Col("a", a.ValidTo)
			if a.OpenEnd == "" {
				after = "(" + after + " OR " + w.Col("a", a.ValidTo) + " IS NULL)"
			}
			parts = append(parts, "SELECT 1 AS incrc_one FROM "+w.Table(l.Table)+" AS a JOIN "+w.Table(l.Table)+" AS b ON "+keyEq(w, "a", "b", key)+
				"\n    AND "+w.Col("a", a.ValidFrom)+" < "+w.Col("b", a.ValidFrom)+" AND "+after)
		}
		parts = append(parts, "SELECT 1 AS incrc_one FROM "+w.Table(l.Table)+" GROUP BY "+w.Idents("", group)+" HAVING COUNT(*) > 1")
	}
	w.S("SELECT COUNT(*)\nFROM (\n  ", strings.Join(parts, "\n  UNION ALL\n  "), "\n) AS incrc_overlaps")
}
