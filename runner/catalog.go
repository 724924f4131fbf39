package runner

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/dialects"
)

// TableInfo is what the catalog says of a table: its columns with their
// portable types, and its primary key. incrc new writes a spec from it.
type TableInfo struct {
	Columns []TableColumn
	Key     []string // the primary key's columns, in key order; empty without one
}

// TableColumn is one column; Type is the zero Type when the engine's type
// has no portable equivalent (the spec then says so).
type TableColumn struct {
	Name     string
	Type     ir.Type
	TypeName string // the engine's name for it
}

// Describe reads a table's columns and primary key. The columns come
// from the driver (a read of no row, as probe_source does); the key from
// the engine's catalog, which each engine spells its own way: the one
// place besides DropSchema where the runner writes SQL of its own, since
// no plan reads a catalog.
func (t *Target) Describe(ctx context.Context, table ir.Table) (*TableInfo, error) {
	parts, err := dialects.RenderStatement(t.Dialect, &ir.Statement{Name: "describe", Op: ir.ProbeColumns{Source: ir.Relation{Table: table}}})
	if err != nil {
		return nil, err
	}
	rows, err := t.DB.QueryContext(ctx, parts[0].SQL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(table.Parts, "."), err)
	}
	types, err := rows.ColumnTypes()
	if err != nil {
		rows.Close()
		return nil, err
	}
	info := &TableInfo{}
	typer, _ := t.Dialect.(dialects.SourceTyper)
	for _, ct := range types {
		c := dialects.ColumnInfo{Name: ct.Name(), TypeName: ct.DatabaseTypeName()}
		c.Precision, c.Scale, c.HasDecimal = ct.DecimalSize()
		c.Length, c.HasLength = ct.Length()
		col := TableColumn{Name: c.Name, TypeName: strings.ToLower(c.TypeName)}
		switch {
		case typer != nil:
			if typ, ok := typer.SourceType(c); ok {
				col.Type = typ
			}
		case col.TypeName == "integer":
			col.Type = ir.Type{Kind: ir.Bigint} // SQLite's integers are 64-bit
		case col.TypeName == "real":
			col.Type = ir.Type{Kind: ir.Double}
		default:
			if typ, err := ir.ParseType(col.TypeName); err == nil {
				col.Type = typ // SQLite: the declared type, when it is a portable one
			}
		}
		if col.Type.Kind == ir.Varchar && col.Type.Length == 0 {
			col.Type = ir.Type{Kind: ir.Text} // a length the driver does not report
		}
		info.Columns = append(info.Columns, col)
	}
	rows.Close()
	if info.Key, err = t.primaryKey(ctx, table); err != nil {
		return nil, fmt.Errorf("the primary key of %s: %w", strings.Join(table.Parts, "."), err)
	}
	return info, nil
}

func (t *Target) primaryKey(ctx context.Context, table ir.Table) ([]string, error) {
	schema, name := "", table.Name()
	if s := table.Schema(); len(s) > 0 {
		schema = strings.Join(s, ".")
	}
	var (
		q    string
		args []any
	)
	switch t.Dialect.Name() {
	case "postgres":
		q = `SELECT a.attname FROM pg_index i
JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
WHERE i.indisprimary AND c.relname = $1 AND n.nspname = COALESCE(NULLIF($2, ''), current_schema())
ORDER BY k.ord`
		args = []any{name, schema}
	case "mysql":
		q = `SELECT column_name FROM information_schema.key_column_usage
WHERE constraint_name = 'PRIMARY' AND table_name = ? AND table_schema = COALESCE(NULLIF(?, ''), DATABASE())
ORDER BY ordinal_position`
		args = []any{name, schema}
	case "duckdb":
		q = `SELECT unnest(constraint_column_names) FROM duckdb_constraints()
WHERE constraint_type = 'PRIMARY KEY' AND table_name = ? AND schema_name = COALESCE(NULLIF(?, ''), current_schema())`
		args = []any{name, schema}
	case "sqlite":
		tn := name
		if n, ok := t.Dialect.(dialects.TableNamer); ok {
			tn = n.TableName(table)
			tn = strings.Trim(tn, `"`)
		}
		q = `SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`
		args = []any{tn}
	default:
		return nil, nil
	}
	rows, err := t.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var key []string
	for rows.Next() {
		var c sql.NullString
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		key = append(key, c.String)
	}
	return key, rows.Err()
}

// TableProfile is what a table's rows say, beside its catalog: how many
// there are, how many NULLs each column holds, and the smallest value of
// the columns asked for (nil when the table holds none).
type TableProfile struct {
	Rows  int64
	Nulls map[string]int64
	Min   map[string]any
}

// Profile reads one aggregate of a table: its rows, each column's NULLs,
// and the smallest value of each of min. incrc new sets watermark.start
// from it (the oldest value, so that no history is skipped) and marks
// the columns that hold NULLs.
func (t *Target) Profile(ctx context.Context, table ir.Table, cols []string, min []string) (*TableProfile, error) {
	parts, err := dialects.RenderStatement(t.Dialect, &ir.Statement{Name: "profile", Op: ir.ProfileColumns{Source: ir.Relation{Table: table}, Columns: cols, Min: min}})
	if err != nil {
		return nil, err
	}
	vals := make([]any, 1+len(cols)+len(min))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := t.DB.QueryRowContext(ctx, parts[0].SQL).Scan(ptrs...); err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(table.Parts, "."), err)
	}
	count := func(v any) (int64, error) {
		n, err := strconv.ParseInt(Canon(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: a count read as %v", strings.Join(table.Parts, "."), v)
		}
		return n, nil
	}
	p := &TableProfile{Nulls: map[string]int64{}, Min: map[string]any{}}
	if p.Rows, err = count(vals[0]); err != nil {
		return nil, err
	}
	for i, c := range cols {
		n, err := count(vals[1+i])
		if err != nil {
			return nil, err
		}
		p.Nulls[c] = p.Rows - n
	}
	for i, c := range min {
		if v := vals[1+len(cols)+i]; v != nil {
			p.Min[c] = v
		}
	}
	return p, nil
}
