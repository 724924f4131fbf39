package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

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

	exists bool // the row is there
}

func readState(ctx context.Context, c *compiled, q querier, pipeline string) (*PipelineState, error) {
	rows, err := c.query(ctx, q, compiler.StmtReadState, params{"pipeline": pipeline})
	if err != nil {
		return nil, err
	}
	st := &PipelineState{Pipeline: pipeline}
	if len(rows) == 0 {
		return st, nil
	}
	if len(rows) > 1 {
		// The state table's key is the pipeline: two rows mean an engine
		// that does not enforce it (a first run racing another on a lake
		// table). Reading either would be a guess, and a lease held on the
		// other would look held forever.
		return nil, fmt.Errorf("pipeline %s has %d rows in %s, not one: two first runs raced on an engine that does not enforce the state table's key; delete all but the row with the latest watermark, then run again",
			pipeline, len(rows), strings.Join(compiler.StateTable.Parts, "."))
	}
	row := rows[0]
	st.exists = true
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
	// Source says where the source is when it is outside the target: a
	// connection, or a folder of files. For files loaded by file, NewFiles
	// is how many the next run would load, Rewritten how many loaded
	// files were rewritten in place since.
	Source    string `json:"source,omitempty"`
	NewFiles  *int64 `json:"new_files,omitempty"`
	Rewritten int64  `json:"rewritten_files,omitempty"`
	// Stale are the partitions built with another logic than the spec's,
	// oldest first (see Target.Stale).
	Stale []string `json:"stale,omitempty"`
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
	c, conn, err := t.session(ctx, plan)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	defer c.release()
	// The state tables only (a run log an older incrc created gets its
	// newer columns): reading state never creates a pipeline's target.
	if err := newMachine(c, conn, params{}).walk(ctx, plan.StateSetup()); err != nil {
		return nil, err
	}
	st, err := readState(ctx, c, conn, plan.Pipeline)
	if err != nil {
		return nil, err
	}
	rows, err := c.query(ctx, conn, compiler.StmtRecentRuns, params{"pipeline": plan.Pipeline})
	if err != nil {
		return nil, err
	}
	s := &Status{PipelineState: *st, Runs: []Result{}}
	for _, row := range rows {
		s.Runs = append(s.Runs, runRow(row))
	}
	if f := plan.From; f != nil {
		s.Source = f.Describe()
		if f.ByFile {
			m := newMachine(c, conn, params{"pipeline": plan.Pipeline})
			m.readOnly = true
			if err := m.listFiles(ctx, conn, compiler.Step{Stmt: compiler.StmtReadFiles, Read: compiler.ReadNewFiles}); err != nil {
				return nil, err
			}
			n := int64(len(m.files))
			s.NewFiles, s.Rewritten = &n, int64(len(m.rewritten))
		}
	}
	if plan.Statement(compiler.StmtRecentMarkers) != nil {
		rows, err := c.query(ctx, conn, compiler.StmtRecentMarkers, params{"pipeline": plan.Pipeline})
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
		// A target never run has no partitions to be stale.
		if stale, err := staleOn(ctx, c, conn); err == nil {
			s.Stale = stale
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
		RowsSkipped: num(18), Note: str(19), RowsIgnored: num(20), Started: true,
	}
}

// Release frees a pipeline's lease whoever holds it: for a run that died.
func (t *Target) Release(ctx context.Context, plan *compiler.Plan) (bool, error) {
	c, conn, err := t.session(ctx, plan)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	defer c.release()
	if _, err := setup(ctx, c, conn); err != nil {
		return false, err
	}
	n, err := c.exec(ctx, conn, compiler.StmtForceRelease, params{"pipeline": plan.Pipeline})
	return n > 0, err
}

// RewindOptions say where a watermark goes back to, and who asks why.
type RewindOptions struct {
	To       string // a watermark value: RFC 3339 or a date, or an integer for an integer watermark
	Who      string // recorded in the run log
	Reason   string // recorded in the run log
	LeaseTTL time.Duration
	Owner    string
	Now      func() time.Time
}

// Rewind moves a pipeline's watermark back to To, holding the lease, and
// records it in the run log with who asked and why: the next run re-reads
// from there. It never moves the watermark forward (runs do that) nor
// before watermark.start (nothing before it is ever read).
func (t *Target) Rewind(ctx context.Context, plan *compiler.Plan, o RewindOptions) (*Result, error) {
	opts := Options{LeaseTTL: o.LeaseTTL, Owner: o.Owner, Now: o.Now}
	opts.defaults()
	wm := plan.Watermark
	if f := plan.From; wm == nil && f != nil && f.ByFile {
		return nil, fmt.Errorf("pipeline %s loads its files by file, with no watermark to rewind: run --full-refresh to load every file again (and --reload-rewritten for the ones rewritten in place)", plan.Pipeline)
	}
	if wm == nil {
		return nil, fmt.Errorf("pipeline %s has no watermark to rewind: each of its runs reads the whole source", plan.Pipeline)
	}
	to, err := parseWM(wm, o.To)
	if err != nil {
		return nil, fmt.Errorf("--to: %w", err)
	}
	start, err := parseWM(wm, wm.Start)
	if err != nil {
		return nil, err
	}
	if to.less(start) {
		return nil, fmt.Errorf("--to %s is before watermark.start %s of %s: nothing before start is ever read", to, start, plan.Pipeline)
	}
	c, conn, err := t.session(ctx, plan)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	defer c.release()
	pr, err := c.program(compiler.ModeRewind)
	if err != nil {
		return nil, err
	}
	r := t.newRecorder(c, conn, pr, opts)
	err = r.run(ctx, func(m *machine) (window, error) {
		saved, err := savedMark(ctx, c, conn, r.res)
		if err != nil {
			return window{}, err
		}
		switch {
		case saved == nil:
			return window{}, fmt.Errorf("pipeline %s has not run yet: there is no watermark to rewind", plan.Pipeline)
		case saved.less(to):
			return window{}, fmt.Errorf("--to %s is after the watermark %s of %s: a rewind moves it back; runs move it forward", to, saved, plan.Pipeline)
		}
		r.vals["expected"] = saved.String()
		r.vals["watermark"] = to.String()
		r.vals["now"] = stateTime(opts.Now())
		note := fmt.Sprintf("rewound from %s to %s by %s", saved, to, o.Who)
		if o.Reason != "" {
			note += ": " + o.Reason
		}
		r.vals["note"] = note
		// The run log shows what the next run re-reads: [to, the old watermark).
		return window{lo: to, hasLo: true, hi: *saved, hasHi: true, saved: saved, advance: to}, nil
	})
	return r.res, err
}
