package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/dialects/all"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The conformance suite: one table of scenarios (conformance_scenarios_test.go)
// run on every executed engine by one function, conform. A new engine is
// one entry of engines(); a new strategy or behaviour is one scenario.
//
// conform asserts the promise of the README itself, after every step that
// writes the target: the incremental target equals what a full refresh of
// the same spec at the same hi writes (a reference pipeline, same spec,
// another table). No scenario can forget it. It also checks, after every
// run, what every run must leave: the run log holding exactly the result
// the run returned, the watermark where the result says, the lease free;
// and after every failure, that nothing was committed.

// scenario is one row of the table: a spec, a source fixture and steps.
type scenario struct {
	name string
	// spec is a YAML template: {target} is "inc" for the pipeline under
	// test and "ref" for the full refresh it is measured against, {src}
	// the source table as a source.query names it, {id} the env's suffix.
	spec   string
	source string // the fixture table, "app_{id}.NAME"; its columns are the spec's
	nulls  bool   // create the source without NOT NULL: it holds rows the pipeline must reject
	// keyed: the source's primary key is the spec's unique key, which a
	// run may read in its catalog.
	keyed bool
	seed  [][]any // the source's first rows, one value per column
	steps []act
	// serial: the scenario runs a child process (a kill), alone.
	serial bool
	// bug names a defect the scenario exposes: until it is fixed the
	// scenario is skipped with "BUG: ..."; remove the mark to see it fail.
	bug string
}

// act is one step of a scenario; conform knows each kind.
type act any

// Changes to the source.
type (
	insert [][]any // rows, one value per column
	update struct {
		key any // the value of the source's first column
		set map[string]any
	}
	remove struct {
		key any  // the value of the source's first column
		all bool // every row
	}
	// corrupt multiplies col by 100 in the target's rows of the partitions
	// in [from, to): story 2's currency bug.
	corrupt struct{ col, from, to string }
	// dropTarget drops the target table behind incrc's back.
	dropTarget struct{}
	// emptyTarget deletes every row of the target behind incrc's back (a
	// TRUNCATE or DELETE by hand); with recreate it drops the table and
	// creates it again, empty, as a user repairing it by hand would.
	emptyTarget struct{ recreate bool }
)

// run is incrc run (full: --full-refresh) of the pipeline under test.
type run struct {
	until string // --until; empty: hi is the pipeline's own (the largest id, or now)
	full  bool   // --full-refresh
	kind  string // the kind logged; default run, or full_refresh with full
	want  *counts
	// wantTx: want holds on engines with transactions only; without, a
	// crashed run before this one kept its write, which this run then
	// finds in the target (its counts say so; its target is the same).
	wantTx bool
	rows   []string // the target after the run; nil: not checked
	// quarantine is the quarantine table after the run; {runN} stands for
	// the run id of the scenario's n-th successful run.
	quarantine []string
	wm         string // the watermark after the run
	// catalogNote is in the run log's note on the engines whose runs read
	// a source's catalog (DuckDB, PostgreSQL), and not on the others.
	catalogNote string
	fails       string        // the run fails with this: nothing committed, logged as failed
	refused     string        // the run is refused before its window: nothing logged
	locked      string        // another run holds the lease: a *LockedError naming this owner
	clock       time.Duration // the run's clock runs this far ahead (a dead run's lease expired)
	// missed is the contract's edge (a change behind the window): why the
	// target must differ from the full refresh after this run.
	missed string
	// firstKept are the keys (their first column) whose insert-only
	// columns (merge.exclude_columns, merge.update_columns) differ from a
	// full refresh after this run: the target keeps their first value.
	firstKept []any
}

// batched is a run of a pipeline whose watermark has a batch: a run per
// batch, oldest first. Each batch is checked as a run is (its row of the
// run log, its counts adding up, the watermark at its hi) and, where the
// watermark is a time, against a full refresh at its hi: the promise
// holds after every batch, not only at the end.
type batched struct {
	until string
	his   []string // the hi of each batch, in order
	// failAt is the batch (from 1) that fails before its commit: the
	// batches before it are kept, and it and those after are not run.
	failAt int
	clock  time.Duration // the runs' clock runs this far ahead (a dead run's lease expired)
}

// crash is a run that fails before the named statement ("commit" is the
// commit): nothing is committed, and the next run must converge.
type crash struct{ until, at string }

// kill is a run killed with SIGKILL, in a child process, before the named
// statement; the next run (once the dead run's lease expired) converges
// and marks the dead run abandoned.
//
// at may name the nth time the statement comes ("commit#3": the third
// batch's commit). Where batches committed before the kill, wm is the
// watermark they leave and batches how many there were; after, when
// set, is the hi of each batch the next run then runs.
//
// With during, the child is killed while the statement at runs: it sends
// it, and stops before whatever would come next. On an engine without
// transactions the write may then land after the runner died (Spark
// finishes a statement whose client went), or not: the next run converges
// from either.
type kill struct {
	until, at string
	wm        string
	batches   int
	after     []string
	during    bool
}

// concurrent is a run that holds the lease (blocked before the statement
// at) while a second run must get a *LockedError naming it. With outlive,
// on engines whose lease is renewed by a heartbeat, the second run comes
// three lease lifetimes later on the runs' clock, the heartbeat having
// renewed the lease in between.
type concurrent struct {
	until, at string
	outlive   bool
}

// deadLease is a lease held by a run that died: owner holds it for ttl.
type deadLease struct {
	owner string
	ttl   time.Duration
}

// release is incrc state --release.
type release struct{}

// rewind is incrc state --rewind.
type rewind struct {
	to      string
	wm      string // the watermark after it
	refused string
}

// reconcile is incrc reconcile [from, to).
type reconcile struct {
	from, to   string
	drifted    []string // exactly these keys drift (nil: none)
	groups     int      // how many groups there are (0: not checked)
	partitions []string // the groups' partitions, as grids name them (nil: not checked)
	uncompared []string // the measures left out, as a merge keeps their column's first value
}

// preview is incrc plan --target at a time.
type preview struct {
	at, lo     string
	rows       int64
	partitions []string
}

