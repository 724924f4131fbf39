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
	// HeldBy names the upstream pipeline whose watermark holds hi back.
	HeldBy string `json:"held_by,omitempty"`
	// Schema is what differs between the pipeline's tables and its spec:
	// the DDL the next run applies (added columns, widened types) or that
	// needs incrc migrate.
	Schema []SchemaChange `json:"schema,omitempty"`
	// Stale lists the partitions whose rows were built with another logic
	// than the spec's (compiler.LogicHash), oldest first: what incrc
	// backfill --stale rebuilds. Nil for a pipeline without partitions.
	Stale []string `json:"stale,omitempty"`
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
	st, err := readState(ctx, c, conn, plan.Pipeline)
	if err == nil {
		pv.LeaseOwner, pv.Watermark = st.LeaseOwner, st.Watermark
		if saved, err = parseSaved(plan, st.Watermark); err != nil {
			return nil, err
		}
	}
	m := newMachine(c, conn, params{"pipeline": plan.Pipeline})
	m.readOnly = true
	w, err := fixWindow(ctx, m, pr, saved, bounds{now: now, preview: true})
	if err != nil {
		return nil, err
	}
	if w.hasLo {
		pv.WindowLo = w.lo.String()
	}
	pv.WindowHi = w.hi.String()
	pv.HeldBy = w.heldBy
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
	if pv.Schema, err = t.PendingSchema(ctx, plan); err != nil {
		return nil, err
	}
	if plan.Partition != nil {
		// A target never set up has no partitions, stale or not.
		if stale, err := staleOn(ctx, c, conn); err == nil {
			pv.Stale = append([]string{}, stale...)
		}
	}
	for _, p := range m.parts {
		pv.Partitions = append(pv.Partitions, p.Key(plan.Partition.Granularity))
	}
	return pv, nil
}
