package runner

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"

	"github.com/incrc/incrc/compiler/ir"
	"github.com/incrc/incrc/runner/transfer"
)

// quarantineHeld writes each row the copies held back to the quarantine,
// one execution of the step's statement per row.
func (m *machine) quarantineHeld(ctx context.Context, q querier, s ir.Step, vals params) error {
	held := m.held
	m.held, m.vals[ir.RegUnfit] = nil, int64(0)
	for _, h := range held {
		v := make(params, len(vals)+len(h.Values)+1)
		for k, x := range vals {
			v[k] = x
		}
		v["unfit_reason"] = h.Reason
		for _, c := range m.c.plan.Columns {
			v[ir.UnfitParam(c.Name)] = h.Values[c.Name]
		}
		n, err := m.c.exec(ctx, q, s.Stmt, v)
		if err != nil {
			return err
		}
		m.into(s, n)
	}
	return nil
}

// copy runs a copy step: the rows the source statement returns stream
// into the target table of the step, through the target's bulk path
// (transfer.Copy). Each value is converted to its declared column's type;
// one that does not fit fails the copy, naming the row's key and the
// column, but for a time the target cannot hold as it is when the plan
// quarantines such rows: the row is held back for the quarantine
// (ir.StmtQuarantineUnfit) and counted with the rows copied, as read.
func (m *machine) copy(ctx context.Context, src querier, s ir.Step, vals params) (int64, error) {
	c := m.c
	st, err := c.statement(s.Stmt)
	if err != nil {
		return 0, err
	}
	op, ok := st.Op.(ir.ReadSource)
	if !ok {
		return 0, fmt.Errorf("%s: a copy step reads a source statement, not %T", s.Stmt, st.Op)
	}
	cols := make([]ir.Col, len(op.Columns))
	for i, name := range op.Columns {
		cols[i] = ir.Col{Name: name, Type: ir.Type{Kind: ir.Text}}
		for _, dc := range c.plan.Columns {
			if dc.Name == name {
				cols[i] = dc
			}
		}
	}
	conv := &transfer.Converter{Cols: cols, Key: transfer.KeyIndexes(c.plan.Key, op.Columns), Target: string(c.d.Name()), Bind: c.d.BindTime}
	conv.Hold = c.plan.Statement(ir.StmtQuarantineUnfit) != nil
	if c.src != nil {
		conv.Source = string(c.src.Name())
	}
	into := transfer.Into{Conn: m.conn, Dialect: c.d, Table: s.Copy, Columns: op.Columns, Temporary: !reflect.DeepEqual(s.Copy, c.plan.Target)}
	var n int64
	err = c.rows(ctx, src, s.Stmt, vals, func(rows *sql.Rows) error {
		copied, held, err := transfer.Copy(ctx, rows, conv, into)
		m.held = append(m.held, held...)
		m.vals[ir.RegUnfit] = int64(len(m.held))
		n = copied + int64(len(held))
		return err
	})
	return n, err
}
