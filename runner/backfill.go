package runner

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/incrc/incrc/compiler"
)

// Partition statuses, as the grid shows them.
const (
	PartOK        = "ok"        // reconciled, not rebuilt
	PartDrifted   = "drifted"   // source and target differ
	PartRebuilt   = "rebuilt"   // rewritten by this backfill and checked
	PartDone      = "done"      // rewritten by an earlier attempt of this backfill
	PartPending   = "pending"   // not reached (the backfill stopped first)
	PartFailed    = "failed"    // the rewrite failed, or its check did not match
	PartFinalized = "finalized" // older than finalize_after: needs --restate
)

// BackfillOptions are the choices of one backfill.
type BackfillOptions struct {
	From, To    time.Time // partitions intersecting [From, To)
	Parallel    int       // partitions rebuilt at a time; default 1
	Restart     bool      // redo partitions an earlier attempt finished
	OnlyDrifted bool      // rebuild only the partitions reconciliation finds drifted
	Restate     bool      // allow finalized partitions
	DryRun      bool      // decide the partitions, change nothing
	LeaseTTL    time.Duration
	Owner       string
	Now         func() time.Time
	// BeforeStatement is called before each statement (tests inject
	// failures with it); Progress after each partition.
	BeforeStatement func(partition, statement string) error
	Progress        func(done, total int, p PartitionResult)
}

// PartitionResult is what a backfill did to one partition.
type PartitionResult struct {
	Key    string   `json:"partition"`
	Status string   `json:"status"`
	Rows   int64    `json:"rows,omitempty"`
	Source []string `json:"source,omitempty"` // count and measures after the rewrite
	Target []string `json:"target,omitempty"`
	Error  string   `json:"error,omitempty"`
}

// BackfillResult is a whole backfill.
type BackfillResult struct {
	Pipeline   string            `json:"pipeline"`
	BackfillID string            `json:"backfill_id"`
	From       string            `json:"from"`
	To         string            `json:"to"`
	Watermark  string            `json:"watermark"` // before and after: a backfill never moves it
	Measures   []string          `json:"measures"`
	Partitions []PartitionResult `json:"partitions"`
	// Mismatch is the first partition whose check failed, if any.
	Mismatch *PartitionResult `json:"mismatch,omitempty"`
}

// ErrMismatch is returned (wrapped) when a rebuilt partition does not
// match the source: the backfill stopped there.
var ErrMismatch = errors.New("rebuilt partition does not match the source")

// BackfillID names a backfill: the pipeline, the range and the spec. The
// same backfill run again resumes; a changed spec starts afresh.
func BackfillID(plan *compiler.Plan, from, to time.Time) string {
	sum := sha256.Sum256([]byte(plan.Pipeline + "|" + from.UTC().Format(time.RFC3339) + "|" + to.UTC().Format(time.RFC3339) + "|" + plan.Spec.Hash))
	return hex.EncodeToString(sum[:8])
}

