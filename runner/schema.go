package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/dialects"
)

// SchemaChange is one difference between a table a pipeline writes and
// the columns its spec declares, with the DDL that removes it.
type SchemaChange struct {
	Table  string `json:"table"`
	Column string `json:"column"`
	// Kind: add (the spec declares a column the table lacks), widen (the
	// spec's type holds every value of the table's), narrow (it does not,
	// of the same family), retype (another family), drop (the table has a
	// column the spec does not declare).
	Kind string   `json:"kind"`
	From string   `json:"from,omitempty"` // the table's type
	To   string   `json:"to,omitempty"`   // the spec's type
	DDL  []string `json:"ddl"`
}

// Automatic reports whether a run applies the change itself: an added
// column (old rows NULL) or a widened type. The others need incrc migrate.
func (s SchemaChange) Automatic() bool { return s.Kind == "add" || s.Kind == "widen" }

func (s SchemaChange) String() string {
	switch s.Kind {
	case "add":
		return fmt.Sprintf("%s: column %s %s added", s.Table, s.Column, s.To)
	case "drop":
		return fmt.Sprintf("%s: column %s (%s) is not in the spec", s.Table, s.Column, s.From)
	}
	return fmt.Sprintf("%s: column %s %s -> %s (%s)", s.Table, s.Column, s.From, s.To, s.Kind)
}

// SchemaError is a table that differs from the spec in a way no run
// changes on its own: a narrowed, retyped or dropped column.
type SchemaError struct {
	Pipeline string
	Changes  []SchemaChange // every change pending, automatic ones too
}

func (e *SchemaError) Error() string {
	var what, ddl []string
	for _, c := range e.Changes {
		if !c.Automatic() {
			what = append(what, c.String())
		}
		ddl = append(ddl, c.DDL...)
	}
	return fmt.Sprintf("the tables of %s differ from the spec in what a run does not change on its own: %s; the DDL needed: %s; incrc migrate %s applies it (--dry-run prints it)",
		e.Pipeline, strings.Join(what, "; "), strings.Join(ddl, "; "), e.Pipeline)
}

// schemaMode says what a ReadSchema step does with the changes it finds.
type schemaMode int

const (
	schemaRun     schemaMode = iota // apply the automatic ones; fail on any other
	schemaMigrate                   // apply them all (incrc migrate)
	schemaDryRun                    // apply nothing: list them
)

// checkSchema compares the table of a ReadSchema step with its declared
// columns and, by the machine's mode, applies what it finds.
func (m *machine) checkSchema(ctx context.Context, q querier, s ir.Step) error {
	var changes []SchemaChange
	if planned, ok := m.planned[s.Stmt]; ok || m.planned != nil {
		// A run read every table before the setup (pendingSchema): what it
		// found is what this step applies; a table it did not find was
		// created by this setup, as the spec says.
		changes = planned
	} else {
		var err error
		if changes, err = schemaDiff(ctx, m.c, q, s.Stmt); err != nil {
			return err
		}
	}
	if len(changes) == 0 {
		return nil
	}
	if m.schemaMode == schemaRun {
		for _, c := range changes {
			if !c.Automatic() {
				m.schema = append(m.schema, changes...)
				return &SchemaError{Pipeline: m.c.plan.Pipeline, Changes: m.schema}
			}
		}
	}
	for _, c := range changes {
		if m.schemaMode != schemaDryRun {
			for _, ddl := range c.DDL {
				if _, err := q.ExecContext(ctx, ddl); err != nil {
					return fmt.Errorf("%s: %s: %w", s.Stmt, ddl, err)
				}
			}
		}
		m.schema = append(m.schema, c)
	}
	return nil
}

// schemaDiff lists what differs between a table and its declared columns.
// Types are compared only on engines whose driver reports them (not
// SQLite, which keeps none), and only where the table's column differs
// from the same declaration created on this engine now: a probe of a
// session table created from the declared columns says how the engine
// reports each type, so a spelling the engine folds (a length DuckDB
// ignores) is never taken for a change.
func schemaDiff(ctx context.Context, c *compiled, q querier, stmt string) ([]SchemaChange, error) {
	have, err := c.columns(ctx, q, stmt, params{})
	if err != nil {
		return nil, err
	}
	return diffColumns(ctx, c, q, stmt, have)
}