// rebuild is incrc backfill [from, to). The partitions of the range are
// listed by their status afterwards (nil: none has it).
type rebuild struct {
	from, to                      string
	onlyDrifted, restart, restate bool
	parallel                      int
	failAt                        [2]string // partition, statement: an injected failure before it
	addAt                         [2]string // partition, statement: add is inserted into the source before it
	add                           []any
	fails, refused, locked        string
	rebuilt, ok, done, pending    []string
	failed                        []string
	mismatch                      string   // the partition the backfill stopped at
	untouched                     []string // partitions whose rows must stay physically as they were
	rows                          int64    // rows the run log says it rebuilt (0: not checked)
}

// TestConformance runs every scenario on every executed engine.
func TestConformance(t *testing.T) {
	all := scenarios()
	for _, eng := range append(engines(), distributedEngines()...) {
		for _, sc := range all {
			t.Run(eng.name+"/"+sc.name, func(t *testing.T) {
				if !sc.serial && !eng.serial {
					t.Parallel()
				}
				conform(t, eng, sc)
			})
		}
	}
}

// conformer is one scenario on one engine.
type conformer struct {
	t        *testing.T
	e        *env
	sc       scenario
	inc, ref *ir.Plan
	src      []ir.Col
	cols     []string // the declared columns: the source's and the quarantine's
	tcols    []string // the target's columns, as create_target makes them
	// rebuilt are the tables a full refresh rebuilds, inc's and ref's side
	// by side: the target, and what a pipeline keeps beside it (a change
	// log's tombstones).
	rebuilt [][2]ir.CreateTable
	logged  int      // programs of inc the run log holds
	runIDs  []string // inc's successful runs, for {runN}
	// st is inc's state as last read: what the next step finds, unless a
	// step changed it behind conform's back (then nil).
	st *Status
	// source counts the changes to the source; refAt is the source and hi
	// the reference target was last refreshed at.
	source int
	refAt  *refKey
}

type refKey struct {
	source int
	hi     string
}

// state reads the state of the pipeline under test.
func (c *conformer) state() *Status {
	c.t.Helper()
	c.st = c.e.state(c.inc)
	return c.st
}

// conform runs one scenario on one engine, step by step, and asserts after
// each what every step of its kind promises.
func conform(t *testing.T, eng engine, sc scenario) {
	if sc.bug != "" {
		t.Skip("BUG: " + sc.bug)
	}
	e := newEnv(t, eng)
	c := &conformer{t: t, e: e, sc: sc, inc: e.spec(expand(e, sc, "inc")), ref: e.spec(expand(e, sc, "ref"))}
	c.rebuilt = rebuilt(c.inc, c.ref)
	for _, col := range c.inc.Columns {
		c.cols = append(c.cols, col.Name)
	}
	// A change log's target leaves columns out and keeps the sequence; a
	// versioned target adds its validity: compare what the target holds.
	for _, col := range c.inc.Statement(ir.StmtCreateTarget).Op.(ir.CreateTable).Columns {
		c.tcols = append(c.tcols, col.Name)
	}
	c.src = c.inc.Columns
	if sc.nulls {
		c.src = nullableCols(c.src)
	}
	var key []string
	if sc.keyed {
		key = c.inc.Key
	}
	e.createTable(sc.source, c.src, key...)
	e.insert(sc.source, c.src, sc.seed...)
	for i, s := range sc.steps {
		what := fmt.Sprintf("step %d (%s)", i+1, describe(s))
		switch s := s.(type) {
		case insert:
			e.insert(sc.source, c.src, s...)
			c.source++
		case update:
			e.update(sc.source, c.src, c.src[0].Name, s.key, s.set)
			c.source++
		case remove:
			if s.all {
				e.deleteWhere(sc.source, "", nil)
			} else {
				e.deleteWhere(sc.source, c.src[0].Name, s.key)
			}
			c.source++
		case corrupt:
			c.corrupt(s)
		case dropTarget:
			e.exec(e.render(ir.DropTable{Table: c.inc.Target}), nil)
			c.st = nil
		case emptyTarget:
			if s.recreate {
				e.exec(e.render(ir.DropTable{Table: c.inc.Target}), nil)
				e.exec(e.render(c.inc.Statement(ir.StmtCreateTarget).Op), nil)
			} else {
				e.exec(e.render(ir.DeleteRows{Table: c.inc.Target}), nil)
			}
			c.st = nil
		case run:
			c.run(what, s, Options{})
		case batched:
			c.batched(what, s)
		case crash:
			boom := errors.New("injected crash before " + s.at)
			c.run(what, run{until: s.until, fails: boom.Error()}, Options{BeforeStatement: func(name string) error {
				if name == s.at {
					return boom
				}
				return nil
			}})
		case kill:
			c.kill(what, s)
		case concurrent:
			c.concurrent(what, s)
		case deadLease:
			c.deadLease(what, s)
		case release:
			if ok, err := e.tg.Release(e.ctx, c.inc); err != nil || !ok {
				t.Fatalf("%s: released %v, %v", what, ok, err)
			}
			if st := c.state(); st.LeaseOwner != "" {
				t.Errorf("%s: the lease is still held by %s", what, st.LeaseOwner)
			}
		case rewind:
			c.rewind(what, s)
		case reconcile:
			c.reconcile(what, s)
		case preview:
			c.preview(what, s)
		case rebuild:
			c.rebuild(what, s)
		default:
			t.Fatalf("%s: conform does not know this step", what)
		}
		if t.Failed() {
			t.FailNow() // later steps build on this one
		}
	}
}

// describe names a step in messages.
func describe(s act) string {
	switch s := s.(type) {
	case run:
		d := "run"
		if s.full {
			d += " --full-refresh"
		}
		if s.until != "" {
			d += " --until " + s.until
		}
		return d
	case crash:
		return fmt.Sprintf("run --until %s crashing before %s", s.until, s.at)
	case kill:
		return fmt.Sprintf("run --until %s killed before %s", s.until, s.at)
	case rebuild:
		return fmt.Sprintf("backfill [%s, %s)", s.from, s.to)
	case reconcile:
		return fmt.Sprintf("reconcile [%s, %s)", s.from, s.to)
	}
	return fmt.Sprintf("%T", s)
}

