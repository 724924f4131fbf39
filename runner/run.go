package runner

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"
)

// Options are the choices of one run.
type Options struct {
	Until       *time.Time // fixes hi; default now - lag
	AllowFuture bool       // accept an Until later than now (plus ClockSkew)
	FullRefresh bool       // run the full_refresh program: rebuild the target from the whole source below hi
	// Force runs a program that says it must be forced (ir.Program.Force):
	// the user read why and means it.
	Force    bool
	LeaseTTL time.Duration
	Owner    string           // who holds the lease; default host:pid:random
	Now      func() time.Time // the clock; default time.Now
	// Since, when set and before Now, is when the run began: the process
	// opened the target for it (incrc run counts the open in its first
	// pipeline's run, in its first batch), so that the run log's
	// started_at and duration are what a scheduler saw.
	Since time.Time
	// ReloadRewritten: a files source loaded by file loads again the files
	// rewritten in place since they were loaded (by default they are
	// reported and left alone).
	ReloadRewritten bool
	// BeforeStatement, when set, is called before each statement of the
	// run by name (and before "commit"); an error fails the run there.
	// Tests inject failures and crashes with it.
	BeforeStatement func(name string) error
	// Progress, when set, is called before each statement of the run with
	// how far it got: for a progress line on a terminal.
	Progress func(Progress)
	// Unreviewed, when set, says why the SQL of this run is not the
	// compiled file checked in (--allow-unreviewed, or no file): the run
	// log's note records it.
	Unreviewed string
	// generated: Owner is incrc's own name (NewOwner), not the caller's.
	generated bool
	// OnBatch, when set, is called after each batch of a run whose
	// watermark has a batch (watermark.batch), committed or failed, with
	// its number (from 1) and its result: the progress of a catch-up.
	OnBatch func(n int, batch *Result)
	// ticks, when set, drive the lease's heartbeat instead of a ticker on
	// real time: a test moves Now and ticks, and waits for nothing.
	ticks <-chan time.Time
}

// Progress is how far a run has got, before its next statement.
type Progress struct {
	Pipeline  string
	Statement string // the statement about to run
	RowsRead  int64
	// Partitions is how many the run rewrites (overwrite_partitions),
	// PartitionsDone how many of them it has staged or written so far.
	Partitions, PartitionsDone int
	Elapsed                    time.Duration // on the run's clock (Options.Now)
}

// StatusCancelled is the status in the run log of a run whose context was
// cancelled (incrc got SIGTERM, SIGINT or SIGHUP): rolled back as a failed
// run is, its lease freed.
const StatusCancelled = "cancelled"

// Result is what a run did: the row it wrote to the run log.
type Result struct {
	Pipeline        string `json:"pipeline"`
	RunID           string `json:"run_id"`
	Kind            string `json:"kind"`   // run | full_refresh | backfill | rewind
	Status          string `json:"status"` // succeeded | failed | cancelled
	WindowLo        string `json:"window_lo,omitempty"`
	WindowHi        string `json:"window_hi,omitempty"`
	WatermarkBefore string `json:"watermark_before,omitempty"`
	WatermarkAfter  string `json:"watermark_after,omitempty"`
	RowsRead        int64  `json:"rows_read"`
	RowsInserted    int64  `json:"rows_inserted"`
	RowsUpdated     int64  `json:"rows_updated"`
	RowsDeleted     int64  `json:"rows_deleted"`
	RowsQuarantined int64  `json:"rows_quarantined"`
	// RowsSkipped are rows of the window that no run writes: late rows of
	// finalized partitions (a backfill with --restate rewrites those).
	RowsSkipped int64 `json:"rows_skipped"`
	// RowsIgnored are changes of a change log (strategy cdc) that a newer
	// change of their key supersedes: already applied (a rerun, a
	// lookback), arriving after a newer one, or followed by a newer one in
	// the same window.
	RowsIgnored int64  `json:"rows_ignored"`
	StartedAt   string `json:"started_at,omitempty"`
	FinishedAt  string `json:"finished_at,omitempty"`
	DurationMS  int64  `json:"duration_ms"`
	Error       string `json:"error,omitempty"`
	Note        string `json:"note,omitempty"`
	// HeldBy names the upstream pipeline whose watermark held hi back
	// from HeldFrom (now minus the lag, or --until): the window covers
	// only what the upstream has finished writing.
	HeldBy   string `json:"held_by,omitempty"`
	HeldFrom string `json:"held_from,omitempty"`
	// Schema lists what the run changed in its tables before it wrote:
	// columns added (their old rows NULL until a backfill or a full
	// refresh fills them), types widened.
	Schema []SchemaChange `json:"schema,omitempty"`
	// Batches are the runs of a run cut into batches (watermark.batch),
	// oldest first, each one row of the run log; the Result itself then
	// sums them: the window from the first's lo to the last's hi, the
	// counts added, the watermark before the first and after the last.
	Batches []*Result `json:"batches,omitempty"`
	// Started is false when the run failed before it fixed its window (it
	// was refused, or could not take the lease or read the state).
	Started bool `json:"-"`
}

