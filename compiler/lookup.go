package compiler

import (
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	"go.yaml.in/yaml/v3"
)

// Lookups: columns of the target filled from another table, joined on a
// key and, with as_of, on the version of that key valid at a time of the
// row: valid_from <= as_of < valid_to, the open end (NULL or a sentinel)
// holding every later time. The join is a LEFT JOIN in the relation every
// statement reads the source through (Relation.Lookups): a run, a full
// refresh, a backfill's rebuild and its check, reconciliation and the
// quarantine all see the same rows, so a rebuilt past day carries that
// day's values. A row with no matching version keeps its place with
// NULLs in the looked-up columns; declare them in quality.not_null to
// quarantine such rows with a reason instead.

// lookupCheck adds the check of the lookup tables that no pipeline of the
// project keeps unique.
func (l *lowerer) lookupCheck() {
	var check []ir.LookupJoin
	for _, j := range l.p.Source.Lookups {
		if !j.Trusted {
			check = append(check, j)
		}
	}
	if len(check) == 0 {
		return
	}
	l.add(ir.StmtCheckLookups, ir.PhaseStage, "Rows of a lookup table that would match one source row twice (a key twice, versions that overlap): the run fails rather than write a row twice.",
		ir.LookupOverlaps{Lookups: check})
}

// lookupSteps run the check before anything is staged.
func (l *lowerer) lookupSteps() []ir.Step {
	if l.p.Statement(ir.StmtCheckLookups) == nil {
		return nil
	}
	return []ir.Step{{Stmt: ir.StmtCheckLookups, Read: ir.ReadCount,
		Fail: "%d row(s) of lookup tables would match a source row more than once (a key twice, or versions of a key that overlap), so the row would be written once per match: fix the lookup table"}}
}

var lookupKeys = keysAt(SpecKeys, "lookups") // the key table (keys.go)

// lookups reads the lookups list: each entry a mapping of lookupKeys.
func (p *parser) lookups(n *yaml.Node) []Lookup {
	at := n
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		p.diags.add(p.pos(at), "lookups must be a list, each entry - table: schema.table with on: and columns:, got %s", kindName(n))
		p.report("lookups")
		return nil
	}
	if len(n.Content) == 0 {
		p.diags.add(p.pos(at), "lookups is an empty list: name at least one, or remove the key")
		p.report("lookups")
		return nil
	}
	var out []Lookup
	for _, e := range n.Content {
		l := Lookup{Pos: p.pos(e)}
		p.mapping(e, "lookup", lookupKeys, func(key string, _, v *yaml.Node) {
			switch key {
			case "table":
				l.Table = p.str("lookup.table", v)
			case "on":
				l.On = p.pairs("lookup.on", v)
			case "as_of":
				l.AsOf = p.str("lookup.as_of", v)
			case "columns":
				l.Columns = p.pairs("lookup.columns", v)
			case "valid_from":
				l.ValidFrom = p.str("lookup.valid_from", v)
			case "valid_to":
				l.ValidTo = p.str("lookup.valid_to", v)
			case "open_end":
				l.OpenEnd = p.str("lookup.open_end", v)
			default:
				p.unread(key)
			}
		})
		if resolve(e).Kind == yaml.MappingNode {
			out = append(out, l)
		}
	}
	return out
}

// pairs reads a mapping of names to names, as in {customer_id: id}. What
// it reports wrong is an empty list, not nil: nil means absent.
func (p *parser) pairs(what string, n *yaml.Node) []Pair {
	at := n
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		p.diags.add(p.pos(at), "%s must be a mapping of column to column, as in {customer_id: customer_id}, got %s", what, kindName(n))
		return []Pair{}
	}
	if len(n.Content) == 0 {
		p.diags.add(p.pos(at), "%s is empty: map at least one column", what)
		return []Pair{}
	}
	out := []Pair{}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k.Kind != yaml.ScalarNode {
			p.diags.add(p.pos(k), "%s: a column name must be a single value, got %s", what, kindName(k))
			continue
		}
		if line, ok := seen[k.Value]; ok {
			p.diags.add(p.pos(k), "%s: column %s is mapped twice (first on line %d): keep one", what, quote(k.Value), line)
			continue
		}
		seen[k.Value] = k.Line
		out = append(out, Pair{Left: p.str(what+" column", k), Right: p.str(what+" column", n.Content[i+1])})
	}
	return out
}

