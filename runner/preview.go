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
	// Source says where the source is when it is outside the target: a
	// connection, or a folder of files; NewFiles is how many files the
	// next run would load (a files source loaded by file).
	Source   string `json:"source,omitempty"`
	NewFiles *int64 `json:"new_files,omitempty"`
}

// Preview fixes the next run's window (hi = now - lag) and walks the
// plan's preview program: what that run would read. It only reads: a
// target never set up previews a first run.
func (t *Target) Preview(ctx context.Context, plan *compiler.Plan, now time.Time) (*Preview, error) {
	c, conn, err := t.session(ctx, plan)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	defer c.release()
	pr, err := c.program(compiler.ModePreview)
	if err != nil {
		return nil, err
	}
	pv := &Preview{Pipeline: plan.Pipeline}
	var saved *mark
	// A target never set up has no state table: that is a first run.
	if st, err := readState(ctx, c, conn, plan.Pipeline); err == nil {
		pv.LeaseOwner, pv.Watermark = st.LeaseOwner, st.Watermark
		if saved, err = parseSaved(plan, st.Watermark); err != nil {
			return nil, err
		}
	}
	m := newMachine(c, conn, params{"pipeline": plan.Pipeline})
	w, err := fixWindow(ctx, m, pr, saved, bounds{now: now})
	if err != nil {
		return nil, err
	}
	if w.hasLo {
		pv.WindowLo = w.lo.String()
	}
	pv.WindowHi = w.hi.String()
	if err := m.walk(ctx, pr); err != nil {
		return nil, err
	}
	pv.Rows = m.reg(compiler.RegRead)
	if f := plan.From; f != nil {
		pv.Source = f.Describe()
		if f.ByFile {
			n := int64(len(m.files))
			pv.NewFiles = &n
		}
	}
	for _, p := range m.parts {
		pv.Partitions = append(pv.Partitions, p.Key(plan.Partition.Granularity))
	}
	return pv, nil
}
