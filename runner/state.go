package runner

import (
	"context"
	"fmt"

	"github.com/incrc/incrc/compiler"
)

// PipelineState is a pipeline's row in incrc_state.
type PipelineState struct {
	Pipeline       string `json:"pipeline"`
	Watermark      string `json:"watermark,omitempty"`
	LeaseOwner     string `json:"lease_owner,omitempty"`
	LeaseExpiresAt string `json:"lease_expires_at,omitempty"`
	SpecHash       string `json:"spec_hash,omitempty"`
	UpdatedAt      string `json:"updated_at,omitempty"`
}

func (p *program) readState(ctx context.Context, q querier, pipeline string) (*PipelineState, error) {
	rows, err := p.query(ctx, q, compiler.StmtReadState, params{"pipeline": pipeline})
	if err != nil {
		return nil, err
	}
	st := &PipelineState{Pipeline: pipeline}
	if len(rows) == 0 {
		return st, nil
	}
	row := rows[0]
	st.Watermark, _ = text(row[0])
	st.LeaseOwner, _ = text(row[1])
	st.LeaseExpiresAt, _ = text(row[2])
	st.SpecHash, _ = text(row[3])
	st.UpdatedAt, _ = text(row[4])
	return st, nil
}

// Status is what incrc state shows of one pipeline.
type Status struct {
	PipelineState
	Runs       []Result `json:"runs"`
	Partitions []Marker `json:"partitions,omitempty"` // backfill markers, newest first
}

// Marker is a partition's completion marker from a backfill.
type Marker struct {
	BackfillID string `json:"backfill_id"`
	Partition  string `json:"partition"`
	Status     string `json:"status"`
	Rows       int64  `json:"rows"`
	Detail     string `json:"detail,omitempty"`
	UpdatedAt  string `json:"updated_at"`
}

// State reads a pipeline's watermark, lease and latest runs.
func (t *Target) State(ctx context.Context, plan *compiler.Plan) (*Status, error) {
	prog, conn, err := t.session(ctx, plan)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	for _, name := range []string{compiler.StmtCreateState, compiler.StmtCreateRuns, compiler.StmtCreatePartitions} {
		if _, err := prog.exec(ctx, conn, name, nil); err != nil {
			return nil, err
		}
	}
	st, err := prog.readState(ctx, conn, plan.Pipeline)
	if err != nil {
		return nil, err
	}
	rows, err := prog.query(ctx, conn, compiler.StmtRecentRuns, params{"pipeline": plan.Pipeline})
	if err != nil {
		return nil, err
	}
	s := &Status{PipelineState: *st, Runs: []Result{}}
	for _, row := range rows {
		s.Runs = append(s.Runs, runRow(row))
	}
	if prog.has(compiler.StmtRecentMarkers) {
		rows, err := prog.query(ctx, conn, compiler.StmtRecentMarkers, params{"pipeline": plan.Pipeline})
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			m := Marker{}
			m.BackfillID, _ = text(row[0])
			m.Partition, _ = text(row[1])
			m.Status, _ = text(row[2])
			if n, ok := text(row[3]); ok {
				fmt.Sscan(n, &m.Rows)
			}
			m.Detail, _ = text(row[4])
			m.UpdatedAt, _ = text(row[5])
			s.Partitions = append(s.Partitions, m)
		}
	}
	return s, nil
}

// runRow reads a row of recent_runs (the columns of compiler.RunColumns).
func runRow(row []any) Result {
	str := func(i int) string { s, _ := text(row[i]); return s }
	num := func(i int) int64 {
		var n int64
		if s, ok := text(row[i]); ok {
			fmt.Sscan(s, &n)
		}
		return n
	}
	return Result{
		RunID: str(0), Pipeline: str(1), Kind: str(2), Status: str(3), WindowLo: str(4), WindowHi: str(5),
		WatermarkBefore: str(6), WatermarkAfter: str(7), RowsRead: num(8), RowsInserted: num(9), RowsUpdated: num(10),
		RowsDeleted: num(11), RowsQuarantined: num(12), StartedAt: str(13), FinishedAt: str(14), DurationMS: num(15), Error: str(16),
	}
}

// Release frees a pipeline's lease whoever holds it: for a run that died.
func (t *Target) Release(ctx context.Context, plan *compiler.Plan) (bool, error) {
	prog, conn, err := t.session(ctx, plan)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	if err := setup(ctx, conn, prog); err != nil {
		return false, err
	}
	n, err := prog.exec(ctx, conn, compiler.StmtForceRelease, params{"pipeline": plan.Pipeline})
	return n > 0, err
}