// Backfill rebuilds the partitions of [From, To) oldest first, each by
// overwrite from the source with the current spec, at most Parallel at a
// time, each in its own transaction with its completion marker, each
// checked against the source after it commits. It stops at the first
// mismatch. It holds the pipeline's lease and never moves the watermark.
func (t *Target) Backfill(ctx context.Context, plan *compiler.Plan, o BackfillOptions) (*BackfillResult, error) {
	if plan.Partition == nil {
		return nil, fmt.Errorf("%s: pipeline %s has no partition section: a backfill rebuilds partitions (partition: {column: COLUMN, granularity: day})", plan.Spec.File, plan.Pipeline)
	}
	if !o.From.Before(o.To) {
		return nil, fmt.Errorf("--from must be before --to: the range is [from, to)")
	}
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	opts := Options{LeaseTTL: o.LeaseTTL, Owner: o.Owner, Now: o.Now}
	opts.defaults()
	prog, conn, err := t.session(ctx, plan)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	res := &BackfillResult{Pipeline: plan.Pipeline, BackfillID: BackfillID(plan, o.From, o.To),
		From: o.From.UTC().Format(time.RFC3339), To: o.To.UTC().Format(time.RFC3339), Measures: measureNames(plan)}
	r := &run{t: t, prog: prog, plan: plan, opts: opts, conn: conn, owner: opts.Owner, start: opts.Now(),
		res: &Result{Pipeline: plan.Pipeline, RunID: newRunID(opts.Now()), Kind: "backfill"}, stopHeartbeat: func() {}}
	r.vals = params{"pipeline": plan.Pipeline, "owner": r.owner, "run_id": r.res.RunID, "spec_hash": plan.Spec.Hash, "backfill_id": res.BackfillID}
	if err := prog.bindStart(r.vals); err != nil {
		return nil, err
	}
	if o.DryRun {
		return t.planBackfill(ctx, r, o, res)
	}
	if err := setup(ctx, conn, prog); err != nil {
		return nil, err
	}
	if err := r.acquire(ctx); err != nil {
		return nil, err
	}
	bg := context.WithoutCancel(ctx)
	defer prog.exec(bg, conn, compiler.StmtReleaseLease, r.vals)
	defer r.stopHeartbeat()
	if err := t.decide(ctx, r, o, res); err != nil {
		return res, err
	}
	r.vals["window_lo"], r.vals["window_hi"] = res.From, res.To
	r.vals["kind"], r.vals["status"], r.vals["started_at"] = "backfill", "running", stateTime(r.start)
	r.vals["watermark_before"] = nullable(res.Watermark)
	if _, err := prog.exec(ctx, conn, compiler.StmtRecordStart, r.vals); err != nil {
		return res, err
	}
	err = t.rebuild(ctx, r, o, res)
	// The run log records the backfill; the watermark is the one it found.
	r.res.WatermarkAfter = res.Watermark
	for _, p := range res.Partitions {
		if p.Status == PartRebuilt {
			r.res.RowsInserted += p.Rows
			r.res.RowsRead += p.Rows
		}
	}
	status, errText := "succeeded", ""
	if err != nil {
		status, errText = "failed", err.Error()
	}
	r.finish(status, errText)
	r.vals["watermark_after"] = nullable(res.Watermark)
	prog.exec(bg, conn, compiler.StmtRecordFinish, r.vals)
	return res, err
}

func measureNames(plan *compiler.Plan) []string {
	names := []string{"count"}
	if s := plan.Spec.Reconcile; s != nil {
		for _, m := range s.Measures {
			if meas, err := compiler.ParseMeasure(m.Value, plan.Spec.ColumnNames()); err == nil && (meas.Fn != "count" || meas.Column != "") {
				names = append(names, meas.String())
			}
		}
	}
	return names
}

// planBackfill decides what a backfill would do without changing anything.
func (t *Target) planBackfill(ctx context.Context, r *run, o BackfillOptions, res *BackfillResult) (*BackfillResult, error) {
	return res, t.decide(ctx, r, o, res)
}

// decide fixes hi, the partitions and what happens to each: finalized,
// done by an earlier attempt, ok (not drifted), or pending a rebuild.
func (t *Target) decide(ctx context.Context, r *run, o BackfillOptions, res *BackfillResult) error {
	plan, prog := r.plan, r.prog
	g := plan.Partition.Granularity
	st, err := prog.readState(ctx, r.conn, plan.Pipeline)
	if err != nil && !o.DryRun {
		return err
	}
	if st != nil {
		res.Watermark = st.Watermark
	}
	if err := t.backfillHi(ctx, r, res.Watermark); err != nil {
		return err
	}
	// Partitions finalize relative to the pipeline's own clock, its
	// watermark, so a pipeline replaying the past sees the same rule.
	var finalBound time.Time
	if fa := plan.Spec.Partition.FinalizeAfter; fa.Set() {
		ref := r.opts.Now()
		if plan.Watermark != nil && plan.Watermark.Type.IsTime() && res.Watermark != "" {
			if m, err := parseMark(plan.Watermark.Type, res.Watermark); err == nil {
				ref = m.t
			}
		}
		finalBound = partitionStart(ref.Add(-fa.Value), g)
	}
	if o.Restart && !o.DryRun {
		if _, err := prog.exec(ctx, r.conn, compiler.StmtClearMarkers, r.vals); err != nil {
			return err
		}
	}
	done := map[string]bool{}
	if rows, err := prog.query(ctx, r.conn, compiler.StmtReadMarkers, r.vals); err == nil && !o.Restart {
		for _, row := range rows {
			k, _ := text(row[0])
			s, _ := text(row[1])
			done[k] = s == PartDone
		}
	} else if err != nil && !o.DryRun {
		return err
	}
	var drifted map[string]bool
	if o.OnlyDrifted {
		rec, err := t.Reconcile(ctx, plan, o.From, o.To)
		if err != nil {
			return err
		}
		drifted = map[string]bool{}
		for _, k := range rec.Drifted {
			if tm, err := compiler.ParseTime(k); err == nil {
				drifted[makePartition(tm, g).Key(g)] = true
			}
		}
	}
	var finalized []string
	for _, p := range partitionsIn(o.From, o.To, g) {
		pr := PartitionResult{Key: p.Key(g), Status: PartPending}
		switch {
		case !finalBound.IsZero() && p.start.Before(finalBound) && !o.Restate:
			pr.Status = PartFinalized
			finalized = append(finalized, pr.Key)
		case done[pr.Key]:
			pr.Status = PartDone
		case drifted != nil && !drifted[pr.Key]:
			pr.Status = PartOK
		}
		res.Partitions = append(res.Partitions, pr)
	}
	if len(finalized) > 0 && !o.DryRun {
		return fmt.Errorf("%d partition(s) are finalized (older than finalize_after %s before the watermark): %s; rebuilding them needs --restate",
			len(finalized), plan.Spec.Partition.FinalizeAfter.Text, rangeText(finalized))
	}
	return nil
}

