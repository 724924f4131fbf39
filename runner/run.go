package runner

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/incrc/incrc/compiler"
)

// DefaultLeaseTTL is how long a lease lasts without renewal: long enough
// for a slow statement, short enough that a crashed run's pipeline is not
// stuck for long.
const DefaultLeaseTTL = 5 * time.Minute

// Options are the choices of one run.
type Options struct {
	Until       *time.Time // fixes hi; default now - lag
	FullRefresh bool       // rebuild the target from the whole source below hi
	LeaseTTL    time.Duration
	Owner       string           // who holds the lease; default host:pid:random
	Now         func() time.Time // the clock; default time.Now
	// BeforeStatement, when set, is called before each statement of the
	// run by name; an error fails the run there. Tests inject failures and
	// crashes with it.
	BeforeStatement func(name string) error
}

// Result is what a run did: the row it wrote to the run log.
type Result struct {
	Pipeline        string `json:"pipeline"`
	RunID           string `json:"run_id"`
	Kind            string `json:"kind"`   // run | full_refresh
	Status          string `json:"status"` // succeeded | failed
	WindowLo        string `json:"window_lo,omitempty"`
	WindowHi        string `json:"window_hi"`
	WatermarkBefore string `json:"watermark_before,omitempty"`
	WatermarkAfter  string `json:"watermark_after,omitempty"`
	RowsRead        int64  `json:"rows_read"`
	RowsInserted    int64  `json:"rows_inserted"`
	RowsUpdated     int64  `json:"rows_updated"`
	RowsDeleted     int64  `json:"rows_deleted"`
	RowsQuarantined int64  `json:"rows_quarantined"`
	StartedAt       string `json:"started_at,omitempty"`
	FinishedAt      string `json:"finished_at,omitempty"`
	DurationMS      int64  `json:"duration_ms"`
	Error           string `json:"error,omitempty"`
}

// LockedError says another run holds the pipeline's lease, or (Reason
// set) another process holds the whole target, as DuckDB's one writer.
type LockedError struct {
	Pipeline string
	Owner    string
	Until    string
	Reason   string
}

func (e *LockedError) Error() string {
	if e.Reason != "" {
		return e.Reason
	}
	return fmt.Sprintf("pipeline %s is locked by run %s until %s (wait, or free a dead run's lease with: incrc state --release %s)", e.Pipeline, e.Owner, e.Until, e.Pipeline)
}

// run is the state of one run in progress.
type run struct {
	t      *Target
	prog   *program
	plan   *compiler.Plan
	opts   Options
	conn   *sql.Conn
	res    *Result
	owner  string
	start  time.Time
	renew  time.Time // when the lease was last extended
	vals   params
	locked bool
	parts  []partition // overwrite_partitions: the partitions this run rewrites

	stopHeartbeat func() // ends the heartbeat goroutine; a no-op without one
}

func (o *Options) defaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.Owner == "" {
		o.Owner = NewOwner()
	}
}

// NewOwner names a lease holder: host, process and a random suffix.
func NewOwner() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), randomHex(4))
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Run executes one incremental run (or a full refresh) of a pipeline, in
// the order DESIGN.md gives: setup, lease, watermark, hi fixed once,
// stage, then write + run record + watermark advance in one transaction,
// then release. The returned Result is also what the run log holds; err
// is not nil when the run failed (a *LockedError when another run holds
// the lease, in which case nothing was recorded).
func (t *Target) Run(ctx context.Context, plan *compiler.Plan, opts Options) (*Result, error) {
	opts.defaults()
	prog, conn, err := t.session(ctx, plan)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	kind := "run"
	if opts.FullRefresh {
		kind = "full_refresh"
	}
	r := &run{t: t, prog: prog, plan: plan, opts: opts, conn: conn, owner: opts.Owner, start: opts.Now(),
		res: &Result{Pipeline: plan.Pipeline, RunID: newRunID(opts.Now()), Kind: kind}, stopHeartbeat: func() {}}
	r.vals = params{"pipeline": plan.Pipeline, "owner": r.owner, "run_id": r.res.RunID, "spec_hash": plan.Spec.Hash}
	err = r.run(ctx)
	r.stopHeartbeat()
	if r.locked {
		// The lease is ours from here on: give it back even when the
		// context is cancelled.
		bg := context.WithoutCancel(ctx)
		if err != nil {
			r.fail(bg, err)
		}
		if _, rerr := prog.exec(bg, conn, compiler.StmtReleaseLease, r.vals); rerr != nil && err == nil {
			err = rerr
		}
	}
	return r.res, err
}

