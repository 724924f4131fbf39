package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/incrc/incrc/compiler/ir"
	"github.com/incrc/incrc/runner/transfer"

	"github.com/jackc/pgx/v5"

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
	plan  *ir.Plan
	d     dialects.Dialect
	stmts map[string]dialects.Rendered
	// timeout bounds each statement; zero leaves it to the context.
	timeout time.Duration
	// src is the dialect of a source outside the target (nil when the
	// source is in it); its statements (On source) run on srcConn, opened
	// by openSource on first use.
	src        dialects.Dialect
	srcConn    *sql.Conn
	openSource func(context.Context) (*sql.Conn, error)
}

func compile(d dialects.Dialect, p *ir.Plan, timeout time.Duration, src ...dialects.Dialect) (*compiled, error) {
	// A target that reads a files source itself walks the programs that
	// say so (what its compiled file shows).
	p = dialects.ForTarget(d, p)
	rendered, err := dialects.Render(d, p, src...)
	if err != nil {
		return nil, err
	}
	c := &compiled{plan: p, d: d, stmts: map[string]dialects.Rendered{}, timeout: timeout}
	if len(src) > 0 {
		c.src = src[0]
	}
	for _, r := range rendered {
		c.stmts[r.Name] = r
	}
	return c, nil
}

// session spells a plan for the target and pins one connection for it:
// temporary tables and transactions live in one session.
func (t *Target) session(ctx context.Context, plan *ir.Plan) (*compiled, *sql.Conn, error) {
	src, err := t.sourceOf(plan)
	if err != nil {
		return nil, nil, err
	}
	c, err := compile(t.Dialect, plan, t.StatementTimeout, src)
	if err != nil {
		return nil, nil, err
	}
	if plan.From != nil {
		c.openSource = func(ctx context.Context) (*sql.Conn, error) { return t.sourceConn(ctx, plan.From) }
	}
	conn, err := t.DB.Conn(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", t.URL, err)
	}
	return c, conn, nil
}

// program returns the plan's program of a mode; a plan without it is a
// mistake of the caller (a backfill of a pipeline without partitions).
func (c *compiled) program(m ir.Mode) (*ir.Program, error) {
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
	for attempt := 1; ; attempt++ {
		n, err := c.execOnce(ctx, q, name, vals)
		if err == nil || attempt >= conflictRetries || !c.retriesConflict(name, err) {
			return n, err
		}
		select {
		case <-ctx.Done():
			return n, err
		case <-time.After(time.Duration(attempt*attempt) * 200 * time.Millisecond):
		}
	}
}

// conflictRetries bounds how often a bookkeeping statement that lost a
// commit conflict runs again.
const conflictRetries = 5

// retriesConflict: the statement lost a commit conflict on an engine with
// optimistic commits (Delta Lake, Iceberg: dialects.ConflictTeller) and is
// one of the bookkeeping statements on the state tables every pipeline
// shares (the state row, its lease, the run log, the advance), which are
// conditional or idempotent: a conflict commits nothing, so running one
// again is safe, and two pipelines scheduled at the same minute would
// otherwise fail each other's runs. A write to a pipeline's own tables is
// not retried here: it fails the run, whose next run converges.
func (c *compiled) retriesConflict(name string, err error) bool {
	ct, ok := c.d.(dialects.ConflictTeller)
	if !ok || !ct.Conflict(err) {
		return false
	}
	st := c.plan.Statement(name)
	if st == nil {
		return false
	}
	return st.Phase == ir.PhaseState || name == ir.StmtAdvance || name == ir.StmtRecordFinish
}

