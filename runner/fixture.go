package runner

import (
	"context"
	"fmt"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
)

// ExecOp spells one operation in the target's dialect and executes it,
// binding vals by parameter name. The demo and tests use it to create and
// change source tables without writing SQL for each engine.
func (t *Target) ExecOp(ctx context.Context, op compiler.Op, vals map[string]any) error {
	var ps []compiler.Param
	for name := range vals {
		ps = append(ps, compiler.Param{Name: name})
	}
	parts, err := dialects.RenderStatement(t.Dialect, &compiler.Statement{Name: "exec", Op: op, Params: ps})
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
func (t *Target) BindTime(s string, kind compiler.TypeKind) (any, error) {
	tm, err := compiler.ParseTime(s)
	if err != nil {
		return nil, err
	}
	return t.Dialect.BindTime(tm, kind), nil
}