func (o *Options) defaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.Owner == "" {
		o.Owner, o.generated = NewOwner(), true
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

func newRunID(now time.Time) string {
	return now.UTC().Format("20060102T150405Z") + "-" + randomHex(4)
}

// Run executes one run of a pipeline: the plan's run program, or its
// full_refresh program. Setup, lease, the window fixed once, then the
// program's steps (the write, the run record and the watermark advance in
// one transaction), then its cleanup and the lease's release. The Result
// is also what the run log holds; err is not nil when the run failed (a
// *LockedError when another run holds the lease: nothing was recorded).
//
// A pipeline whose watermark has a batch runs one such run per batch,
// oldest first, until a batch reaches the run's hi: each commits its
// write and its advance alone, so a run stopped between batches keeps
// every batch before it, and the next run goes on from there. The
// statements are the same for every batch; only the window's bounds
// differ. A full refresh is never cut.
func (t *Target) Run(ctx context.Context, plan *ir.Plan, opts Options) (*Result, error) {
	opts.defaults()
	if opts.FullRefresh || plan.Watermark == nil || !plan.Watermark.Batch.Set() {
		res, _, err := t.runOnce(ctx, plan, opts, false)
		return res, err
	}
	var total *Result
	for n := 1; ; n++ {
		res, more, err := t.runOnce(ctx, plan, opts, true)
		opts.Since = time.Time{} // the open was the first batch's
		if res != nil && res.Started {
			total = addBatch(total, res)
			if opts.OnBatch != nil {
				opts.OnBatch(n, res)
			}
		}
		switch {
		case err != nil && total == nil:
			return res, err
		case err != nil:
			return total, err
		case !more:
			return total, nil
		case ctx.Err() != nil:
			return total, ctx.Err()
		}
	}
}

// addBatch adds a batch's result to the run's (nil before the first).
func addBatch(total, b *Result) *Result {
	if total == nil {
		t := *b
		t.Batches = nil
		total = &t
	} else {
		total.RunID, total.Status, total.Error, total.Note = b.RunID, b.Status, b.Error, b.Note
		total.WindowHi, total.WatermarkAfter, total.FinishedAt = b.WindowHi, b.WatermarkAfter, b.FinishedAt
		total.HeldBy, total.HeldFrom = b.HeldBy, b.HeldFrom
		total.RowsRead += b.RowsRead
		total.RowsInserted += b.RowsInserted
		total.RowsUpdated += b.RowsUpdated
		total.RowsDeleted += b.RowsDeleted
		total.RowsQuarantined += b.RowsQuarantined
		total.RowsSkipped += b.RowsSkipped
		total.RowsIgnored += b.RowsIgnored
		total.DurationMS += b.DurationMS
		total.Schema = append(total.Schema, b.Schema...)
	}
	total.Batches = append(total.Batches, b)
	return total
}

// runOnce is one run: with batch, its hi is cut at the end of the batch
// its window starts in.
func (t *Target) runOnce(ctx context.Context, plan *ir.Plan, opts Options, batch bool) (res *Result, more bool, err error) {
	mode := ir.ModeRun
	if opts.FullRefresh {
		mode = ir.ModeFullRefresh
	}
	c, conn, err := t.session(ctx, plan)
	if err != nil {
		return nil, false, err
	}
	defer conn.Close()
	defer c.release()
	pr, err := c.program(mode)
	if err != nil {
		return nil, false, err
	}
	if err := checkTables(ctx, c, conn); err != nil {
		return nil, false, err
	}
	if pr.Force != "" && !opts.Force {
		return nil, false, fmt.Errorf("pipeline %s: %s refused: %s; pass --force if that is what you want", plan.Pipeline, modeWords(mode), pr.Force)
	}
	if err := targetKept(ctx, c, conn, pr); err != nil {
		return nil, false, err
	}
	r := t.newRecorder(c, conn, pr, opts)
	err = r.run(ctx, func(m *machine) (window, error) {
		saved, err := savedMark(ctx, c, m.q(), r.res)
		if err != nil {
			return window{}, err
		}
		r.vals["expected"] = r.res.WatermarkBefore // "" before the first run, as the advance compares
		return fixWindow(ctx, m, pr, saved, bounds{now: opts.Now(), until: opts.Until, allowFuture: opts.AllowFuture, batch: batch})
	})
	return r.res, r.more, err
}

// modeWords names a mode for a message.
func modeWords(m ir.Mode) string {
	if m == ir.ModeFullRefresh {
		return "--full-refresh"
	}
	return string(m)
}

// recorder runs a program that holds the lease and records itself in the
// run log: a run, a full refresh, a rewind.
type recorder struct {
	t    *Target
	c    *compiled
	conn *sql.Conn
	pr   *ir.Program
	opts Options
	vals params
	res  *Result
	// concurrent: the lease is renewed by its ticker while steps run, on
	// engines where a second session may update the state row while the
	// program's transaction is open (dialects.Caps.Heartbeat). Elsewhere
	// (DuckDB's optimistic concurrency would abort the program's own
	// advance, SQLite has one writer) it is renewed between steps.
	concurrent bool
	start      time.Time
	// more: the window's hi was the end of a batch, and another follows.
	more bool
}

func (t *Target) newRecorder(c *compiled, conn *sql.Conn, pr *ir.Program, opts Options) *recorder {
	start := opts.Now()
	if !opts.Since.IsZero() && opts.Since.Before(start) {
		start = opts.Since
	}
	res := &Result{Pipeline: c.plan.Pipeline, RunID: newRunID(start), Kind: pr.Record}
	vals := params{"pipeline": c.plan.Pipeline, "owner": opts.Owner, "run_id": res.RunID, "spec_hash": c.plan.SpecHash, "logic_hash": c.plan.LogicHash,
		"kind": pr.Record, "status": "succeeded", "started_at": stateTime(start), "note": nil, "error": nil}
	if opts.Unreviewed != "" {
		vals["note"] = opts.Unreviewed
	}
	for _, reg := range ir.Counters {
		vals[reg] = int64(0)
	}
	return &recorder{t: t, c: c, conn: conn, pr: pr, opts: opts, vals: vals, res: res, concurrent: t.Dialect.Caps().Heartbeat, start: start}
}

// run sets up, takes the lease, fixes the window with fix, walks the
// program, and records and releases whatever happened.
func (r *recorder) run(ctx context.Context, fix func(*machine) (window, error)) (err error) {
	// A server that stops answering cancels the run (watchPeer), which
	// then fails and is recorded as any failed run is.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer func() {
		if dp := deadPeer(ctx); dp != nil && err != nil {
			err = fmt.Errorf("%w (%v)", dp, err)
		}
	}()
	m := newMachine(r.c, r.conn, r.vals)
	m.hook = r.opts.BeforeStatement
	m.reloadRewritten = r.opts.ReloadRewritten
	var planned map[string][]SchemaChange
	if r.pr.Setup {
		// Every table first, outside any transaction, changing nothing.
		var err error
		if planned, err = planSchema(ctx, r.c, r.conn); err != nil {
			return err
		}
	}
	if r.t.Dialect.Caps().GroupState {
		// One transaction for the setup, the lease and the run's start:
		// the first step that is not bookkeeping commits it.
		tx, err := r.conn.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		m.stateTx = tx
	}
	if r.pr.Setup {
		changes, err := setupWith(ctx, r.c, r.conn, schemaRun, planned, m)
		if err != nil {
			return err
		}
		r.res.Schema = changes
		if note := schemaNote(changes); note != "" {
			if prev, _ := r.vals["note"].(string); prev != "" {
				note = prev + "; " + note
			}
			r.vals["note"] = note
		}
	}
	l, err := r.t.acquire(ctx, m.q(), r.c, r.vals, r.opts.LeaseTTL, r.opts.Now, r.opts.BeforeStatement, r.opts.generated)
	if err != nil {
		if m.stateTx != nil {
			m.stateTx.Rollback()
		}
		return err
	}
	if r.concurrent {
		l.ticks = r.opts.ticks
		l.keep(ctx)
	} else {
		m.between = func(ctx context.Context) error { return l.renewDue(ctx, r.conn) }
	}
	m.before = func() {
		r.vals["now"] = stateTime(r.opts.Now())
		r.vals["finished_at"] = stateTime(r.opts.Now())
		r.vals["duration_ms"] = r.opts.Now().Sub(r.start).Milliseconds()
	}
	if r.opts.Progress != nil {
		m.progress = func(stmt string) {
			r.opts.Progress(Progress{Pipeline: r.c.plan.Pipeline, Statement: stmt, RowsRead: m.reg(ir.RegRead),
				Partitions: len(m.parts), PartitionsDone: m.partsDone, Elapsed: r.opts.Now().Sub(r.start)})
		}
	}
	stopWatch := r.t.watchPeer(ctx, cancel)
	err = r.walk(ctx, m, fix)
	stopWatch()
	if err == nil {
		err = m.endState() // a program of bookkeeping alone
	}
	if m.stateTx != nil {
		// The program failed before its first step that is not
		// bookkeeping: nothing of it is kept, the lease included.
		m.stateTx.Rollback()
		m.stateTx = nil
	}
	if err != nil {
		r.fail(ctx, m, err)
	}
	r.read(m)
	if err == nil && r.pr.Record != "" {
		// The write committed: what is left of the run is bookkeeping.
		// A checkpoint that fails (another session's transaction holds
		// it back) leaves the log to the close, as if none had run.
		if st, ok := r.c.stmts[ir.StmtCheckpoint]; ok && len(st.Parts) > 0 {
			if r.opts.BeforeStatement != nil {
				r.opts.BeforeStatement(ir.StmtCheckpoint)
			}
			r.c.exec(ctx, r.conn, ir.StmtCheckpoint, r.vals)
		}
	}
	if err == nil && r.t.Dialect.Caps().GroupState && r.finishGrouped(ctx, l) == nil {
		return nil
	}
	if err == nil && r.pr.Record != "" {
		r.recordDuration(ctx, r.conn)
	}
	r.cleanup(ctx)
	if rerr := l.release(ctx, r.conn); rerr != nil && err == nil {
		err = fmt.Errorf("release the lease: %w", rerr)
	}
	return err
}