// diffColumns is schemaDiff of the columns the step's probe read (have).
func diffColumns(ctx context.Context, c *compiled, q querier, stmt string, have []dialects.ColumnInfo) ([]SchemaChange, error) {
	st := c.plan.Statement(stmt)
	if st == nil {
		return nil, fmt.Errorf("pipeline %s has no statement %q", c.plan.Pipeline, stmt)
	}
	probe, ok := st.Op.(ir.ProbeColumns)
	if !ok || probe.Source.Table.IsZero() {
		return nil, fmt.Errorf("%s: a schema check must probe a table", stmt)
	}
	table := probe.Source.Table
	err := fillLengths(ctx, c, q, table, have)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stmt, err)
	}
	typer, _ := c.d.(dialects.SourceTyper)
	find := func(n string) *dialects.ColumnInfo {
		for i := range have {
			if strings.EqualFold(have[i].Name, n) {
				return &have[i]
			}
		}
		return nil
	}
	// The session table that says how the engine reports each declared
	// type is needed only when a column's type does not read back as the
	// declared one: most runs create none.
	var shape map[string]dialects.ColumnInfo
	if typer != nil {
		need := false
		for _, col := range probe.Declared {
			if cur := find(col.Name); cur != nil && !readsAs(typer, *cur, col.Type) {
				need = true
			}
		}
		if need {
			if shape, err = shapeOf(ctx, c, q, probe.Declared, probe.DeclaredKey); err != nil {
				return nil, fmt.Errorf("%s: %w", stmt, err)
			}
		}
	}
	name := strings.Join(table.Parts, ".")
	var out []SchemaChange
	render := func(op ir.Op) ([]string, error) {
		parts, err := dialects.RenderStatement(c.d, &ir.Statement{Name: stmt, Op: op})
		if err != nil {
			return nil, err
		}
		var sqls []string
		for _, p := range parts {
			sqls = append(sqls, p.SQL)
		}
		return sqls, nil
	}
	for _, col := range probe.Declared {
		cur := find(col.Name)
		ch := SchemaChange{Table: name, Column: col.Name, To: col.Type.String()}
		switch {
		case cur == nil:
			ch.Kind = "add"
			// Old rows get NULL: a column added is nullable, whatever the
			// spec says (a key column is never added this way: a key
			// change is a new table).
			add := col
			add.NotNull = false
			if ch.DDL, err = render(ir.AddColumn{Table: table, Column: add}); err != nil {
				return nil, err
			}
		case typer == nil || readsAs(typer, *cur, col.Type) || sameInfo(*cur, shape[strings.ToLower(col.Name)]):
			continue
		default:
			old, ok, _ := mapped(typer, *cur)
			ch.From = sourceTypeName(*cur)
			switch {
			case ok && old == col.Type:
				continue
			case ok:
				ch.From = old.String()
				if fits, _ := ir.Fits(old, col.Type); fits {
					ch.Kind = "widen"
				} else if family(old) == family(col.Type) {
					ch.Kind = "narrow"
				} else {
					ch.Kind = "retype"
				}
			default:
				ch.Kind = "retype"
			}
			if ch.DDL, err = render(ir.AlterColumnType{Table: table, Column: col}); err != nil {
				return nil, err
			}
		}
		out = append(out, ch)
	}
	for _, cur := range have {
		declared := false
		for _, col := range probe.Declared {
			declared = declared || strings.EqualFold(col.Name, cur.Name)
		}
		if declared {
			continue
		}
		ch := SchemaChange{Table: name, Column: cur.Name, Kind: "drop", From: sourceTypeName(cur)}
		if typer != nil {
			if t, ok := typer.SourceType(cur); ok {
				if t.Kind == ir.Varchar && t.Length == 0 {
					t = ir.Type{Kind: ir.Text} // a length the driver does not report
				}
				ch.From = t.String()
			}
		}
		if ch.DDL, err = render(ir.DropColumn{Table: table, Column: cur.Name}); err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, nil
}

// mapped is the portable type of a column as the engine reports it;
// lengthless: a varchar whose length the driver does not report (DuckDB
// keeps none; MariaDB's is read by fillLengths).
func mapped(typer dialects.SourceTyper, cur dialects.ColumnInfo) (t ir.Type, ok, lengthless bool) {
	t, ok = typer.SourceType(cur)
	if ok && t.Kind == ir.Varchar && t.Length == 0 {
		if cur.HasLength && cur.Length > 0 && cur.Length < 1<<20 {
			t.Length = int(cur.Length)
		} else {
			return ir.Type{Kind: ir.Text}, true, true
		}
	}
	return t, ok, false
}