// expand fills a scenario's spec template for one target.
func expand(e *env, sc scenario, target string) string {
	return strings.NewReplacer("{target}", target, "{src}", e.sourceName(sc.source)).Replace(sc.spec)
}

// before is what a step finds: what a failed step must leave as it was.
type before struct {
	wm   string
	rows []string
	runs int
}

func (c *conformer) before() before {
	st := c.st
	if st == nil {
		st = c.state()
	}
	rows, _ := c.e.read(tableName(c.inc.Target), c.tcols) // no table yet before the first run
	return before{wm: st.Watermark, rows: rows, runs: len(st.Runs)}
}

// unchanged asserts a failed or refused step committed nothing: the
// target, the watermark and the run log as they were (but for logged
// rows of its own), and the lease free, or still with its holder.
func (c *conformer) unchanged(what string, b before, logged int, holder string) {
	c.t.Helper()
	st := c.state()
	if st.Watermark != b.wm || st.LeaseOwner != holder {
		c.t.Errorf("%s: watermark %q -> %q, lease %q (want %q): a failed step moves nothing and frees its lease", what, b.wm, st.Watermark, st.LeaseOwner, holder)
	}
	if len(st.Runs) != min(b.runs+logged, 20) {
		c.t.Errorf("%s: the run log grew from %d to %d rows, want %d", what, b.runs, len(st.Runs), logged)
	}
	rows, _ := c.e.read(tableName(c.inc.Target), c.tcols)
	if diff := cmp.Diff(b.rows, rows, cmpopts.EquateEmpty()); diff != "" {
		c.t.Errorf("%s: a failed step changed the target (-before +after):\n%s", what, diff)
	}
}

// keptWatermark asserts what a failed run leaves on an engine without
// transactions: the watermark as it was, the lease free, the run logged;
// the target may hold the write, which the next run converges from.
func (c *conformer) keptWatermark(what string, b before, logged int) {
	c.t.Helper()
	st := c.state()
	if st.Watermark != b.wm || st.LeaseOwner != "" {
		c.t.Errorf("%s: watermark %q -> %q, lease %q: a failed run never advances and frees its lease", what, b.wm, st.Watermark, st.LeaseOwner)
	}
	if len(st.Runs) != min(b.runs+logged, 20) {
		c.t.Errorf("%s: the run log grew from %d to %d rows, want %d", what, b.runs, len(st.Runs), logged)
	}
}

func tableName(t ir.Table) string { return strings.Join(t.Parts, ".") }

func (c *conformer) until(s string) *time.Time {
	if s == "" {
		return nil
	}
	u, err := ParseUntil(s)
	if err != nil {
		c.t.Fatal(err)
	}
	return &u
}

// run runs the pipeline under test and checks what the step expects.
func (c *conformer) run(what string, s run, o Options) {
	c.t.Helper()
	b := c.before()
	o.Until, o.FullRefresh = c.until(s.until), s.full
	if s.clock != 0 {
		o.Now = func() time.Time { return time.Now().Add(s.clock) }
	}
	res, err := c.e.tg.Run(c.e.ctx, c.inc, o)
	c.ran(what, s, b, res, err)
}

// ran checks a run's outcome against its step.
func (c *conformer) ran(what string, s run, b before, res *Result, err error) {
	t := c.t
	t.Helper()
	switch {
	case s.locked != "":
		var locked *LockedError
		if !errors.As(err, &locked) || locked.Owner != s.locked {
			t.Errorf("%s: %v, want locked by %s", what, err, s.locked)
		}
		c.unchanged(what, b, 0, s.locked)
		return
	case s.refused != "":
		if err == nil || !strings.Contains(err.Error(), s.refused) {
			t.Errorf("%s: %v, want refused with %q", what, err, s.refused)
		}
		c.unchanged(what, b, 0, "")
		return
	case s.fails != "":
		if err == nil || !strings.Contains(err.Error(), s.fails) {
			t.Fatalf("%s: %v, want a failure with %q", what, err, s.fails)
		}
		c.logged++
		if res.Status != "failed" || !res.Started || !strings.Contains(res.Error, s.fails) || res.WatermarkBefore != b.wm || res.WatermarkAfter != b.wm ||
			res.RowsInserted+res.RowsUpdated+res.RowsDeleted+res.RowsQuarantined+res.RowsSkipped != 0 {
			t.Errorf("%s: the failed run's result: %+v", what, res)
		}
		if s.want != nil {
			checkCounts(t, what, res, *s.want)
		}
		if c.e.tg.Dialect.Caps().Transactions {
			c.unchanged(what, b, 1, "")
		} else {
			// Each statement commits alone: a run that fails after its
			// write keeps the write, never the advance. The next run of
			// the scenario reads the same window and must converge (it is
			// checked against the full refresh). A write that stayed is
			// named in the run log.
			c.keptWatermark(what, b, 1)
			rows, _ := c.e.read(tableName(c.inc.Target), c.tcols)
			if !cmp.Equal(b.rows, rows, cmpopts.EquateEmpty()) && !strings.Contains(res.Note, "before the failure stays in the target") {
				t.Errorf("%s: the failed run changed the target, and its note does not say so: %q", what, res.Note)
			}
		}
		if c.e.tg.Dialect.Caps().Transactions && strings.Contains(res.Note, "stays in the target") {
			t.Errorf("%s: the failed run rolled back, yet its note says a write stayed: %q", what, res.Note)
		}
		c.logCheck(what, res, c.st)
		return
	case err != nil:
		t.Fatalf("%s: %v", what, err)
	}
	c.logged++
	c.runIDs = append(c.runIDs, res.RunID)
	kind := s.kind
	if kind == "" {
		kind = map[bool]string{false: "run", true: "full_refresh"}[s.full]
	}
	if res.Kind != kind || res.Status != "succeeded" || res.WatermarkBefore != b.wm {
		t.Errorf("%s: kind %s, status %s, watermark before %q; want %s, succeeded, %q", what, res.Kind, res.Status, res.WatermarkBefore, kind, b.wm)
	}
	if s.want != nil && (!s.wantTx || c.e.tg.Dialect.Caps().Transactions) {
		checkCounts(t, what, res, *s.want)
	}
	if msg := accounted(c.inc, res); msg != "" {
		t.Errorf("%s: %s: %+v", what, msg, countsOf(res))
	}
	if s.catalogNote != "" {
		reads := c.e.tg.Dialect.Name() == "duckdb" || c.e.tg.Dialect.Name() == "postgres"
		if strings.Contains(res.Note, s.catalogNote) != reads {
			t.Errorf("%s: the run log's note is %q; on %s it should %s %q", what, res.Note, c.e.tg.Dialect.Name(),
				map[bool]string{true: "hold", false: "not hold"}[reads], s.catalogNote)
		}
	}
	st := c.state()
	if st.Watermark != res.WatermarkAfter || st.LeaseOwner != "" || s.wm != "" && st.Watermark != s.wm {
		t.Errorf("%s: watermark %q (result %q, want %q), lease %q", what, st.Watermark, res.WatermarkAfter, s.wm, st.LeaseOwner)
	}
	c.logCheck(what, res, st)
	c.expectRows(what, s.rows, s.quarantine)
	c.promise(what, s.until, s.missed, s.firstKept)
}

