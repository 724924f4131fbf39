package runner

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	duckdbdrv "github.com/duckdb/duckdb-go/v2"

	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
	"github.com/incrc/incrc/dialects/duckdb"
	"github.com/incrc/incrc/dialects/script"
)

// The PostgreSQL procedures (dialects/script) against the runner, on the
// real server: every conformance scenario whose steps a procedure can take
// runs twice, once through the runner and once through CALL
// incrc_run_<pipeline>(...) (and its full refresh and backfill), and after
// every step the target, the quarantine, the state and the run log must
// be the same; then once more with the runner and the procedure taking
// turns on one pipeline.

// scriptable reports whether the scenario can run side by side: steps a
// procedure cannot take (an injected crash, a rewind, a backfill with
// --only-drifted, --parallel or an injected failure) run through the
// runner on both sides, but a killed process and a lease held by a
// blocked run need the conformance suite's own machinery. Read-only steps (reconcile,
// preview) are left out.
func scriptable(sc scenario) (bool, string) {
	if strings.Contains(sc.spec, "tiebreak:") {
		return false, "a tiebreak watermark (script.ErrTiebreak)"
	}
	if strings.Contains(sc.spec, "timezone:") {
		return false, "partitions in a time zone (script.ErrZone)"
	}
	for _, s := range sc.steps {
		switch s := s.(type) {
		case insert, update, remove, corrupt, reconcile, preview, crash, rewind, release, rebuild, run, deadLease:
		default:
			return false, fmt.Sprintf("a %T step", s)
		}
	}
	return true, ""
}

// byRunner reports whether a procedure cannot take a backfill step.
func (b rebuild) byRunner() bool {
	return b.onlyDrifted || b.parallel > 1 || b.failAt[0] != "" || b.addAt[0] != "" || b.refused != "" || b.locked != ""
}

func TestScriptsConformPostgres(t *testing.T) {
	eng := engines()[2]
	if eng.name != "postgres" {
		t.Fatal("engines() changed order")
	}
	for _, turns := range []bool{false, true} {
		for _, sc := range scenarios() {
			name := "procedure/" + sc.name
			if turns {
				name = "turns/" + sc.name
			}
			t.Run(name, func(t *testing.T) {
				if ok, why := scriptable(sc); !ok {
					t.Skip("not scriptable: " + why)
				}
				if sc.bug != "" {
					t.Skip("BUG: " + sc.bug)
				}
				t.Parallel()
				side(t, eng, sc, turns)
			})
		}
	}
}

// TestScriptsConformSpark runs the Spark SQL scripts against the runner
// on Spark Connect with Delta Lake, as TestScriptsConformPostgres runs the
// procedures: the same target, quarantine, state and run log after every
// step. The scenarios run one at a time (see distributedEngines). Iceberg
// tables get no scripts (dialects/script).
func TestScriptsConformSpark(t *testing.T) {
	for _, eng := range distributedEngines()[:1] {
		for _, turns := range []bool{false, true} {
			for _, sc := range scenarios() {
				name := eng.name + "/script/" + sc.name
				if turns {
					name = eng.name + "/turns/" + sc.name
				}
				t.Run(name, func(t *testing.T) {
					if ok, why := scriptable(sc); !ok {
						t.Skip("not scriptable: " + why)
					}
					if sc.bug != "" {
						t.Skip("BUG: " + sc.bug)
					}
					side(t, eng, sc, turns)
				})
			}
		}
	}
}

// sided is one side of the comparison: a pipeline, its source, and how
// it runs.
type sided struct {
	e     *env
	plan  *ir.Plan
	src   []ir.Col
	tcols []string
	// scripts are the Spark SQL scripts by mode: Spark keeps no
	// procedures, a job runs the file with its inputs set.
	scripts map[ir.Mode]string
}

func newSided(t *testing.T, eng engine, sc scenario) *sided {
	e := newEnv(t, eng)
	s := &sided{e: e, plan: e.spec(expand(e, sc, "inc"))}
	for _, col := range s.plan.Statement(ir.StmtCreateTarget).Op.(ir.CreateTable).Columns {
		s.tcols = append(s.tcols, col.Name)
	}
	s.src = s.plan.Columns
	if sc.nulls {
		s.src = nullableCols(s.src)
	}
	var key []string
	if sc.keyed {
		key = s.plan.Key
	}
	e.createTable(sc.source, s.src, key...)
	e.insert(sc.source, s.src, sc.seed...)
	return s
}

