package runner

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/dialects"
)

// Which table each name of a pipeline means, as the target's connection
// resolves it (dialects.TableResolver): validate compares what the
// spelling decides, and only the database knows its search_path or its
// current database. A run that would write the table it reads, or incrc's
// own, is refused before anything is created or written.

// tableOn is the table t means on conn: its catalog, schema and name as
// the engine resolves them, or the spelling's key where the dialect has
// no resolver.
func tableOn(ctx context.Context, d dialects.Dialect, q querier, t ir.Table) (string, error) {
	r, ok := d.(dialects.TableResolver)
	if !ok {
		return dialects.TableKey(d, t), nil
	}
	query, args := r.ResolveTable(t)
	var cat, schema, name sql.NullString
	err := func() error {
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return sql.ErrNoRows
		}
		return rows.Scan(&cat, &schema, &name)
	}()
	if err != nil {
		return "", fmt.Errorf("which table %s is on the target: %w", strings.Join(t.Parts, "."), err)
	}
	var parts []string
	for _, p := range []sql.NullString{cat, schema, name} {
		if p.String != "" {
			parts = append(parts, p.String)
		}
	}
	return strings.Join(parts, "."), nil
}

// checkTables refuses a plan whose reads and writes are one table on the
// target (a source or lookup that is its target, quarantine or
// tombstones), or whose target is one of incrc's own tables there.
func checkTables(ctx context.Context, c *compiled, q querier) error {
	p := c.plan
	var reads, writes []ir.TableUse
	for _, u := range p.Tables {
		switch {
		case u.Role.Writes():
			writes = append(writes, u)
		case u.Role == ir.RoleSource && p.From != nil:
			// a source in another database, whatever its name
		default:
			reads = append(reads, u)
		}
	}
	ids := map[string]string{} // use: table
	id := func(u ir.TableUse) (string, error) {
		k := string(u.Role) + " " + strings.Join(u.Table.Parts, ".")
		if t, ok := ids[k]; ok {
			return t, nil
		}
		t, err := tableOn(ctx, c.d, q, u.Table)
		ids[k] = t
		return t, err
	}
	for _, w := range writes {
		wt, err := id(w)
		if err != nil {
			return err
		}
		if w.Role == ir.RoleTarget && reserved(wt) {
			return fmt.Errorf("%s is the table %s on this %s target: names starting with incrc_ are reserved for incrc's own tables (incrc_state holds every pipeline's watermark); choose another target.table",
				w.What(), wt, c.d.Name())
		}
		for _, r := range reads {
			rt, err := id(r)
			if err != nil {
				return err
			}
			if rt == wt {
				return fmt.Errorf("%s and %s are one table on this %s target, %s: a pipeline writes somewhere else than it reads (a full refresh would empty its own source); nothing was written",
					r.What(), w.What(), c.d.Name(), wt)
			}
		}
	}
	return nil
}

func reserved(table string) bool {
	return strings.HasPrefix(strings.ToLower(table[strings.LastIndexByte(table, '.')+1:]), "incrc_")
}

// TableClash is a table two pipelines write, as the target resolves
// their names.
type TableClash struct {
	Pipelines [2]string
	Msg       string
}

// CheckTables finds the tables that two pipelines of a project write on
// this target: targets, quarantines and tombstones whose names differ and
// that the connection resolves to one table (MariaDB's wh.t and t in the
// database wh; a search_path). uses are every pipeline's (Spec.Tables);
// only names that could be one table (the same last part, case aside) are
// looked up in the catalog.
func (t *Target) CheckTables(ctx context.Context, uses []ir.TableUse) ([]TableClash, error) {
	groups := map[string][]ir.TableUse{}
	var order []string
	for _, u := range uses {
		if !u.Role.Writes() {
			continue
		}
		parts := u.Table.Parts
		if n, ok := t.Dialect.(dialects.TableNamer); ok {
			parts = n.TableParts(u.Table)
		}
		k := strings.ToLower(parts[len(parts)-1])
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], u)
	}
	var clashes []TableClash
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		first := map[string]ir.TableUse{}
		for _, u := range g {
			tbl, err := tableOn(ctx, t.Dialect, t.DB, u.Table)
			if err != nil {
				return nil, err
			}
			if f, ok := first[tbl]; ok && f.Pipeline != u.Pipeline {
				clashes = append(clashes, TableClash{Pipelines: [2]string{f.Pipeline, u.Pipeline},
					Msg: fmt.Sprintf("%s of pipeline %s and %s of pipeline %s are one table on this %s target, %s: two pipelines must not write one table",
						f.What(), f.Pipeline, u.What(), u.Pipeline, t.Dialect.Name(), tbl)})
				continue
			}
			if _, ok := first[tbl]; !ok {
				first[tbl] = u
			}
		}
	}
	return clashes, nil
}