// accounted checks that a run's counts say what became of every row it
// read: written (inserted, updated; a change log's delete, deleted),
// quarantined, ignored (a dedupe's older versions, versions older than
// the target's, a change log's superseded changes) or skipped (finalized
// partitions). Elsewhere deleted counts rows of the target that no row
// read stands for, and is left out: the rows a full refresh replaced, the
// key a merge retracts when its newest version is quarantined (one per
// quarantined row at most). A partition overwrite's run reads, and
// writes, its partitions whole: the rows it read are theirs (and the
// window's rows of the partitions it leaves out), and deleted counts the
// rows the rewrite replaced. A type-2 dimension counts rows too:
// inserted a key's first version, updated a later version or a correction,
// ignored a row that changes no version; from a change log deleted is its
// deletes, and from a snapshot the keys that vanished, which no row read
// stands for.
func accounted(p *ir.Plan, r *Result) string {
	written := r.RowsInserted + r.RowsUpdated + r.RowsQuarantined + r.RowsIgnored + r.RowsSkipped
	changeLog := p.Strategy == ir.CDCApply || p.Strategy == ir.SCD2Strategy && p.Statement(ir.StmtResolveVersions) != nil
	switch {
	case changeLog:
		written += r.RowsDeleted
	case p.Strategy == ir.OverwritePartitions:
		// deleted: the partitions' rows replaced
	case p.Strategy == ir.SCD2Strategy:
		// deleted: the keys that vanished from a snapshot, or the versions
		// a full refresh replaced
	case r.Kind == "run" && r.RowsDeleted > r.RowsQuarantined:
		return fmt.Sprintf("deleted %d rows, more than the %d it quarantined", r.RowsDeleted, r.RowsQuarantined)
	}
	if written != r.RowsRead {
		return fmt.Sprintf("read %d, but inserted + updated + quarantined + ignored + skipped%s = %d: rows read are unaccounted for",
			r.RowsRead, map[bool]string{true: " + deleted", false: ""}[changeLog], written)
	}
	return ""
}

// logCheck: the run log's newest row (in st) is the result the run
// returned, and the log holds one row per program that recorded itself.
func (c *conformer) logCheck(what string, res *Result, st *Status) {
	c.t.Helper()
	if len(st.Runs) != min(c.logged, 20) {
		c.t.Fatalf("%s: the run log holds %d runs, want %d", what, len(st.Runs), c.logged)
	}
	ignore := cmpopts.IgnoreFields(Result{}, "FinishedAt", "DurationMS")
	if diff := cmp.Diff(*res, st.Runs[0], ignore); diff != "" {
		c.t.Errorf("%s: the run log's newest row differs from the result (-result +log):\n%s", what, diff)
	}
}

// expectRows checks the target and the quarantine table when the step
// says what they hold.
func (c *conformer) expectRows(what string, rows, quarantine []string) {
	c.t.Helper()
	if rows != nil {
		if diff := cmp.Diff(sorted(rows), sorted(c.e.rows(tableName(c.inc.Target), c.tcols)), cmpopts.EquateEmpty()); diff != "" {
			c.t.Errorf("%s: target (-want +got):\n%s", what, diff)
		}
	}
	if quarantine != nil {
		var ids []string
		for i, id := range c.runIDs {
			ids = append(ids, fmt.Sprintf("{run%d}", i+1), id)
		}
		r := strings.NewReplacer(ids...)
		want := make([]string, len(quarantine))
		for i, q := range quarantine {
			want[i] = r.Replace(q)
		}
		got := c.e.rows(tableName(c.inc.Quarantine), append([]string{"incrc_reason", "incrc_run_id"}, c.cols...))
		if diff := cmp.Diff(sorted(want), sorted(got)); diff != "" {
			c.t.Errorf("%s: quarantine (-want +got):\n%s", what, diff)
		}
	}
}

// promise asserts the README's promise: the target equals a full refresh
// of the same spec at the same hi, written by the reference pipeline. A
// step at the contract's edge (missed) asserts the opposite.
//
// A merge that keeps columns at their first value (Plan.InsertOnly) is
// compared with the full refresh in every other column, and firstKept
// says exactly which keys hold a first value the full refresh does not.
func (c *conformer) promise(what, until, missed string, firstKept []any) {
	t := c.t
	t.Helper()
	// The same source at the same hi: the reference already holds it.
	hi := c.until(until)
	at := refKey{source: c.source}
	if hi != nil {
		at.hi = hi.Format(time.RFC3339Nano)
	}
	if c.refAt == nil || *c.refAt != at {
		mustRun(t, c.e, c.ref, Options{Until: hi, FullRefresh: true})
		c.refAt = &at
	}
	var diff string
	for i, tables := range c.rebuilt {
		var cols, kept []string
		for _, col := range tables[0].Columns {
			if i == 0 && slices.Contains(c.inc.InsertOnly, col.Name) {
				kept = append(kept, col.Name)
				continue
			}
			cols = append(cols, col.Name)
		}
		if len(kept) > 0 {
			c.kept(what, tables, kept, firstKept)
		}
		full := sorted(c.e.rows(tableName(tables[1].Table), cols))
		inc := sorted(c.e.rows(tableName(tables[0].Table), cols))
		if d := cmp.Diff(full, inc, cmpopts.EquateEmpty()); d != "" {
			diff += tableName(tables[0].Table) + ":\n" + d
		}
	}
	switch {
	case missed != "" && diff == "":
		t.Errorf("%s: the run should have missed %s, but its target equals a full refresh", what, missed)
	case missed == "" && diff != "":
		t.Errorf("%s: the incremental target differs from a full refresh at the same hi (-full +incremental):\n%s", what, diff)
	}
}