func (c *compiled) execOnce(ctx context.Context, q querier, name string, vals params) (int64, error) {
	st, err := c.statement(name)
	if err != nil {
		return 0, err
	}
	if counted(st.Parts) {
		return c.readAffected(ctx, q, name, vals)
	}
	var affected int64
	var unknown error
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
		n, err := res.RowsAffected()
		if err != nil && unknown == nil {
			// A count the driver cannot give is not zero: a compare-and-set
			// read as "nothing changed" would misreport a lease or a write.
			unknown = &rowsUnknownError{fmt.Errorf("%s: the %s driver cannot report the rows the statement changed: %w", name, c.d.Name(), err)}
		}
		affected += n
	}
	if unknown != nil {
		return 0, unknown
	}
	return affected, nil
}

// counted: the dialect spelled the statement with parts that read the
// rows it changes (a count before and after a write whose engine reports
// none: dialects.CountedWrite), instead of leaving them to the driver.
func counted(parts []dialects.Part) bool {
	for _, p := range parts {
		if p.Reads {
			return true
		}
	}
	return false
}

// readAffected runs a counted statement's parts in order and adds up the
// one value each reading part returns. A NULL is a count the engine could
// not give: unknown, never 0.
func (c *compiled) readAffected(ctx context.Context, q querier, name string, vals params) (int64, error) {
	rows, err := c.countRows(ctx, q, name, vals, 1)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, row := range rows {
		if row[0] == nil {
			return 0, &rowsUnknownError{fmt.Errorf("%s: a count of the rows it changed read NULL", name)}
		}
		x, err := asInt(row[0])
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		n += x
	}
	return n, nil
}

// rowsUnknownError is exec's error when the statement ran but the driver
// could not say how many rows it changed: an error where the count is
// read, nothing where it is not (run).
type rowsUnknownError struct{ err error }

func (e *rowsUnknownError) Error() string { return e.err.Error() }
func (e *rowsUnknownError) Unwrap() error { return e.err }

// run executes a statement whose count of rows changed nobody reads.
func (c *compiled) run(ctx context.Context, q querier, name string, vals params) error {
	_, err := c.exec(ctx, q, name, vals)
	var unknown *rowsUnknownError
	if errors.As(err, &unknown) {
		return nil
	}
	return err
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
	err := eachRow(rows, func(vals []any) error {
		out = append(out, vals)
		return nil
	})
	return out, err
}

// eachRow hands every row to do as the driver's values, one new slice a
// row.
func eachRow(rows *sql.Rows, do func([]any) error) error {
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := do(vals); err != nil {
			return err
		}
	}
	return rows.Err()
}

