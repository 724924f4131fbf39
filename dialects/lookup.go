package dialects

import (
	"strconv"

	"github.com/incrc/incrc/compiler/ir"
)

// lookupFrom spells a relation joined with its lookups as a derived table
// named src: the relation's own columns, and each lookup's columns from
// the row it matches (LEFT JOIN: a row without a match keeps its place,
// with NULLs).
func lookupFrom(w *Writer, r ir.Relation) {
	inner := r
	inner.Columns, inner.Lookups = nil, nil
	w.S("(\n  SELECT ")
	n := 0
	for _, c := range r.Columns {
		if n > 0 {
			w.S(", ")
		}
		n++
		w.Col("src", c)
	}
	for i, l := range r.Lookups {
		alias := lookupAlias(i)
		for _, c := range l.Columns {
			if n > 0 {
				w.S(", ")
			}
			n++
			w.Col(alias, c.Lookup)
			w.S(" AS ")
			w.Col("", c.Source)
		}
	}
	w.S("\n  FROM ")
	mark := len(w.cur)
	FromAs(w, inner, "src")
	w.indentSince(mark, "  ")
	for i, l := range r.Lookups {
		alias := lookupAlias(i)
		w.S("\n  LEFT JOIN ")
		w.Table(l.Table)
		w.S(" AS ", alias, " ON ")
		t := terms{w: w, sep: "\n    AND "}
		for _, on := range l.On {
			t.next()
			w.Col(alias, on.Lookup)
			w.S(" = ")
			w.Col("src", on.Source)
		}
		if a := l.AsOf; a != nil {
			at := func() { w.ConvertTime(func() { w.Col("src", a.Column) }, a.Type, a.Valid) }
			t.next()
			w.Col(alias, a.ValidFrom)
			w.S(" <= ")
			at()
			t.next()
			if a.OpenEnd == "" {
				w.S("(")
				at()
				w.S(" < ")
				w.Col(alias, a.ValidTo)
				w.S(" OR ")
				w.Col(alias, a.ValidTo)
				w.S(" IS NULL)")
			} else {
				// The open end is later than every time a row holds.
				at()
				w.S(" < ")
				w.Col(alias, a.ValidTo)
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
func lookupOverlaps(w *Writer, op ir.LookupOverlaps) {
	w.S("SELECT COUNT(*)\nFROM (\n  ")
	n := 0
	union := func() {
		if n > 0 {
			w.S("\n  UNION ALL\n  ")
		}
		n++
	}
	for _, l := range op.Lookups {
		var key []string
		for _, on := range l.On {
			key = append(key, on.Lookup)
		}
		group := key
		if a := l.AsOf; a != nil {
			group = append(append([]string(nil), key...), a.ValidFrom)
			union()
			w.S("SELECT 1 AS incrc_one FROM ")
			w.Table(l.Table)
			w.S(" AS a JOIN ")
			w.Table(l.Table)
			w.S(" AS b ON ")
			keyEq(w, "a", "b", key)
			w.S("\n    AND ")
			w.Col("a", a.ValidFrom)
			w.S(" < ")
			w.Col("b", a.ValidFrom)
			w.S(" AND ")
			if a.OpenEnd == "" {
				w.S("(")
			}
			w.Col("b", a.ValidFrom)
			w.S(" < ")
			w.Col("a", a.ValidTo)
			if a.OpenEnd == "" {
				w.S(" OR ")
				w.Col("a", a.ValidTo)
				w.S(" IS NULL)")
			}
		}
		union()
		w.S("SELECT 1 AS incrc_one FROM ")
		w.Table(l.Table)
		w.S(" GROUP BY ")
		w.Idents("", group)
		w.S(" HAVING COUNT(*) > 1")
	}
	w.S("\n) AS incrc_overlaps")
}