func (c *conformer) batched(what string, s batched) {
	t := c.t
	t.Helper()
	boom := errors.New("injected failure before the commit of a batch")
	done := 0
	o := Options{Until: c.until(s.until)}
	if s.clock != 0 {
		o.Now = func() time.Time { return time.Now().Add(s.clock) }
	}
	o.BeforeStatement = func(name string) error {
		if name == "commit" && s.failAt == done+1 {
			return boom
		}
		return nil
	}
	wm := c.state().Watermark
	o.OnBatch = func(n int, b *Result) {
		done = n
		bw := fmt.Sprintf("%s: batch %d", what, n)
		if n > len(s.his) {
			t.Errorf("%s: more batches than the %d expected: [%s, %s)", bw, len(s.his), b.WindowLo, b.WindowHi)
			return
		}
		if b.WindowHi != s.his[n-1] || b.WatermarkBefore != wm {
			t.Errorf("%s: window [%s, %s) from watermark %q, want hi %s from %q", bw, b.WindowLo, b.WindowHi, b.WatermarkBefore, s.his[n-1], wm)
		}
		c.logged++
		st := c.state()
		if n == s.failAt {
			if b.Status != "failed" || st.Watermark != wm {
				t.Errorf("%s: status %s, watermark %q: the failed batch keeps the watermark of the one before (%q)", bw, b.Status, st.Watermark, wm)
			}
			c.logCheck(bw, b, st)
			return
		}
		c.runIDs = append(c.runIDs, b.RunID)
		if b.Status != "succeeded" || st.Watermark != b.WindowHi || st.LeaseOwner != "" {
			t.Errorf("%s: status %s, watermark %q, lease %q: each batch advances to its hi and frees the lease", bw, b.Status, st.Watermark, st.LeaseOwner)
		}
		if msg := accounted(c.inc, b); msg != "" {
			t.Errorf("%s: %s: %+v", bw, msg, countsOf(b))
		}
		c.logCheck(bw, b, st)
		wm = st.Watermark
		if !c.inc.Watermark.Type.IsInteger() {
			c.promise(bw, b.WindowHi, "", nil)
		}
	}
	res, err := c.e.tg.Run(c.e.ctx, c.inc, o)
	want := len(s.his)
	if s.failAt > 0 {
		want = s.failAt
		if err == nil || !strings.Contains(err.Error(), boom.Error()) {
			t.Fatalf("%s: %v, want the injected failure", what, err)
		}
	} else if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if done != want || res == nil || len(res.Batches) != want {
		t.Fatalf("%s: %d batches ran (result: %v), want %d", what, done, res != nil, want)
	}
	var read int64
	for _, b := range res.Batches {
		read += b.RowsRead
	}
	if res.RowsRead != read || res.WindowHi != res.Batches[want-1].WindowHi || res.WindowLo != res.Batches[0].WindowLo {
		t.Errorf("%s: the run's result does not sum its batches: %+v", what, res)
	}
	if s.failAt == 0 {
		c.promise(what, c.markHi(wm), "", nil)
	}
}

// kept compares the insert-only columns of the incremental target with
// the full refresh's, key by key: the keys whose values differ must be
// exactly want, and a key of one table must be in the other.
func (c *conformer) kept(what string, tables [2]ir.CreateTable, kept []string, want []any) {
	t := c.t
	t.Helper()
	cols := append(append([]string(nil), c.inc.Key...), kept...)
	byKey := func(name string) map[string]string {
		out := map[string]string{}
		for _, r := range c.e.rows(name, cols) {
			f := strings.Split(r, " | ")
			out[strings.Join(f[:len(c.inc.Key)], " | ")] = strings.Join(f[len(c.inc.Key):], " | ")
		}
		return out
	}
	full, inc := byKey(tableName(tables[1].Table)), byKey(tableName(tables[0].Table))
	var got []string
	for k, v := range inc {
		if fv, ok := full[k]; ok && fv != v {
			got = append(got, k+": "+v+" (a full refresh: "+fv+")")
		}
	}
	sort.Strings(got)
	var keys []string
	for _, g := range got {
		keys = append(keys, g[:strings.Index(g, ":")])
	}
	var wantKeys []string
	for _, k := range want {
		wantKeys = append(wantKeys, Canon(k))
	}
	sort.Strings(wantKeys)
	if !cmp.Equal(wantKeys, keys, cmpopts.EquateEmpty()) {
		t.Errorf("%s: the keys whose %s keep a first value a full refresh does not hold: %q, want %q", what, strings.Join(kept, ", "), got, wantKeys)
	}
}

// rebuilt pairs the tables of inc and ref that a full refresh rebuilds:
// those the setup program creates but the state tables every pipeline
// shares and the quarantine, which keeps every run's rows. The target
// comes first.
func rebuilt(inc, ref *ir.Plan) [][2]ir.CreateTable {
	shared := map[string]bool{}
	for _, t := range []ir.Table{ir.StateTable, ir.RunsTable, ir.PartitionsTable, inc.Quarantine, ref.Quarantine} {
		shared[tableName(t)] = true
	}
	tables := func(p *ir.Plan) []ir.CreateTable {
		var out []ir.CreateTable
		for _, st := range p.Program(ir.ModeSetup).Steps {
			if ct, ok := p.Statement(st.Stmt).Op.(ir.CreateTable); ok && !shared[tableName(ct.Table)] {
				out = append(out, ct)
			}
		}
		return out
	}
	a, b := tables(inc), tables(ref)
	var out [][2]ir.CreateTable
	for i := range a {
		out = append(out, [2]ir.CreateTable{a[i], b[i]})
	}
	if len(out) == 0 || tableName(out[0][0].Table) != tableName(inc.Target) {
		panic("conform: the setup program creates no target first")
	}
	return out
}

