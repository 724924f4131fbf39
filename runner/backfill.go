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

	"github.com/incrc/incrc/compiler/ir"
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
	// Stale rebuilds only the partitions built with another logic than the
	// spec's (Target.Stale); without From and To, all of them.
	Stale    bool
	Restate  bool // allow finalized partitions
	DryRun   bool // decide the partitions, change nothing
	LeaseTTL time.Duration
	Owner    string
	Now      func() time.Time
	// BeforeStatement is called before each statement (tests inject
	// failures with it); Progress after each partition.
	BeforeStatement func(partition, statement string) error
	Progress        func(done, total int, p PartitionResult)
	// Unreviewed is as Options.Unreviewed: the run log's note records it.
	Unreviewed string
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
	// Note says why the backfill ran otherwise than asked: one partition
	// at a time where --parallel asked for more.
	Note string `json:"note,omitempty"`
}

// ErrMismatch is returned (wrapped) when a rebuilt partition does not
// match the source: the backfill stopped there.
var ErrMismatch = errors.New("rebuilt partition does not match the source")

// BackfillID names a backfill: the pipeline, the range and the spec. The
// same backfill run again resumes; a changed spec starts afresh.
func BackfillID(plan *ir.Plan, from, to time.Time) string {
	sum := sha256.Sum256([]byte(plan.Pipeline + "|" + from.UTC().Format(time.RFC3339) + "|" + to.UTC().Format(time.RFC3339) + "|" + plan.SpecHash))
	return hex.EncodeToString(sum[:8])
}

// Backfill rebuilds the partitions of [From, To) oldest first, each by
// the plan's backfill program (overwrite from the source with the current
// spec, in its own transaction with its completion marker, then checked
// against the source), at most Parallel at a time. It stops at the first
// mismatch. It holds the pipeline's lease, records itself in the run log,
// and never moves the watermark.
func (t *Target) Backfill(ctx context.Context, plan *ir.Plan, o BackfillOptions) (*BackfillResult, error) {
	if plan.Partition == nil {
		return nil, fmt.Errorf("%s: pipeline %s has no partition section: a backfill rebuilds partitions (partition: {column: COLUMN, granularity: day})", plan.File, plan.Pipeline)
	}
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	var note string
	if o.Parallel > 1 && t.Dialect.Caps().SharedStage {
		// Each partition's rebuild drops, fills and reads the pipeline's
		// one stage table: at once, they would overwrite each other's rows.
		note = fmt.Sprintf("--parallel %d: partitions rebuilt one at a time: on %s the stage is one table of the pipeline that every session sees", o.Parallel, t.Dialect.Name())
		o.Parallel = 1
	}
	opts := Options{LeaseTTL: o.LeaseTTL, Owner: o.Owner, Now: o.Now}
	opts.defaults()
	c, conn, err := t.session(ctx, plan)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	defer c.release()
	if err := checkTables(ctx, c, conn); err != nil {
		return nil, err
	}
	var only map[string]bool
	if o.Stale {
		if err := newMachine(c, conn, params{}).walk(ctx, plan.StateSetup()); err != nil {
			return nil, err
		}
		keys, err := staleOn(ctx, c, conn)
		if err != nil {
			return nil, fmt.Errorf("the stale partitions of %s: %w", plan.Pipeline, err)
		}
		if len(keys) == 0 {
			return &BackfillResult{Pipeline: plan.Pipeline, Partitions: []PartitionResult{}, Measures: measureNames(plan)}, nil
		}
		only = map[string]bool{}
		for _, k := range keys {
			only[k] = true
		}
		if o.From.IsZero() && o.To.IsZero() {
			first, _ := keyStart(plan, keys[0])
			last, _ := keyStart(plan, keys[len(keys)-1])
			g := grainOf(plan.Partition)
			o.From, o.To = partitionStart(first, g), nextPartition(partitionStart(last, g), g)
		}
	}
	o.From, o.To = localBound(plan, o.From), localBound(plan, o.To)
	if !o.From.Before(o.To) {
		return nil, fmt.Errorf("--from must be before --to: the range is [from, to)")
	}
	pr, err := c.program(ir.ModeBackfill)
	if err != nil {
		return nil, err
	}
	res := &BackfillResult{Pipeline: plan.Pipeline, BackfillID: BackfillID(plan, o.From, o.To),
		From: o.From.UTC().Format(time.RFC3339), To: o.To.UTC().Format(time.RFC3339), Measures: measureNames(plan), Note: note}
	b := &backfill{t: t, c: c, conn: conn, pr: pr, o: o, opts: opts, res: res, start: opts.Now(), only: only,
		vals: params{"pipeline": plan.Pipeline, "owner": opts.Owner, "run_id": newRunID(opts.Now()), "spec_hash": plan.SpecHash, "logic_hash": plan.LogicHash,
			"backfill_id": res.BackfillID, "kind": "backfill", "status": "succeeded", "note": nil, "error": nil}}
	if o.Unreviewed != "" {
		b.vals["note"] = o.Unreviewed
	}
	if o.DryRun {
		return res, b.decide(ctx)
	}
	if _, err := setup(ctx, c, conn); err != nil {
		return nil, err
	}
	hook := func(name string) error {
		if o.BeforeStatement != nil {
			return o.BeforeStatement("", name)
		}
		return nil
	}
	l, err := t.acquire(ctx, conn, c, b.vals, opts.LeaseTTL, opts.Now, hook, opts.generated)
	if err != nil {
		return nil, err
	}
	// The partitions' transactions never touch the state row: the ticker
	// renews the lease on every engine while workers rebuild.
	l.keep(ctx)
	defer l.release(ctx, conn)
	if err := b.decide(ctx); err != nil {
		return res, err
	}
	b.vals["window_lo"], b.vals["window_hi"] = res.From, res.To
	b.vals["started_at"] = stateTime(b.start)
	b.vals["watermark_before"] = nullable(res.Watermark)
	b.vals["watermark_after"] = nullable(res.Watermark)
	if err := c.run(ctx, conn, ir.StmtRecordStart, b.vals); err != nil {
		return res, err
	}
	err = b.rebuild(ctx)
	b.record(ctx, err)
	return res, err
}