// install creates the pipeline's procedures (on Spark, keeps its scripts).
func (s *sided) install(t *testing.T) {
	files, err := script.Render(s.e.tg.Dialect, s.plan, "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.spark() {
		s.scripts = map[ir.Mode]string{}
		for _, f := range files {
			s.scripts[f.Mode] = string(f.Data)
		}
		return
	}
	for _, f := range files {
		if _, err := s.e.tg.DB.ExecContext(s.e.ctx, string(f.Data)); err != nil {
			t.Fatalf("create %s: %v\n%s", f.Suffix, err, f.Data)
		}
		name := script.ProcName(s.plan.Pipeline, f.Mode)
		t.Cleanup(func() { s.e.tg.DB.ExecContext(s.e.ctx, `DROP PROCEDURE IF EXISTS "`+name+`"`) })
	}
}

// call runs the procedure of a step; the error is the server's message.
func (s *sided) call(st run, until *time.Time) error {
	mode := ir.ModeRun
	if st.full {
		mode = ir.ModeFullRefresh
	}
	if s.spark() {
		lit := "NULL"
		if until != nil {
			lit = sparkTime(*until)
		}
		return s.runScript(mode, map[string]string{"p_until": lit})
	}
	var arg any
	if until != nil {
		arg = until.UTC()
	}
	return s.exec(`CALL "`+script.ProcName(s.plan.Pipeline, mode)+`"($1)`, arg)
}