// lookups checks each lookup against this spec; checkLookups checks them
// against the project.
func (v *validator) lookups() {
	s := v.s
	if v.reported("lookups") || len(s.Lookups) == 0 {
		return
	}
	filled := map[string]bool{}
	for _, l := range s.Lookups {
		for _, c := range l.Columns {
			filled[c.Left.Value] = true
		}
	}
	fills := map[string]ir.String{}
	for _, l := range s.Lookups {
		switch {
		case !l.Table.Set():
			v.missing(l.Pos, "lookup.table")
		default:
			v.checkTable("lookup.table", l.Table)
			if strings.EqualFold(l.Table.Value, s.Target.Table.Value) {
				v.errf(l.Table.Pos, "lookup.table %s is this pipeline's own target: a run would read what it is writing", quote(l.Table.Value))
			}
		}
		if l.On == nil {
			v.errf(l.Pos, "lookup: missing required key \"on\", the columns that match a row of %s (this pipeline's column: the lookup table's, as in on: {customer_id: customer_id})", orWord(l.Table.Value, "the lookup table"))
		}
		for _, on := range l.On {
			if c := v.col("lookup.on column", on.Left); c != nil && filled[c.Name.Value] {
				v.errf(on.Left.Pos, "lookup.on column %q is filled by a lookup itself: match on a column read from the source", on.Left.Value)
			}
			v.ident("lookup.on column", on.Right)
		}
		if l.AsOf.Set() {
			c := v.col("lookup.as_of", l.AsOf)
			switch {
			case c == nil:
			case !c.Type.IsTime():
				v.errf(l.AsOf.Pos, "lookup.as_of %q has type %s: the version valid at a row's time needs a date or timestamp column", c.Name.Value, c.Type)
			case filled[c.Name.Value]:
				v.errf(l.AsOf.Pos, "lookup.as_of %q is filled by a lookup itself: use a column read from the source", c.Name.Value)
			}
		}
		asOfOnly := false
		for _, k := range []struct {
			s    ir.String
			name string
		}{{l.ValidFrom, "valid_from"}, {l.ValidTo, "valid_to"}, {l.OpenEnd, "open_end"}} {
			if k.s.Set() && !l.AsOf.Set() {
				v.errf(k.s.Pos, "lookup.%s names the lookup table's validity, which only a lookup by as_of reads (the version valid at a row's time): add as_of, or remove it", k.name)
				asOfOnly = true
			}
		}
		if asOfOnly {
			continue
		}
		v.ident("lookup.valid_from", l.ValidFrom)
		v.ident("lookup.valid_to", l.ValidTo)
		if l.OpenEnd.Value != "" {
			if _, err := ir.ParseTime(l.OpenEnd.Value); err != nil {
				v.errf(l.OpenEnd.Pos, "lookup.open_end: %v (the lookup table's valid_to of a current version, such as 9999-12-31)", err)
			}
		}
		if l.Columns == nil {
			v.errf(l.Pos, "lookup: missing required key \"columns\", the target columns it fills (target column: the lookup table's, as in columns: {customer_country: country})")
		}
		for _, c := range l.Columns {
			col := v.col("lookup.columns target column", c.Left)
			v.ident("lookup.columns column", c.Right)
			if col == nil {
				continue
			}
			name := col.Name.Value
			if first, ok := fills[name]; ok {
				v.errf(c.Left.Pos, "column %q is filled by two lookups (first at %s): keep one", name, first.Pos)
				continue
			}
			fills[name] = c.Left
			switch {
			case contains(s.Key(), name):
				v.errf(c.Left.Pos, "column %q is part of unique_key, which must come from the source: a lookup cannot fill it", name)
			case s.Watermark != nil && s.Watermark.Column.Value == name:
				v.errf(c.Left.Pos, "column %q is the watermark, which windows the source: a lookup cannot fill it", name)
			}
		}
	}
}

// ident checks a name of a table the spec does not declare: a plain
// identifier, so nothing of it can leave the quoted name.
func (v *validator) ident(what string, s ir.String) {
	switch {
	case s.Value == "":
	case !ir.IsIdent(s.Value):
		v.errf(s.At(badIdentChar(s.Value)), "%s %s is not a plain name: use letters, digits and _", what, quote(s.Value))
	case len(s.Value) > MaxIdentLen:
		v.errf(s.Pos, "%s %s: a name is at most %d characters", what, quote(s.Value), MaxIdentLen)
	}
}

