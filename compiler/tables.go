package compiler

import "strings"

// TableRole is how a pipeline uses a table.
type TableRole string

const (
	RoleSource     TableRole = "source"     // source.table, in the target's database
	RoleLookup     TableRole = "lookup"     // a lookup's table
	RoleTarget     TableRole = "target"     // target.table
	RoleQuarantine TableRole = "quarantine" // the target's quarantine: TARGET_quarantine
	RoleTombstones TableRole = "tombstones" // a change log's deletes: TARGET_tombstones
	RoleTruncated  TableRole = "truncated"  // a change log's newest truncate: TARGET_truncated
	RoleEvents     TableRole = "events"     // a change log's versions, before scd2.tracked merges them: TARGET_events
)

// Writes reports whether a pipeline writes a table of the role.
func (r TableRole) Writes() bool {
	return r == RoleTarget || r == RoleQuarantine || r == RoleTombstones || r == RoleTruncated || r == RoleEvents
}

// TableUse is a table a pipeline reads or writes in its target's database.
type TableUse struct {
	Pipeline string
	Role     TableRole
	Table    Table
	// Name is the spec's scalar that names it: the target's for the
	// tables named after it.
	Name String
}

// What says the table for a message: target.table "dw.orders", the
// quarantine table "dw.orders_quarantine".
func (u TableUse) What() string {
	switch u.Role {
	case RoleQuarantine, RoleTombstones, RoleTruncated, RoleEvents:
		return "the " + string(u.Role) + " table " + quote(strings.Join(u.Table.Parts, "."))
	}
	return string(u.Role) + ".table " + quote(u.Name.Value)
}

// Tables lists the tables a valid spec reads and writes in its target's
// database, the source first: a source in another database
// (source.connection), a query and files are none of them. The quarantine
// and the tombstones are named after the target, in its schema.
func (s *Spec) Tables() []TableUse {
	name := s.Pipeline.Value
	var out []TableUse
	if t := s.Source.Table; t.Value != "" && !s.Source.Connection.Set() {
		out = append(out, TableUse{Pipeline: name, Role: RoleSource, Table: splitTable(t.Value), Name: t})
	}
	for _, l := range s.Lookups {
		if l.Table.Value != "" {
			out = append(out, TableUse{Pipeline: name, Role: RoleLookup, Table: splitTable(l.Table.Value), Name: l.Table})
		}
	}
	t := s.Target.Table
	if t.Value == "" {
		return out
	}
	target := splitTable(t.Value)
	out = append(out, TableUse{Pipeline: name, Role: RoleTarget, Table: target, Name: t})
	named := func(suffix string) Table {
		return Table{Parts: append(append([]string(nil), target.Schema()...), target.Name()+suffix)}
	}
	if _, mode := qualityRules(s, specCols(s)); mode == "quarantine" {
		out = append(out, TableUse{Pipeline: name, Role: RoleQuarantine, Table: named(quarantineSuffix), Name: t})
	}
	if Strategy(s.Strategy.Value) == CDCApply || fromChanges(s) {
		out = append(out, TableUse{Pipeline: name, Role: RoleTombstones, Table: named(tombstonesSuffix), Name: t})
		if fromChanges(s) && s.SCD2 != nil && len(s.SCD2.Tracked) > 0 {
			out = append(out, TableUse{Pipeline: name, Role: RoleEvents, Table: named(eventsSuffix), Name: t})
		}
		if s.CDC != nil && len(TruncateCodes(s.CDC)) > 0 {
			out = append(out, TableUse{Pipeline: name, Role: RoleTruncated, Table: named(truncatedSuffix), Name: t})
		}
	}
	return out
}

// specCols are the plan's columns of a spec, as Lower makes them.
func specCols(s *Spec) []Col {
	key := s.Key()
	cols := make([]Col, 0, len(s.Columns))
	for _, c := range s.Columns {
		cols = append(cols, Col{Name: c.Name.Value, Type: c.Type, NotNull: contains(key, c.Name.Value) && !c.Nullable})
	}
	return cols
}