func rangeText(keys []string) string {
	if len(keys) == 1 {
		return keys[0]
	}
	return keys[0] + " .. " + keys[len(keys)-1]
}

// backfillHi is the upper bound on the watermark column of what a backfill
// reads: for append, the saved watermark (the next run appends the rest);
// otherwise everything committed now, since merge and overwrite rewrite
// idempotently when the next run reads those rows again.
func (t *Target) backfillHi(ctx context.Context, r *run, saved string) error {
	wm := r.plan.Watermark
	if wm == nil {
		return nil
	}
	var hi mark
	switch {
	case r.plan.Strategy == compiler.Append:
		if saved == "" {
			return fmt.Errorf("pipeline %s has not run yet: an append backfill reads up to the watermark, and there is none", r.plan.Pipeline)
		}
		m, err := parseMark(wm.Type, saved)
		if err != nil {
			return err
		}
		hi = m
	case wm.Type.IsInteger():
		max, ok, err := r.prog.count(ctx, r.conn, compiler.StmtSourceMax, r.vals)
		if err != nil {
			return err
		}
		hi = mark{isInt: true}
		if ok {
			hi.n = max + 1
		}
	default:
		hi = upperBound(wm.Type, nil, r.opts.Now(), r.plan.Spec.Watermark.Lag.Value)
	}
	r.vals["hi"] = r.prog.bindMark(hi, wm.Type.Kind)
	return nil
}

