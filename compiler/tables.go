package compiler

import "github.com/incrc/incrc/compiler/ir"

// Tables lists the tables a valid spec reads and writes in its target's
// database, the source first: a source in another database
// (source.connection), a query and files are none of them. The quarantine
// and the tombstones are named after the target, in its schema.
func (s *Spec) Tables() []ir.TableUse {
	name := s.Pipeline.Value
	var out []ir.TableUse
	if t := s.Source.Table; t.Value != "" && !s.Source.Connection.Set() {
		out = append(out, ir.TableUse{Pipeline: name, Role: ir.RoleSource, Table: splitTable(t.Value), Name: t})
	}
	for _, l := range s.Lookups {
		if l.Table.Value != "" {
			out = append(out, ir.TableUse{Pipeline: name, Role: ir.RoleLookup, Table: splitTable(l.Table.Value), Name: l.Table})
		}
	}
	t := s.Target.Table
	if t.Value == "" {
		return out
	}
	target := splitTable(t.Value)
	out = append(out, ir.TableUse{Pipeline: name, Role: ir.RoleTarget, Table: target, Name: t})
	named := func(suffix string) ir.Table {
		return ir.Table{Parts: append(append([]string(nil), target.Schema()...), target.Name()+suffix)}
	}
	if _, mode := qualityRules(s, specCols(s)); mode == "quarantine" {
		out = append(out, ir.TableUse{Pipeline: name, Role: ir.RoleQuarantine, Table: named(quarantineSuffix), Name: t})
	}
	if ir.Strategy(s.Strategy.Value) == ir.CDCApply || fromChanges(s) {
		out = append(out, ir.TableUse{Pipeline: name, Role: ir.RoleTombstones, Table: named(tombstonesSuffix), Name: t})
		if keepsEvents(s) {
			out = append(out, ir.TableUse{Pipeline: name, Role: ir.RoleEvents, Table: named(eventsSuffix), Name: t})
		}
		if s.CDC != nil && len(TruncateCodes(s.CDC)) > 0 {
			out = append(out, ir.TableUse{Pipeline: name, Role: ir.RoleTruncated, Table: named(truncatedSuffix), Name: t})
		}
	}
	return out
}

// specCols are the plan's columns of a spec, as Lower makes them.
func specCols(s *Spec) []ir.Col {
	key := s.Key()
	cols := make([]ir.Col, 0, len(s.Columns))
	for _, c := range s.Columns {
		cols = append(cols, ir.Col{Name: c.Name.Value, Type: c.Type, NotNull: contains(key, c.Name.Value) && !c.Nullable})
	}
	return cols
}
