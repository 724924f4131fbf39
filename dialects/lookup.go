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
func lookupFrom(w *Writer, r compiler.Relation) string {
	inner := r
	inner.Columns, inner.Lookups = nil, nil
	sel := make([]string, 0, len(r.Columns))
	for _, c := range r.Columns {
		sel = append(sel, w.Col("src", c))
	}
	for i, l := range r.Lookups {
		alias := lookupAlias(i)
		for _, c := range l.Columns {
			sel = append(sel, w.Col(alias, c.Lookup)+" AS "+w.Col("", c.Source))
		}
	}
	b := "(\n  SELECT " + strings.Join(sel, ", ") + "\n  FROM " + strings.ReplaceAll(fromAs(w, inner, "src"), "\n", "\n  ")
	for i, l := range r.Lookups {
		alias := lookupAlias(i)
		terms := make([]string, len(l.On))
		for j, on := range l.On {
			terms[j] = w.Col(alias, on.Lookup) + " = " + w.Col("src", on.Source)
		}
		if a := l.AsOf; a != nil {
			at := w.ConvertTime(w.Col("src", a.Column), a.Type, a.Valid)
			terms = append(terms, w.Col(alias, a.ValidFrom)+" <= "+at)
			if a.OpenEnd == "" {
				terms = append(terms, "("+at+" < "+w.Col(alias, a.ValidTo)+" OR "+w.Col(alias, a.ValidTo)+" IS NULL)")
			} else {
				// The open end is later than every time a row holds.
				terms = append(terms, at+" < "+w.Col(alias, a.ValidTo))
			}
		}
		b += "\n  LEFT JOIN " + w.Table(l.Table) + " AS " + alias + " ON " + strings.Join(terms, "\n    AND ")
	}
	return b + "\n) AS src"
}

func lookupAlias(i int) string { return "incrc_l" + strconv.Itoa(i+1) }

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