// markHi is the --until of a full refresh at the watermark: none for an
// integer watermark, whose hi is the largest id.
func (c *conformer) markHi(wm string) string {
	if c.inc.Watermark == nil || c.inc.Watermark.Type.IsInteger() {
		return ""
	}
	return wm
}

// kill runs the pipeline in a child process (TestConformanceChild) that
// stops before the statement at and is killed there: no deferred
// release, no rollback from the process. The next run, once the dead
// run's lease (1s) expired, converges.
func (c *conformer) kill(what string, s kill) {
	t, e := c.t, c.e
	b := c.before()
	e.tg.DB.Close() // DuckDB allows one process per file
	cmd := exec.Command(os.Args[0], "-test.run=^TestConformanceChild$")
	cmd.Env = append(os.Environ(), "INCRC_CONFORM_CHILD="+c.sc.name, "INCRC_CONFORM_URL="+e.url, "INCRC_CONFORM_ID="+e.id,
		"INCRC_CONFORM_UNTIL="+s.until, "INCRC_CONFORM_AT="+s.at, fmt.Sprintf("INCRC_CONFORM_DURING=%t", s.during))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	cmd.Process.Kill()
	cmd.Wait()
	if !strings.Contains(string(buf[:n]), "reached") {
		t.Fatalf("%s: the child did not reach %s: %q", what, s.at, buf[:n])
	}
	tg, err := Open(e.ctx, all.Lookup, e.url, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	e.tg = tg
	// Nothing of the killed run committed (but the batches before it, and
	// without transactions the write it ran or was killed in); the dead
	// run's lease is held until it expires, and its row in the run log
	// says running.
	st := c.state()
	rows, _ := e.read(tableName(c.inc.Target), c.tcols)
	wm := b.wm
	if s.wm != "" {
		wm = s.wm
	}
	same := s.wm != "" || !e.tg.Dialect.Caps().Transactions || cmp.Equal(b.rows, rows, cmpopts.EquateEmpty())
	if st.Watermark != wm || !same || st.LeaseOwner == "" || st.Runs[0].Status != "running" {
		t.Errorf("%s: after the kill: watermark %q -> %q (want %q), lease %q, run %q, target %v -> %v", what, b.wm, st.Watermark, wm, st.LeaseOwner, st.Runs[0].Status, b.rows, rows)
	}
	if s.wm != "" {
		c.promise(what+", the batches before the kill", s.wm, "", nil)
	}
	c.logged += s.batches + 1
	killed := 1
	if s.after != nil {
		c.batched(what+", the run after", batched{until: s.until, his: s.after, clock: 2 * time.Second})
		killed = len(s.after)
	} else {
		c.run(what+", the run after", run{until: s.until, clock: 2 * time.Second}, Options{})
	}
	if st := c.state(); st.Runs[killed].Status != "abandoned" {
		t.Errorf("%s: the killed run is %q in the log, want abandoned", what, st.Runs[killed].Status)
	}
}

// TestConformanceChild is the process a kill step kills.
func TestConformanceChild(t *testing.T) {
	name := os.Getenv("INCRC_CONFORM_CHILD")
	if name == "" {
		t.Skip("only runs as the child process of a kill step")
	}
	i := slices.IndexFunc(scenarios(), func(sc scenario) bool { return sc.name == name })
	if i < 0 {
		t.Fatalf("no scenario %q", name)
	}
	ctx := context.Background()
	tg, err := Open(ctx, all.Lookup, os.Getenv("INCRC_CONFORM_URL"), "")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, tg: tg, id: os.Getenv("INCRC_CONFORM_ID")}
	u, err := ParseUntil(os.Getenv("INCRC_CONFORM_UNTIL"))
	if err != nil {
		t.Fatal(err)
	}
	at, nth := os.Getenv("INCRC_CONFORM_AT"), 1
	if j := strings.IndexByte(at, '#'); j >= 0 {
		nth, _ = strconv.Atoi(at[j+1:])
		at = at[:j]
	}
	seen, during, sent := 0, os.Getenv("INCRC_CONFORM_DURING") == "true", false
	tg.Run(ctx, e.spec(expand(e, scenarios()[i], "inc")), Options{Until: &u, LeaseTTL: time.Second, BeforeStatement: func(name string) error {
		if sent {
			time.Sleep(time.Minute) // the statement after: never sent
		}
		if name == at {
			seen++
		}
		if name == at && seen == nth {
			os.Stdout.WriteString("reached\n")
			if during {
				sent = true
				return nil
			}
			time.Sleep(time.Minute)
		}
		return nil
	}})
}

// concurrent holds the lease with one run while a second is refused.
func (c *conformer) concurrent(what string, s concurrent) {
	t, e := c.t, c.e
	outlive := s.outlive && e.tg.Dialect.Caps().Heartbeat
	// The runs' clock: it moves only when the test moves it, and the
	// holder's heartbeat ticks only when the test ticks it.
	const ttl = time.Minute
	var (
		mu  sync.Mutex
		now = time.Now().UTC()
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ticks := make(chan time.Time)
	b := c.before()
	held, release := make(chan struct{}), make(chan struct{})
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := e.tg.Run(e.ctx, c.inc, Options{Owner: "first", LeaseTTL: ttl, Now: clock, ticks: ticks, Until: c.until(s.until), BeforeStatement: func(name string) error {
			if name == s.at {
				close(held)
				<-release
			}
			return nil
		}})
		done <- outcome{res, err}
	}()
	select {
	case <-held:
	case o := <-done:
		t.Fatalf("%s: the first run ended before %s: %v", what, s.at, o.err)
	}
	if outlive {
		// Three lease lifetimes, each renewed before it ran out; the tick
		// after the last is taken only once that renewal is done.
		for range 3 {
			mu.Lock()
			now = now.Add(ttl * 9 / 10)
			mu.Unlock()
			ticks <- now
		}
		ticks <- now
	}
	_, err := e.tg.Run(e.ctx, c.inc, Options{Owner: "second", Now: clock, Until: c.until(s.until)})
	var locked *LockedError
	if !errors.As(err, &locked) || locked.Owner != "first" {
		t.Errorf("%s: the second run: %v, want locked by first", what, err)
	}
	close(release)
	o := <-done
	c.ran(what, run{until: s.until}, b, o.res, o.err)
}