func orWord(s, word string) string {
	if s == "" {
		return word
	}
	return s
}

// checkLookups checks the lookups of every spec against the pipeline that
// writes the looked-up table, when one of the project does. A lookup of an
// scd2 target without as_of is refused: it is the trap of story 3.
func checkLookups(specs []*Spec) Diagnostics {
	var diags Diagnostics
	writers := map[string]*Spec{}
	for _, s := range specs {
		if s != nil {
			if _, ok := writers[strings.ToLower(s.Target.Table.Value)]; !ok {
				writers[strings.ToLower(s.Target.Table.Value)] = s
			}
		}
	}
	for _, s := range specs {
		if s == nil {
			continue
		}
		for i := range s.Lookups {
			l := &s.Lookups[i]
			dim := writers[strings.ToLower(l.Table.Value)]
			if dim == nil || dim == s {
				continue
			}
			diags = append(diags, checkLookup(s, l, dim)...)
		}
	}
	return diags
}

func checkLookup(s *Spec, l *Lookup, dim *Spec) Diagnostics {
	var diags Diagnostics
	involved := []string{dim.Pipeline.Value, s.Pipeline.Value}
	scd2 := dim.Strategy.Value == string(ir.SCD2Strategy)
	var names []ir.String
	if scd2 {
		names = scd2Names(scd2Block(dim))
	}
	switch {
	case scd2 && !l.AsOf.Set():
		diags.addFor(involved, l.Table.Pos, "lookup %s is the type-2 dimension of pipeline %q (%s): it holds every version of a key, so a join on the key alone matches them all and writes each row once per version, and a join on the current version gives every row today's values, so a backfilled past day would report where things are now; add as_of: the column of this pipeline that says when the row was true (as in as_of: order_date), and the join takes the version valid then",
			quote(l.Table.Value), dim.Pipeline.Value, dim.File)
		return diags
	case !scd2 && l.AsOf.Set():
		diags.addFor(involved, l.AsOf.Pos, "lookup %s is the target of pipeline %q (strategy %s), which holds one row per key and no validity columns: remove as_of",
			quote(l.Table.Value), dim.Pipeline.Value, dim.Strategy.Value)
		return diags
	}
	// The join must be on the dimension's whole key: on a part of it, a row
	// matches several rows (or versions) and is written once per match.
	if key := dim.Key(); len(key) > 0 {
		var on []string
		for _, p := range l.On {
			on = append(on, p.Right.Value)
		}
		if !sameSet(on, key) {
			diags.addFor(involved, l.Pos, "lookup on matches %s on (%s), and pipeline %q keys it by (%s): match on the whole key, or a row matches several rows of it and is written once per match",
				quote(l.Table.Value), strings.Join(on, ", "), dim.Pipeline.Value, strings.Join(key, ", "))
		}
	}
	dimType := func(name string) (ir.Type, bool) {
		// A change log's excluded columns are not in its target.
		if c := dim.Column(name); c != nil && (dim.CDC == nil || !contains(values(dim.CDC.Exclude), name)) {
			return c.Type, true
		}
		for i, n := range names {
			if n.Value == name {
				if i == 2 {
					return ir.Type{Kind: ir.Boolean}, true
				}
				return scd2ValidType(dim), true
			}
		}
		return ir.Type{}, false
	}
	var known []string
	for _, name := range append(dim.ColumnNames(), values(names)...) {
		if _, ok := dimType(name); ok {
			known = append(known, name)
		}
	}
	for _, c := range l.Columns {
		t, ok := dimType(c.Right.Value)
		if !ok {
			diags.addFor(involved, c.Right.Pos, "lookup column %s is not a column of %s (pipeline %q)%s", quote(c.Right.Value), l.Table.Value, dim.Pipeline.Value, suggest(c.Right.Value, known))
			continue
		}
		if target := s.Column(c.Left.Value); target != nil && target.Type.Kind != "" {
			if fits, why := ir.Fits(t, target.Type); !fits {
				diags.addFor(involved, c.Left.Pos, "column %q is declared %s, and %s.%s is %s, which does not fit without loss (%s): declare a type that holds it",
					c.Left.Value, target.Type, l.Table.Value, c.Right.Value, t, why)
			}
		}
	}
	if !scd2 {
		if len(diags) == 0 {
			l.writer = dim
		}
		return diags
	}
	for _, o := range []struct {
		given ir.String
		dim   ir.String
		what  string
	}{{l.ValidFrom, names[0], "valid_from"}, {l.ValidTo, names[1], "valid_to"}} {
		if o.given.Set() && o.given.Value != o.dim.Value {
			diags.addFor(involved, o.given.Pos, "lookup.%s %s: pipeline %q names it %s; remove it here, the lookup takes the dimension's own", o.what, quote(o.given.Value), dim.Pipeline.Value, quote(o.dim.Value))
		}
	}
	if l.OpenEnd.Set() {
		given, _ := ir.ParseTime(l.OpenEnd.Value)
		open := scd2Block(dim).OpenEnd.Value
		want, err := ir.ParseTime(open)
		if open == "" || err != nil || !given.Equal(want) {
			diags.addFor(involved, l.OpenEnd.Pos, "lookup.open_end %s: pipeline %q ends its current versions with %s; remove it here, the lookup takes the dimension's own", quote(l.OpenEnd.Value), dim.Pipeline.Value, orWord(open, "NULL"))
		}
	}
	asOf := s.Column(l.AsOf.Value)
	valid := scd2ValidType(dim)
	if asOf != nil && asOf.Type.IsTime() && !comparableTimes(asOf.Type, valid) {
		diags.addFor(involved, l.AsOf.Pos, "lookup.as_of %q is a %s, and the versions of %s start at %s values: compare a %s with a %s (a date and a timestamp are converted; a timestamptz compares only with a timestamptz)",
			l.AsOf.Value, asOf.Type, l.Table.Value, valid, valid, valid)
	}
	if len(diags) == 0 {
		l.writer = dim
	}
	return diags
}