// exec runs a CALL in a session of its own whose zone is not UTC, as
// pg_cron's or a user's session may be (the runner's sessions are UTC):
// a procedure computes its windows, clock and run log in UTC whatever the
// caller's zone, so the target, state and log still equal the runner's.
// Chatham's +13:45 (+12:45 in its winter) moves a time off every hour and
// day boundary.
func (s *sided) exec(q string, args ...any) error {
	c, err := s.e.tg.DB.Conn(s.e.ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ExecContext(s.e.ctx, "SET timezone = 'Pacific/Chatham'"); err != nil {
		return err
	}
	defer c.ExecContext(s.e.ctx, "SET timezone = 'UTC'")
	_, err = c.ExecContext(s.e.ctx, q, args...)
	return err
}

func (s *sided) backfill(b rebuild, from, to time.Time) error {
	if s.spark() {
		return s.runScript(ir.ModeBackfill, map[string]string{"p_from": sparkTime(from), "p_to": sparkTime(to),
			"p_restart": fmt.Sprint(b.restart), "p_restate": fmt.Sprint(b.restate)})
	}
	return s.exec(`CALL "`+script.ProcName(s.plan.Pipeline, ir.ModeBackfill)+`"($1, $2, $3, $4)`,
		from, to, b.restart, b.restate)
}

func (s *sided) apply(t *testing.T, sc scenario, a act) {
	e := s.e
	switch a := a.(type) {
	case insert:
		e.insert(sc.source, s.src, a...)
	case update:
		e.update(sc.source, s.src, s.src[0].Name, a.key, a.set)
	case remove:
		if a.all {
			e.deleteWhere(sc.source, "", nil)
		} else {
			e.deleteWhere(sc.source, s.src[0].Name, a.key)
		}
	case corrupt:
		c := &conformer{t: t, e: e, inc: s.plan}
		c.corrupt(a)
	}
}

func (s *sided) spark() bool {
	name := s.e.tg.Dialect.Name()
	return name == "spark" || name == "spark_iceberg"
}

// runScript runs a Spark SQL script with its inputs set: each is the
// default of its DECLARE at the top of the file, where a user edits it.
func (s *sided) runScript(mode ir.Mode, inputs map[string]string) error {
	text, ok := s.scripts[mode]
	if !ok {
		return fmt.Errorf("no %s script", mode)
	}
	for name, value := range inputs {
		re := regexp.MustCompile(`(?m)^(\s*DECLARE ` + name + ` \S+ DEFAULT )[^;]*;`)
		if !re.MatchString(text) {
			return fmt.Errorf("the %s script declares no input %s", mode, name)
		}
		text = re.ReplaceAllString(text, "${1}"+strings.ReplaceAll(value, "$", "$$")+";")
	}
	_, err := s.e.tg.DB.ExecContext(s.e.ctx, text)
	return err
}

// sparkTime is a time as a Spark TIMESTAMP literal.
func sparkTime(t time.Time) string {
	return "TIMESTAMP '" + t.UTC().Format("2006-01-02 15:04:05.999999") + "+00:00'"
}

// snapshot is what both sides must agree on after a step.
type snapshot struct {
	Target     []string
	Quarantine []string
	Watermark  string
	Lease      string
	Runs       []Result
	Markers    []Marker
}

func (s *sided) snapshot(t *testing.T, timeFree bool, backfills map[string]bool) snapshot {
	st := s.e.state(s.plan)
	rows, _ := s.e.read(tableName(s.plan.Target), s.tcols)
	sn := snapshot{Target: sorted(rows), Watermark: st.Watermark, Lease: st.LeaseOwner, Markers: st.Partitions}
	if !s.plan.Quarantine.IsZero() {
		var cols []string
		for _, c := range s.plan.Columns {
			cols = append(cols, c.Name)
		}
		q, _ := s.e.read(tableName(s.plan.Quarantine), append([]string{"incrc_reason"}, cols...))
		sn.Quarantine = sorted(q)
	}
	for _, r := range st.Runs {
		r.RunID, r.StartedAt, r.FinishedAt, r.DurationMS, r.Pipeline = "", "", "", 0, ""
		r.Error, r.Note = s.neutral(r.Error), s.neutral(r.Note)
		if !timeFree {
			r.WindowLo, r.WindowHi, r.WatermarkBefore, r.WatermarkAfter = "", "", "", ""
		}
		sn.Runs = append(sn.Runs, r)
	}
	for i := range sn.Markers {
		sn.Markers[i].UpdatedAt = ""
		// The id names the pipeline: each side's must be the one the
		// runner derives for its own.
		if !backfills[sn.Markers[i].BackfillID] {
			t.Errorf("marker %+v: not the id of a backfill of this step's ranges", sn.Markers[i])
		}
		sn.Markers[i].BackfillID = ""
	}
	// State lists markers newest first; the two sides write them at their
	// own clock's times, so the snapshot compares them by partition.
	sort.SliceStable(sn.Markers, func(i, j int) bool { return sn.Markers[i].Partition < sn.Markers[j].Partition })
	if !timeFree {
		sn.Watermark = ""
	}
	return sn
}

// side runs a scenario through the runner on one pipeline and through the
// procedures (or, with turns, the procedures and the runner in turns) on
// another, comparing them after every step.
func side(t *testing.T, eng engine, sc scenario, turns bool) {
	a, b := newSided(t, eng, sc), newSided(t, eng, sc)
	b.install(t)
	timeFree := true
	ids := [2]map[string]bool{{}, {}}
	for i, st := range sc.steps {
		what := fmt.Sprintf("step %d (%s)", i+1, describe(st))
		byScript := !turns || i%2 == 0
		var errA, errB error
		switch st := st.(type) {
		case run:
			var until *time.Time
			if st.until != "" {
				u, err := ParseUntil(st.until)
				if err != nil {
					t.Fatal(err)
				}
				until = &u
			} else if a.plan.Watermark == nil || !a.plan.Watermark.Type.IsInteger() {
				timeFree = false // hi is the clock's: the two sides' windows differ
			}
			o := Options{Until: until, FullRefresh: st.full}
			if st.clock != 0 {
				// A moved clock is the runner's alone: both sides run it.
				o.Now = func() time.Time { return time.Now().Add(st.clock) }
				byScript = false
			}
			t0 := time.Now()
			_, errA = a.e.tg.Run(a.e.ctx, a.plan, o)
			t1 := time.Now()
			if st.locked != "" {
				// Both sides find the lease held by the same owner; its
				// expiry differs by the moment each was taken.
				if byScript {
					errB = b.call(st, until)
				} else {
					_, errB = b.e.tg.Run(b.e.ctx, b.plan, o)
				}
				for _, err := range []error{errA, errB} {
					if err == nil || !strings.Contains(err.Error(), "is locked by run "+st.locked+" until ") {
						t.Fatalf("%s: %v, want locked by %s", what, err, st.locked)
					}
				}
				errA, errB = nil, nil
			} else if byScript {
				errB = b.call(st, until)
			} else {
				_, errB = b.e.tg.Run(b.e.ctx, b.plan, o)
			}
			t.Logf("%s: the runner took %v, the other side %v", what, t1.Sub(t0).Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))
		case rebuild:
			from, _ := ParseUntil(st.from)
			to, _ := ParseUntil(st.to)
			o := BackfillOptions{From: from, To: to, Restart: st.restart, Restate: st.restate}
			ids[0][BackfillID(a.plan, from, to)], ids[1][BackfillID(b.plan, from, to)] = true, true
			if st.byRunner() {
				// Not a procedure's: both sides run it through the runner,
				// with the same injected failure.
				o.Parallel = st.parallel
				o.OnlyDrifted = st.onlyDrifted
				o.BeforeStatement = func(part, stmt string) error {
					if part == st.failAt[0] && stmt == st.failAt[1] {
						return fmt.Errorf("injected failure before %s", stmt)
					}
					return nil
				}
				if st.addAt[0] != "" {
					t.Skip("a backfill that changes the source mid-way: the conformance suite's")
				}
				_, errA = a.e.tg.Backfill(a.e.ctx, a.plan, o)
				_, errB = b.e.tg.Backfill(b.e.ctx, b.plan, o)
				break
			}
			_, errA = a.e.tg.Backfill(a.e.ctx, a.plan, o)
			if byScript {
				errB = b.backfill(st, from, to)
			} else {
				_, errB = b.e.tg.Backfill(b.e.ctx, b.plan, o)
			}
		case crash:
			// Not a procedure's: both sides crash through the runner.
			until, _ := ParseUntil(st.until)
			hook := func(name string) error {
				if name == st.at {
					return fmt.Errorf("injected crash before %s", st.at)
				}
				return nil
			}
			_, errA = a.e.tg.Run(a.e.ctx, a.plan, Options{Until: &until, BeforeStatement: hook})
			_, errB = b.e.tg.Run(b.e.ctx, b.plan, Options{Until: &until, BeforeStatement: hook})
		case rewind:
			o := RewindOptions{To: st.to, Who: "conform", Reason: "re-read"}
			_, errA = a.e.tg.Rewind(a.e.ctx, a.plan, o)
			_, errB = b.e.tg.Rewind(b.e.ctx, b.plan, o)
		case deadLease:
			for _, sd := range []*sided{a, b} {
				(&conformer{t: t, e: sd.e, inc: sd.plan}).deadLease(what, st)
			}
		case release:
			_, errA = a.e.tg.Release(a.e.ctx, a.plan)
			_, errB = b.e.tg.Release(b.e.ctx, b.plan)
		case reconcile, preview:
			continue // read-only
		default:
			a.apply(t, sc, st)
			b.apply(t, sc, st)
			continue
		}
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%s: the runner says %v, the procedure %v", what, errA, errB)
		}
		if errA != nil && !strings.Contains(b.neutral(errB.Error()), a.neutral(firstLine(errA.Error()))) {
			t.Errorf("%s: the runner fails with %q, the procedure with %q", what, errA, errB)
		}
		if diff := cmp.Diff(a.snapshot(t, timeFree, ids[0]), b.snapshot(t, timeFree, ids[1]), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%s: the runner's pipeline and the procedure's differ (-runner +procedure):\n%s", what, diff)
		}
	}
}