// readsAs reports whether a column reads back as the declared type: the
// same portable type, or a lengthless varchar for a text or varchar.
func readsAs(typer dialects.SourceTyper, cur dialects.ColumnInfo, want ir.Type) bool {
	t, ok, lengthless := mapped(typer, cur)
	switch {
	case !ok:
		return false
	case lengthless:
		return want.Kind == ir.Text || want.Kind == ir.Varchar
	}
	return t == want
}

// family groups types whose change is a narrowing or widening rather
// than a change of kind.
func family(t ir.Type) string {
	switch {
	case t.IsNumeric():
		return "number"
	case t.Kind == ir.Text || t.Kind == ir.Varchar:
		return "text"
	case t.IsTime():
		return "time"
	}
	return string(t.Kind)
}

func sameInfo(a, b dialects.ColumnInfo) bool {
	return strings.EqualFold(a.TypeName, b.TypeName) && a.HasDecimal == b.HasDecimal && a.Precision == b.Precision &&
		a.Scale == b.Scale && a.HasLength == b.HasLength && a.Length == b.Length
}

// shapeOf creates a session table of the declared columns, reads how the
// engine reports them, and drops it.
func shapeOf(ctx context.Context, c *compiled, q querier, cols []ir.Col, key []string) (map[string]dialects.ColumnInfo, error) {
	tmp := ir.Table{Parts: []string{"incrc_shape_" + c.plan.Pipeline}}
	shapeCols := make([]ir.Col, len(cols))
	for i, col := range cols {
		shapeCols[i] = col
	}
	run := func(op ir.Op) error {
		parts, err := dialects.RenderStatement(c.d, &ir.Statement{Name: "shape", Op: op})
		if err != nil {
			return err
		}
		for _, p := range parts {
			if _, err := q.ExecContext(ctx, p.SQL); err != nil {
				return fmt.Errorf("%s: %w", p.SQL, err)
			}
		}
		return nil
	}
	if err := run(ir.DropTable{Table: tmp, Temporary: true}); err != nil {
		return nil, err
	}
	if err := run(ir.CreateTable{Table: tmp, Columns: shapeCols, PrimaryKey: key, Temporary: true}); err != nil {
		return nil, err
	}
	defer run(ir.DropTable{Table: tmp, Temporary: true})
	parts, err := dialects.RenderStatement(c.d, &ir.Statement{Name: "shape", Op: ir.ProbeColumns{Source: ir.Relation{Table: tmp}}})
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, parts[0].SQL, uncachedArgs(c.d, nil)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	var infos []dialects.ColumnInfo
	for _, ct := range types {
		info := dialects.ColumnInfo{Name: ct.Name(), TypeName: ct.DatabaseTypeName()}
		info.Precision, info.Scale, info.HasDecimal = ct.DecimalSize()
		info.Length, info.HasLength = ct.Length()
		infos = append(infos, info)
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	if err := fillLengths(ctx, c, q, tmp, infos); err != nil {
		return nil, err
	}
	out := map[string]dialects.ColumnInfo{}
	for _, info := range infos {
		out[strings.ToLower(info.Name)] = info
	}
	return out, nil
}

// fillLengths reads the lengths of VARCHAR columns that the driver does
// not report (MariaDB/MySQL) from the engine's own description of the
// table, which also covers session tables: without them a varchar(20)
// widened to varchar(40) would look unchanged, and the write would fail.
func fillLengths(ctx context.Context, c *compiled, q querier, table ir.Table, infos []dialects.ColumnInfo) error {
	if c.d.Name() != "mysql" {
		return nil
	}
	need := false
	for _, i := range infos {
		need = need || (!i.HasLength && strings.Contains(strings.ToUpper(i.TypeName), "CHAR"))
	}
	if !need {
		return nil
	}
	var quoted []string
	for _, p := range table.Parts {
		quoted = append(quoted, c.d.QuoteIdent(p))
	}
	rows, err := q.QueryContext(ctx, "SHOW COLUMNS FROM "+strings.Join(quoted, "."))
	if err != nil {
		return err
	}
	defer rows.Close()
	return eachRow(rows, func(vals []any) error {
		field, _ := text(vals[0])
		typ, _ := text(vals[1])
		var n int64
		if _, err := fmt.Sscanf(strings.ToLower(typ), "varchar(%d)", &n); err != nil {
			return nil // not a varchar: its length is known or unneeded
		}
		for i := range infos {
			if strings.EqualFold(infos[i].Name, field) {
				infos[i].Length, infos[i].HasLength = n, true
			}
		}
		return nil
	})
}

// isSchemaError reports whether err is a table that needs incrc migrate.
func isSchemaError(err error) bool {
	var se *SchemaError
	return errors.As(err, &se)
}

// schemaNote is what the run log's note says of the changes a run made to
// its tables.
func schemaNote(changes []SchemaChange) string {
	var added, widened []string
	for _, c := range changes {
		switch c.Kind {
		case "add":
			added = append(added, c.Table+"."+c.Column)
		case "widen":
			widened = append(widened, c.Table+"."+c.Column+" "+c.From+" -> "+c.To)
		}
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "columns added: "+strings.Join(added, ", ")+" (rows written before are NULL there: a backfill or a full refresh fills them)")
	}
	if len(widened) > 0 {
		parts = append(parts, "types widened: "+strings.Join(widened, ", "))
	}
	return strings.Join(parts, "; ")
}

