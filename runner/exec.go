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

// program is a plan spelled for one dialect, by statement name.
type program struct {
	plan  *compiler.Plan
	d     dialects.Dialect
	stmts map[string]dialects.Rendered
}

func newProgram(d dialects.Dialect, p *compiler.Plan) (*program, error) {
	rendered, err := dialects.Render(d, p)
	if err != nil {
		return nil, err
	}
	prog := &program{plan: p, d: d, stmts: map[string]dialects.Rendered{}}
	for _, r := range rendered {
		prog.stmts[r.Name] = r
	}
	return prog, nil
}

// session spells a plan for the target and pins one connection for it:
// temporary tables and transactions live in one session.
func (t *Target) session(ctx context.Context, plan *compiler.Plan) (*program, *sql.Conn, error) {
	prog, err := newProgram(t.Dialect, plan)
	if err != nil {
		return nil, nil, err
	}
	conn, err := t.DB.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	return prog, conn, nil
}

func (p *program) has(name string) bool { _, ok := p.stmts[name]; return ok }

// params are the values of a statement's parameters, by name.
type params map[string]any

// bind lists a part's arguments in marker order.
func (p *program) bind(part dialects.Part, vals params) ([]any, error) {
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

// exec runs a statement and returns the rows its last part affected.
// A statement the dialect has nothing to do for is skipped.
func (p *program) exec(ctx context.Context, q querier, name string, vals params) (int64, error) {
	n, err := p.execParts(ctx, q, name, vals)
	if err != nil || len(n) == 0 {
		return 0, err
	}
	return n[len(n)-1], nil
}

// execParts runs a statement and returns the rows each part affected.
func (p *program) execParts(ctx context.Context, q querier, name string, vals params) ([]int64, error) {
	st, ok := p.stmts[name]
	if !ok {
		return nil, nil
	}
	affected := make([]int64, len(st.Parts))
	for i, part := range st.Parts {
		args, err := p.bind(part, vals)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		res, err := q.ExecContext(ctx, part.SQL, args...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if n, err := res.RowsAffected(); err == nil {
			affected[i] = n
		}
	}
	return affected, nil
}

// count runs a statement that returns one integer (NULL reads as ok=false).
func (p *program) count(ctx context.Context, q querier, name string, vals params) (n int64, ok bool, err error) {
	rows, err := p.query(ctx, q, name, vals)
	if err != nil {
		return 0, false, err
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		return 0, false, fmt.Errorf("%s: expected one value, got %d row(s)", name, len(rows))
	}
	switch v := rows[0][0].(type) {
	case nil:
		return 0, false, nil
	case int64:
		return v, true, nil
	case int32:
		return int64(v), true, nil
	case uint64:
		return int64(v), true, nil
	case float64:
		return int64(v), true, nil
	case []byte:
		_, err := fmt.Sscan(string(v), &n)
		return n, err == nil, err
	case string:
		_, err := fmt.Sscan(v, &n)
		return n, err == nil, err
	}
	return 0, false, fmt.Errorf("%s: unexpected %T", name, rows[0][0])
}

// query runs a statement that returns rows and reads them all.
func (p *program) query(ctx context.Context, q querier, name string, vals params) ([][]any, error) {
	st, ok := p.stmts[name]
	if !ok || len(st.Parts) != 1 {
		return nil, fmt.Errorf("%s: not a query of this plan", name)
	}
	args, err := p.bind(st.Parts[0], vals)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	rows, err := q.QueryContext(ctx, st.Parts[0].SQL, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// bindMark turns a watermark into the value bound for the column's type.
func (p *program) bindMark(m mark, kind compiler.TypeKind) any {
	if m.isInt {
		return m.n
	}
	return p.d.BindTime(m.t, kind)
}

// bindBound turns a --from/--to bound into the value bound for a column.
func (p *program) bindBound(t time.Time, typ compiler.Type) any {
	return p.d.BindTime(t, typ.Kind)
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

// bindStart binds watermark.start, the lower bound of everything a
// pipeline ever reads (full refreshes, partitions and reconciliation too).
func (p *program) bindStart(vals params) error {
	wm := p.plan.Watermark
	if wm == nil {
		return nil
	}
	start, err := parseMark(wm.Type, p.plan.Spec.Watermark.Start.Value)
	if err != nil {
		return err
	}
	vals["start"] = p.bindMark(start, wm.Type.Kind)
	return nil
}