// backfill is one backfill in progress.
type backfill struct {
	t     *Target
	c     *compiled
	conn  *sql.Conn
	pr    *ir.Program
	o     BackfillOptions
	opts  Options
	res   *BackfillResult
	vals  params // shared by every partition: each worker binds its own copy
	start time.Time
	// only, when set, are the partitions to rebuild (--stale); the others
	// of the range are left as they are.
	only map[string]bool
}

// record closes the backfill's row in the run log: the rows it rebuilt,
// the watermark it found (and left).
func (b *backfill) record(ctx context.Context, err error) {
	for _, reg := range ir.Counters {
		b.vals[reg] = int64(0)
	}
	for _, p := range b.res.Partitions {
		if p.Status == PartRebuilt {
			b.vals[ir.RegInserted] = b.vals[ir.RegInserted].(int64) + p.Rows
			b.vals[ir.RegRead] = b.vals[ir.RegRead].(int64) + p.Rows
		}
	}
	if err != nil {
		b.vals["status"], b.vals["error"] = "failed", b.t.scrub.Scrub(err.Error())
		if ctx.Err() != nil {
			b.vals["status"] = StatusCancelled
		}
	}
	b.vals["finished_at"] = stateTime(b.opts.Now())
	b.vals["duration_ms"] = b.opts.Now().Sub(b.start).Milliseconds()
	b.t.onLiveConn(ctx, b.conn, func(ctx context.Context, q querier) error {
		return b.c.run(ctx, q, ir.StmtRecordFinish, b.vals)
	})
}