// neutral names the side's pipeline and tables PIPELINE and ID in a
// message, so that the two sides' messages compare.
func (s *sided) neutral(msg string) string {
	msg = strings.NewReplacer(s.plan.Pipeline, "PIPELINE", s.e.id, "ID").Replace(msg)
	return leaseUntil.ReplaceAllString(msg, "until T") // a lease's expiry: when each side took it
}

var leaseUntil = regexp.MustCompile(`until \d{4}-\d\d-\d\dT[0-9:.]+Z`)

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// TestScriptLeasePostgres: a procedure finds the lease held by a runner
// (here, one that died holding it) and fails at once saying who holds it,
// committing nothing; once the lease is free it runs, and the runner after
// it finds the state as it left it.
func TestScriptLeasePostgres(t *testing.T) {
	eng := engines()[2]
	sc := scenario{spec: orders("lookback: 1d", ""), source: "app_{id}.orders", seed: orders5}
	s := newSided(t, eng, sc)
	s.install(t)
	// A first run creates the state row; then a dead run holds the lease.
	until, _ := ParseUntil("2026-01-21")
	if err := s.call(run{}, &until); err != nil {
		t.Fatal(err)
	}
	c := &conformer{t: t, e: s.e, inc: s.plan}
	c.deadLease("dead lease", deadLease{owner: "dead-run", ttl: time.Hour})
	before := s.snapshot(t, true, nil)
	until2, _ := ParseUntil("2026-01-25")
	err := s.call(run{}, &until2)
	if err == nil || !strings.Contains(err.Error(), "pipeline "+s.plan.Pipeline+" is locked by run dead-run until ") {
		t.Fatalf("the procedure under a held lease: %v", err)
	}
	after := s.snapshot(t, true, nil)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Fatalf("a refused procedure changed something:\n%s", diff)
	}
	if _, err := s.e.tg.Release(s.e.ctx, s.plan); err != nil {
		t.Fatal(err)
	}
	until3, _ := ParseUntil("2026-01-22")
	if err := s.call(run{}, &until3); err != nil {
		t.Fatalf("after the release: %v", err)
	}
	res, err := s.e.tg.Run(s.e.ctx, s.plan, Options{Until: &until2})
	if err != nil || res.WatermarkBefore != "2026-01-22T00:00:00Z" || res.RowsRead == 0 {
		t.Fatalf("the runner after the procedure: %+v, %v", res, err)
	}
}

