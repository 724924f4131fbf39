package runner

import (
	"context"
	"fmt"
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
	return t.preview(ctx, plan, bounds{now: now, preview: true})
}

// PreviewRun is Preview of the run incrc run would start now with
// opts.Until (incrc run --dry-run): the same window, and --until refused
// where the run refuses it. It only reads.
func (t *Target) PreviewRun(ctx context.Context, plan *compiler.Plan, opts Options) (*Preview, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	return t.preview(ctx, plan, bounds{now: now(), until: opts.Until, allowFuture: opts.AllowFuture, preview: true})
}

func (t *Target) preview(ctx context.Context, plan *compiler.Plan, b bounds) (*Preview, error) {
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
	w, err := fixWindow(ctx, m, pr, saved, b)
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
		pv.Partitions = append(pv.Partitions, p.Key(grainOf(plan.Partition)))
	}
	return pv, nil
}

// PlannedStep is one step of a program as the engine would get it: what
// incrc run --dry-run shows of the run it does not start.
type PlannedStep struct {
	Program string   `json:"program"`
	Name    string   `json:"name"`
	If      string   `json:"if,omitempty"`             // the registers it runs on (compiler.Step.If)
	Each    bool     `json:"each_partition,omitempty"` // once per partition
	On      string   `json:"on,omitempty"`             // "source": on the source's database
	SQL     []string `json:"sql"`
}

// Steps lists the steps of the plan's programs of modes, in order, each
// with its statement spelled for this target (and a source outside it in
// its own dialect), as a run would execute them. It opens nothing.
func (t *Target) Steps(plan *compiler.Plan, modes ...compiler.Mode) ([]PlannedStep, error) {
	src, err := t.sourceOf(plan)
	if err != nil {
		return nil, err
	}
	c, err := compile(t.Dialect, plan, t.StatementTimeout, src)
	if err != nil {
		return nil, err
	}
	var out []PlannedStep
	for _, mode := range modes {
		pr, err := c.program(mode)
		if err != nil {
			return nil, err
		}
		for _, s := range pr.Steps {
			r, ok := c.stmts[s.Stmt]
			if !ok {
				return nil, fmt.Errorf("pipeline %s: program %s names statement %s, which the plan does not hold", plan.Pipeline, mode, s.Stmt)
			}
			ps := PlannedStep{Program: string(mode), Name: s.Stmt, If: s.If, Each: s.Each || s.EachFile, On: string(s.On)}
			for _, p := range r.Parts {
				ps.SQL = append(ps.SQL, p.SQL)
			}
			out = append(out, ps)
		}
	}
	return out, nil
}