// deadLease takes the lease for a run that died holding it.
func (c *conformer) deadLease(what string, s deadLease) {
	prog, err := compile(c.e.tg.Dialect, c.inc, 0)
	if err != nil {
		c.t.Fatal(err)
	}
	now := time.Now()
	vals := params{"pipeline": c.inc.Pipeline, "owner": s.owner, "expires_at": stateTime(now.Add(s.ttl)), "now": stateTime(now)}
	if n, err := prog.exec(c.e.ctx, c.e.tg.DB, ir.StmtAcquireLease, vals); err != nil || n != 1 {
		c.t.Fatalf("%s: take the lease for %s: %d, %v", what, s.owner, n, err)
	}
	c.st = nil
}

// rewind moves the watermark back; nothing else changes.
func (c *conformer) rewind(what string, s rewind) {
	t := c.t
	b := c.before()
	res, err := c.e.tg.Rewind(c.e.ctx, c.inc, RewindOptions{To: s.to, Who: "conform", Reason: "re-read the window"})
	if s.refused != "" {
		if err == nil || !strings.Contains(err.Error(), s.refused) {
			t.Errorf("%s: %v, want refused with %q", what, err, s.refused)
		}
		c.unchanged(what, b, 0, "")
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	c.logged++
	if res.Kind != "rewind" || res.WatermarkBefore != b.wm || res.WatermarkAfter != s.wm || !strings.Contains(res.Note, "by conform: re-read the window") {
		t.Errorf("%s: %+v", what, res)
	}
	st := c.state()
	c.logCheck(what, res, st)
	if st.Watermark != s.wm || st.LeaseOwner != "" {
		t.Errorf("%s: watermark %q, lease %q; want %q, free", what, st.Watermark, st.LeaseOwner, s.wm)
	}
	if rows, _ := c.e.read(tableName(c.inc.Target), c.tcols); !cmp.Equal(b.rows, rows, cmpopts.EquateEmpty()) {
		t.Errorf("%s: a rewind changed the target", what)
	}
}

func (c *conformer) reconcile(what string, s reconcile) {
	t := c.t
	rec, err := c.e.tg.Reconcile(c.e.ctx, c.inc, *c.until(s.from), *c.until(s.to))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if diff := cmp.Diff(s.drifted, rec.Drifted, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: drifted (-want +got):\n%s\n%+v", what, diff, rec.Groups)
	}
	if diff := cmp.Diff(s.uncompared, rec.Uncompared, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: measures not compared (-want +got):\n%s", what, diff)
	}
	if s.groups != 0 && len(rec.Groups) != s.groups {
		t.Errorf("%s: %d groups, want %d: %+v", what, len(rec.Groups), s.groups, rec.Groups)
	}
	if s.partitions != nil {
		var keys []string
		for _, g := range rec.Groups {
			keys = append(keys, PartitionKey(c.inc, g.Key))
		}
		if diff := cmp.Diff(s.partitions, keys); diff != "" {
			t.Errorf("%s: reconciled partitions (-want +got):\n%s", what, diff)
		}
	}
}

func (c *conformer) preview(what string, s preview) {
	pv, err := c.e.tg.Preview(c.e.ctx, c.inc, *c.until(s.at))
	if err != nil {
		c.t.Fatalf("%s: %v", what, err)
	}
	if pv.Rows != s.rows || pv.WindowLo != s.lo || !cmp.Equal(pv.Partitions, s.partitions, cmpopts.EquateEmpty()) {
		c.t.Errorf("%s: %+v", what, pv)
	}
}

// backfill runs a backfill and checks what every backfill promises: the
// partitions of its range, each with the status the step expects; the
// watermark unmoved; replace_partition run for exactly the partitions it
// says it rebuilt; the run log; and then the promise, at the watermark.
func (c *conformer) rebuild(what string, s rebuild) {
	t, e := c.t, c.e
	b := c.before()
	untouched := c.versions(s.untouched)
	var mu sync.Mutex
	var replaced, order []string
	from, to := *c.until(s.from), *c.until(s.to)
	res, err := e.tg.Backfill(e.ctx, c.inc, BackfillOptions{From: from, To: to, OnlyDrifted: s.onlyDrifted, Restart: s.restart, Restate: s.restate, Parallel: s.parallel,
		BeforeStatement: func(part, stmt string) error {
			mu.Lock()
			if len(order) == 0 || order[len(order)-1] != part {
				order = append(order, part)
			}
			mu.Unlock()
			if part == s.addAt[0] && stmt == s.addAt[1] {
				e.insert(c.sc.source, c.src, s.add)
				c.source++
			}
			if part == s.failAt[0] && stmt == s.failAt[1] {
				return fmt.Errorf("injected crash before %s of %s", stmt, part)
			}
			if stmt == ir.StmtReplacePartition {
				mu.Lock()
				replaced = append(replaced, part)
				mu.Unlock()
			}
			return nil
		}})
	if e.tg.Dialect.Caps().SharedStage {
		// One stage table per pipeline: a partition's statements all run
		// before the next partition's first.
		seen := map[string]bool{}
		for _, p := range order {
			if seen[p] {
				t.Errorf("%s: partitions rebuilt at once on a shared stage: %v", what, order)
				break
			}
			seen[p] = true
		}
	}
	if res != nil {
		wantNote := s.parallel > 1 && e.tg.Dialect.Caps().SharedStage
		if (res.Note != "") != wantNote || wantNote && !strings.Contains(res.Note, "one at a time") {
			t.Errorf("%s: note %q (parallel %d, shared stage %v)", what, res.Note, s.parallel, e.tg.Dialect.Caps().SharedStage)
		}
	}
	var locked *LockedError
	switch {
	case s.locked != "":
		if !errors.As(err, &locked) || locked.Owner != s.locked {
			t.Errorf("%s: %v, want locked by %s", what, err, s.locked)
		}
		c.unchanged(what, b, 0, s.locked)
		return
	case s.refused != "":
		if err == nil || !strings.Contains(err.Error(), s.refused) {
			t.Errorf("%s: %v, want refused with %q", what, err, s.refused)
		}
		c.unchanged(what, b, 0, "")
		return
	case s.fails != "":
		if err == nil || !strings.Contains(err.Error(), s.fails) {
			t.Fatalf("%s: %v, want a failure with %q", what, err, s.fails)
		}
	case err != nil:
		t.Fatalf("%s: %v", what, err)
	}
	c.logged++
	got := map[string][]string{}
	var keys []string
	var rows int64
	for _, p := range res.Partitions {
		got[p.Status] = append(got[p.Status], p.Key)
		keys = append(keys, p.Key)
		if p.Status == PartRebuilt {
			rows += p.Rows
		}
	}
	want := map[string][]string{}
	for status, keys := range map[string][]string{PartRebuilt: s.rebuilt, PartOK: s.ok, PartDone: s.done, PartPending: s.pending, PartFailed: s.failed} {
		if len(keys) > 0 {
			want[status] = keys
		}
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: partitions by status (-want +got):\n%s", what, diff)
	}
	if diff := cmp.Diff(PartitionKeys(c.inc, from, to), keys); diff != "" {
		t.Errorf("%s: the backfill's partitions are not its range's (-want +got):\n%s", what, diff)
	}
	if mismatch := ""; res.Mismatch != nil || s.mismatch != "" {
		if res.Mismatch != nil {
			mismatch = res.Mismatch.Key
		}
		if mismatch != s.mismatch || !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: stopped at mismatch %q (%v), want %q", what, mismatch, err, s.mismatch)
		}
	}
	st := c.state()
	if res.Watermark != b.wm || st.Watermark != b.wm || st.LeaseOwner != "" {
		t.Errorf("%s: watermark %q -> %q (result %q), lease %q: a backfill never moves the watermark", what, b.wm, st.Watermark, res.Watermark, st.LeaseOwner)
	}
	if len(st.Runs) != min(c.logged, 20) {
		t.Fatalf("%s: the run log holds %d runs, want %d", what, len(st.Runs), c.logged)
	}
	status := map[bool]string{false: "succeeded", true: "failed"}[err != nil]
	if r := st.Runs[0]; r.Kind != "backfill" || r.Status != status || r.RowsInserted != rows || s.rows != 0 && r.RowsInserted != s.rows || r.WatermarkAfter != b.wm {
		t.Errorf("%s: the backfill in the run log: %+v; want %s, %d rows inserted", what, r, status, rows)
	}
	if after := c.versions(s.untouched); !cmp.Equal(untouched, after) {
		t.Errorf("%s: partitions outside the backfill were rewritten: row versions %v, then %v", what, untouched, after)
	}
	if err != nil {
		return
	}
	slices.Sort(replaced)
	if diff := cmp.Diff(sorted(s.rebuilt), replaced, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: replace_partition ran for (-rebuilt +replaced):\n%s", what, diff)
	}
	c.promise(what, c.markHi(b.wm), "", nil)
}