// recordDuration writes the run's end and duration to the run log once
// the write transaction has committed: record_finish, inside it, cannot
// know what the commit costs.
func (r *recorder) recordDuration(ctx context.Context, q querier) error {
	r.vals["finished_at"] = stateTime(r.opts.Now())
	d := r.opts.Now().Sub(r.start).Milliseconds()
	r.vals["duration_ms"] = d
	r.res.DurationMS = d
	r.res.FinishedAt = r.vals["finished_at"].(string)
	_, err := r.c.exec(ctx, q, ir.StmtRecordDuration, r.vals)
	return err
}

// finishGrouped runs what follows a successful program in one
// transaction (dialects.Caps.GroupState): the cleanup, the run's
// duration, the lease's release. When it fails, nothing of it is kept and
// the caller does each on its own.
func (r *recorder) finishGrouped(ctx context.Context, l *lease) error {
	l.stop()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	tx, err := r.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, name := range r.pr.Cleanup {
		if _, err := r.c.exec(ctx, tx, name, r.vals); err != nil {
			tx.Rollback()
			return err
		}
	}
	if r.pr.Record != "" {
		if err := r.recordDuration(ctx, tx); err != nil {
			tx.Rollback()
			return err
		}
	}
	if err := l.releaseOn(ctx, tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (r *recorder) walk(ctx context.Context, m *machine, fix func(*machine) (window, error)) error {
	w, err := fix(m)
	if err != nil {
		return err
	}
	r.res.Started = true
	r.more = w.more
	if w.hasLo {
		r.res.WindowLo = w.lo.String()
	}
	if w.hasHi {
		r.res.WindowHi = w.hi.String()
	}
	if w.heldBy != "" {
		r.res.HeldBy, r.res.HeldFrom = w.heldBy, w.heldFrom.String()
	}
	r.res.WatermarkAfter = w.advance.String()
	if w.advance == (mark{}) {
		r.res.WatermarkAfter = r.res.WatermarkBefore
	}
	r.vals["window_lo"], r.vals["window_hi"] = nullable(r.res.WindowLo), nullable(r.res.WindowHi)
	r.vals["watermark_before"] = nullable(r.res.WatermarkBefore)
	r.vals["watermark_after"] = nullable(r.res.WatermarkAfter)
	return m.walk(ctx, r.pr)
}

// read copies the counters the program kept into the result.
func (r *recorder) read(m *machine) {
	res := r.res
	for reg, field := range map[string]*int64{
		ir.RegRead: &res.RowsRead, ir.RegInserted: &res.RowsInserted, ir.RegUpdated: &res.RowsUpdated,
		ir.RegDeleted: &res.RowsDeleted, ir.RegQuarantined: &res.RowsQuarantined, ir.RegSkipped: &res.RowsSkipped,
		ir.RegIgnored: &res.RowsIgnored,
	} {
		*field = m.reg(reg)
	}
	res.Status, _ = r.vals["status"].(string)
	res.Error, _ = r.vals["error"].(string)
	res.Note, _ = r.vals["note"].(string)
	res.StartedAt = stateTime(r.start)
	res.FinishedAt = stateTime(r.opts.Now())
	res.DurationMS = r.opts.Now().Sub(r.start).Milliseconds()
}

// fail records a failed run after its transaction rolled back: rows read
// are what it saw, nothing was written, the watermark did not move. On an
// engine without transactions the steps that committed before the failure
// are named in the note instead. The record goes over a fresh connection
// when the run's own died.
func (r *recorder) fail(ctx context.Context, m *machine, cause error) {
	r.vals["status"], r.vals["error"] = "failed", r.t.scrub.Scrub(cause.Error())
	if dp := deadPeer(ctx); dp != nil {
		r.vals["error"] = r.t.scrub.Scrub(fmt.Sprintf("%v (%v)", dp, cause))
	} else if ctx.Err() != nil {
		// Cancelled (a signal, a scheduler): rolled back like a failure,
		// recorded as what it is.
		r.vals["status"] = StatusCancelled
	}
	if m != nil && m.filesNoted != "" {
		// Nothing of the files the run listed was loaded.
		note, _ := r.vals["note"].(string)
		r.vals["note"] = strings.Replace(note, m.filesNoted, m.failedFilesNote(), 1)
	}
	if m != nil && len(m.landed) > 0 {
		// Each statement committed alone: the write may be in the target.
		note, _ := r.vals["note"].(string)
		if note != "" {
			note += "; "
		}
		r.vals["note"] = note + landedNote(string(r.t.Dialect.Name()), m.landed)
	}
	r.res.WatermarkAfter = r.res.WatermarkBefore
	r.vals["watermark_after"] = nullable(r.res.WatermarkBefore)
	for _, reg := range ir.Counters {
		if reg != ir.RegRead {
			r.vals[reg] = int64(0)
		}
	}
	r.vals["finished_at"] = stateTime(r.opts.Now())
	r.vals["duration_ms"] = r.opts.Now().Sub(r.start).Milliseconds()
	if !r.res.Started || r.pr.Record == "" {
		return // nothing was recorded to close
	}
	r.t.onLiveConn(ctx, r.conn, func(ctx context.Context, q querier) error {
		return r.c.run(ctx, q, ir.StmtRecordFinish, r.vals)
	})
}

// landedNote says, in a failed run's log, what it left in the target
// where each statement commits alone.
func landedNote(engine string, steps []string) string {
	return fmt.Sprintf("%s commits each statement alone: what %s did before the failure stays in the target; the watermark did not move, and the next run writes the window again",
		engine, strings.Join(steps, ", "))
}

// cleanup runs the program's cleanup statements: a pooled connection
// outlives the run. Errors are ignored: the next run drops them first.
func (r *recorder) cleanup(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	for _, name := range r.pr.Cleanup {
		r.c.run(ctx, r.conn, name, r.vals)
	}
}

// savedMark reads the saved watermark into the result (and nil before the
// first run, or for a pipeline without a watermark).
func savedMark(ctx context.Context, c *compiled, q querier, res *Result) (*mark, error) {
	st, err := readState(ctx, c, q, c.plan.Pipeline)
	if err != nil {
		return nil, err
	}
	res.WatermarkBefore = st.Watermark
	return parseSaved(c.plan, st.Watermark)
}

// parseSaved reads a saved watermark for the plan's watermark column.
func parseSaved(plan *ir.Plan, saved string) (*mark, error) {
	if saved == "" || plan.Watermark == nil {
		return nil, nil
	}
	m, err := parseWM(plan.Watermark, saved)
	if err != nil {
		return nil, fmt.Errorf("saved watermark %q of %s: %w", saved, plan.Pipeline, err)
	}
	return &m, nil
}

// setup walks the setup program: idempotent DDL, each statement on its
// own, before any transaction, or in the run's bookkeeping transaction
// when a run's machine has one open (dialects.Caps.GroupState). Two runs
// creating the same table at once can collide in the catalog; the second
// attempt finds it there (and runs each statement on its own).
//
// It returns the changes its schema checks applied to the target and the
// quarantine (columns added, types widened); a change no run makes on its
// own fails it with a *SchemaError.
func setup(ctx context.Context, c *compiled, conn *sql.Conn) ([]SchemaChange, error) {
	return setupMode(ctx, c, conn, schemaRun)
}

func setupMode(ctx context.Context, c *compiled, conn *sql.Conn, mode schemaMode) ([]SchemaChange, error) {
	var planned map[string][]SchemaChange
	if mode == schemaRun {
		var err error
		if planned, err = planSchema(ctx, c, conn); err != nil {
			return nil, err
		}
	}
	return setupWith(ctx, c, conn, mode, planned, nil)
}

// planSchema reads every table a setup checks, changing nothing: a run
// refused names all that its tables need, and applies none of it.
func planSchema(ctx context.Context, c *compiled, conn *sql.Conn) (map[string][]SchemaChange, error) {
	pr, err := c.program(ir.ModeSetup)
	if err != nil {
		return nil, err
	}
	planned, err := pendingByStep(ctx, c, conn)
	if err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	var pending []SchemaChange
	for _, s := range pr.Steps {
		pending = append(pending, planned[s.Stmt]...)
	}
	for _, ch := range pending {
		if !ch.Automatic() {
			return nil, fmt.Errorf("setup: %w", &SchemaError{Pipeline: c.plan.Pipeline, Changes: pending})
		}
	}
	return planned, nil
}

// setupWith walks the setup program, applying planned (planSchema) at its
// schema checks, in the bookkeeping transaction of in when it has one.
func setupWith(ctx context.Context, c *compiled, conn *sql.Conn, mode schemaMode, planned map[string][]SchemaChange, in *machine) ([]SchemaChange, error) {
	pr, err := c.program(ir.ModeSetup)
	if err != nil {
		return nil, err
	}
	if c.has(ir.StmtLockSetup) {
		// Concurrent first runs would race in the catalog (PostgreSQL's
		// CREATE TABLE IF NOT EXISTS fails the loser with a duplicate key):
		// one setup at a time, each finding the others' tables there.
		n, _, err := c.count(ctx, conn, ir.StmtLockSetup, params{})
		if err == nil && n != 1 {
			err = fmt.Errorf("another run's setup held the setup lock for a minute")
		}
		if err != nil {
			return nil, fmt.Errorf("setup: %s: %w", ir.StmtLockSetup, err)
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			defer cancel()
			c.run(ctx, conn, ir.StmtUnlockSetup, params{})
		}()
	}
	m := newMachine(c, conn, params{})
	if in != nil {
		m.stateTx = in.stateTx
	}
	m.schemaMode, m.planned = mode, planned
	err = m.walk(ctx, pr)
	if err != nil && m.stateTx != nil {
		// Nothing of the grouped attempt is kept, what it applied included.
		m.stateTx.Rollback()
		in.stateTx, m.stateTx, m.schema = nil, nil, nil
	}
	if err != nil && !isSchemaError(err) {
		// The second attempt, each statement on its own, reads again: the
		// first may have applied some.
		applied := m.schema
		m = newMachine(c, conn, params{})
		m.schemaMode = mode
		err = m.walk(ctx, pr)
		m.schema = append(applied, m.schema...)
	}
	if err != nil {
		return m.schema, fmt.Errorf("setup: %w", err)
	}
	return m.schema, nil
}
