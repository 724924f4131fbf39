package runner

import (
	"context"
	"time"

	"github.com/incrc/incrc/compiler"
)

// Preview is what the next run of a pipeline would read, found without
// changing anything: for incrc plan --target.
type Preview struct {
	Pipeline   string   `json:"pipeline"`
	Watermark  string   `json:"watermark,omitempty"` // empty: never run
	WindowLo   string   `json:"window_lo,omitempty"`
	WindowHi   string   `json:"window_hi"`
	Rows       int64    `json:"rows"`                 // source rows in the window
	Partitions []string `json:"partitions,omitempty"` // overwrite_partitions: the partitions it would rewrite
	LeaseOwner string   `json:"lease_owner,omitempty"`
}

// Preview computes the next run's window (hi = now - lag) and counts what
// it would read. It only reads: a target never set up previews a first run.
func (t *Target) Preview(ctx context.Context, plan *compiler.Plan, now time.Time) (*Preview, error) {
	prog, conn, err := t.session(ctx, plan)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	opts := Options{Now: func() time.Time { return now }}
	opts.defaults()
	r := &run{t: t, prog: prog, plan: plan, opts: opts, conn: conn, res: &Result{}, vals: params{"pipeline": plan.Pipeline}, stopHeartbeat: func() {}}
	pv := &Preview{Pipeline: plan.Pipeline}
	var before *mark
	if st, err := prog.readState(ctx, conn, plan.Pipeline); err == nil {
		pv.Watermark, pv.LeaseOwner = st.Watermark, st.LeaseOwner
		if plan.Watermark != nil && st.Watermark != "" {
			m, err := parseMark(plan.Watermark.Type, st.Watermark)
			if err != nil {
				return nil, err
			}
			before = &m
		}
	}
	w, err := r.window(ctx, before)
	if err != nil {
		return nil, err
	}
	r.recordWindow(w)
	pv.WindowHi, pv.WindowLo = r.res.WindowHi, r.res.WindowLo
	if plan.Watermark != nil && w.hasLo && !w.lo.less(w.hi) {
		return pv, nil
	}
	if plan.Strategy != compiler.OverwritePartitions {
		pv.Rows, _, err = prog.count(ctx, conn, compiler.StmtCountRead, r.vals)
		return pv, err
	}
	parts, rows, err := r.touchedPartitions(ctx, w)
	if err != nil {
		return nil, err
	}
	pv.Rows = rows
	for _, p := range parts {
		pv.Partitions = append(pv.Partitions, p.Key(plan.Partition.Granularity))
	}
	return pv, nil
}