// versions identifies the physical version of the target's rows in the
// given partitions where the engine exposes one (PostgreSQL's xmin);
// elsewhere the rows themselves, which a rewrite from a corrupted target
// would change too.
func (c *conformer) versions(partitions []string) []string {
	if len(partitions) == 0 {
		return nil
	}
	d := c.e.tg.Dialect
	var out []string
	in := func(value any) bool {
		return slices.Contains(partitions, PartitionKey(c.inc, Canon(value)))
	}
	if d.Name() == "postgres" {
		var q []string
		for _, p := range c.inc.Target.Parts {
			q = append(q, d.QuoteIdent(p))
		}
		rows, err := c.e.tg.DB.QueryContext(c.e.ctx, fmt.Sprintf("SELECT %s::text, %s, xmin::text FROM %s ORDER BY 1",
			d.QuoteIdent(c.cols[0]), d.QuoteIdent(c.inc.Partition.Column), strings.Join(q, ".")))
		if err != nil {
			c.t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var key, xmin string
			var part any
			if err := rows.Scan(&key, &part, &xmin); err != nil {
				c.t.Fatal(err)
			}
			if in(part) {
				out = append(out, key+"@"+xmin)
			}
		}
		return out
	}
	pi := slices.Index(c.cols, c.inc.Partition.Column)
	for _, r := range c.e.rows(tableName(c.inc.Target), c.cols) {
		if in(strings.Split(r, " | ")[pi]) {
			out = append(out, r)
		}
	}
	return out
}

// corrupt multiplies a column of the target's rows in [from, to) of the
// partition column by 100.
func (c *conformer) corrupt(s corrupt) {
	pc := c.inc.Partition
	part := ir.Col{Name: pc.Column, Type: pc.Type}
	c.e.exec(c.e.render(ir.Update{
		Table: c.e.table(tableName(c.inc.Target)),
		Set:   []ir.Assign{{Column: s.col, Value: ir.Binary{Op: "*", L: ir.ColRef{Name: s.col}, R: ir.Lit{Text: "100"}}}},
		Where: ir.Binary{Op: "AND",
			L: ir.Binary{Op: ">=", L: ir.ColRef{Name: pc.Column}, R: ir.ParamRef{Name: "a"}},
			R: ir.Binary{Op: "<", L: ir.ColRef{Name: pc.Column}, R: ir.ParamRef{Name: "b"}}},
	}, ir.Param{Name: "a"}, ir.Param{Name: "b"}), map[string]any{"a": c.e.bind(part, s.from), "b": c.e.bind(part, s.to)})
}