// decide fixes the window, the partitions and what happens to each:
// finalized, done by an earlier attempt, ok (not drifted), or pending a
// rebuild.
func (b *backfill) decide(ctx context.Context) error {
	plan, c, o, res := b.c.plan, b.c, b.o, b.res
	g := grainOf(plan.Partition)
	st, err := readState(ctx, c, b.conn, plan.Pipeline)
	if err != nil && !o.DryRun {
		return err
	}
	var saved *mark
	if st != nil {
		res.Watermark = st.Watermark
		if saved, err = parseSaved(plan, st.Watermark); err != nil {
			return err
		}
	}
	m := newMachine(c, b.conn, b.vals)
	if _, err := fixWindow(ctx, m, b.pr, saved, bounds{now: b.opts.Now()}); err != nil {
		return err
	}
	// Partitions finalize relative to the pipeline's own clock, its
	// watermark, so a pipeline replaying the past sees the same rule.
	var finalBound time.Time
	if fa := plan.Partition.FinalizeAfter; fa.Value > 0 {
		ref := b.opts.Now()
		if saved != nil && !saved.isInt {
			ref = saved.t
		}
		finalBound = partitionStart(ref.Add(-fa.Value), g)
	}
	if o.Restart && !o.DryRun {
		if err := c.run(ctx, b.conn, ir.StmtClearMarkers, b.vals); err != nil {
			return err
		}
	}
	done := map[string]bool{}
	if rows, err := c.query(ctx, b.conn, ir.StmtReadMarkers, b.vals); err == nil && !o.Restart {
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
		rec, err := b.t.Reconcile(ctx, plan, o.From, o.To)
		if err != nil {
			return err
		}
		drifted = map[string]bool{}
		for _, k := range rec.Drifted {
			if tm, err := keyStart(plan, k); err == nil {
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
		case b.only != nil && !b.only[pr.Key]:
			pr.Status = PartOK // built with the spec's logic: left as it is
		}
		res.Partitions = append(res.Partitions, pr)
	}
	if len(finalized) > 0 && !o.DryRun {
		return fmt.Errorf("%d partition(s) are finalized (older than finalize_after %s before the watermark): %s; rebuilding them needs --restate",
			len(finalized), plan.Partition.FinalizeAfter.Text, rangeText(finalized))
	}
	return nil
}

func rangeText(keys []string) string {
	if len(keys) == 1 {
		return keys[0]
	}
	return keys[0] + " .. " + keys[len(keys)-1]
}

// rebuild runs the pending partitions, oldest first, Parallel at a time,
// each on a connection of its own.
func (b *backfill) rebuild(ctx context.Context) error {
	res, o := b.res, b.o
	g := grainOf(b.c.plan.Partition)
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
	worker := func() error {
		conn, err := b.t.DB.Conn(ctx)
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
			start, _ := keyStart(b.c.plan, strings.Replace(pr.Key, "T", " ", 1)+map[string]string{"hour": ":00:00", "month": "-01", "day": ""}[g.unit])
			err := b.rebuildOne(ctx, conn, makePartition(start, g), pr)
			mu.Lock()
			done++
			if err != nil {
				pr.Status = PartFailed
				pr.Error = b.t.scrub.Scrub(err.Error())
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

// rebuildOne walks the backfill program for one partition, then compares
// what its checks read: the source's count and measures against the
// target's.
func (b *backfill) rebuildOne(ctx context.Context, conn *sql.Conn, p partition, pr *PartitionResult) error {
	c := b.c
	if c.plan.From != nil {
		// Partitions rebuild in parallel: each reads the source on a
		// connection of its own.
		own := *c
		own.srcConn = nil
		c = &own
		defer c.release()
	}
	vals := params{}
	for k, v := range b.vals {
		vals[k] = v
	}
	for _, reg := range ir.Counters {
		vals[reg] = int64(0)
	}
	bindPartition(c, vals, p)
	vals["marker_status"], vals["detail"], vals["updated_at"] = PartDone, nil, stateTime(b.opts.Now())
	m := newMachine(c, conn, vals)
	if b.o.BeforeStatement != nil {
		m.hook = func(name string) error { return b.o.BeforeStatement(pr.Key, name) }
	}
	err := m.walk(ctx, b.pr)
	pr.Rows = m.reg(ir.RegWritten)
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	for _, name := range b.pr.Cleanup {
		c.exec(bg, conn, name, vals)
	}
	if err != nil {
		return err
	}
	ms := c.plan.Measures
	pr.Source, pr.Target = measuresOf(ms, m.rows[ir.RegSource]), measuresOf(ms, m.rows[ir.RegTarget])
	if strings.Join(pr.Source, "|") == strings.Join(pr.Target, "|") {
		return nil
	}
	// The rewrite committed but does not match: say so in its marker, so a
	// resumed backfill redoes it.
	vals["marker_status"], vals["detail"] = PartFailed, fmt.Sprintf("source %v, target %v", pr.Source, pr.Target)
	c.exec(bg, conn, ir.StmtDeleteMarker, vals)
	c.exec(bg, conn, ir.StmtInsertMarker, vals)
	return fmt.Errorf("%w: source %s, target %s (%s)", ErrMismatch, strings.Join(pr.Source, ", "), strings.Join(pr.Target, ", "), strings.Join(b.res.Measures, ", "))
}

// measuresOf reads a one-partition aggregate: count then measures; an
// empty partition has none. A partition of a time zone comes as its UTC
// hours, folded into one.
func measuresOf(ms []ir.Measure, rows [][]any) []string {
	if len(rows) == 0 {
		return []string{"0"}
	}
	var out []string
	for _, row := range rows {
		vals := make([]string, len(row)-1)
		for i, v := range row[1:] {
			vals[i] = Canon(v)
		}
		if out != nil {
			vals = foldMeasures(ms, out, vals)
		}
		out = vals
	}
	return out
}