// columns runs a statement that returns no rows and reads what the driver
// says of its columns.
func (c *compiled) columns(ctx context.Context, q querier, name string, vals params) ([]dialects.ColumnInfo, error) {
	var out []dialects.ColumnInfo
	err := c.rowsOf(ctx, q, name, vals, true, func(rows *sql.Rows) error {
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
	return c.rowsOf(ctx, q, name, vals, false, read)
}

// uncachedArgs are the arguments of a read of a table's columns, whose
// result changes when the table does (a column added): on PostgreSQL not
// a cached prepared statement, which would fail with "cached plan must not
// change result type" once the table changed under it.
func uncachedArgs(d dialects.Dialect, args []any) []any {
	if d.Name() == "postgres" {
		return append([]any{pgx.QueryExecModeSimpleProtocol}, args...)
	}
	return args
}

func (c *compiled) rowsOf(ctx context.Context, q querier, name string, vals params, uncached bool, read func(*sql.Rows) error) error {
	st, err := c.statement(name)
	if err != nil {
		return err
	}
	if len(st.Parts) != 1 {
		return fmt.Errorf("%s: a query must be one statement, the %s spelling has %d", name, c.d.Name(), len(st.Parts))
	}
	var on dialects.Dialect
	if uncached {
		on = c.d
		if st.On == ir.OnSource {
			on = c.src // the statement runs on the source's engine
		}
	}
	return c.partRows(ctx, q, name, st.Parts[0], vals, on, read)
}

// partRows runs one part of a statement and hands its rows to read; with
// uncachedOn, the engine it runs on, not as a cached prepared statement
// (uncachedArgs).
func (c *compiled) partRows(ctx context.Context, q querier, name string, part dialects.Part, vals params, uncachedOn dialects.Dialect, read func(*sql.Rows) error) error {
	args, err := bind(part, vals)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if uncachedOn != nil {
		args = uncachedArgs(uncachedOn, args)
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

// count runs a statement that returns one integer (NULL reads as
// ok=false); spelled with several reading parts, their values add up.
func (c *compiled) count(ctx context.Context, q querier, name string, vals params) (n int64, ok bool, err error) {
	rows, err := c.countRows(ctx, q, name, vals, 1)
	if err != nil {
		return 0, false, err
	}
	for _, row := range rows {
		if row[0] == nil {
			continue
		}
		x, err := asInt(row[0])
		if err != nil {
			return 0, false, fmt.Errorf("%s: %w", name, err)
		}
		n, ok = n+x, true
	}
	return n, ok, nil
}

// counts runs a statement that returns one row of n integers (NULL reads
// as 0); spelled with several reading parts, their rows add up.
func (c *compiled) counts(ctx context.Context, q querier, name string, vals params, n int) ([]int64, error) {
	rows, err := c.countRows(ctx, q, name, vals, n)
	if err != nil {
		return nil, err
	}
	out := make([]int64, n)
	for _, row := range rows {
		for i, v := range row {
			if v == nil {
				continue
			}
			x, err := asInt(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			out[i] += x
		}
	}
	return out, nil
}

// countRows runs the parts of a count's statement in order and returns the
// one row of n values of each part it reads (dialects.Reading): a count
// taken before a write that follows it in the same statement, or before
// and after one, where the engine cannot return it from the write itself.
func (c *compiled) countRows(ctx context.Context, q querier, name string, vals params, n int) ([][]any, error) {
	st, err := c.statement(name)
	if err != nil {
		return nil, err
	}
	if len(st.Parts) == 0 {
		return nil, fmt.Errorf("%s: the %s spelling is empty, and a count needs a value", name, c.d.Name())
	}
	var out [][]any
	for i, part := range st.Parts {
		if !dialects.Reading(st.Parts, i) {
			args, err := bind(part, vals)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			sctx, cancel := c.deadline(ctx)
			_, err = q.ExecContext(sctx, part.SQL, args...)
			cancel()
			if err != nil {
				return nil, c.stmtErr(name, err, sctx)
			}
			continue
		}
		var rows [][]any
		err = c.partRows(ctx, q, name, part, vals, nil, func(r *sql.Rows) error {
			var err error
			rows, err = scanAll(r)
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(rows) != 1 || len(rows[0]) != n {
			if len(rows) == 1 {
				return nil, fmt.Errorf("%s: expected %d value(s), got %d", name, n, len(rows[0]))
			}
			return nil, fmt.Errorf("%s: expected one row of %d value(s), got %d row(s)", name, n, len(rows))
		}
		out = append(out, rows[0])
	}
	return out, nil
}

// asInt reads an integer as any driver returns one.
func asInt(v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case int32:
		return int64(v), nil
	case int16:
		return int64(v), nil // DuckDB's SMALLINT
	case int8:
		return int64(v), nil
	case int:
		return int64(v), nil
	case uint32:
		return int64(v), nil
	case uint64:
		if v > math.MaxInt64 {
			return 0, fmt.Errorf("%d is larger than the largest bigint", v)
		}
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
func (c *compiled) bindMark(m mark, kind ir.TypeKind) any {
	if m.isInt {
		return m.n
	}
	return c.d.BindTime(m.t, kind)
}

// bindBound turns a --from/--to bound into the value bound for a column.
func (c *compiled) bindBound(t time.Time, typ ir.Type) any {
	return c.d.BindTime(t, typ.Kind)
}

// text reads a nullable text value from a scanned row.
func text(v any) (string, bool) { return transfer.Text(v) }

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