// comparableTimes reports whether an as_of of type a can find versions
// whose validity is of type b: the same kind, or a date and a naive
// timestamp (converted). A timestamptz converts to a date or timestamp
// only in some time zone, which engines choose differently.
func comparableTimes(a, b ir.Type) bool {
	if a.Kind == b.Kind {
		return true
	}
	naive := func(k ir.TypeKind) bool { return k == ir.Date || k == ir.Timestamp }
	return naive(a.Kind) && naive(b.Kind)
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !contains(b, x) {
			return false
		}
	}
	return true
}

// withLookups joins a spec's lookups to its source relation: the source
// is read for the columns no lookup fills.
func withLookups(s *Spec, r ir.Relation) ir.Relation {
	if len(s.Lookups) == 0 {
		return r
	}
	filled := map[string]bool{}
	for _, l := range s.Lookups {
		j := ir.LookupJoin{Table: splitTable(l.Table.Value)}
		for _, on := range l.On {
			j.On = append(j.On, ir.JoinPair{Source: on.Left.Value, Lookup: on.Right.Value})
		}
		for _, c := range l.Columns {
			j.Columns = append(j.Columns, ir.JoinPair{Source: c.Left.Value, Lookup: c.Right.Value})
			filled[c.Left.Value] = true
		}
		if w := l.writer; w != nil {
			j.Trusted = w.Strategy.Value == string(ir.Merge) || w.Strategy.Value == string(ir.SCD2Strategy)
		}
		if l.AsOf.Set() {
			col := s.Column(l.AsOf.Value)
			a := &ir.AsOf{Column: col.Name.Value, Type: col.Type, Valid: col.Type,
				ValidFrom: orDefault(l.ValidFrom.Value, DefaultValidFrom), ValidTo: orDefault(l.ValidTo.Value, DefaultValidTo)}
			if l.OpenEnd.Value != "" {
				a.OpenEnd, _ = ir.ParseWatermark(col.Type, l.OpenEnd.Value)
			}
			if dim := l.writer; dim != nil && scd2Block(dim) != nil {
				c := scd2Block(dim)
				names := scd2Names(c)
				a.ValidFrom, a.ValidTo, a.Valid = names[0].Value, names[1].Value, scd2ValidType(dim)
				a.OpenEnd = ""
				if c.OpenEnd.Value != "" {
					a.OpenEnd, _ = ir.ParseWatermark(a.Valid, c.OpenEnd.Value)
				}
			}
			j.AsOf = a
		}
		r.Lookups = append(r.Lookups, j)
	}
	for _, c := range s.Columns {
		if !filled[c.Name.Value] {
			r.Columns = append(r.Columns, c.Name.Value)
		}
	}
	return r
}
