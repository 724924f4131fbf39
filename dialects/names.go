package dialects

import (
	"fmt"
	"slices"
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// Which table a name means on an engine. Spellings compare as strings in
// the compiler (validate.go, graph.go), case aside; an engine resolves
// them: DuckDB reads src as main.src, PostgreSQL public.src, SQLite has no
// schemas and reads a.b as the table a_b, and engines differ on case. Two
// spellings of one table are two tables to a string comparison: a
// pipeline could then write the table it reads (a full refresh would
// empty its source), or the table another pipeline, or incrc itself,
// writes. CheckNames finds what the spelling decides for the dialects a
// project compiles; the runner asks the catalog for what only the database
// knows (its current database, its search_path).

// TableKey is the name a table is known by on d, as far as its spelling
// decides: two names with one key are one table on d, two names with two
// keys may still be one where the connection decides (a search_path, the
// current database).
func TableKey(d Dialect, t ir.Table) string {
	parts, _ := keyParts(d, t)
	return strings.Join(parts, ".")
}

// keyParts are TableKey's parts, and how the engine read the spelling:
// flattened (SQLite's a.b is a_b), folded (case), the default schema left
// out.
func keyParts(d Dialect, t ir.Table) (parts []string, how reading) {
	parts = slices.Clone(t.Parts)
	if n, ok := d.(TableNamer); ok {
		if p := n.TableParts(t); !slices.Equal(p, parts) {
			parts, how.flattened = slices.Clone(p), true
		}
	}
	caps := d.Caps()
	fold := func(s string) string { return s }
	switch f, ok := d.(IdentFolder); {
	case ok:
		fold = f.FoldIdent
	case caps.FoldsNames:
		fold = strings.ToLower
	}
	for i, p := range parts {
		if f := fold(p); f != p {
			parts[i], how.folded = f, true
		}
	}
	if s := caps.DefaultSchema; s != "" && len(parts) == 2 && parts[0] == fold(s) {
		how.schema = parts[0]
		parts = parts[1:]
	}
	return parts, how
}

// reading is how an engine read a spelled name (keyParts).
type reading struct {
	flattened, folded bool
	schema            string // the default schema, left out
}

// explain says why two spellings are one table on the dialects on: what
// each dialect did to them, once.
func explain(ds []Dialect, on []Name, names ...ir.Table) string {
	var notes []string
	add := func(n string) {
		if !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	schemas := map[string][]string{} // default schema: the dialects
	var schemaOrder, folds []string
	for _, d := range ds {
		if !slices.Contains(on, d.Name()) {
			continue
		}
		var flat []string
		key := ""
		for _, t := range names {
			parts, how := keyParts(d, t)
			key = strings.Join(parts, ".")
			if how.flattened && !slices.Contains(flat, strings.Join(t.Parts, ".")) {
				flat = append(flat, strings.Join(t.Parts, "."))
			}
			if how.schema != "" && !slices.Contains(schemas[how.schema], string(d.Name())) {
				if schemas[how.schema] == nil {
					schemaOrder = append(schemaOrder, how.schema)
				}
				schemas[how.schema] = append(schemas[how.schema], string(d.Name()))
			}
			if how.folded && !slices.Contains(folds, string(d.Name())) {
				folds = append(folds, string(d.Name()))
			}
		}
		if len(flat) > 0 {
			verb := "is"
			if len(flat) > 1 {
				verb = "are both"
			}
			add(fmt.Sprintf("%s has no schemas: %s %s the table %s", d.Name(), strings.Join(flat, " and "), verb, key))
		}
	}
	for _, s := range schemaOrder {
		add(fmt.Sprintf("%s is the default schema of %s", s, strings.Join(schemas[s], " and ")))
	}
	if len(folds) > 0 {
		add(fmt.Sprintf("%s compare%s names without case", strings.Join(folds, " and "), map[bool]string{true: "", false: "s"}[len(folds) > 1]))
	}
	return strings.Join(notes, "; ")
}

// NameProblem is one finding of CheckNames, at its place in a spec.
type NameProblem struct {
	Pos ir.Pos
	// Pipelines are those the problem keeps from running.
	Pipelines []string
	Msg       string
	// Code names a warning ("name-case"); an error has none.
	Code string
}

// reservedPrefix starts the names of incrc's own tables: the state, the
// run log, the markers, the bookmark (ir.StateTable ...) and the
// session tables of each run.
const reservedPrefix = "incrc_"

// CheckNames checks the tables of a project's valid specs as each dialect
// of ds resolves their names: a pipeline that reads one of the tables it
// writes, a table two pipelines write (targets, quarantines, tombstones),
// a table named like incrc's own, are errors naming both uses and the
// dialects where they are one table. Names that differ only in case are
// an error where the dialects disagree on them (one table on some, two on
// others), and a warning where every dialect reads them as two.
//
// What the compiler's own checks report (a target spelled as its source,
// two targets spelled alike but for case) is not reported again.
//
// uses are the tables of every spec (the compiler's Spec.Tables); the
// caller, which sees both the specs and the dialects (incrc's project
// loader), turns the problems into its diagnostics. Each list is in the
// order of the specs' positions.
func CheckNames(ds []Dialect, uses []ir.TableUse) (errs, warnings []NameProblem) {
	type pair struct{ a, b int } // indexes in uses, a before b
	same := map[pair][]Name{}
	var order []pair
	note := func(p pair, d Dialect) {
		if _, ok := same[p]; !ok {
			order = append(order, p)
		}
		same[p] = append(same[p], d.Name())
	}
	reserved := map[int][]string{} // use: why it is reserved, per dialect
	for _, d := range ds {
		keys := make([]string, len(uses))
		byKey := map[string][]int{}
		for i, u := range uses {
			keys[i] = TableKey(d, u.Table)
			byKey[keys[i]] = append(byKey[keys[i]], i)
			if u.Role == ir.RoleTarget { // the tables named after it follow it
				parts, how := keyParts(d, u.Table)
				if name := parts[len(parts)-1]; strings.HasPrefix(strings.ToLower(name), reservedPrefix) && !strings.HasPrefix(strings.ToLower(u.Table.Name()), reservedPrefix) {
					why := ""
					if how.flattened {
						why = ", which has no schemas and joins a.b into a_b"
					}
					reserved[i] = append(reserved[i], fmt.Sprintf("the table %s on %s%s", strings.Join(parts, "."), d.Name(), why))
				}
			}
		}
		for _, idx := range byKey {
			for x := 0; x < len(idx); x++ {
				for y := x + 1; y < len(idx); y++ {
					if uses[idx[x]].Role.Writes() || uses[idx[y]].Role.Writes() {
						note(pair{idx[x], idx[y]}, d)
					}
				}
			}
		}
	}
	for i, whys := range reserved {
		u := uses[i]
		errs = append(errs, NameProblem{Pos: u.Name.Pos, Pipelines: []string{u.Pipeline},
			Msg: fmt.Sprintf("%s is %s: names starting with %s are reserved for incrc's own tables (%s holds every pipeline's watermark); choose another name",
				u.What(), strings.Join(whys, ", "), reservedPrefix, ir.StateTable.Name())})
	}
	for _, p := range order {
		a, b := uses[p.a], uses[p.b]
		if d := oneTable(ds, a, b, same[p]); d != nil {
			errs = append(errs, *d)
		}
	}
	// Names alike but for case, as engines disagree on them.
	spelled := map[string][]int{}
	for i, u := range uses {
		k := strings.ToLower(strings.Join(u.Table.Parts, "."))
		spelled[k] = append(spelled[k], i)
	}
	for _, idx := range spelled {
		first := map[string]int{} // spelling: its first use
		var spellings []string
		for _, i := range idx {
			sp := strings.Join(uses[i].Table.Parts, ".")
			if _, ok := first[sp]; !ok {
				first[sp] = i
				spellings = append(spellings, sp)
			}
		}
		for _, sp := range spellings[1:] {
			a, b := uses[first[spellings[0]]], uses[first[sp]]
			if compilerSays(a, b) {
				continue
			}
			var one, two []string
			for _, d := range ds {
				if TableKey(d, a.Table) == TableKey(d, b.Table) {
					one = append(one, string(d.Name()))
				} else {
					two = append(two, string(d.Name()))
				}
			}
			where := fmt.Sprintf("%s (%s) and %s (%s) differ only in case", spellings[0], a.Name.Pos, sp, b.Name.Pos)
			switch {
			case len(one) > 0 && len(two) > 0:
				errs = append(errs, NameProblem{Pos: b.Name.Pos, Pipelines: pipelines(a, b),
					Msg: fmt.Sprintf("%s: they are one table on %s and two on %s, and this project compiles for both; spell them alike", where, strings.Join(one, ", "), strings.Join(two, ", "))})
			case len(two) > 0:
				warnings = append(warnings, NameProblem{Pos: b.Name.Pos, Pipelines: pipelines(a, b), Code: "name-case",
					Msg: fmt.Sprintf("%s: they are two tables on %s, where a quoted name keeps its case; if they mean one table, spell them alike", where, strings.Join(two, ", "))})
			}
		}
	}
	byPos := func(a, b NameProblem) int { return a.Pos.Compare(b.Pos) }
	slices.SortStableFunc(errs, byPos)
	slices.SortStableFunc(warnings, byPos)
	return errs, warnings
}

// compilerSays reports whether the compiler's own checks refuse two uses
// spelled alike but for case: two targets, or a pipeline's source or
// lookup and its target.
func compilerSays(a, b ir.TableUse) bool {
	if a.Role == ir.RoleTarget && b.Role == ir.RoleTarget {
		return true
	}
	return a.Pipeline == b.Pipeline && (a.Role == ir.RoleTarget || b.Role == ir.RoleTarget)
}

// oneTable is the error for two uses of one table on the dialects on, or
// nil when the compiler says it already, or the uses may share a table (a
// pipeline reads another's target: the graph of upstreams).
func oneTable(ds []Dialect, a, b ir.TableUse, on []Name) *NameProblem {
	spelledAlike := strings.EqualFold(strings.Join(a.Table.Parts, "."), strings.Join(b.Table.Parts, "."))
	switch {
	case a.Pipeline != b.Pipeline && (!a.Role.Writes() || !b.Role.Writes()):
		return nil // one reads what the other writes: an upstream
	case spelledAlike && compilerSays(a, b):
		return nil // the compiler's checks of targets, and of a source (or a lookup) and its target, say it
	}
	dialects := make([]string, len(on))
	for i, n := range on {
		dialects[i] = string(n)
	}
	one := fmt.Sprintf("are one table on %s", strings.Join(dialects, ", "))
	if !slices.Equal(a.Table.Parts, b.Table.Parts) {
		one += " (" + explain(ds, on, a.Table, b.Table) + ")"
	}
	// Reported at the later of the two, as the compiler's checks are.
	if a.Pipeline == b.Pipeline {
		r, w := a, b
		if r.Role.Writes() {
			r, w = b, a
		}
		if r.Role.Writes() {
			return &NameProblem{Pos: b.Name.Pos, Pipelines: []string{a.Pipeline},
				Msg: fmt.Sprintf("%s and %s %s: a pipeline writes each of its tables once", a.What(), b.What(), one)}
		}
		return &NameProblem{Pos: r.Name.Pos, Pipelines: []string{a.Pipeline},
			Msg: fmt.Sprintf("%s and %s %s: a pipeline writes somewhere else than it reads (a full refresh would empty its own source)", r.What(), w.What(), one)}
	}
	return &NameProblem{Pos: b.Name.Pos, Pipelines: pipelines(a, b),
		Msg: fmt.Sprintf("%s and %s of pipeline %q (%s) %s: two pipelines must not write one table", b.What(), a.What(), a.Pipeline, a.Name.Pos, one)}
}

func pipelines(a, b ir.TableUse) []string {
	if a.Pipeline == b.Pipeline {
		return []string{a.Pipeline}
	}
	return []string{a.Pipeline, b.Pipeline}
}

// TableResolver is implemented by dialects whose connection decides part
// of which table a name means: DuckDB's current database and schema,
// PostgreSQL's search_path, MariaDB's current database and its rule for
// case. ResolveTable spells a query of one row of three texts, the
// catalog, schema and name of the table t means on the connection, the
// same for every name of one table, whether it exists yet or not (then
// where CREATE TABLE would make it). The runner runs it before a run
// writes anything; elsewhere TableKey, the spelling, decides.
type TableResolver interface {
	ResolveTable(t ir.Table) (query string, args []any)
}
