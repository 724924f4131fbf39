package runner

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
)

// querier is what a statement runs on: the pinned connection, or the
// transaction open on it.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// compiled is a plan spelled for one dialect, its statements by name.
type compiled struct {
	plan  *compiler.Plan
	d     dialects.Dialect
	stmts map[string]dialects.Rendered
	// timeout bounds each statement; zero leaves it to the context.
	timeout time.Duration
}

func compile(d dialects.Dialect, p *compiler.Plan, timeout time.Duration) (*compiled, error) {
	rendered, err := dialects.Render(d, p)
	if err != nil {
		return nil, err
	}
	c := &compiled{plan: p, d: d, stmts: map[string]dialects.Rendered{}, timeout: timeout}
	for _, r := range rendered {
		c.stmts[r.Name] = r
	}
	return c, nil
}

// session spells a plan for the target and pins one connection for it:
// temporary tables and transactions live in one session.
func (t *Target) session(ctx context.Context, plan *compiler.Plan) (*compiled, *sql.Conn, error) {
	c, err := compile(t.Dialect, plan, t.StatementTimeout)
	if err != nil {
		return nil, nil, err
	}
	conn, err := t.DB.Conn(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", t.URL, err)
	}
	return c, conn, nil
}

// program returns the plan's program of a mode; a plan without it is a
// mistake of the caller (a backfill of a pipeline without partitions).
func (c *compiled) program(m compiler.Mode) (*compiler.Program, error) {
	pr := c.plan.Program(m)
	if pr == nil {
		return nil, fmt.Errorf("pipeline %s has no %s program", c.plan.Pipeline, m)
	}
	return pr, nil
}

// statement returns a statement of the plan by name. A name the plan does
// not hold is an error, never a silent skip: the runner executes what the
// compiled file shows, and nothing else.
func (c *compiled) statement(name string) (dialects.Rendered, error) {
	st, ok := c.stmts[name]
	if !ok {
		return st, fmt.Errorf("pipeline %s has no statement %q", c.plan.Pipeline, name)
	}
	return st, nil
}

// params are the values of statements' parameters by name. A program's
// registers live here too, as int64: a count read by one step is bound by
// a later statement under the same name.
type params map[string]any

// bind lists a part's arguments in marker order.
func bind(part dialects.Part, vals params) ([]any, error) {
	args := make([]any, len(part.Params))
	for i, name := range part.Params {
		v, ok := vals[name]
		if !ok {
			return nil, fmt.Errorf("no value for parameter %q", name)
		}
		args[i] = v
	}
	return args, nil
}

// deadline bounds one statement.
func (c *compiled) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.timeout)
}

// exec runs a statement and returns the rows its parts affected, summed.
// A statement the dialect has nothing to do for affects nothing.
func (c *compiled) exec(ctx context.Context, q querier, name string, vals params) (int64, error) {
	st, err := c.statement(name)
	if err != nil {
		return 0, err
	}
	var affected int64
	for _, part := range st.Parts {
		args, err := bind(part, vals)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		sctx, cancel := c.deadline(ctx)
		res, err := q.ExecContext(sctx, part.SQL, args...)
		cancel()
		if err != nil {
			return 0, c.stmtErr(name, err, sctx)
		}
		if n, err := res.RowsAffected(); err == nil {
			affected += n
		}
	}
	return affected, nil
}