// addNote adds to the run log's note.
func addNote(vals params, note string) {
	if old, _ := vals["note"].(string); old != "" {
		note = old + "; " + note
	}
	vals["note"] = note
}

// MigrateOptions are the choices of incrc migrate.
type MigrateOptions struct {
	DryRun   bool // list the changes and their DDL; apply nothing
	LeaseTTL time.Duration
	Owner    string
	Now      func() time.Time
}

// Migrate brings the tables a pipeline writes (target, quarantine) to the
// spec's columns: every change, narrowing, retyping and dropping included,
// each by the DDL the dialect spells from the spec's names and types. It
// holds the pipeline's lease while it applies them (a run and a migration
// exclude each other). With DryRun it changes nothing and only lists them.
func (t *Target) Migrate(ctx context.Context, plan *ir.Plan, o MigrateOptions) ([]SchemaChange, error) {
	if o.DryRun {
		return t.PendingSchema(ctx, plan)
	}
	opts := Options{LeaseTTL: o.LeaseTTL, Owner: o.Owner, Now: o.Now}
	opts.defaults()
	c, conn, err := t.session(ctx, plan)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	defer c.release()
	if err := checkTables(ctx, c, conn); err != nil {
		return nil, err
	}
	if err := newMachine(c, conn, params{}).walk(ctx, plan.StateSetup()); err != nil {
		return nil, err
	}
	vals := params{"pipeline": plan.Pipeline, "owner": opts.Owner}
	l, err := t.acquire(ctx, conn, c, vals, opts.LeaseTTL, opts.Now, nil, opts.generated)
	if err != nil {
		return nil, err
	}
	changes, err := setupMode(ctx, c, conn, schemaMigrate)
	if rerr := l.release(ctx, conn); rerr != nil && err == nil {
		err = fmt.Errorf("release the lease: %w", rerr)
	}
	return changes, err
}

// PendingSchema lists what differs between the tables a pipeline writes
// and its spec, changing nothing: what the next run would add or widen,
// and what needs incrc migrate. A table not created yet has nothing
// pending (setup creates it as the spec says).
func (t *Target) PendingSchema(ctx context.Context, plan *ir.Plan) ([]SchemaChange, error) {
	c, conn, err := t.session(ctx, plan)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	defer c.release()
	return pendingSchema(ctx, c, conn)
}

func pendingSchema(ctx context.Context, c *compiled, conn querier) ([]SchemaChange, error) {
	byStmt, err := pendingByStep(ctx, c, conn)
	if err != nil {
		return nil, err
	}
	pr, _ := c.program(ir.ModeSetup)
	var out []SchemaChange
	for _, s := range pr.Steps {
		out = append(out, byStmt[s.Stmt]...)
	}
	return out, nil
}

// pendingByStep is pendingSchema by schema check step, holding a key for
// each table that is there (and none for one not created yet).
func pendingByStep(ctx context.Context, c *compiled, conn querier) (map[string][]SchemaChange, error) {
	pr, err := c.program(ir.ModeSetup)
	if err != nil {
		return nil, err
	}
	out := map[string][]SchemaChange{}
	for _, s := range pr.Steps {
		if s.Read != ir.ReadSchema {
			continue
		}
		have, err := c.columns(ctx, conn, s.Stmt, params{})
		if err != nil {
			continue // not there yet
		}
		changes, err := diffColumns(ctx, c, conn, s.Stmt, have)
		if err != nil {
			return nil, err
		}
		out[s.Stmt] = changes
	}
	return out, nil
}
