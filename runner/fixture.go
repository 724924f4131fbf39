package runner

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/dialects"
)

// ExecOp spells one operation in the target's dialect and executes it,
// binding vals by parameter name. The demo and tests use it to create and
// change source tables without writing SQL for each engine.
func (t *Target) ExecOp(ctx context.Context, op ir.Op, vals map[string]any) error {
	var ps []ir.Param
	for name := range vals {
		ps = append(ps, ir.Param{Name: name})
	}
	parts, err := dialects.RenderStatement(t.Dialect, &ir.Statement{Name: "exec", Op: op, Params: ps})
	if err != nil {
		return err
	}
	for _, p := range parts {
		args := make([]any, len(p.Params))
		for i, n := range p.Params {
			args[i] = vals[n]
		}
		if _, err := t.DB.ExecContext(ctx, p.SQL, args...); err != nil {
			return fmt.Errorf("%s: %w", p.SQL, err)
		}
	}
	return nil
}

// BindTime is the value the target's driver binds for a time in a column
// of the given type.
func (t *Target) BindTime(s string, kind ir.TypeKind) (any, error) {
	tm, err := ir.ParseTime(s)
	if err != nil {
		return nil, err
	}
	return t.Dialect.BindTime(tm, kind), nil
}

// QueryOp spells a query in the target's dialect, runs it and returns its
// rows, each value as Canon spells it: what tests and incrc test compare.
func (t *Target) QueryOp(ctx context.Context, op ir.Op, vals map[string]any) ([][]string, error) {
	var ps []ir.Param
	for name := range vals {
		ps = append(ps, ir.Param{Name: name})
	}
	parts, err := dialects.RenderStatement(t.Dialect, &ir.Statement{Name: "query", Op: op, Params: ps})
	if err != nil {
		return nil, err
	}
	if len(parts) != 1 {
		return nil, fmt.Errorf("a query must be one statement, the %s spelling has %d", t.Dialect.Name(), len(parts))
	}
	args := make([]any, len(parts[0].Params))
	for i, n := range parts[0].Params {
		args[i] = vals[n]
	}
	rows, err := t.DB.QueryContext(ctx, parts[0].SQL, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = Canon(v)
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// SetWatermark saves a pipeline's watermark as if a run had left it
// there: the state tables are created when missing. incrc test starts a
// test from a given state with it.
func (t *Target) SetWatermark(ctx context.Context, plan *ir.Plan, watermark string) error {
	if plan.Watermark == nil {
		return fmt.Errorf("pipeline %s has no watermark", plan.Pipeline)
	}
	m, err := parseWM(plan.Watermark, watermark)
	if err != nil {
		return err
	}
	if _, err := t.State(ctx, plan); err != nil { // creates the state tables
		return err
	}
	ref := func(n string) ir.Expr { return ir.ParamRef{Name: n} }
	return t.ExecOp(ctx, ir.InsertValues{Table: ir.StateTable, Columns: []string{"pipeline", "watermark", "spec_hash", "updated_at"},
		Values: []ir.Expr{ref("pipeline"), ref("watermark"), ref("spec_hash"), ref("now")}},
		map[string]any{"pipeline": plan.Pipeline, "watermark": m.String(), "spec_hash": plan.SpecHash, "now": stateTime(time.Now())})
}

// Forget deletes a pipeline's rows from the state tables that every
// pipeline of a database shares: its watermark and lease, its run log and
// its backfill markers. incrc test and the tests leave nothing behind
// with it. A state table that does not exist has nothing to forget.
func (t *Target) Forget(ctx context.Context, pipeline string) error {
	var errs []error
	for _, tb := range []ir.Table{ir.StateTable, ir.RunsTable, ir.PartitionsTable} {
		op := ir.DeleteRows{Table: tb, Where: ir.Binary{Op: "=", L: ir.ColRef{Name: "pipeline"}, R: ir.ParamRef{Name: "pipeline"}}}
		if err := t.ExecOp(ctx, op, map[string]any{"pipeline": pipeline}); err != nil && t.tableExists(ctx, tb) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// tableExists reports whether a table can be read.
func (t *Target) tableExists(ctx context.Context, tb ir.Table) bool {
	_, err := t.QueryOp(ctx, ir.ProbeColumns{Source: ir.Relation{Table: tb}}, nil)
	return err == nil
}

// CreateOwnSchema creates a schema (on MariaDB/MySQL a database) that must
// not be there yet: incrc test makes its own, and drops only those. It is
// spelled here for the reason DropSchema is: no plan creates a schema that
// may not exist.
func (t *Target) CreateOwnSchema(ctx context.Context, schema string) error {
	if t.Dialect.Name() == "sqlite" {
		return fmt.Errorf("sqlite has no schemas")
	}
	_, err := t.DB.ExecContext(ctx, "CREATE SCHEMA "+t.Dialect.QuoteIdent(schema))
	return err
}

// InSchema is a server target's URL with schema as where every name
// without one resolves: on PostgreSQL the session's search_path (the
// schema, then the system catalog), on MariaDB/MySQL the connection's
// database.
func InSchema(rawURL, schema string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return "", fmt.Errorf("target %q: a server's URL is needed to run tests in a schema of their own", Redact(rawURL))
	}
	switch d, _ := ir.DialectOfURL(rawURL); d {
	case "postgres":
		q := u.Query()
		q.Set("search_path", schema+",pg_catalog")
		u.RawQuery = q.Encode()
	case "mysql":
		u.Path = "/" + schema
	default:
		return "", fmt.Errorf("target %q: not a server engine", Redact(rawURL))
	}
	return u.String(), nil
}

// DropSchema drops a schema and everything in it: what incrc test and the
// tests created on a shared database. It is the one statement the runner
// spells itself: no plan drops a schema, and the spellings differ only in
// CASCADE (PostgreSQL and DuckDB need it; in MariaDB/MySQL a schema is a
// database, dropped whole). SQLite has no schemas: nothing to drop.
func (t *Target) DropSchema(ctx context.Context, schema string) error {
	stmt := "DROP SCHEMA IF EXISTS " + t.Dialect.QuoteIdent(schema)
	switch t.Dialect.Name() {
	case "sqlite":
		return nil
	case "spark_iceberg":
		// Iceberg's Spark catalogs refuse CASCADE on a namespace that
		// holds tables: each is dropped first, with its files.
		if err := t.dropIcebergTables(ctx, schema); err != nil {
			return err
		}
	case "postgres", "duckdb", "spark", "trino":
		stmt += " CASCADE"
	}
	_, err := t.DB.ExecContext(ctx, stmt)
	return err
}

// dropIcebergTables drops (PURGE) every table of a Spark + Iceberg
// namespace; a namespace that does not exist holds none.
func (t *Target) dropIcebergTables(ctx context.Context, schema string) error {
	q := t.Dialect.QuoteIdent(schema)
	rows, err := t.DB.QueryContext(ctx, "SHOW TABLES IN "+q)
	if err != nil {
		if strings.Contains(err.Error(), "NOT_FOUND") || strings.Contains(err.Error(), "does not exist") {
			return nil
		}
		return err
	}
	var names []string
	for rows.Next() {
		var ns, name string
		var temp any
		if err := rows.Scan(&ns, &name, &temp); err != nil {
			rows.Close()
			return err
		}
		names = append(names, name)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, n := range names {
		if _, err := t.DB.ExecContext(ctx, "DROP TABLE IF EXISTS "+q+"."+t.Dialect.QuoteIdent(n)+" PURGE"); err != nil {
			return err
		}
	}
	return nil
}
