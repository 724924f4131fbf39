package runner

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"

	"github.com/trinodb/trino-go-client/trino"

	"github.com/incrc/incrc/dialects"
)

// Trino through its Go client. Two things of the client are not used:
// its parameter binding (it sends a time as a timestamp with time zone,
// refuses a float64, and carries the prepared statement in a request
// header, which a long MERGE can outgrow), so values are spelled as
// literals by the dialect and lexed back (inline), as on Spark; and its
// count of rows changed, which reads 0 when Trino reports none: a write
// runs as a query instead, and its one "rows" value, NULL when the
// engine does not know (a DELETE of whole partitions, metadata only), is
// the count, or unknown.

// trinoConfig reads trino://user@host:port/catalog/schema?params (trinos://
// for HTTPS): the client's own DSN with the scheme the URL names. The
// session's time zone is UTC unless the URL sets timezone=.
func trinoConfig(raw string) (*trino.Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "trino", "tr":
		u.Scheme = "http"
	case "trinos", "trs":
		u.Scheme = "https"
	default:
		return nil, fmt.Errorf("scheme %q: trino:// or trinos://", u.Scheme)
	}
	if u.User == nil || u.User.Username() == "" {
		return nil, errors.New("a Trino URL names its user: trino://user@host:port/catalog/schema")
	}
	cfg, err := trino.ParseDSN(u.String())
	if err != nil {
		return nil, err
	}
	if cfg.Catalog == "" || cfg.Schema == "" {
		return nil, errors.New("a Trino URL names the catalog and schema incrc's tables live in: trino://user@host:port/catalog/schema")
	}
	if cfg.TimeZone == "" {
		cfg.TimeZone = "UTC"
	}
	return cfg, nil
}

// literalConnector gives connections whose statements reach the client
// with their values as literals.
type literalConnector struct {
	driver.Connector
	d dialects.Dialect
}

func (c literalConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	p, ok := conn.(driver.ConnPrepareContext)
	if !ok {
		conn.Close()
		return nil, errors.New("the driver cannot prepare a statement with a context")
	}
	return &literalConn{Conn: conn, prep: p, d: c.d}, nil
}

type literalConn struct {
	driver.Conn
	prep driver.ConnPrepareContext
	d    dialects.Dialect
}

var (
	_ driver.ExecerContext     = (*literalConn)(nil)
	_ driver.QueryerContext    = (*literalConn)(nil)
	_ driver.NamedValueChecker = (*literalConn)(nil)
)

func (c *literalConn) CheckNamedValue(*driver.NamedValue) error { return nil }

func (c *literalConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, err := inline(c.d, query, args)
	if err != nil {
		return nil, err
	}
	st, err := c.prep.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	qs, ok := st.(driver.StmtQueryContext)
	if !ok {
		st.Close()
		return nil, errors.New("the driver cannot query with a context")
	}
	rows, err := qs.QueryContext(ctx, nil)
	if err != nil {
		st.Close()
		return nil, err
	}
	return &stmtRows{Rows: rows, st: st}, nil
}

// ExecContext runs a write as a query and reads its count (see above).
func (c *literalConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	rows, err := c.QueryContext(ctx, query, args)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := rows.Columns()
	vals := make([]driver.Value, len(cols))
	var res driver.Result = unknownRows{}
	n := 0
	for {
		err := rows.Next(vals)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		n++
		if n == 1 && len(cols) == 1 && cols[0] == "rows" && vals[0] != nil {
			if c, err := asInt(vals[0]); err == nil && c >= 0 {
				res = driver.RowsAffected(c)
			}
		}
	}
	if n != 1 {
		res = unknownRows{}
	}
	return res, nil
}

// stmtRows closes its statement with the rows, and passes on what the
// driver says of the columns.
type stmtRows struct {
	driver.Rows
	st driver.Stmt
}

func (r *stmtRows) Close() error {
	err := r.Rows.Close()
	if cerr := r.st.Close(); err == nil {
		err = cerr
	}
	return err
}

func (r *stmtRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *stmtRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func (r *stmtRows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *stmtRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