// TestDuplicateStateRow: on a state table whose key the engine does not
// enforce (a lake table), two rows of one pipeline are reported as such,
// never read as a lease held forever.
func TestDuplicateStateRow(t *testing.T) {
	e := newEnv(t, engines()[0]) // DuckDB: a file of the test's own
	p := e.spec(strings.ReplaceAll(orders("lookback: 1d", ""), "{target}", "inc"))
	for _, q := range []string{
		`CREATE TABLE incrc_state (pipeline VARCHAR(64) NOT NULL, watermark VARCHAR(64), lease_owner VARCHAR(128), lease_expires_at VARCHAR(40), spec_hash VARCHAR(64), updated_at VARCHAR(40))`,
		`INSERT INTO incrc_state (pipeline, watermark) VALUES ('` + p.Pipeline + `', '2026-01-02T00:00:00Z'), ('` + p.Pipeline + `', NULL)`,
	} {
		if _, err := e.tg.DB.ExecContext(e.ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	e.createTable("app_{id}.orders", p.Columns)
	_, err := e.tg.Run(e.ctx, p, Options{})
	var locked *LockedError
	if err == nil || errors.As(err, &locked) || !strings.Contains(err.Error(), "has 2 rows in incrc_state, not one") {
		t.Fatalf("a duplicate state row: %v", err)
	}
}

// noTx is DuckDB told that it has no transactions: what the runner does on
// an engine without them (BigQuery, Spark, Trino), on a real engine.
type noTx struct{ *duckdb.Dialect }

func (noTx) Caps() dialects.Caps { return dialects.Caps{Transactions: false, ReusesParams: true} }

// TestNoTransactions: on an engine without transactions the runner opens
// none (no begin, no commit), and the run still writes, advances and
// records.
func TestNoTransactions(t *testing.T) {
	e := newEnv(t, engines()[0])
	e.tg.Dialect = noTx{&duckdb.Dialect{}}
	p := e.spec(strings.ReplaceAll(orders("lookback: 1d", ""), "{target}", "inc"))
	e.createTable("app_{id}.orders", p.Columns)
	e.insert("app_{id}.orders", p.Columns, orders5...)
	until, _ := ParseUntil("2026-02-01")
	commits := 0
	res, err := e.tg.Run(e.ctx, p, Options{Until: &until, BeforeStatement: func(name string) error {
		if name == "commit" {
			commits++
		}
		return nil
	}})
	if err != nil || res.RowsInserted != 5 || commits != 0 {
		t.Fatalf("run: %+v, %v; %d commits", res, err, commits)
	}
	if st := e.state(p); st.Watermark != "2026-02-01T00:00:00Z" {
		t.Fatalf("watermark %q", st.Watermark)
	}
}

// TestRedshiftInitStateOnPostgres: Redshift's init_state (INSERT ...
// SELECT $1 WHERE NOT EXISTS (... = $1)) prepared by PostgreSQL 15, whose
// parameter typing Redshift shares: $1 must have one type, so it is cast.
// Run twice, it inserts the row once.
func TestRedshiftInitStateOnPostgres(t *testing.T) {
	e := newEnv(t, engines()[2])
	p := e.spec(strings.ReplaceAll(orders("lookback: 1d", ""), "{target}", "inc"))
	if _, err := e.tg.State(e.ctx, p); err != nil { // the state tables
		t.Fatal(err)
	}
	rs, err := all.Lookup("redshift")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := dialects.RenderStatement(rs, p.Statement(ir.StmtInitState))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := e.tg.DB.ExecContext(e.ctx, parts[0].SQL, p.Pipeline); err != nil {
			t.Fatalf("%v:\n%s", err, parts[0].SQL)
		}
	}
	if st := e.state(p); !st.exists {
		t.Fatal("no state row")
	}
}

// TestScriptRefusedWindowPostgres: a window the procedure refuses (an
// --until before the saved watermark) fails with the runner's message,
// records nothing and gives the lease back.
func TestScriptRefusedWindowPostgres(t *testing.T) {
	sc := scenario{spec: orders("lookback: 1d", ""), source: "app_{id}.orders", seed: orders5}
	s := newSided(t, engines()[2], sc)
	s.install(t)
	u1, _ := ParseUntil("2026-01-22")
	if err := s.call(run{}, &u1); err != nil {
		t.Fatal(err)
	}
	before := s.snapshot(t, true, nil)
	u0, _ := ParseUntil("2026-01-21")
	err := s.call(run{}, &u0)
	if err == nil || !strings.Contains(err.Error(), "--until 2026-01-21T00:00:00Z is before the saved watermark 2026-01-22T00:00:00Z") {
		t.Fatalf("an --until before the watermark: %v", err)
	}
	if diff := cmp.Diff(before, s.snapshot(t, true, nil)); diff != "" {
		t.Fatalf("a refused window changed something (the lease must be free):\n%s", diff)
	}
}

// blindRows is DuckDB's real driver, but every statement's result cannot
// say how many rows it changed: what some drivers of lake engines do.
type blindRows struct{ driver.Connector }

func (b blindRows) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := b.Connector.Connect(ctx)
	return blindConn{c}, err
}