func newRunID(now time.Time) string {
	return now.UTC().Format("20060102T150405Z") + "-" + randomHex(4)
}

// step runs the test hook, then the statement.
func (r *run) step(ctx context.Context, q querier, name string) (int64, error) {
	if err := r.hook(name); err != nil {
		return 0, err
	}
	return r.prog.exec(ctx, q, name, r.vals)
}

func (r *run) hook(name string) error {
	if r.opts.BeforeStatement != nil && r.prog.has(name) {
		if err := r.opts.BeforeStatement(name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func (r *run) countStep(ctx context.Context, q querier, name string) (int64, bool, error) {
	if err := r.hook(name); err != nil {
		return 0, false, err
	}
	return r.prog.count(ctx, q, name, r.vals)
}

func (r *run) run(ctx context.Context) error {
	if err := setup(ctx, r.conn, r.prog); err != nil {
		return err
	}
	if err := r.acquire(ctx); err != nil {
		return err
	}
	before, err := r.readWatermark(ctx)
	if err != nil {
		return err
	}
	win, err := r.window(ctx, before)
	if err != nil {
		return err
	}
	r.recordWindow(win)
	if _, err := r.step(ctx, r.conn, compiler.StmtRecordStart); err != nil {
		return err
	}
	if err := r.stage(ctx, win); err != nil {
		return err
	}
	return r.write(ctx, win)
}

// setup runs the plan's idempotent DDL, each statement on its own: on
// engines whose DDL commits implicitly it must precede any transaction.
func setup(ctx context.Context, q querier, prog *program) error {
	for _, st := range prog.plan.Statements {
		if st.Phase != compiler.PhaseSetup {
			continue
		}
		if _, err := prog.exec(ctx, q, st.Name, nil); err != nil {
			// Two runs creating the same table at once can collide in the
			// catalog; the second attempt finds it there.
			if _, err2 := prog.exec(ctx, q, st.Name, nil); err2 != nil {
				return fmt.Errorf("setup: %w", err)
			}
		}
	}
	return nil
}

func (r *run) acquire(ctx context.Context) error {
	now := r.opts.Now()
	// Read first: a held lease is reported at once, without queueing behind
	// the holder's write transaction (SQLite has one writer at a time).
	st, err := r.prog.readState(ctx, r.conn, r.plan.Pipeline)
	if err != nil {
		return err
	}
	if st.LeaseOwner != "" && st.LeaseOwner != r.owner && st.LeaseExpiresAt >= stateTime(now) {
		return &LockedError{Pipeline: r.plan.Pipeline, Owner: st.LeaseOwner, Until: st.LeaseExpiresAt}
	}
	if st.SpecHash == "" && st.Watermark == "" && st.UpdatedAt == "" && st.LeaseOwner == "" {
		// No row yet (or one never used): create it. Once it exists this
		// write is skipped, which an empty window's run notices.
		if _, err := r.step(ctx, r.conn, compiler.StmtInitState); err != nil {
			return err
		}
	}
	r.vals["now"] = stateTime(now)
	r.vals["expires_at"] = stateTime(now.Add(r.opts.LeaseTTL))
	n, err := r.step(ctx, r.conn, compiler.StmtAcquireLease)
	if err != nil {
		return err
	}
	if n != 1 {
		st, err := r.prog.readState(ctx, r.conn, r.plan.Pipeline)
		if err != nil {
			return err
		}
		return &LockedError{Pipeline: r.plan.Pipeline, Owner: st.LeaseOwner, Until: st.LeaseExpiresAt}
	}
	r.locked = true
	r.renew = now
	r.startHeartbeat(ctx)
	// Any run still marked running died: this run holds the lease now.
	_, err = r.step(ctx, r.conn, compiler.StmtAbandonRuns)
	return err
}

// renewLease extends the lease when a third of its time has passed.
func (r *run) renewLease(ctx context.Context) error {
	now := r.opts.Now()
	if now.Sub(r.renew) < r.opts.LeaseTTL/3 {
		return nil
	}
	r.vals["expires_at"] = stateTime(now.Add(r.opts.LeaseTTL))
	n, err := r.prog.exec(ctx, r.conn, compiler.StmtRenewLease, r.vals)
	if err != nil {
		return err
	}
	if n != 1 {
		r.locked = false
		return fmt.Errorf("lease lost: another run took over pipeline %s after this run's lease expired", r.plan.Pipeline)
	}
	r.renew = now
	return nil
}

// startHeartbeat renews the lease from a second connection every third of
// its TTL while the run lives, on engines where that cannot conflict with
// the run's own transaction (Caps.Heartbeat). A failed renewal is not
// fatal here: the advance's compare-and-set on the lease owner is what
// keeps a run that lost its lease from committing.
func (r *run) startHeartbeat(ctx context.Context) {
	r.stopHeartbeat = func() {}
	if !r.t.Dialect.Caps().Heartbeat {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	r.stopHeartbeat = func() { cancel(); <-done }
	vals := params{"pipeline": r.plan.Pipeline, "owner": r.owner}
	go func() {
		defer close(done)
		tick := time.NewTicker(max(r.opts.LeaseTTL/3, 10*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				vals["expires_at"] = stateTime(r.opts.Now().Add(r.opts.LeaseTTL))
				r.prog.exec(ctx, r.t.DB, compiler.StmtRenewLease, vals)
			}
		}
	}()
}

func (r *run) readWatermark(ctx context.Context) (*mark, error) {
	st, err := r.prog.readState(ctx, r.conn, r.plan.Pipeline)
	if err != nil {
		return nil, err
	}
	if st.Watermark == "" {
		r.vals["expected"] = nil
		return nil, nil
	}
	r.vals["expected"] = st.Watermark
	r.res.WatermarkBefore = st.Watermark
	if r.plan.Watermark == nil {
		return nil, nil
	}
	m, err := parseMark(r.plan.Watermark.Type, st.Watermark)
	if err != nil {
		return nil, fmt.Errorf("saved watermark %q of %s: %w", st.Watermark, r.plan.Pipeline, err)
	}
	return &m, nil
}

// window fixes [lo, hi) once for the run.
func (r *run) window(ctx context.Context, before *mark) (window, error) {
	p, s := r.plan, r.plan.Spec
	if p.Watermark == nil {
		now := r.opts.Now()
		if r.opts.Until != nil {
			now = *r.opts.Until
		}
		return window{hi: mark{t: now.UTC()}, previous: before}, nil
	}
	wt := p.Watermark.Type
	start, err := parseMark(wt, s.Watermark.Start.Value)
	if err != nil {
		return window{}, err
	}
	r.vals["start"] = r.prog.bindMark(start, wt.Kind)
	var hi mark
	if wt.IsInteger() {
		if r.opts.Until != nil {
			return window{}, fmt.Errorf("--until does not apply to %s: its watermark %s is an integer, and a run reads up to the largest id present", p.Pipeline, p.Watermark.Name)
		}
		max, ok, err := r.countStep(ctx, r.conn, compiler.StmtSourceMax)
		if err != nil {
			return window{}, err
		}
		hi = mark{isInt: true}
		if ok {
			hi.n = max + 1
		} else if before != nil {
			hi = *before
		}
	} else {
		hi = upperBound(wt, r.opts.Until, r.opts.Now(), s.Watermark.Lag.Value)
	}
	if before != nil && hi.less(*before) {
		if r.opts.Until != nil {
			return window{}, fmt.Errorf("--until %s is before the saved watermark %s of %s: the watermark never moves backwards (a backfill rebuilds the past)", hi, before, p.Pipeline)
		}
		// The clock (minus the lag) is behind a watermark set with --until:
		// nothing to read yet.
		hi = *before
	}
	if before == nil && hi.less(start) {
		// Nothing before watermark.start is ever read, so the first
		// watermark is never below it.
		if r.opts.Until != nil {
			return window{}, fmt.Errorf("--until %s is before watermark.start %s of %s: nothing before start is ever read", hi, start, p.Pipeline)
		}
		hi = start
	}
	w := window{hi: hi, previous: before}
	if r.opts.FullRefresh {
		return w, nil
	}
	from := start
	if before != nil {
		from = *before
	}
	var finalize time.Duration
	if s.Partition != nil {
		finalize = s.Partition.FinalizeAfter.Value
	}
	w.lo, w.hasLo = lowerBound(from, s.Watermark.Lookback, finalize, hi), true
	if w.lo.less(start) {
		w.lo = start // a lookback never reaches before the configured start
	}
	if hi.less(w.lo) {
		w.lo = hi
	}
	return w, nil
}

func (r *run) recordWindow(w window) {
	kind := compiler.Timestamp
	if r.plan.Watermark != nil {
		kind = r.plan.Watermark.Type.Kind
	}
	r.res.WindowHi = w.hi.String()
	r.vals["hi"] = r.prog.bindMark(w.hi, kind)
	r.vals["window_hi"] = w.hi.String()
	r.vals["window_lo"] = nil
	if w.hasLo {
		r.res.WindowLo = w.lo.String()
		r.vals["lo"] = r.prog.bindMark(w.lo, kind)
		r.vals["window_lo"] = w.lo.String()
	}
	r.vals["kind"] = r.res.Kind
	r.vals["status"] = "running"
	r.vals["watermark_before"] = nullable(r.res.WatermarkBefore)
	r.vals["started_at"] = stateTime(r.start)
}

func (r *run) stage(ctx context.Context, w window) error {
	if err := r.renewLease(ctx); err != nil {
		return err
	}
	if r.plan.Watermark != nil && w.hasLo && !w.lo.less(w.hi) && !r.opts.FullRefresh {
		return nil // an empty window reads nothing: the write is skipped, the run recorded
	}
	if r.plan.Strategy == compiler.OverwritePartitions && !r.opts.FullRefresh {
		return r.stagePartitions(ctx, w)
	}
	stageName := compiler.StmtStageWindow
	if r.opts.FullRefresh {
		stageName = compiler.StmtStageAll
	}
	for _, name := range []string{compiler.StmtDropStage, compiler.StmtCreateStage, compiler.StmtDropRaw, compiler.StmtCreateRaw} {
		if _, err := r.step(ctx, r.conn, name); err != nil {
			return err
		}
	}
	// The source is read once; what that statement inserted is rows read.
	read, err := r.step(ctx, r.conn, stageName)
	if err != nil {
		return err
	}
	r.res.RowsRead = read
	if read == 0 && !r.opts.FullRefresh {
		return nil
	}
	_, err = r.step(ctx, r.conn, compiler.StmtDedupeStage)
	return err
}

// stagePartitions stages, for overwrite_partitions, every partition the
// window's rows fall in, whole: the late row and every row already in its
// partition.
func (r *run) stagePartitions(ctx context.Context, w window) error {
	var err error
	if r.parts, r.res.RowsRead, err = r.touchedPartitions(ctx, w); err != nil {
		return err
	}
	if len(r.parts) == 0 {
		return nil
	}
	for _, name := range []string{compiler.StmtDropStage, compiler.StmtCreateStage} {
		if _, err := r.step(ctx, r.conn, name); err != nil {
			return err
		}
	}
	for _, pt := range r.parts {
		r.prog.bindPartition(r.vals, pt)
		if _, err := r.step(ctx, r.conn, compiler.StmtStagePartition); err != nil {
			return fmt.Errorf("partition %s: %w", pt.Key(r.plan.Partition.Granularity), err)
		}
	}
	return nil
}

func (r *run) write(ctx context.Context, w window) error {
	if err := r.renewLease(ctx); err != nil {
		return err
	}
	staged := r.res.RowsRead > 0 && (len(r.parts) > 0 || r.plan.Strategy != compiler.OverwritePartitions) || r.opts.FullRefresh
	tx, err := r.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if staged {
		if err := r.writeRows(ctx, tx); err != nil {
			return err
		}
	}
	// The watermark advances to hi, never backwards; an empty window that
	// does not move it still records the run.
	after := w.hi
	if w.previous != nil && after.less(*w.previous) {
		after = *w.previous
	}
	r.res.WatermarkAfter = after.String()
	r.vals["watermark"] = after.String()
	r.vals["now"] = stateTime(r.opts.Now())
	n, err := r.step(ctx, tx, compiler.StmtAdvance)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("advance_watermark: the watermark of %s changed under this run, or its lease was lost: nothing committed", r.plan.Pipeline)
	}
	r.finish("succeeded", "")
	if _, err := r.step(ctx, tx, compiler.StmtRecordFinish); err != nil {
		return err
	}
	if err := r.hook("commit"); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if staged {
		r.dropStaging(ctx)
	}
	return nil
}

// writeRows applies the quality split and writes the staged rows, inside
// the run's transaction.
func (r *run) writeRows(ctx context.Context, tx *sql.Tx) error {
	var err error
	if r.prog.has(compiler.StmtCountInvalid) {
		invalid, _, err := r.countStep(ctx, tx, compiler.StmtCountInvalid)
		if err != nil {
			return err
		}
		if invalid > 0 && !r.prog.has(compiler.StmtQuarantine) {
			return fmt.Errorf("%d staged row(s) break quality rules and on_invalid is fail (a NULL unique key counts): nothing written", invalid)
		}
		if _, err := r.step(ctx, tx, compiler.StmtQuarantine); err != nil {
			return err
		}
		r.res.RowsQuarantined = invalid
		if invalid > 0 && !r.opts.FullRefresh {
			if r.res.RowsDeleted, err = r.step(ctx, tx, compiler.StmtRetractInvalid); err != nil {
				return err
			}
		}
		if _, err := r.step(ctx, tx, compiler.StmtDeleteInvalid); err != nil {
			return err
		}
	}
	staged, _, err := r.countStep(ctx, tx, compiler.StmtCountStaged)
	if err != nil {
		return err
	}
	if r.opts.FullRefresh {
		if r.res.RowsDeleted, err = r.step(ctx, tx, compiler.StmtClearTarget); err != nil {
			return err
		}
		r.res.RowsInserted = staged
		_, err = r.step(ctx, tx, compiler.StmtInsertAll)
		return err
	}
	if r.plan.Strategy == compiler.OverwritePartitions {
		for _, pt := range r.parts {
			r.prog.bindPartition(r.vals, pt)
			if err := r.hook(compiler.StmtReplacePartition); err != nil {
				return err
			}
			n, err := r.prog.execParts(ctx, tx, compiler.StmtReplacePartition, r.vals)
			if err != nil {
				return err
			}
			if len(n) > 1 {
				r.res.RowsDeleted += n[0] // DELETE then INSERT: the first part deleted
			}
		}
		r.res.RowsInserted = staged
		return nil
	}
	var matched int64
	if r.prog.has(compiler.StmtCountMatched) {
		if matched, _, err = r.countStep(ctx, tx, compiler.StmtCountMatched); err != nil {
			return err
		}
	}
	r.res.RowsUpdated, r.res.RowsInserted = matched, staged-matched
	_, err = r.step(ctx, tx, compiler.StmtWrite)
	return err
}

func (r *run) finish(status, errText string) {
	r.res.Status = status
	r.res.Error = errText
	r.res.DurationMS = r.opts.Now().Sub(r.start).Milliseconds()
	r.res.StartedAt, r.res.FinishedAt = stateTime(r.start), stateTime(r.opts.Now())
	for k, v := range map[string]any{
		"status": status, "watermark_after": nullable(r.res.WatermarkAfter), "error": nullable(errText),
		"rows_read": r.res.RowsRead, "rows_inserted": r.res.RowsInserted, "rows_updated": r.res.RowsUpdated,
		"rows_deleted": r.res.RowsDeleted, "rows_quarantined": r.res.RowsQuarantined,
		"finished_at": stateTime(r.opts.Now()), "duration_ms": r.res.DurationMS,
	} {
		r.vals[k] = v
	}
}

// fail records a failed run after its transaction rolled back: the counts
// are what it saw, the watermark did not move.
func (r *run) fail(ctx context.Context, cause error) {
	r.res.WatermarkAfter = r.res.WatermarkBefore
	r.res.RowsInserted, r.res.RowsUpdated, r.res.RowsDeleted, r.res.RowsQuarantined = 0, 0, 0, 0
	r.finish("failed", cause.Error())
	if _, ok := r.vals["started_at"]; !ok {
		return // failed before the run's row existed
	}
	var locked *LockedError
	if errors.As(cause, &locked) {
		return
	}
	r.prog.exec(ctx, r.conn, compiler.StmtRecordFinish, r.vals)
	r.dropStaging(ctx)
}

// dropStaging drops the run's session tables: a pooled connection outlives
// the run. Errors are ignored: the next run drops them first anyway.
func (r *run) dropStaging(ctx context.Context) {
	r.prog.exec(ctx, r.conn, compiler.StmtDropStage, r.vals)
	r.prog.exec(ctx, r.conn, compiler.StmtDropRaw, r.vals)
}