// rebuild runs the pending partitions, oldest first, Parallel at a time.
func (t *Target) rebuild(ctx context.Context, r *run, o BackfillOptions, res *BackfillResult) error {
	g := r.plan.Partition.Granularity
	var todo []int
	for i, p := range res.Partitions {
		if p.Status == PartPending {
			todo = append(todo, i)
		}
	}
	var (
		mu      sync.Mutex
		next    int
		stopped bool
		first   error
		done    int
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The lease is renewed on the main connection while workers rebuild.
	go func() {
		tick := time.NewTicker(max(r.opts.LeaseTTL/3, 10*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				mu.Lock()
				r.renewLease(ctx)
				mu.Unlock()
			}
		}
	}()
	worker := func() error {
		conn, err := t.DB.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		for {
			mu.Lock()
			if stopped || next >= len(todo) {
				mu.Unlock()
				return nil
			}
			i := todo[next]
			next++
			mu.Unlock()
			pr := &res.Partitions[i]
			start, _ := compiler.ParseTime(strings.Replace(pr.Key, "T", " ", 1) + map[string]string{"hour": ":00:00", "month": "-01", "day": ""}[g])
			err := t.rebuildOne(ctx, r, conn, makePartition(start, g), pr, o)
			mu.Lock()
			done++
			if err != nil {
				pr.Status = PartFailed
				pr.Error = err.Error()
				if !stopped {
					stopped = true
					first = fmt.Errorf("partition %s: %w", pr.Key, err)
					if errors.Is(err, ErrMismatch) {
						m := *pr
						res.Mismatch = &m
					}
				}
			} else {
				pr.Status = PartRebuilt
			}
			if o.Progress != nil {
				o.Progress(done, len(todo), *pr)
			}
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, o.Parallel)
	for w := 0; w < o.Parallel; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs[w] = worker()
		}(w)
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return errors.Join(errs...)
}

// rebuildOne overwrites one partition from the source in its own
// transaction, with its marker, then checks it against the source.
func (t *Target) rebuildOne(ctx context.Context, r *run, conn *sql.Conn, p partition, pr *PartitionResult, o BackfillOptions) error {
	prog, g := r.prog, r.plan.Partition.Granularity
	vals := params{}
	for k, v := range r.vals {
		vals[k] = v
	}
	prog.bindPartition(vals, p)
	vals["partition_key"] = p.Key(g)
	step := func(q querier, name string) ([]int64, error) {
		if o.BeforeStatement != nil && prog.has(name) {
			if err := o.BeforeStatement(pr.Key, name); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		return prog.execParts(ctx, q, name, vals)
	}
	bg := context.WithoutCancel(ctx)
	for _, name := range []string{compiler.StmtDropStage, compiler.StmtCreateStage, compiler.StmtStagePartition} {
		if _, err := step(conn, name); err != nil {
			return err
		}
	}
	defer prog.exec(bg, conn, compiler.StmtDropStage, vals)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if prog.has(compiler.StmtCountInvalid) {
		invalid, _, err := prog.count(ctx, tx, compiler.StmtCountInvalid, vals)
		if err != nil {
			return err
		}
		if invalid > 0 && !prog.has(compiler.StmtQuarantine) {
			return fmt.Errorf("%d row(s) break quality rules and on_invalid is fail: partition left as it was", invalid)
		}
		for _, name := range []string{compiler.StmtQuarantine, compiler.StmtDeleteInvalid} {
			if _, err := step(tx, name); err != nil {
				return err
			}
		}
	}
	staged, _, err := prog.count(ctx, tx, compiler.StmtCountStaged, vals)
	if err != nil {
		return err
	}
	pr.Rows = staged
	vals["status"], vals["rows_written"], vals["detail"], vals["updated_at"] = PartDone, staged, nil, stateTime(r.opts.Now())
	for _, name := range []string{compiler.StmtReplacePartition, compiler.StmtDeleteMarker, compiler.StmtInsertMarker} {
		if _, err := step(tx, name); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if o.BeforeStatement != nil {
		if err := o.BeforeStatement(pr.Key, compiler.StmtCheckPartitionSrc); err != nil {
			return fmt.Errorf("%s: %w", compiler.StmtCheckPartitionSrc, err)
		}
	}
	src, err := prog.query(ctx, conn, compiler.StmtCheckPartitionSrc, vals)
	if err != nil {
		return err
	}
	tgt, err := prog.query(ctx, conn, compiler.StmtCheckPartitionTgt, vals)
	if err != nil {
		return err
	}
	pr.Source, pr.Target = measuresOf(src), measuresOf(tgt)
	if strings.Join(pr.Source, "|") == strings.Join(pr.Target, "|") {
		return nil
	}
	// The rewrite committed but does not match: say so in its marker, so a
	// resumed backfill redoes it.
	vals["status"], vals["detail"] = PartFailed, fmt.Sprintf("source %v, target %v", pr.Source, pr.Target)
	prog.exec(bg, conn, compiler.StmtDeleteMarker, vals)
	prog.exec(bg, conn, compiler.StmtInsertMarker, vals)
	return fmt.Errorf("%w: source %s, target %s (%s)", ErrMismatch, strings.Join(pr.Source, ", "), strings.Join(pr.Target, ", "), strings.Join(measureNames(r.plan), ", "))
}

// measuresOf reads a one-partition aggregate: count then measures; an
// empty partition has none.
func measuresOf(rows [][]any) []string {
	if len(rows) == 0 {
		return []string{"0"}
	}
	out := make([]string, len(rows[0])-1)
	for i, v := range rows[0][1:] {
		out[i] = Canon(v)
	}
	return out
}