func (c *compiled) stmtErr(name string, err error, ctx context.Context) error {
	if ctx.Err() == context.DeadlineExceeded && c.timeout > 0 {
		return fmt.Errorf("%s: no answer within the statement timeout (%s, --timeout): %w", name, c.timeout, err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// query runs a statement that returns rows and reads them all.
func (c *compiled) query(ctx context.Context, q querier, name string, vals params) ([][]any, error) {
	var out [][]any
	err := c.rows(ctx, q, name, vals, func(rows *sql.Rows) error {
		var err error
		out, err = scanAll(rows)
		return err
	})
	return out, err
}

// scanAll reads every row.
func scanAll(rows *sql.Rows) ([][]any, error) {
	var out [][]any
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// columns runs a statement that returns no rows and reads what the driver
// says of its columns.
func (c *compiled) columns(ctx context.Context, q querier, name string, vals params) ([]dialects.ColumnInfo, error) {
	var out []dialects.ColumnInfo
	err := c.rows(ctx, q, name, vals, func(rows *sql.Rows) error {
		types, err := rows.ColumnTypes()
		if err != nil {
			return err
		}
		for _, ct := range types {
			info := dialects.ColumnInfo{Name: ct.Name(), TypeName: ct.DatabaseTypeName()}
			info.Precision, info.Scale, info.HasDecimal = ct.DecimalSize()
			info.Length, info.HasLength = ct.Length()
			out = append(out, info)
		}
		for rows.Next() {
		}
		return rows.Err()
	})
	return out, err
}

// rows runs a one-part statement and hands its rows to read.
func (c *compiled) rows(ctx context.Context, q querier, name string, vals params, read func(*sql.Rows) error) error {
	st, err := c.statement(name)
	if err != nil {
		return err
	}
	if len(st.Parts) != 1 {
		return fmt.Errorf("%s: a query must be one statement, the %s spelling has %d", name, c.d.Name(), len(st.Parts))
	}
	return c.partRows(ctx, q, name, st.Parts[0], vals, read)
}

// partRows runs one part of a statement and hands its rows to read.
func (c *compiled) partRows(ctx context.Context, q querier, name string, part dialects.Part, vals params, read func(*sql.Rows) error) error {
	args, err := bind(part, vals)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	sctx, cancel := c.deadline(ctx)
	defer cancel()
	rows, err := q.QueryContext(sctx, part.SQL, args...)
	if err != nil {
		return c.stmtErr(name, err, sctx)
	}
	defer rows.Close()
	if err := read(rows); err != nil {
		return c.stmtErr(name, err, sctx)
	}
	return nil
}

// count runs a statement that returns one integer (NULL reads as ok=false).
//
// A count spelled in several parts reads its value from the first and
// then runs the others: a write whose count must be taken before it (the
// rows a merge will update), where the engine cannot return it from the
// write itself.
func (c *compiled) count(ctx context.Context, q querier, name string, vals params) (n int64, ok bool, err error) {
	st, err := c.statement(name)
	if err != nil {
		return 0, false, err
	}
	if len(st.Parts) == 0 {
		return 0, false, fmt.Errorf("%s: the %s spelling is empty, and a count needs one value", name, c.d.Name())
	}
	var rows [][]any
	err = c.partRows(ctx, q, name, st.Parts[0], vals, func(r *sql.Rows) error {
		var err error
		rows, err = scanAll(r)
		return err
	})
	if err != nil {
		return 0, false, err
	}
	for _, part := range st.Parts[1:] {
		args, err := bind(part, vals)
		if err != nil {
			return 0, false, fmt.Errorf("%s: %w", name, err)
		}
		sctx, cancel := c.deadline(ctx)
		_, err = q.ExecContext(sctx, part.SQL, args...)
		cancel()
		if err != nil {
			return 0, false, c.stmtErr(name, err, sctx)
		}
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		return 0, false, fmt.Errorf("%s: expected one value, got %d row(s)", name, len(rows))
	}
	if rows[0][0] == nil {
		return 0, false, nil
	}
	n, err = asInt(rows[0][0])
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", name, err)
	}
	return n, true, nil
}

// asInt reads an integer as any driver returns one.
func asInt(v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case int32:
		return int64(v), nil
	case int:
		return int64(v), nil
	case uint64:
		return int64(v), nil
	case float64:
		return int64(v), nil
	case []byte:
		var n int64
		_, err := fmt.Sscan(string(v), &n)
		return n, err
	case string:
		var n int64
		_, err := fmt.Sscan(v, &n)
		return n, err
	}
	return 0, fmt.Errorf("unexpected %T for an integer", v)
}

// bindMark turns a watermark into the value bound for the column's type.
func (c *compiled) bindMark(m mark, kind compiler.TypeKind) any {
	if m.isInt {
		return m.n
	}
	return c.d.BindTime(m.t, kind)
}

// bindBound turns a --from/--to bound into the value bound for a column.
func (c *compiled) bindBound(t time.Time, typ compiler.Type) any {
	return c.d.BindTime(t, typ.Kind)
}

// text reads a nullable text value from a scanned row.
func text(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	case []byte:
		return string(v), true
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano), true
	}
	return fmt.Sprint(v), true
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
