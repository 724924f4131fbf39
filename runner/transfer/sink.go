package transfer

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/incrc/incrc/dialects"
)

// Into is where a copy writes: a table of the target, on the target's
// pinned connection, through its dialect's bulk path.
type Into struct {
	Conn    *sql.Conn
	Dialect dialects.Dialect
	Table   ir.Table
	Columns []string
	// Temporary: the table is a staging table of the session (DuckDB
	// keeps those in temp.main), not the target itself.
	Temporary bool
}

// Copy streams the rows a source statement returned into the table of
// into, each value converted by conv. One row is held at a time (a batch
// of them for the INSERTs): a window of any size runs in bounded memory.
// It returns the rows written and, when conv holds rows back, those (not
// written, for the quarantine).
func Copy(ctx context.Context, rows *sql.Rows, conv *Converter, into Into) (int64, []Held, error) {
	rs := &rowSource{rows: rows, conv: conv, raw: make([]any, len(conv.Cols))}
	rs.start()
	defer rs.finish()
	n, err := sink(ctx, into, rs)
	rs.finish()
	return n, rs.held, err
}

// sink streams the rows into table through the target's bulk path.
func sink(ctx context.Context, into Into, rs *rowSource) (int64, error) {
	table, cols := into.Table, into.Columns
	switch into.Dialect.Name() {
	case "duckdb":
		err := into.Conn.Raw(func(dc any) error {
			conn, ok := dc.(driver.Conn)
			if !ok {
				return fmt.Errorf("the DuckDB driver's connection is a %T", dc)
			}
			// Staging tables are temporary: DuckDB keeps them in temp.main. A
			// copy straight into the target (an unqualified name of the
			// database's own schema) goes where the name resolves.
			catalog, schema := "temp", "main"
			if s := table.Schema(); len(s) > 0 {
				catalog, schema = "", strings.Join(s, ".")
			} else if !into.Temporary {
				catalog = ""
			}
			a, err := duckdb.NewAppender(conn, catalog, schema, table.Name())
			if err != nil {
				return err
			}
			row := make([]driver.Value, len(cols))
			for rs.next() {
				for i, v := range rs.out {
					row[i] = v
				}
				if err := a.AppendRow(row...); err != nil {
					a.Close()
					return fmt.Errorf("row %d: %w", rs.n, err)
				}
			}
			if err := rs.done(); err != nil {
				a.Close()
				return err
			}
			return a.Close()
		})
		return rs.n, err
	case "postgres":
		err := into.Conn.Raw(func(dc any) error {
			conn, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("the PostgreSQL driver's connection is a %T", dc)
			}
			usePGDecimal(conn.Conn().TypeMap())
			_, err := conn.Conn().CopyFrom(ctx, pgx.Identifier(table.Parts), cols, rs)
			return err
		})
		if err == nil {
			err = rs.done()
		}
		return rs.n, err
	}
	return insertBatches(ctx, into, rs)
}

// copyBatchValues bounds the markers of one INSERT of a copy: far below
// SQLite's (32766) and MariaDB's (65535) limits.
const copyBatchValues = 6000

func insertBatches(ctx context.Context, into Into, rs *rowSource) (int64, error) {
	table, cols := into.Table, into.Columns
	per := max(1, min(500, copyBatchValues/len(cols)))
	parts := map[int]dialects.Part{}
	args := make([]any, 0, per*len(cols))
	rowsIn := 0
	flush := func() error {
		if rowsIn == 0 {
			return nil
		}
		part, ok := parts[rowsIn]
		if !ok {
			var err error
			if part, err = dialects.CopyInsert(into.Dialect, table, cols, rowsIn); err != nil {
				return err
			}
			parts[rowsIn] = part
		}
		if _, err := into.Conn.ExecContext(ctx, part.SQL, args...); err != nil {
			return err
		}
		args, rowsIn = args[:0], 0
		return nil
	}
	for rs.next() {
		args = append(args, rs.out...)
		rowsIn++
		if rowsIn == per {
			if err := flush(); err != nil {
				return rs.n, err
			}
		}
	}
	if err := rs.done(); err != nil {
		return rs.n, err
	}
	return rs.n, flush()
}