type blindConn struct{ driver.Conn }

type blindResult struct{ driver.Result }

func (blindResult) RowsAffected() (int64, error) {
	return 0, errors.New("rows affected are not reported")
}

func (c blindConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	r, err := c.Conn.(driver.ExecerContext).ExecContext(ctx, q, args)
	if err != nil {
		return nil, err
	}
	return blindResult{r}, nil
}

func (c blindConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, q, args)
}

func (c blindConn) BeginTx(ctx context.Context, o driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, o)
}

func (c blindConn) CheckNamedValue(v *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(v)
	}
	return driver.ErrSkip
}

// TestRowsAffectedUnknown: a driver that cannot say how many rows a
// statement changed fails the run at that statement; it is never read as
// zero (a compare-and-set that "changed nothing", a write that "wrote
// nothing").
func TestRowsAffectedUnknown(t *testing.T) {
	e := newEnv(t, engines()[0])
	p := e.spec(strings.ReplaceAll(orders("lookback: 1d", ""), "{target}", "inc"))
	e.createTable("app_{id}.orders", p.Columns)
	e.insert("app_{id}.orders", p.Columns, orders5...)
	path := strings.TrimPrefix(e.url, "duckdb:")
	e.tg.Close()
	conn, err := duckdbdrv.NewConnector(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	tg := &Target{DB: sql.OpenDB(blindRows{conn}), Dialect: &duckdb.Dialect{}, URL: e.url}
	defer tg.Close()
	until, _ := ParseUntil("2026-02-01")
	_, err = tg.Run(e.ctx, p, Options{Until: &until})
	// Setup and every statement whose count nobody reads run; the lease's
	// compare-and-set, whose count decides, fails the run.
	if err == nil || !strings.Contains(err.Error(), "acquire_lease: the duckdb driver cannot report the rows the statement changed") {
		t.Fatalf("a run on a driver blind to rows affected: %v", err)
	}
}

// TestScriptBackfillMismatchPostgres: a rebuilt partition that does not
// match the source (here a trigger on the target changes what is written
// into 2026-01-05) stops the procedure's backfill there, marks that
// partition failed with what each side held, records the backfill as
// failed and frees the lease; the same call again resumes after the
// partitions it finished and redoes the failed one.
func TestScriptBackfillMismatchPostgres(t *testing.T) {
	sc := scenario{spec: revenueSpec, source: "app_{id}.orders", seed: revenueRows()}
	s := newSided(t, engines()[2], sc)
	s.install(t)
	u, _ := ParseUntil(loaded.until)
	if err := s.call(run{}, &u); err != nil {
		t.Fatal(err)
	}
	target := `"dw_` + s.e.id + `"."revenue_inc"`
	fn := `"dw_` + s.e.id + `"."incrc_test_skew"`
	for _, q := range []string{
		`CREATE FUNCTION ` + fn + `() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN IF NEW.order_date = DATE '2026-01-05' THEN NEW.amount := NEW.amount * 100; END IF; RETURN NEW; END $f$`,
		`CREATE TRIGGER incrc_test_skew BEFORE INSERT ON ` + target + ` FOR EACH ROW EXECUTE FUNCTION ` + fn + `()`,
	} {
		if _, err := s.e.tg.DB.ExecContext(s.e.ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	from, _ := ParseUntil("2026-01-03")
	to, _ := ParseUntil("2026-01-07")
	err := s.backfill(rebuild{}, from, to)
	if err == nil || !strings.Contains(err.Error(), "partition 2026-01-05: rebuilt partition does not match the source: source 3, 153.75, target 3, 15375.00 (count, sum(amount))") {
		t.Fatalf("a mismatched partition: %v", err)
	}
	st := s.e.state(s.plan)
	status := map[string]string{}
	for _, m := range st.Partitions {
		status[m.Partition] = m.Status
	}
	want := map[string]string{"2026-01-03": "done", "2026-01-04": "done", "2026-01-05": "failed"}
	if diff := cmp.Diff(want, status); diff != "" || st.LeaseOwner != "" || st.Runs[0].Status != "failed" || st.Runs[0].Kind != "backfill" || st.Runs[0].RowsInserted != 6 {
		t.Fatalf("after the mismatch (-want +got):\n%s\nlease %q, run %+v", diff, st.LeaseOwner, st.Runs[0])
	}
	if _, err := s.e.tg.DB.ExecContext(s.e.ctx, `DROP TRIGGER incrc_test_skew ON `+target); err != nil {
		t.Fatal(err)
	}
	if err := s.backfill(rebuild{}, from, to); err != nil {
		t.Fatalf("the backfill again: %v", err)
	}
	st = s.e.state(s.plan)
	for _, m := range st.Partitions {
		status[m.Partition] = m.Status
	}
	want = map[string]string{"2026-01-03": "done", "2026-01-04": "done", "2026-01-05": "done", "2026-01-06": "done"}
	if diff := cmp.Diff(want, status); diff != "" || st.Runs[0].Status != "succeeded" || st.Runs[0].RowsInserted != 6 {
		t.Fatalf("the resumed backfill (-want +got):\n%s\nrun %+v", diff, st.Runs[0])
	}
	// What the resumed backfill left is what the source says.
	rec, err := s.e.tg.Reconcile(s.e.ctx, s.plan, from, to)
	if err != nil || len(rec.Drifted) != 0 {
		t.Fatalf("reconcile after the backfill: %+v, %v", rec, err)
	}
}
